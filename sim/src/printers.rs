//! The columns kube-apiserver prints for built-in kinds (its `pkg/printers/internalversion`):
//! what `kubectl get deploy,rs,po,svc,secret,cm,job,cronjob,hpa,pdb,netpol,ns,no,crd,events` shows
//! in a Table, computed from the stored object as kube-apiserver computes each cell.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::resources::ResourceType;

/// One column of a built-in kind's Table: its definition and how a row's cell is computed.
pub struct Column {
    /// The column's name as kube-apiserver defines it (kubectl upper-cases it).
    pub name: &'static str,
    /// `string`, `integer` or `date`.
    pub column_type: &'static str,
    /// `name` for the name column, empty otherwise.
    pub format: &'static str,
    /// 0 for the default view, 1 for `-o wide`.
    pub priority: u8,
    /// The cell of an object at a time.
    pub cell: fn(&Value, Timestamp) -> Value,
}

const fn column(
    name: &'static str,
    column_type: &'static str,
    priority: u8,
    cell: fn(&Value, Timestamp) -> Value,
) -> Column {
    Column {
        name,
        column_type,
        format: "",
        priority,
        cell,
    }
}

const NAME: Column = Column {
    name: "Name",
    column_type: "string",
    format: "name",
    priority: 0,
    cell: |o, _| o["metadata"]["name"].clone(),
};

const AGE: Column = column("Age", "string", 0, |o, now| {
    json!(since(o["metadata"]["creationTimestamp"].as_str(), now))
});

/// The wide columns of a kind with `spec.template` and `spec.selector` (Deployments, Jobs).
const TEMPLATE_CONTAINERS: Column = column("Containers", "string", 1, |o, _| {
    json!(containers(&o["spec"]["template"], "name"))
});
const TEMPLATE_IMAGES: Column = column("Images", "string", 1, |o, _| {
    json!(containers(&o["spec"]["template"], "image"))
});
const SPEC_SELECTOR: Column = column("Selector", "string", 1, |o, _| {
    json!(label_selector(&o["spec"]["selector"]))
});

/// READY as `ready/desired` (Deployments, StatefulSets).
const READY_OF_DESIRED: Column = column("Ready", "string", 0, |o, _| {
    json!(format!(
        "{}/{}",
        int(&o["status"]["readyReplicas"]),
        o["spec"]["replicas"].as_i64().unwrap_or(1)
    ))
});
/// DESIRED, CURRENT and READY of a ReplicaSet or ReplicationController.
const DESIRED_REPLICAS: Column = column("Desired", "integer", 0, |o, _| {
    json!(o["spec"]["replicas"].as_i64().unwrap_or(1))
});
const CURRENT_REPLICAS: Column = column("Current", "integer", 0, |o, _| {
    json!(int(&o["status"]["replicas"]))
});
const READY_REPLICAS: Column = column("Ready", "integer", 0, |o, _| {
    json!(int(&o["status"]["readyReplicas"]))
});

