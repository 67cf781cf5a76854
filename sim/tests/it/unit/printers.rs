//! Tests of `barbican_sim::printers`.

use jiff::Timestamp;
use serde_json::Value;
use serde_json::json;

use barbican_sim::printers::*;

const NOW: &str = "2026-01-01T01:00:00Z";

fn row(group: &str, plural: &str, object: Value) -> Vec<(String, Value)> {
    let t = barbican_sim::resources::builtins()
        .into_iter()
        .find(|t| t.group == group && t.plural == plural)
        .unwrap_or_else(|| panic!("no built-in {group}/{plural}"));
    let now: Timestamp = NOW.parse().unwrap();
    columns(&t)
        .unwrap_or_else(|| panic!("{plural} has a printer"))
        .iter()
        .map(|c| (c.name.to_string(), (c.cell)(&object, now)))
        .collect()
}

fn cell(row: &[(String, Value)], name: &str) -> Value {
    row.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn human_durations_match_apimachinery() {
    for (seconds, text) in [
        (-5, "<invalid>"),
        (-1, "0s"),
        (59, "59s"),
        (119, "119s"),
        (120, "2m"),
        (330, "5m30s"),
        (600, "10m"),
        (3600, "60m"),
        (10_800, "3h"),
        (12_000, "3h20m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (50 * 3600, "2d2h"),
        (8 * 86_400, "8d"),
        (800 * 86_400, "2y70d"),
        (9 * 365 * 86_400, "9y"),
    ] {
        assert_eq!(human_duration(seconds), text, "{seconds}s");
    }
}

#[test]
fn deployments_print_ready_up_to_date_and_available() {
    let row = row(
        "apps",
        "deployments",
        json!({"metadata": {"name": "barbican", "creationTimestamp": "2026-01-01T00:55:00Z"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "barbican"}},
                "template": {"spec": {"containers": [{"name": "api", "image": "i:1"}, {"name": "side", "image": "s:2"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}),
    );
    assert_eq!(cell(&row, "Ready"), "2/3");
    assert_eq!(cell(&row, "Up-to-date"), 3);
    assert_eq!(cell(&row, "Available"), 2);
    assert_eq!(cell(&row, "Age"), "5m");
    assert_eq!(cell(&row, "Containers"), "api,side");
    assert_eq!(cell(&row, "Images"), "i:1,s:2");
    assert_eq!(cell(&row, "Selector"), "app=barbican");
}

#[test]
fn pods_print_ready_status_and_restarts() {
    let row = row(
        "",
        "pods",
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "podIP": "10.0.0.5", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2,
                 "lastState": {"terminated": {"finishedAt": "2026-01-01T00:58:00Z"}}, "state": {"running": {}}},
                {"name": "b", "ready": false, "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}}),
    );
    assert_eq!(cell(&row, "Ready"), "1/2");
    assert_eq!(cell(&row, "Status"), "CrashLoopBackOff");
    assert_eq!(cell(&row, "Restarts"), "3 (2m ago)");
    assert_eq!(cell(&row, "IP"), "10.0.0.5");
    assert_eq!(cell(&row, "Node"), "<none>");
    let pending = row_of_pending();
    assert_eq!(cell(&pending, "Status"), "Pending");
    assert_eq!(cell(&pending, "Restarts"), "0");
}

fn row_of_pending() -> Vec<(String, Value)> {
    row(
        "",
        "pods",
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Pending"}}),
    )
}

#[test]
fn services_print_type_ips_and_ports() {
    let cluster_ip = row(
        "",
        "services",
        json!({"metadata": {"name": "s"}, "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.20",
            "selector": {"b": "2", "a": "1"},
            "ports": [{"port": 9311, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}}),
    );
    assert_eq!(cell(&cluster_ip, "Type"), "ClusterIP");
    assert_eq!(cell(&cluster_ip, "Cluster-IP"), "10.96.0.20");
    assert_eq!(cell(&cluster_ip, "External-IP"), "<none>");
    assert_eq!(cell(&cluster_ip, "Port(s)"), "9311/TCP,53/UDP");
    assert_eq!(cell(&cluster_ip, "Selector"), "a=1,b=2");
    let balancer = row(
        "",
        "services",
        json!({"metadata": {"name": "s"}, "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.21",
            "ports": [{"port": 443, "nodePort": 30443, "protocol": "TCP"}]}}),
    );
    assert_eq!(cell(&balancer, "External-IP"), "<pending>");
    assert_eq!(cell(&balancer, "Port(s)"), "443:30443/TCP");
}

#[test]
fn secrets_config_maps_and_namespaces_print_their_counts_and_phase() {
    let secret = row(
        "",
        "secrets",
        json!({"metadata": {"name": "s"}, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}}),
    );
    assert_eq!(cell(&secret, "Type"), "kubernetes.io/tls");
    assert_eq!(cell(&secret, "Data"), 2);
    let map = row(
        "",
        "configmaps",
        json!({"metadata": {"name": "m"}, "data": {"a": "1"}, "binaryData": {"b": ""}}),
    );
    assert_eq!(cell(&map, "Data"), 2);
    let namespace = row(
        "",
        "namespaces",
        json!({"metadata": {"name": "n"}, "status": {"phase": "Terminating"}}),
    );
    assert_eq!(cell(&namespace, "Status"), "Terminating");
}

#[test]
fn jobs_and_cron_jobs_print_status_completions_and_schedule() {
    let job = row(
        "batch",
        "jobs",
        json!({"metadata": {"name": "j"}, "spec": {"completions": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
            "status": {"succeeded": 1, "startTime": "2026-01-01T00:50:00Z", "completionTime": "2026-01-01T00:52:30Z",
                "conditions": [{"type": "Complete", "status": "True"}]}}),
    );
    assert_eq!(cell(&job, "Status"), "Complete");
    assert_eq!(cell(&job, "Completions"), "1/1");
    assert_eq!(cell(&job, "Duration"), "2m30s");
    let running = row(
        "batch",
        "jobs",
        json!({"metadata": {"name": "j"}, "spec": {"parallelism": 2}, "status": {"startTime": "2026-01-01T00:59:00Z"}}),
    );
    assert_eq!(cell(&running, "Status"), "Running");
    assert_eq!(cell(&running, "Completions"), "0/1 of 2");
    assert_eq!(cell(&running, "Duration"), "60s");
    let cron = row(
        "batch",
        "cronjobs",
        json!({"metadata": {"name": "c"}, "spec": {"schedule": "1 0 * * *", "suspend": true},
            "status": {"active": [{"name": "x"}], "lastScheduleTime": "2026-01-01T00:01:00Z"}}),
    );
    assert_eq!(cell(&cron, "Schedule"), "1 0 * * *");
    assert_eq!(cell(&cron, "Timezone"), "<none>");
    assert_eq!(cell(&cron, "Suspend"), true);
    assert_eq!(cell(&cron, "Active"), 1);
    assert_eq!(cell(&cron, "Last Schedule"), "59m");
}

#[test]
fn autoscalers_budgets_and_policies_print_their_targets() {
    let hpa = row(
        "autoscaling",
        "horizontalpodautoscalers",
        json!({"metadata": {"name": "h"}, "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "barbican"},
            "minReplicas": 2, "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]},
            "status": {"currentReplicas": 2}}),
    );
    assert_eq!(cell(&hpa, "Reference"), "Deployment/barbican");
    assert_eq!(cell(&hpa, "Targets"), "cpu: <unknown>/80%");
    let v1 = row(
        "autoscaling",
        "horizontalpodautoscalers",
        json!({"apiVersion": "autoscaling/v1", "metadata": {"name": "h"},
            "spec": {"maxReplicas": 3, "targetCPUUtilizationPercentage": 70},
            "status": {"currentCPUUtilizationPercentage": 12}}),
    );
    assert_eq!(cell(&v1, "Targets"), "cpu: 12%/70%");
    assert_eq!(
        (
            cell(&hpa, "MinPods"),
            cell(&hpa, "MaxPods"),
            cell(&hpa, "Replicas")
        ),
        (json!(2), json!(5), json!(2))
    );
    let pdb = row(
        "policy",
        "poddisruptionbudgets",
        json!({"metadata": {"name": "p"}, "spec": {"maxUnavailable": 1}, "status": {"disruptionsAllowed": 1}}),
    );
    assert_eq!(cell(&pdb, "Min Available"), "N/A");
    assert_eq!(cell(&pdb, "Max Unavailable"), "1");
    assert_eq!(cell(&pdb, "Allowed Disruptions"), 1);
    let policy = row(
        "networking.k8s.io",
        "networkpolicies",
        json!({"metadata": {"name": "n"}, "spec": {"podSelector": {"matchLabels": {"app": "barbican"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["api", "worker"]}]}}}),
    );
    assert_eq!(
        cell(&policy, "Pod-Selector"),
        "app=barbican,tier in (api,worker)"
    );
}

/// kube-apiserver's Ingress columns (class, hosts past three cut, ports with TLS) and
/// ResourceQuota columns (usage from status, `limits.` apart, after AGE).
#[test]
fn ingresses_and_quotas_print_kube_apiservers_columns() {
    let ingress = row(
        "networking.k8s.io",
        "ingresses",
        json!({"metadata": {"name": "i"}, "spec": {"ingressClassName": "nginx",
            "rules": [{"host": "a"}, {"host": "b"}, {"host": "c"}, {"host": "d"}],
            "tls": [{"secretName": "t"}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}, {"hostname": "lb"}]}}}),
    );
    assert_eq!(cell(&ingress, "Class"), "nginx");
    assert_eq!(cell(&ingress, "Hosts"), "a,b,c + 1 more...");
    assert_eq!(cell(&ingress, "Address"), "10.0.0.1,lb");
    assert_eq!(cell(&ingress, "Ports"), "80, 443");
    let bare = row(
        "networking.k8s.io",
        "ingresses",
        json!({"metadata": {"name": "i"}, "spec": {}}),
    );
    assert_eq!(
        (
            cell(&bare, "Class"),
            cell(&bare, "Hosts"),
            cell(&bare, "Ports")
        ),
        (json!("<none>"), json!("*"), json!("80"))
    );
    let quota = row(
        "",
        "resourcequotas",
        json!({"metadata": {"name": "q"}, "status": {
            "hard": {"pods": "3", "limits.cpu": "2", "requests.cpu": "1"},
            "used": {"pods": "1", "limits.cpu": "500m"}}}),
    );
    assert_eq!(cell(&quota, "Request"), "pods: 1/3, requests.cpu: 0/1");
    assert_eq!(cell(&quota, "Limit"), "limits.cpu: 500m/2");
}

#[test]
fn events_of_both_apis_print_what_kubectl_get_events_shows() {
    let core = row(
        "",
        "events",
        json!({"metadata": {"name": "e"}, "type": "Warning", "reason": "Failed", "message": "m",
            "involvedObject": {"kind": "Barbican", "name": "b", "fieldPath": "spec"},
            "source": {"component": "barbican-operator"},
            "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:59:00Z", "count": 3}),
    );
    assert_eq!(cell(&core, "Object"), "barbican/b");
    assert_eq!(cell(&core, "Last Seen"), "60s");
    assert_eq!(cell(&core, "First Seen"), "60m");
    assert_eq!(cell(&core, "Count"), 3);
    assert_eq!(cell(&core, "Source"), "barbican-operator");
    assert_eq!(cell(&core, "Message"), "m");
    let new = row(
        "events.k8s.io",
        "events",
        json!({"metadata": {"name": "e"}, "type": "Normal", "reason": "Ready", "note": "n",
            "regarding": {"kind": "Barbican", "name": "b"}, "reportingController": "barbican-operator",
            "eventTime": "2026-01-01T00:58:00.000000Z"}),
    );
    assert_eq!(cell(&new, "Object"), "barbican/b");
    assert_eq!(cell(&new, "Message"), "n");
    assert_eq!(cell(&new, "Last Seen"), "2m");
    assert_eq!(cell(&new, "Count"), 1);
    assert_eq!(cell(&new, "Source"), "barbican-operator");
}

#[test]
fn nodes_print_status_roles_and_version() {
    let node = row(
        "",
        "nodes",
        json!({"metadata": {"name": "n", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.33.0"}}}),
    );
    assert_eq!(cell(&node, "Status"), "Ready,SchedulingDisabled");
    assert_eq!(cell(&node, "Roles"), "control-plane");
    assert_eq!(cell(&node, "Version"), "v1.33.0");
    let bare = row("", "nodes", json!({"metadata": {"name": "fakenode"}}));
    assert_eq!(
        (cell(&bare, "Status"), cell(&bare, "Roles")),
        (json!("Unknown"), json!("<none>"))
    );
}

#[test]
fn custom_resource_definitions_print_their_creation_time() {
    let crd = row(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        json!({"metadata": {"name": "barbicans.barbican.c5c3.io", "creationTimestamp": "2026-01-01T00:00:00Z"}}),
    );
    assert_eq!(cell(&crd, "Created At"), "2026-01-01T00:00:00Z");
}
