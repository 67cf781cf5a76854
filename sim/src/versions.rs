//! One stored object, several APIs: what kube-apiserver converts between when it serves one
//! storage at more than one group or version.
//!
//! The versions of a CRD share a storage and differ only in `apiVersion` here (the CRDs this
//! sim serves convert with strategy `None`). The two Event APIs, core `v1` and
//! `events.k8s.io/v1`, also share one storage, and kube-apiserver renames fields between them
//! (`pkg/apis/events/v1` conversion): an Event the operator writes through `events.k8s.io` is
//! what `kubectl describe` and `kubectl events` list through `/api/v1`, and the other way round.
//! HorizontalPodAutoscalers are served at `autoscaling/v2` and `autoscaling/v1` (what
//! `kubectl autoscale` writes), converted as `pkg/apis/autoscaling/v1`'s conversion does: the
//! CPU utilization target is v1's `targetCPUUtilizationPercentage`, and what v1 cannot hold
//! travels in the `autoscaling.alpha.kubernetes.io/…` annotations (here as v2 JSON).

use serde_json::{Map, Value};

use crate::resources::ResourceType;

/// Each core `v1` Event field beside the `events.k8s.io/v1` field it is served as.
const EVENT_FIELDS: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
];

/// Whether `t` is either Event API.
fn is_event(t: &ResourceType) -> bool {
    t.plural == "events" && (t.group.is_empty() || t.group == "events.k8s.io")
}

/// Renames `object`'s fields into `t`'s form, whichever Event API wrote it; other kinds are
/// left as they are. A field already in `t`'s form wins over its other spelling.
pub fn convert(object: &mut Value, t: &ResourceType) {
    if t.group == "autoscaling" && t.plural == "horizontalpodautoscalers" {
        if t.version == "v1" {
            hpa_to_v1(object);
        } else {
            hpa_to_v2(object);
        }
        return;
    }
    if !is_event(t) {
        return;
    }
    let Some(fields) = object.as_object_mut() else {
        return;
    };
    let to_events_api = t.is_events_api();
    for (core, events) in EVENT_FIELDS {
        let (from, to) = if to_events_api {
            (core, events)
        } else {
            (events, core)
        };
        rename(fields, from, to);
    }
}

/// The annotations an `autoscaling/v1` HPA carries what it has no field for in.
const HPA_METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const HPA_BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const HPA_CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const HPA_CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";

/// Whether a v2 metric is the CPU utilization target (or reading) v1 has a field for.
fn is_cpu_utilization(metric: &Value, part: &str) -> bool {
    metric["type"] == "Resource"
        && metric["resource"]["name"] == "cpu"
        && metric["resource"][part]["averageUtilization"].is_i64()
        && (part == "current" || metric["resource"][part]["type"] == "Utilization")
}

/// Takes `list` out of `holder[key]`: the CPU utilization entry's value, and the rest (kept
/// in `annotation` when there is any).
fn split_cpu(
    holder: &mut Value,
    key: &str,
    part: &str,
    annotations: &mut Map<String, Value>,
    annotation: &str,
) -> Option<Value> {
    let Some(Value::Array(metrics)) = holder.as_object_mut().and_then(|h| h.remove(key)) else {
        return None;
    };
    let (cpu, rest): (Vec<Value>, Vec<Value>) = metrics
        .into_iter()
        .partition(|m| is_cpu_utilization(m, part));
    if !rest.is_empty() {
        annotations.insert(
            annotation.into(),
            Value::String(Value::Array(rest).to_string()),
        );
    }
    cpu.first()
        .map(|m| m["resource"][part]["averageUtilization"].clone())
}