/// The columns of a built-in kind kube-apiserver has a printer for; `None` for the others
/// (they print name and age).
pub fn columns(t: &ResourceType) -> Option<Vec<Column>> {
    let columns = match (t.group.as_str(), t.plural.as_str()) {
        ("apps", "deployments") => vec![
            NAME,
            READY_OF_DESIRED,
            column("Up-to-date", "integer", 0, |o, _| {
                json!(int(&o["status"]["updatedReplicas"]))
            }),
            column("Available", "integer", 0, |o, _| {
                json!(int(&o["status"]["availableReplicas"]))
            }),
            AGE,
            TEMPLATE_CONTAINERS,
            TEMPLATE_IMAGES,
            SPEC_SELECTOR,
        ],
        ("apps", "replicasets") => vec![
            NAME,
            DESIRED_REPLICAS,
            CURRENT_REPLICAS,
            READY_REPLICAS,
            AGE,
            TEMPLATE_CONTAINERS,
            TEMPLATE_IMAGES,
            SPEC_SELECTOR,
        ],
        // kube-apiserver's printReplicationController: DESIRED, CURRENT, READY.
        ("", "replicationcontrollers") => vec![
            NAME,
            DESIRED_REPLICAS,
            CURRENT_REPLICAS,
            READY_REPLICAS,
            AGE,
            TEMPLATE_CONTAINERS,
            TEMPLATE_IMAGES,
            column("Selector", "string", 1, |o, _| {
                json!(map_selector(&o["spec"]["selector"]))
            }),
        ],
        // printStatefulSet: READY as ready/desired.
        ("apps", "statefulsets") => vec![
            NAME,
            READY_OF_DESIRED,
            AGE,
            TEMPLATE_CONTAINERS,
            TEMPLATE_IMAGES,
        ],
        // printDaemonSet: the status counts and the pod template's node selector.
        ("apps", "daemonsets") => vec![
            NAME,
            column("Desired", "integer", 0, |o, _| {
                json!(int(&o["status"]["desiredNumberScheduled"]))
            }),
            column("Current", "integer", 0, |o, _| {
                json!(int(&o["status"]["currentNumberScheduled"]))
            }),
            column("Ready", "integer", 0, |o, _| {
                json!(int(&o["status"]["numberReady"]))
            }),
            column("Up-to-date", "integer", 0, |o, _| {
                json!(int(&o["status"]["updatedNumberScheduled"]))
            }),
            column("Available", "integer", 0, |o, _| {
                json!(int(&o["status"]["numberAvailable"]))
            }),
            column("Node Selector", "string", 0, |o, _| {
                json!(map_selector(&o["spec"]["template"]["spec"]["nodeSelector"]))
            }),
            AGE,
            TEMPLATE_CONTAINERS,
            TEMPLATE_IMAGES,
            SPEC_SELECTOR,
        ],
        // printCertificateSigningRequest: the signer, the requestor, the condition.
        ("certificates.k8s.io", "certificatesigningrequests") => vec![
            NAME,
            AGE,
            column("SignerName", "string", 0, |o, _| {
                json!(text_or_none(&o["spec"]["signerName"]))
            }),
            column("Requestor", "string", 0, |o, _| {
                json!(o["spec"]["username"].as_str().unwrap_or_default())
            }),
            column("RequestedDuration", "string", 0, |o, _| {
                json!(match o["spec"]["expirationSeconds"].as_i64() {
                    Some(seconds) => human_duration(seconds),
                    None => "<none>".to_string(),
                })
            }),
            column("Condition", "string", 0, |o, _| json!(csr_condition(o))),
        ],
        ("", "pods") => vec![
            NAME,
            column("Ready", "string", 0, |o, _| {
                let total = o["spec"]["containers"].as_array().map_or(0, Vec::len);
                let ready = statuses(o).filter(|s| s["ready"] == true).count();
                json!(format!("{ready}/{total}"))
            }),
            column("Status", "string", 0, |o, _| json!(pod_status(o))),
            column("Restarts", "string", 0, |o, now| json!(restarts(o, now))),
            AGE,
            column("IP", "string", 1, |o, _| {
                json!(text_or_none(&o["status"]["podIP"]))
            }),
            column("Node", "string", 1, |o, _| {
                json!(text_or_none(&o["spec"]["nodeName"]))
            }),
            column("Nominated Node", "string", 1, |o, _| {
                json!(text_or_none(&o["status"]["nominatedNodeName"]))
            }),
            column("Readiness Gates", "string", 1, |o, _| {
                let gates = o["spec"]["readinessGates"].as_array().map_or(0, Vec::len);
                json!(if gates == 0 {
                    "<none>".to_string()
                } else {
                    format!("0/{gates}")
                })
            }),
        ],
        ("", "services") => vec![
            NAME,
            column("Type", "string", 0, |o, _| {
                json!(o["spec"]["type"].as_str().unwrap_or("ClusterIP"))
            }),
            column("Cluster-IP", "string", 0, |o, _| {
                json!(text_or_none(&o["spec"]["clusterIP"]))
            }),
            column("External-IP", "string", 0, |o, _| json!(external_ip(o))),
            column("Port(s)", "string", 0, |o, _| json!(service_ports(o))),
            AGE,
            column("Selector", "string", 1, |o, _| {
                json!(map_selector(&o["spec"]["selector"]))
            }),
        ],
        ("", "secrets") => vec![
            NAME,
            column("Type", "string", 0, |o, _| {
                json!(o["type"].as_str().unwrap_or("Opaque"))
            }),
            column("Data", "string", 0, |o, _| json!(keys(&o["data"]))),
            AGE,
        ],
        ("", "configmaps") => vec![
            NAME,
            column("Data", "string", 0, |o, _| {
                json!(keys(&o["data"]).saturating_add(keys(&o["binaryData"])))
            }),
            AGE,
        ],
        ("", "nodes") => vec![
            NAME,
            column("Status", "string", 0, |o, _| json!(node_status(o))),
            column("Roles", "string", 0, |o, _| json!(node_roles(o))),
            AGE,
            column("Version", "string", 0, |o, _| {
                json!(
                    o["status"]["nodeInfo"]["kubeletVersion"]
                        .as_str()
                        .unwrap_or_default()
                )
            }),
        ],
        ("", "namespaces") => vec![
            NAME,
            column("Status", "string", 0, |o, _| {
                json!(o["status"]["phase"].as_str().unwrap_or("Active"))
            }),
            AGE,
        ],
        ("batch", "jobs") => vec![
            NAME,
            column("Status", "string", 0, |o, _| json!(job_status(o))),
            column("Completions", "string", 0, |o, _| json!(completions(o))),
            column("Duration", "string", 0, |o, now| {
                json!(job_duration(o, now))
            }),
            AGE,
            TEMPLATE_CONTAINERS,
            TEMPLATE_IMAGES,
            SPEC_SELECTOR,
        ],
        ("batch", "cronjobs") => vec![
            NAME,
            column("Schedule", "string", 0, |o, _| {
                o["spec"]["schedule"].clone()
            }),
            column("Timezone", "string", 0, |o, _| {
                json!(text_or_none(&o["spec"]["timeZone"]))
            }),
            column("Suspend", "boolean", 0, |o, _| {
                json!(o["spec"]["suspend"].as_bool().unwrap_or(false))
            }),
            column("Active", "integer", 0, |o, _| {
                json!(o["status"]["active"].as_array().map_or(0, Vec::len))
            }),
            column("Last Schedule", "string", 0, |o, now| {
                json!(match o["status"]["lastScheduleTime"].as_str() {
                    Some(at) => since(Some(at), now),
                    None => "<none>".into(),
                })
            }),
            AGE,
            column("Containers", "string", 1, |o, _| {
                json!(containers(
                    &o["spec"]["jobTemplate"]["spec"]["template"],
                    "name"
                ))
            }),
            column("Images", "string", 1, |o, _| {
                json!(containers(
                    &o["spec"]["jobTemplate"]["spec"]["template"],
                    "image"
                ))
            }),
            column("Selector", "string", 1, |o, _| {
                json!(label_selector(
                    &o["spec"]["jobTemplate"]["spec"]["selector"]
                ))
            }),
        ],
        ("autoscaling", "horizontalpodautoscalers") => vec![
            NAME,
            column("Reference", "string", 0, |o, _| {
                let target = &o["spec"]["scaleTargetRef"];
                json!(format!(
                    "{}/{}",
                    target["kind"].as_str().unwrap_or_default(),
                    target["name"].as_str().unwrap_or_default()
                ))
            }),
            column("Targets", "string", 0, |o, _| json!(hpa_targets(o))),
            column("MinPods", "string", 0, |o, _| {
                json!(o["spec"]["minReplicas"].as_i64().unwrap_or(1))
            }),
            column("MaxPods", "integer", 0, |o, _| {
                json!(int(&o["spec"]["maxReplicas"]))
            }),
            column("Replicas", "integer", 0, |o, _| {
                json!(int(&o["status"]["currentReplicas"]))
            }),
            AGE,
        ],
        ("policy", "poddisruptionbudgets") => vec![
            NAME,
            column("Min Available", "string", 0, |o, _| {
                json!(int_or_string(&o["spec"]["minAvailable"]))
            }),
            column("Max Unavailable", "string", 0, |o, _| {
                json!(int_or_string(&o["spec"]["maxUnavailable"]))
            }),
            column("Allowed Disruptions", "integer", 0, |o, _| {
                json!(int(&o["status"]["disruptionsAllowed"]))
            }),
            AGE,
        ],
        ("networking.k8s.io", "ingresses") => vec![
            NAME,
            column("Class", "string", 0, |o, _| {
                json!(o["spec"]["ingressClassName"].as_str().unwrap_or("<none>"))
            }),
            column("Hosts", "string", 0, |o, _| json!(ingress_hosts(o))),
            column("Address", "string", 0, |o, _| {
                let addresses: Vec<&str> = o["status"]["loadBalancer"]["ingress"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str()))
                    .collect();
                json!(addresses.join(","))
            }),
            column("Ports", "string", 0, |o, _| {
                let tls = o["spec"]["tls"].as_array().is_some_and(|t| !t.is_empty());
                json!(if tls { "80, 443" } else { "80" })
            }),
            AGE,
        ],
        ("", "resourcequotas") => vec![
            NAME,
            AGE,
            column("Request", "string", 0, |o, _| json!(quota_usage(o, false))),
            column("Limit", "string", 0, |o, _| json!(quota_usage(o, true))),
        ],
        ("networking.k8s.io", "networkpolicies") => vec![
            NAME,
            column("Pod-Selector", "string", 0, |o, _| {
                json!(label_selector(&o["spec"]["podSelector"]))
            }),
            AGE,
        ],
        ("apiextensions.k8s.io", "customresourcedefinitions") => vec![
            NAME,
            column("Created At", "date", 0, |o, _| {
                o["metadata"]["creationTimestamp"].clone()
            }),
        ],
        ("" | "events.k8s.io", "events") => vec![
            column("Last Seen", "string", 0, |o, now| {
                json!(event_last_seen(o, now))
            }),
            column("Type", "string", 0, |o, _| o["type"].clone()),
            column("Reason", "string", 0, |o, _| o["reason"].clone()),
            column("Object", "string", 0, |o, _| {
                let regarding = event_regarding(o);
                json!(format!(
                    "{}/{}",
                    regarding["kind"]
                        .as_str()
                        .unwrap_or_default()
                        .to_lowercase(),
                    regarding["name"].as_str().unwrap_or_default()
                ))
            }),
            column("Subobject", "string", 1, |o, _| {
                event_regarding(o)["fieldPath"].clone()
            }),
            column("Source", "string", 1, |o, _| json!(event_source(o))),
            column("Message", "string", 0, |o, _| {
                first_text(o, &["message", "note"]).map_or(Value::Null, |m| json!(m))
            }),
            column("First Seen", "string", 1, |o, now| {
                json!(since(event_first_seen(o), now))
            }),
            column("Count", "integer", 1, |o, _| json!(event_count(o))),
            column("Name", "string", 1, |o, _| o["metadata"]["name"].clone()),
        ],
        _ => return None,
    };
    Some(columns)
}

