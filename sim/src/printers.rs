//! The columns kube-apiserver prints for built-in kinds (its `pkg/printers/internalversion`):
//! what `kubectl get deploy,rs,po,svc,secret,cm,job,cronjob,hpa,pdb,netpol,ns,no,crd,events` shows
//! in a Table, computed from the stored object as kube-apiserver computes each cell.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::resources::ResourceType;

mod cells;
#[allow(unused_imports)]
pub use cells::*;

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