/// An HPA in `autoscaling/v1`'s form; one already in it is left as it is.
fn hpa_to_v1(object: &mut Value) {
    let mut annotations = object["metadata"]["annotations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut spec = object["spec"].take();
    if let Some(target) = split_cpu(
        &mut spec,
        "metrics",
        "target",
        &mut annotations,
        HPA_METRICS,
    ) {
        spec["targetCPUUtilizationPercentage"] = target;
    }
    if let Some(behavior) = spec.as_object_mut().and_then(|s| s.remove("behavior")) {
        annotations.insert(HPA_BEHAVIOR.into(), Value::String(behavior.to_string()));
    }
    put_back(object, "spec", spec);
    let mut status = object["status"].take();
    if let Some(current) = split_cpu(
        &mut status,
        "currentMetrics",
        "current",
        &mut annotations,
        HPA_CURRENT_METRICS,
    ) {
        status["currentCPUUtilizationPercentage"] = current;
    }
    if let Some(conditions) = status.as_object_mut().and_then(|s| s.remove("conditions")) {
        annotations.insert(HPA_CONDITIONS.into(), Value::String(conditions.to_string()));
    }
    put_back(object, "status", status);
    if !annotations.is_empty() {
        object["metadata"]["annotations"] = Value::Object(annotations);
    }
}

/// A copy of `hpa` in `autoscaling/v2`'s form, whichever version it is in (what the table
/// printer reads, at either version).
pub fn hpa_in_v2(hpa: &Value) -> Value {
    let mut copy = hpa.clone();
    hpa_to_v2(&mut copy);
    copy
}

/// An HPA in `autoscaling/v2`'s form; one already in it is left as it is.
fn hpa_to_v2(object: &mut Value) {
    let mut annotations = object["metadata"]["annotations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut carried = |key: &str| -> Option<Value> {
        annotations
            .remove(key)
            .and_then(|v| serde_json::from_str(v.as_str()?).ok())
    };
    let (metrics, behavior, current, conditions) = (
        carried(HPA_METRICS),
        carried(HPA_BEHAVIOR),
        carried(HPA_CURRENT_METRICS),
        carried(HPA_CONDITIONS),
    );
    let mut spec = object["spec"].take();
    join_cpu(
        &mut spec,
        "targetCPUUtilizationPercentage",
        "metrics",
        "target",
        metrics,
    );
    if let Some(behavior) = behavior {
        spec["behavior"] = behavior;
    }
    put_back(object, "spec", spec);
    let mut status = object["status"].take();
    join_cpu(
        &mut status,
        "currentCPUUtilizationPercentage",
        "currentMetrics",
        "current",
        current,
    );
    if let Some(conditions) = conditions {
        status["conditions"] = conditions;
    }
    put_back(object, "status", status);
    if let Some(metadata) = object["metadata"].as_object_mut() {
        if annotations.is_empty() {
            metadata.remove("annotations");
        } else {
            metadata.insert("annotations".into(), Value::Object(annotations));
        }
    }
}

/// The reverse of [`split_cpu`]: v1's CPU utilization field `cpu_key` of `holder` becomes the
/// first entry of v2's list `key`, followed by what the annotation `carried`.
fn join_cpu(holder: &mut Value, cpu_key: &str, key: &str, part: &str, carried: Option<Value>) {
    let cpu = holder.as_object_mut().and_then(|h| h.remove(cpu_key));
    let mut all: Vec<Value> = cpu
        .map(|utilization| {
            let mut reading = serde_json::json!({"averageUtilization": utilization});
            if part == "target" {
                reading["type"] = "Utilization".into();
            }
            serde_json::json!({"type": "Resource", "resource": {"name": "cpu", part: reading}})
        })
        .into_iter()
        .collect();
    all.extend(
        carried
            .and_then(|m| m.as_array().cloned())
            .unwrap_or_default(),
    );
    if !all.is_empty() {
        holder[key] = Value::Array(all);
    }
}

/// Puts a taken part back, or leaves it out when there was none.
fn put_back(object: &mut Value, key: &str, part: Value) {
    if let Some(fields) = object.as_object_mut() {
        if part.is_null() {
            fields.remove(key);
        } else {
            fields.insert(key.into(), part);
        }
    }
}

fn rename(fields: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(value) = fields.remove(from)
        && !fields.contains_key(to)
    {
        fields.insert(to.to_string(), value);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::resources::builtins;

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

    #[test]
    fn other_kinds_are_untouched() {
        let mut object = json!({"message": "x", "note": "y"});
        convert(&mut object, &builtin("", "configmaps"));
        assert_eq!(object, json!({"message": "x", "note": "y"}));
    }
}