/// kube-apiserver's `translateTimestampSince`: how long ago, as `duration.HumanDuration`
/// prints it; `<unknown>` without a time.
pub fn since(timestamp: Option<&str>, now: Timestamp) -> String {
    match timestamp.and_then(|t| t.parse::<Timestamp>().ok()) {
        Some(then) => human_duration(now.as_second().saturating_sub(then.as_second())),
        None => "<unknown>".into(),
    }
}

/// apimachinery's `duration.HumanDuration` of a number of seconds: two units while the larger
/// is small (`5m30s`, `3h20m`, `2d4h`, `1y30d`), one otherwise.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    let seconds = seconds.max(0);
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return match seconds % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{days}d"),
            h => format!("{days}d{h}h"),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return match days % 365 {
            0 => format!("{years}y"),
            d => format!("{years}y{d}d"),
        };
    }
    format!("{years}y")
}

/// An Ingress's rule hosts as kube-apiserver prints them: the first three, then how many
/// more; `*` when no rule names a host.
fn ingress_hosts(ingress: &Value) -> String {
    let hosts: Vec<&str> = ingress["spec"]["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["host"].as_str())
        .filter(|h| !h.is_empty())
        .collect();
    match hosts.len() {
        0 => "*".into(),
        1..=3 => hosts.join(","),
        n => format!("{} + {} more...", hosts[..3].join(","), n - 3),
    }
}

/// A ResourceQuota's `used/hard` per resource, from its status: the `limits.` resources in
/// the Limit column, the rest in Request, sorted by name.
fn quota_usage(quota: &Value, limits: bool) -> String {
    let status = &quota["status"];
    let mut entries: Vec<String> = status["hard"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(name, _)| name.starts_with("limits.") == limits)
        .map(|(name, hard)| {
            let used = status["used"][name].as_str().unwrap_or("0");
            format!("{name}: {used}/{}", hard.as_str().unwrap_or_default())
        })
        .collect();
    entries.sort();
    entries.join(", ")
}

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

fn keys(map: &Value) -> usize {
    map.as_object().map_or(0, serde_json::Map::len)
}

fn text_or_none(value: &Value) -> String {
    match value.as_str() {
        Some(text) if !text.is_empty() => text.to_string(),
        _ => "<none>".into(),
    }
}

fn int_or_string(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => "N/A".into(),
    }
}

