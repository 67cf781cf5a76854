//! How each cell is computed from the stored object, as kube-apiserver's printers compute it:
//! ages and durations, selectors, pod and job status, ports, conditions, autoscaler targets and
//! events.

use super::*;

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
pub(super) fn ingress_hosts(ingress: &Value) -> String {
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
pub(super) fn quota_usage(quota: &Value, limits: bool) -> String {
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

pub(super) fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

pub(super) fn keys(map: &Value) -> usize {
    map.as_object().map_or(0, serde_json::Map::len)
}

pub(super) fn text_or_none(value: &Value) -> String {
    match value.as_str() {
        Some(text) if !text.is_empty() => text.to_string(),
        _ => "<none>".into(),
    }
}

pub(super) fn int_or_string(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => "N/A".into(),
    }
}

pub(super) fn first_text<'a>(object: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| object[*k].as_str().filter(|s| !s.is_empty()))
}

/// A pod template's containers' `field`s, joined by commas.
pub(super) fn containers(template: &Value, field: &str) -> String {
    template["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c[field].as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// A map selector as `k=v,…` in key order; `<none>` when empty.
pub(super) fn map_selector(labels: &Value) -> String {
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
pub(super) fn label_selector(selector: &Value) -> String {
    match crate::selectors::label_selector_string(selector) {
        text if text.is_empty() => "<none>".into(),
        text => text,
    }
}

/// printNode's STATUS: `Ready`, `NotReady` or `Unknown` from the Ready condition, with
/// `SchedulingDisabled` once cordoned.
pub(super) fn node_status(node: &Value) -> String {
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
pub(super) fn node_roles(node: &Value) -> String {
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

pub(super) fn statuses(pod: &Value) -> impl Iterator<Item = &Value> {
    pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
}

/// printPod's STATUS: the phase, overridden by the pod's reason, a container's waiting or
/// terminated reason, and `Terminating` once the pod is being deleted.
pub(super) fn pod_status(pod: &Value) -> String {
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
pub(super) fn restarts(pod: &Value, now: Timestamp) -> String {
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

pub(super) fn external_ip(service: &Value) -> String {
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

pub(super) fn service_ports(service: &Value) -> String {
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

pub(super) fn condition_true(object: &Value, kind: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// printCertificateSigningRequest's CONDITION: Denied over Approved over Pending, then
/// `,Failed` and `,Issued` when they hold.
pub(super) fn csr_condition(csr: &Value) -> String {
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
pub(super) fn job_status(job: &Value) -> &'static str {
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

pub(super) fn completions(job: &Value) -> String {
    let succeeded = int(&job["status"]["succeeded"]);
    match job["spec"]["completions"].as_i64() {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match job["spec"]["parallelism"].as_i64().unwrap_or(1) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

pub(super) fn job_duration(job: &Value, now: Timestamp) -> String {
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
pub(super) fn hpa_targets(hpa: &Value) -> String {
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
pub(super) fn event_regarding(event: &Value) -> &Value {
    if event["involvedObject"].is_object() {
        &event["involvedObject"]
    } else {
        &event["regarding"]
    }
}

pub(super) fn event_first_seen(event: &Value) -> Option<&str> {
    first_text(
        event,
        &["firstTimestamp", "deprecatedFirstTimestamp", "eventTime"],
    )
}

/// printEvent's LAST SEEN: the series' last observation, else the last timestamp, else the
/// first.
pub(super) fn event_last_seen(event: &Value, now: Timestamp) -> String {
    let last = event["series"]["lastObservedTime"]
        .as_str()
        .or_else(|| first_text(event, &["lastTimestamp", "deprecatedLastTimestamp"]))
        .or_else(|| event_first_seen(event));
    since(last, now)
}

pub(super) fn event_count(event: &Value) -> i64 {
    event["series"]["count"]
        .as_i64()
        .or_else(|| event["count"].as_i64())
        .or_else(|| event["deprecatedCount"].as_i64())
        .filter(|c| *c != 0)
        .unwrap_or(1)
}

pub(super) fn event_source(event: &Value) -> String {
    let component = event["source"]["component"]
        .as_str()
        .or_else(|| first_text(event, &["reportingComponent", "reportingController"]))
        .unwrap_or_default();
    match event["source"]["host"].as_str().filter(|h| !h.is_empty()) {
        Some(host) => format!("{component}, {host}"),
        None => component.to_string(),
    }
}
