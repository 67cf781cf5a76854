//! One stored object, several APIs: what kube-apiserver converts between when it serves one
//! storage at more than one group or version.
//!
//! The versions of a CRD share a storage and differ only in `apiVersion` here (the CRDs this
//! sim serves convert with strategy `None`). The two Event APIs, core `v1` and
//! `events.k8s.io/v1`, also share one storage, and kube-apiserver renames fields between them
//! (`pkg/apis/events/v1` conversion): an Event the operator writes through `events.k8s.io` is
//! what `kubectl describe` and `kubectl events` list through `/api/v1`, and the other way round.

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

    #[test]
    fn other_kinds_are_untouched() {
        let mut object = json!({"message": "x", "note": "y"});
        convert(&mut object, &builtin("", "configmaps"));
        assert_eq!(object, json!({"message": "x", "note": "y"}));
    }
}