fn first_text<'a>(object: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| object[*k].as_str().filter(|s| !s.is_empty()))
}

/// A pod template's containers' `field`s, joined by commas.
fn containers(template: &Value, field: &str) -> String {
    template["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c[field].as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// A map selector as `k=v,…` in key order; `<none>` when empty.
fn map_selector(labels: &Value) -> String {
    let pairs: Vec<String> = labels
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    if pairs.is_empty() {
        "<none>".into()
    } else {
        pairs.join(",")
    }
}

/// A LabelSelector as `metav1.FormatLabelSelector` writes one: `<none>` when it selects
/// everything.
fn label_selector(selector: &Value) -> String {
    match crate::selectors::label_selector_string(selector) {
        text if text.is_empty() => "<none>".into(),
        text => text,
    }
}

/// printNode's STATUS: `Ready`, `NotReady` or `Unknown` from the Ready condition, with
/// `SchedulingDisabled` once cordoned.
fn node_status(node: &Value) -> String {
    let ready = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready")
        .map(|c| c["status"].as_str().unwrap_or_default());
    let mut status = match ready {
        Some("True") => "Ready",
        Some(_) => "NotReady",
        None => "Unknown",
    }
    .to_string();
    if node["spec"]["unschedulable"] == true {
        status.push_str(",SchedulingDisabled");
    }
    status
}

/// printNode's ROLES: the `node-role.kubernetes.io/<role>` labels (and `kubernetes.io/role`).
fn node_roles(node: &Value) -> String {
    let mut roles: Vec<&str> = node["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
            Some(role) if !role.is_empty() => Some(role),
            _ if k == "kubernetes.io/role" => v.as_str(),
            _ => None,
        })
        .collect();
    roles.sort_unstable();
    roles.dedup();
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.join(",")
    }
}

