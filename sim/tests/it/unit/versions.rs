//! Tests of `barbican_sim::versions`.

use serde_json::json;

use barbican_sim::resources::ResourceType;
use barbican_sim::resources::builtins;
use barbican_sim::versions::*;

fn builtin(group: &str, plural: &str) -> ResourceType {
    builtins()
        .into_iter()
        .find(|t| t.group == group && t.plural == plural)
        .unwrap()
}

fn event_types() -> (ResourceType, ResourceType) {
    (builtin("", "events"), builtin("events.k8s.io", "events"))
}

#[test]
fn both_event_apis_share_core_storage() {
    let (core, events) = event_types();
    assert_eq!(core.storage_key(), events.storage_key());
    assert!(events.stores(&core.storage_key()));
}

#[test]
fn an_events_api_event_reads_as_core_and_back() {
    let (core, events) = event_types();
    let written = json!({
        "regarding": {"kind": "Barbican", "name": "b", "namespace": "openstack"},
        "note": "the db-sync Job completed",
        "reason": "DatabaseSynced",
        "type": "Normal",
        "reportingController": "barbican-operator",
        "reportingInstance": "barbican-operator-0",
        "eventTime": "2026-12-01T00:00:00.000000Z",
    });
    let mut as_core = written.clone();
    convert(&mut as_core, &core);
    assert_eq!(as_core["involvedObject"]["name"], "b");
    assert_eq!(as_core["message"], "the db-sync Job completed");
    assert_eq!(as_core["reportingComponent"], "barbican-operator");
    assert_eq!(as_core["reason"], "DatabaseSynced");
    assert!(as_core.get("regarding").is_none() && as_core.get("note").is_none());
    let mut back = as_core;
    convert(&mut back, &events);
    assert_eq!(back, written);
}

fn hpa(version: &str) -> ResourceType {
    builtins()
        .into_iter()
        .find(|t| t.plural == "horizontalpodautoscalers" && t.version == version)
        .unwrap()
}

/// What `kubectl autoscale deployment web --max=3 --cpu-percent=70` writes at v1 reads at
/// v2 as a CPU utilization metric; a v2 HPA with more than v1 holds round-trips through
/// v1 by the `autoscaling.alpha.kubernetes.io/…` annotations.
#[test]
fn an_hpa_converts_between_v1_and_v2_as_kube_apiserver_does() {
    let (v1, v2) = (hpa("v1"), hpa("v2"));
    assert_eq!(v1.storage_key(), v2.storage_key());
    let mut written = json!({"metadata": {"name": "web"}, "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "maxReplicas": 3, "targetCPUUtilizationPercentage": 70}});
    convert(&mut written, &v2);
    assert_eq!(
        written["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 70}}}])
    );
    assert!(
        written["spec"]
            .get("targetCPUUtilizationPercentage")
            .is_none()
    );
    assert!(written["metadata"].get("annotations").is_none());
    let v2_object = json!({"metadata": {"name": "b", "annotations": {"a": "b"}}, "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "b"},
        "minReplicas": 2, "maxReplicas": 5,
        "metrics": [
            {"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}},
            {"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "Utilization", "averageUtilization": 90}}}],
        "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300}}},
        "status": {"currentReplicas": 2, "desiredReplicas": 2,
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": 12}}}],
            "conditions": [{"type": "AbleToScale", "status": "True"}]}});
    let mut as_v1 = v2_object.clone();
    convert(&mut as_v1, &v1);
    assert_eq!(as_v1["spec"]["targetCPUUtilizationPercentage"], 80);
    assert_eq!(as_v1["status"]["currentCPUUtilizationPercentage"], 12);
    for gone in ["metrics", "behavior"] {
        assert!(as_v1["spec"].get(gone).is_none(), "{gone}");
    }
    let annotations = &as_v1["metadata"]["annotations"];
    assert!(
        annotations[HPA_METRICS]
            .as_str()
            .unwrap()
            .contains("memory")
    );
    assert!(
        annotations[HPA_CONDITIONS]
            .as_str()
            .unwrap()
            .contains("AbleToScale")
    );
    let mut back = as_v1;
    convert(&mut back, &v2);
    assert_eq!(back, v2_object);
}

/// A hostile body (a spec, status or metadata that is not an object, beside annotations
/// the conversion reads) passes through unchanged for validation to refuse; it used to
/// panic the request.
#[test]
fn an_hpa_whose_parts_are_not_objects_passes_through() {
    let (v1, v2) = (hpa("v1"), hpa("v2"));
    let mut odd = json!({"metadata": {"annotations": {HPA_BEHAVIOR: "{}", HPA_CONDITIONS: "[]"}},
        "spec": 5, "status": "x"});
    convert(&mut odd, &v2);
    assert_eq!(odd, json!({"metadata": {}, "spec": 5, "status": "x"}));
    let mut odd = json!({"metadata": "x", "spec": {"behavior": {}}, "status": []});
    convert(&mut odd, &v1);
    assert_eq!(odd, json!({"metadata": "x", "spec": {}, "status": []}));
    let mut not_an_object = json!([1]);
    convert(&mut not_an_object, &v2);
    assert_eq!(not_an_object, json!([1]));
}

#[test]
fn other_kinds_are_untouched() {
    let mut object = json!({"message": "x", "note": "y"});
    convert(&mut object, &builtin("", "configmaps"));
    assert_eq!(object, json!({"message": "x", "note": "y"}));
}
