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

/// The annotations an `autoscaling/v1` HPA carries what it has no field for in: its metrics,
pub const HPA_METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// its behavior,
pub const HPA_BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// the metrics its status reports,
const HPA_CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// and its status conditions.
pub const HPA_CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";

/// Whether a v2 metric is the CPU utilization target (or reading) v1 has a field for.
fn is_cpu_utilization(metric: &Value, part: &str) -> bool {
    metric["type"] == "Resource"
        && metric["resource"]["name"] == "cpu"
        && metric["resource"][part]["averageUtilization"].is_i64()
        && (part == "current" || metric["resource"][part]["type"] == "Utilization")
}

/// Takes the list `key` out of `holder`: the CPU utilization entry's value, and the rest (kept
/// in `annotation` when there is any).
fn split_cpu(
    holder: &mut Map<String, Value>,
    key: &str,
    part: &str,
    annotations: &mut Map<String, Value>,
    annotation: &str,
) -> Option<Value> {
    let Some(Value::Array(metrics)) = holder.remove(key) else {
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

/// The parts of an HPA the conversion rewrites, each only when it is an object: a body whose
/// spec, status or metadata is something else is left for validation to refuse, never
/// indexed into.
struct HpaParts {
    annotations: Map<String, Value>,
    spec: Map<String, Value>,
    status: Map<String, Value>,
}

impl HpaParts {
    fn take(object: &mut Value) -> Option<Self> {
        let fields = object.as_object_mut()?;
        let mut part = |key: &str| match fields.get_mut(key) {
            Some(Value::Object(map)) => std::mem::take(map),
            _ => Map::new(),
        };
        let (spec, status) = (part("spec"), part("status"));
        let annotations = match fields.get("metadata").map(|m| &m["annotations"]) {
            Some(Value::Object(map)) => map.clone(),
            _ => Map::new(),
        };
        Some(Self {
            annotations,
            spec,
            status,
        })
    }

    /// Writes the parts back: an empty part stays out where the object had none, and the
    /// annotations go only into a metadata object.
    fn put_back(self, object: &mut Value) {
        let Some(fields) = object.as_object_mut() else {
            return;
        };
        for (key, part) in [("spec", self.spec), ("status", self.status)] {
            match fields.get_mut(key) {
                Some(Value::Object(map)) => *map = part,
                Some(_) => {}
                None if part.is_empty() => {}
                None => {
                    fields.insert(key.into(), Value::Object(part));
                }
            }
        }
        if let Some(Value::Object(metadata)) = fields.get_mut("metadata") {
            if self.annotations.is_empty() {
                metadata.remove("annotations");
            } else {
                metadata.insert("annotations".into(), Value::Object(self.annotations));
            }
        }
    }
}

/// An HPA in `autoscaling/v1`'s form; one already in it is left as it is.
fn hpa_to_v1(object: &mut Value) {
    let Some(mut parts) = HpaParts::take(object) else {
        return;
    };
    let annotations = &mut parts.annotations;
    if let Some(target) = split_cpu(
        &mut parts.spec,
        "metrics",
        "target",
        annotations,
        HPA_METRICS,
    ) {
        parts
            .spec
            .insert("targetCPUUtilizationPercentage".into(), target);
    }
    if let Some(behavior) = parts.spec.remove("behavior") {
        annotations.insert(HPA_BEHAVIOR.into(), Value::String(behavior.to_string()));
    }
    if let Some(current) = split_cpu(
        &mut parts.status,
        "currentMetrics",
        "current",
        annotations,
        HPA_CURRENT_METRICS,
    ) {
        parts
            .status
            .insert("currentCPUUtilizationPercentage".into(), current);
    }
    if let Some(conditions) = parts.status.remove("conditions") {
        annotations.insert(HPA_CONDITIONS.into(), Value::String(conditions.to_string()));
    }
    parts.put_back(object);
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
    let Some(mut parts) = HpaParts::take(object) else {
        return;
    };
    let mut carried = |key: &str| -> Option<Value> {
        parts
            .annotations
            .remove(key)
            .and_then(|v| serde_json::from_str(v.as_str()?).ok())
    };
    let (metrics, behavior, current, conditions) = (
        carried(HPA_METRICS),
        carried(HPA_BEHAVIOR),
        carried(HPA_CURRENT_METRICS),
        carried(HPA_CONDITIONS),
    );
    join_cpu(
        &mut parts.spec,
        "targetCPUUtilizationPercentage",
        "metrics",
        "target",
        metrics,
    );
    if let Some(behavior) = behavior {
        parts.spec.insert("behavior".into(), behavior);
    }
    join_cpu(
        &mut parts.status,
        "currentCPUUtilizationPercentage",
        "currentMetrics",
        "current",
        current,
    );
    if let Some(conditions) = conditions {
        parts.status.insert("conditions".into(), conditions);
    }
    parts.put_back(object);
}

/// The reverse of [`split_cpu`]: v1's CPU utilization field `cpu_key` of `holder` becomes the
/// first entry of v2's list `key`, followed by what the annotation `carried`.
fn join_cpu(
    holder: &mut Map<String, Value>,
    cpu_key: &str,
    key: &str,
    part: &str,
    carried: Option<Value>,
) {
    let mut all: Vec<Value> = holder
        .remove(cpu_key)
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
        holder.insert(key.into(), Value::Array(all));
    }
}

fn rename(fields: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(value) = fields.remove(from)
        && !fields.contains_key(to)
    {
        fields.insert(to.to_string(), value);
    }
}