fn statuses(pod: &Value) -> impl Iterator<Item = &Value> {
    pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
}

/// printPod's STATUS: the phase, overridden by the pod's reason, a container's waiting or
/// terminated reason, and `Terminating` once the pod is being deleted.
fn pod_status(pod: &Value) -> String {
    let mut reason = first_text(&pod["status"], &["reason", "phase"])
        .unwrap_or("Unknown")
        .to_string();
    for status in statuses(pod) {
        let state = &status["state"];
        if let Some(waiting) = state["waiting"]["reason"]
            .as_str()
            .filter(|r| !r.is_empty())
        {
            reason = waiting.to_string();
        } else if let Some(terminated) = state["terminated"]["reason"]
            .as_str()
            .filter(|r| !r.is_empty())
        {
            reason = terminated.to_string();
        }
    }
    if pod["metadata"]["deletionTimestamp"].is_string() && reason != "Completed" {
        reason = "Terminating".into();
    }
    reason
}

/// printPod's RESTARTS: the containers' restarts, with how long ago the last one ended.
fn restarts(pod: &Value, now: Timestamp) -> String {
    let count: i64 = statuses(pod)
        .map(|s| int(&s["restartCount"]))
        .fold(0, i64::saturating_add);
    let last = statuses(pod)
        .filter_map(|s| s["lastState"]["terminated"]["finishedAt"].as_str())
        .filter_map(|t| t.parse::<Timestamp>().ok())
        .max();
    match last {
        Some(at) if count > 0 => format!(
            "{count} ({} ago)",
            human_duration(now.as_second().saturating_sub(at.as_second()))
        ),
        _ => count.to_string(),
    }
}

fn external_ip(service: &Value) -> String {
    let spec = &service["spec"];
    let external: Vec<String> = spec["externalIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    match spec["type"].as_str().unwrap_or("ClusterIP") {
        "ClusterIP" | "NodePort" if external.is_empty() => "<none>".into(),
        "ClusterIP" | "NodePort" => external.join(","),
        "LoadBalancer" => {
            let mut all: Vec<String> = service["status"]["loadBalancer"]["ingress"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| first_text(i, &["ip", "hostname"]).map(String::from))
                .collect();
            all.extend(external);
            if all.is_empty() {
                "<pending>".into()
            } else {
                all.join(",")
            }
        }
        "ExternalName" => spec["externalName"].as_str().unwrap_or_default().into(),
        _ => "<unknown>".into(),
    }
}

fn service_ports(service: &Value) -> String {
    let ports: Vec<String> = service["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let protocol = p["protocol"].as_str().unwrap_or("TCP");
            match p["nodePort"].as_i64() {
                Some(node) if node != 0 => format!("{}:{node}/{protocol}", int(&p["port"])),
                _ => format!("{}/{protocol}", int(&p["port"])),
            }
        })
        .collect();
    if ports.is_empty() {
        "<none>".into()
    } else {
        ports.join(",")
    }
}

fn condition_true(object: &Value, kind: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// printCertificateSigningRequest's CONDITION: Denied over Approved over Pending, then
/// `,Failed` and `,Issued` when they hold.
fn csr_condition(csr: &Value) -> String {
    let has = |kind: &str| {
        csr["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == kind)
    };
    let mut status = if has("Denied") {
        "Denied".to_string()
    } else if has("Approved") {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if has("Failed") {
        status.push_str(",Failed");
    }
    if csr["status"]["certificate"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
    {
        status.push_str(",Issued");
    }
    status
}

/// printJob's STATUS (kube 1.31+): the terminal condition, else suspended or running.
fn job_status(job: &Value) -> &'static str {
    if condition_true(job, "Failed") {
        "Failed"
    } else if condition_true(job, "Complete") {
        "Complete"
    } else if condition_true(job, "Suspended") {
        "Suspended"
    } else if condition_true(job, "FailureTarget") {
        "FailureTarget"
    } else if condition_true(job, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    }
}

fn completions(job: &Value) -> String {
    let succeeded = int(&job["status"]["succeeded"]);
    match job["spec"]["completions"].as_i64() {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match job["spec"]["parallelism"].as_i64().unwrap_or(1) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

fn job_duration(job: &Value, now: Timestamp) -> String {
    let time = |key: &str| {
        job["status"][key]
            .as_str()
            .and_then(|t| t.parse::<Timestamp>().ok())
    };
    match (time("startTime"), time("completionTime")) {
        (None, _) => String::new(),
        (Some(start), Some(end)) => {
            human_duration(end.as_second().saturating_sub(start.as_second()))
        }
        (Some(start), None) => human_duration(now.as_second().saturating_sub(start.as_second())),
    }
}

/// printHorizontalPodAutoscaler's TARGETS for its metrics: `cpu: 40%/80%`, `<unknown>` for
/// a current value not yet observed, `+ N more...` past the first two.
fn hpa_targets(hpa: &Value) -> String {
    // A v1 HPA's `targetCPUUtilizationPercentage` prints as its v2 metric does.
    let v2 = crate::versions::hpa_in_v2(hpa);
    let hpa = &v2;
    let metrics: Vec<&Value> = hpa["spec"]["metrics"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if metrics.is_empty() {
        return "<none>".into();
    }
    let current = |name: &str| {
        hpa["status"]["currentMetrics"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["type"] == "Resource" && m["resource"]["name"] == name)
            .map(|m| m["resource"]["current"].clone())
    };
    let shown: Vec<String> = metrics
        .iter()
        .take(2)
        .map(|m| match m["type"].as_str().unwrap_or_default() {
            "Resource" | "ContainerResource" => {
                let key = if m["type"] == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let name = m[key]["name"].as_str().unwrap_or_default();
                let target = &m[key]["target"];
                let now = current(name);
                match target["averageUtilization"].as_i64() {
                    Some(goal) => {
                        let value = now
                            .as_ref()
                            .and_then(|c| c["averageUtilization"].as_i64())
                            .map_or("<unknown>".to_string(), |v| format!("{v}%"));
                        format!("{name}: {value}/{goal}%")
                    }
                    None => {
                        let goal = int_or_string(&target["averageValue"]);
                        let value = now
                            .as_ref()
                            .map(|c| int_or_string(&c["averageValue"]))
                            .filter(|v| v != "N/A")
                            .unwrap_or_else(|| "<unknown>".into());
                        format!("{name}: {value}/{goal}")
                    }
                }
            }
            _ => "<unknown>/<unknown>".into(),
        })
        .collect();
    let mut text = shown.join(", ");
    if metrics.len() > 2 {
        text.push_str(&format!(" + {} more...", metrics.len().saturating_sub(2)));
    }
    text
}

/// The object an Event is about: `involvedObject` (core/v1) or `regarding` (events.k8s.io).
fn event_regarding(event: &Value) -> &Value {
    if event["involvedObject"].is_object() {
        &event["involvedObject"]
    } else {
        &event["regarding"]
    }
}

fn event_first_seen(event: &Value) -> Option<&str> {
    first_text(
        event,
        &["firstTimestamp", "deprecatedFirstTimestamp", "eventTime"],
    )
}

/// printEvent's LAST SEEN: the series' last observation, else the last timestamp, else the
/// first.
fn event_last_seen(event: &Value, now: Timestamp) -> String {
    let last = event["series"]["lastObservedTime"]
        .as_str()
        .or_else(|| first_text(event, &["lastTimestamp", "deprecatedLastTimestamp"]))
        .or_else(|| event_first_seen(event));
    since(last, now)
}

fn event_count(event: &Value) -> i64 {
    event["series"]["count"]
        .as_i64()
        .or_else(|| event["count"].as_i64())
        .or_else(|| event["deprecatedCount"].as_i64())
        .filter(|c| *c != 0)
        .unwrap_or(1)
}

fn event_source(event: &Value) -> String {
    let component = event["source"]["component"]
        .as_str()
        .or_else(|| first_text(event, &["reportingComponent", "reportingController"]))
        .unwrap_or_default();
    match event["source"]["host"].as_str().filter(|h| !h.is_empty()) {
        Some(host) => format!("{component}, {host}"),
        None => component.to_string(),
    }
}
