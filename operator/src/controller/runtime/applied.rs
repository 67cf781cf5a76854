//! Whether a live child already carries what the operator would apply: the comparison that
//! lets a pass over a converged CR send no write, and still applies a field taken away.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
use kube::Resource;
use serde_json::Value;

/// Whether the operator's apply entry in `live`'s managedFields owns a field `desired` no
/// longer sets: then an apply of `desired` is due, and server-side apply removes the field
/// (a field taken away from the spec must leave the child, not linger because the rest of
/// the child still matches).
pub fn owns_unwanted<K: Resource>(live: &K, desired: &Value) -> bool {
    live.meta()
        .managed_fields
        .iter()
        .flatten()
        .filter(|e| is_own_apply(e))
        .filter_map(|e| e.fields_v1.as_ref())
        .any(|fields| fields_beyond(&fields.0, desired))
}

/// A field of a live child by its FieldsV1 path (`f:`, `k:`, `v:` elements), with its live
/// value.
pub type Field = (Vec<String>, Value);

/// The fields the operator's own `Update` entry in `live` owns that `desired` does not set,
/// with their live values. A child the operator created by POST (the create that a 409 stops,
/// so a foreign object made in the meantime is never taken over) records what the POST set,
/// and what the server defaulted into it, under an `Update` entry; a later apply by the same
/// manager cannot remove those fields (kube-apiserver keys entries by manager and operation).
/// The defaults among them are harmless; a field of an earlier spec among them calls for
/// [`folded_ownership`] and a second apply.
pub fn created_unwanted<K: Resource + serde::Serialize>(live: &K, desired: &Value) -> Vec<Field> {
    let Ok(object) = serde_json::to_value(live) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in live.meta().managed_fields.iter().flatten() {
        if let (true, Some(fields)) = (is_own_update(entry), &entry.fields_v1) {
            collect_unwanted(&fields.0, desired, &object, &mut Vec::new(), &mut out);
        }
    }
    out
}

/// Walks the FieldsV1 set `fields` beside `desired` and `live`, collecting into `out` every
/// field `desired` lacks (see [`fields_beyond`] for how elements match).
fn collect_unwanted(
    fields: &Value,
    desired: &Value,
    live: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<Field>,
) {
    let Some(fields) = fields.as_object() else {
        return;
    };
    for (key, sub) in fields {
        path.push(key.clone());
        if let Some(name) = key.strip_prefix("f:") {
            let here = live.get(name).unwrap_or(&Value::Null);
            match desired.get(name) {
                None | Some(Value::Null) => out.push((path.clone(), here.clone())),
                Some(wanted) => collect_unwanted(sub, wanted, here, path, out),
            }
        } else if let Some(element) = key.strip_prefix("k:") {
            if let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(element) {
                let here = keyed(live, &keys).unwrap_or(&Value::Null);
                let found = desired.as_array().into_iter().flatten().find(|item| {
                    keys.iter()
                        .all(|(k, v)| item.get(k).is_none_or(|have| have == v))
                });
                match found {
                    None => out.push((path.clone(), here.clone())),
                    Some(item) => collect_unwanted(sub, item, here, path, out),
                }
            }
        } else if let Some(value) = key.strip_prefix("v:")
            && let Ok(value) = serde_json::from_str::<Value>(value)
            && !desired
                .as_array()
                .into_iter()
                .flatten()
                .any(|item| *item == value)
        {
            out.push((path.clone(), value));
        }
        path.pop();
    }
}

/// The element of the list `list` whose fields are exactly `keys`.
fn keyed<'a>(list: &'a Value, keys: &serde_json::Map<String, Value>) -> Option<&'a Value> {
    list.as_array()?
        .iter()
        .find(|item| keys.iter().all(|(k, v)| item.get(k) == Some(v)))
}

/// The value at the FieldsV1 `path` of `object`, if it has one.
pub fn value_at<'a>(object: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut here = object;
    for element in path {
        here = if let Some(name) = element.strip_prefix("f:") {
            here.get(name)?
        } else if let Some(keys) = element.strip_prefix("k:") {
            let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(keys) else {
                return None;
            };
            keyed(here, &keys)?
        } else if let Some(value) = element.strip_prefix("v:") {
            let value = serde_json::from_str::<Value>(value).ok()?;
            here.as_array()?.iter().find(|item| **item == value)?
        } else {
            return None;
        };
    }
    Some(here)
}

/// Whether one of the `unwanted` fields holds a value the server would not give the child by
/// itself: `defaulted` is the child as the server makes it from the desired object alone
/// (a dry-run create), so a field with the same value there is a default.
pub fn outlives_spec(unwanted: &[Field], defaulted: &Value) -> bool {
    unwanted
        .iter()
        .any(|(path, live)| value_at(defaulted, path) != Some(live))
}

/// Whether a managedFields entry is this operator's server-side apply.
pub fn is_own_apply(entry: &ManagedFieldsEntry) -> bool {
    entry.manager.as_deref() == Some(crate::api::names::FIELD_MANAGER)
        && entry.operation.as_deref() == Some("Apply")
}

/// Whether a managedFields entry is the operator's own `Update` (what its POST of a child
/// recorded), on the object itself rather than a subresource.
pub fn is_own_update(entry: &ManagedFieldsEntry) -> bool {
    entry.manager.as_deref() == Some(crate::api::names::FIELD_MANAGER)
        && entry.operation.as_deref() == Some("Update")
        && entry.subresource.is_none()
}

/// `entries` with the operator's own `Update` entry folded into its `Apply` entry (made when
/// there is none): what a write carrying these managedFields hands to the operator's applies,
/// so the next apply removes what it leaves out. `None` when there is no such `Update` entry.
/// kubectl moves client-side-apply ownership to server-side apply the same way.
pub fn folded_ownership(entries: &[ManagedFieldsEntry]) -> Option<Vec<ManagedFieldsEntry>> {
    let update = entries.iter().find(|e| is_own_update(e))?.clone();
    let mut folded: Vec<ManagedFieldsEntry> = entries
        .iter()
        .filter(|e| !is_own_update(e))
        .cloned()
        .collect();
    let apply = match folded
        .iter_mut()
        .find(|e| is_own_apply(e) && e.subresource.is_none())
    {
        Some(apply) => apply,
        None => {
            folded.push(ManagedFieldsEntry {
                manager: update.manager.clone(),
                operation: Some("Apply".into()),
                api_version: update.api_version.clone(),
                fields_type: Some("FieldsV1".into()),
                fields_v1: Some(FieldsV1(Value::Object(Default::default()))),
                time: update.time.clone(),
                subresource: None,
            });
            folded.last_mut()?
        }
    };
    let mut fields = apply
        .fields_v1
        .take()
        .map(|f| f.0)
        .unwrap_or_else(|| Value::Object(Default::default()));
    if let Some(more) = &update.fields_v1 {
        union(&mut fields, &more.0);
    }
    apply.fields_v1 = Some(FieldsV1(fields));
    Some(folded)
}

/// Adds every path of the FieldsV1 set `more` to `fields`.
fn union(fields: &mut Value, more: &Value) {
    let (Some(fields), Some(more)) = (fields.as_object_mut(), more.as_object()) else {
        return;
    };
    for (key, sub) in more {
        let entry = fields
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Default::default()));
        union(entry, sub);
    }
}

/// Whether the FieldsV1 set `fields` names a field that `desired` lacks. Map fields are
/// `f:<name>`; list elements `k:<key fields>` (matched by those fields, a key the desired
/// element leaves to the server's default counting as a match), `v:<value>` or `i:<index>`.
fn fields_beyond(fields: &Value, desired: &Value) -> bool {
    let Some(fields) = fields.as_object() else {
        return false;
    };
    fields.iter().any(|(key, sub)| {
        if let Some(name) = key.strip_prefix("f:") {
            match desired.get(name) {
                None | Some(Value::Null) => true,
                Some(wanted) => fields_beyond(sub, wanted),
            }
        } else if let Some(element) = key.strip_prefix("k:") {
            let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(element) else {
                return false;
            };
            let found = desired.as_array().into_iter().flatten().find(|item| {
                keys.iter()
                    .all(|(k, v)| item.get(k).is_none_or(|have| have == v))
            });
            match found {
                None => true,
                Some(item) => fields_beyond(sub, item),
            }
        } else if let Some(value) = key.strip_prefix("v:") {
            let Ok(value) = serde_json::from_str::<Value>(value) else {
                return false;
            };
            !desired
                .as_array()
                .into_iter()
                .flatten()
                .any(|item| *item == value)
        } else {
            // `.` (the element itself) and `i:<index>`: nothing further to compare.
            false
        }
    })
}

/// Whether `live` already carries everything `desired` says: every key of an object, every
/// element of a list (lists must have the same length), every scalar equal. Fields the server
/// adds (defaults, status, managedFields) do not count.
pub fn covers(live: &Value, desired: &Value) -> bool {
    match (live, desired) {
        (Value::Object(live), Value::Object(desired)) => desired
            .iter()
            .all(|(k, d)| live.get(k).is_some_and(|l| covers(l, d)) || d.is_null()),
        (Value::Array(live), Value::Array(desired)) => {
            live.len() == desired.len() && live.iter().zip(desired).all(|(l, d)| covers(l, d))
        }
        (live, desired) => live == desired,
    }
}

/// The annotation on every child holding a hash of what the operator last applied to it.
/// `covers` and the managedFields comparison miss one kind of edit: a field taken away inside
/// an atomic list (a NetworkPolicy peer's `matchLabels`), where the operator owns the list as
/// a whole and the new list is covered by the old. A desired object whose hash differs from
/// the recorded one does not cover the live object, so it is applied.
pub const APPLIED_HASH_ANNOTATION: &str = "barbican.c5c3.io/applied-hash";

/// `wanted` with [`APPLIED_HASH_ANNOTATION`] set to the hash of `wanted` itself.
pub fn stamped(mut wanted: Value) -> Value {
    use sha2::{Digest, Sha256};
    let bytes = serde_json::to_vec(&wanted).unwrap_or_default();
    let hash = crate::render::secrets::hex(&Sha256::digest(bytes));
    let short = hash.get(..16).unwrap_or(&hash).to_string();
    if let Some(metadata) = wanted.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = metadata
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.insert(APPLIED_HASH_ANNOTATION.into(), Value::String(short));
        }
    }
    wanted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::names::FIELD_MANAGER;
    use serde_json::json;

    #[test]
    fn a_field_the_operator_set_and_no_longer_wants_calls_for_an_apply() {
        // Any kind carries managedFields; a ConfigMap is the smallest.
        let live: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
            "metadata": {"managedFields": [{
                "manager": FIELD_MANAGER, "operation": "Apply", "fieldsV1": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {
                        "f:priorityClassName": {},
                        "f:containers": {"k:{\"name\":\"api\"}": {
                            ".": {}, "f:name": {},
                            "f:ports": {"k:{\"containerPort\":9311,\"protocol\":\"TCP\"}": {
                                ".": {}, "f:containerPort": {}
                            }}
                        }},
                        "f:finalizers": {"v:\"a\"": {}}
                    }
                }
            }, {
                "manager": "kubectl", "operation": "Update",
                "fieldsV1": {"f:spec": {"f:somethingElse": {}}}
            }]}
        }))
        .unwrap();
        let wanted = json!({
            "metadata": {"name": "x", "labels": {"app": "barbican"}},
            "spec": {
                "priorityClassName": "high",
                // The protocol is the server's default: the element still matches.
                "containers": [{"name": "api", "ports": [{"containerPort": 9311}]}],
                "finalizers": ["a"]
            }
        });
        assert!(
            !owns_unwanted(&live, &wanted),
            "everything owned is still wanted"
        );
        let mut removed = wanted.clone();
        removed["spec"]
            .as_object_mut()
            .unwrap()
            .remove("priorityClassName");
        assert!(owns_unwanted(&live, &removed));
        let mut renamed = wanted.clone();
        renamed["spec"]["containers"][0]["name"] = json!("other");
        assert!(owns_unwanted(&live, &renamed));
        let mut no_port = wanted.clone();
        no_port["spec"]["containers"][0]["ports"] = json!([]);
        assert!(owns_unwanted(&live, &no_port));
        let mut no_value = wanted.clone();
        no_value["spec"]["finalizers"] = json!([]);
        assert!(owns_unwanted(&live, &no_value));
        let mut no_label = wanted;
        no_label["metadata"]["labels"] = json!({});
        assert!(owns_unwanted(&live, &no_label));
        // Another manager's fields are not the operator's to remove.
        assert!(!owns_unwanted(
            &k8s_openapi::api::core::v1::ConfigMap::default(),
            &json!({})
        ));
    }

    #[test]
    fn fields_a_post_created_are_folded_into_the_operators_apply_entry() {
        let live: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
            "metadata": {"managedFields": [{
                "manager": FIELD_MANAGER, "operation": "Update", "apiVersion": "v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {"f:a": {}, "f:b": {}}}
            }, {
                "manager": FIELD_MANAGER, "operation": "Apply", "apiVersion": "v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:x": {}}}}
            }, {
                "manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:c": {}}}
            }]}
        }))
        .unwrap();
        let wants_a = json!({"metadata": {"labels": {"x": "1"}}, "data": {"a": "1"}});
        let mut live = live;
        live.data = Some([("a".into(), "1".into()), ("b".into(), "2".into())].into());
        assert_eq!(
            created_unwanted(&live, &wants_a),
            vec![(vec!["f:data".to_string(), "f:b".to_string()], json!("2"))],
            "b is the Update entry's"
        );
        assert!(
            !owns_unwanted(&live, &wants_a),
            "the Apply entry owns nothing unwanted"
        );
        assert!(created_unwanted(&live, &json!({"data": {"a": "1", "b": "2"}})).is_empty());

        let folded = folded_ownership(live.metadata.managed_fields.as_deref().unwrap()).unwrap();
        assert_eq!(folded.len(), 2, "{folded:?}");
        let apply = folded.iter().find(|e| is_own_apply(e)).unwrap();
        assert_eq!(
            apply.fields_v1.as_ref().unwrap().0,
            json!({"f:data": {"f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {"f:x": {}}}})
        );
        assert!(
            folded
                .iter()
                .any(|e| e.manager.as_deref() == Some("kubectl"))
        );
        assert!(folded_ownership(&folded).is_none(), "nothing left to fold");

        // Without an Apply entry yet, the Update entry becomes one.
        let only_update = vec![live.metadata.managed_fields.unwrap()[0].clone()];
        let folded = folded_ownership(&only_update).unwrap();
        assert_eq!(folded.len(), 1);
        assert_eq!(folded[0].operation.as_deref(), Some("Apply"));
        assert_eq!(
            folded[0].fields_v1.as_ref().unwrap().0,
            json!({"f:data": {"f:a": {}, "f:b": {}}})
        );
    }

    #[test]
    fn a_default_outlives_no_spec_a_field_of_an_earlier_one_does() {
        let live: k8s_openapi::api::core::v1::Service = serde_json::from_value(json!({
            "metadata": {"annotations": {"rate": "100"}, "managedFields": [{
                "manager": FIELD_MANAGER, "operation": "Update", "apiVersion": "v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:annotations": {"f:rate": {}}},
                    "f:spec": {"f:sessionAffinity": {}, "f:ports": {
                        "k:{\"port\":9311,\"protocol\":\"TCP\"}": {
                            ".": {}, "f:port": {}, "f:protocol": {}, "f:name": {}}}}}
            }]},
            "spec": {"sessionAffinity": "None",
                "ports": [{"port": 9311, "protocol": "TCP", "name": "api"}]}
        }))
        .unwrap();
        let wanted = json!({"metadata": {"annotations": {}},
            "spec": {"ports": [{"port": 9311}]}});
        let unwanted = created_unwanted(&live, &wanted);
        assert_eq!(
            unwanted.len(),
            4,
            "the annotation, the name, two defaults: {unwanted:?}"
        );
        let defaulted = json!({"metadata": {"annotations": {}},
            "spec": {"sessionAffinity": "None", "ports": [{"port": 9311, "protocol": "TCP"}]}});
        assert!(
            outlives_spec(&unwanted, &defaulted),
            "the annotation and the port name"
        );
        let defaults_only: Vec<Field> = unwanted
            .into_iter()
            .filter(|(path, _)| path.last().is_some_and(|p| p == "f:sessionAffinity"))
            .collect();
        assert_eq!(defaults_only.len(), 1);
        assert!(!outlives_spec(&defaults_only, &defaulted));
        let mut other_default = defaulted.clone();
        other_default["spec"]["sessionAffinity"] = json!("ClientIP");
        assert!(outlives_spec(&defaults_only, &other_default));
        assert_eq!(
            value_at(
                &defaulted,
                &[
                    "f:spec".into(),
                    "f:ports".into(),
                    "k:{\"port\":9311,\"protocol\":\"TCP\"}".into(),
                    "f:protocol".into()
                ]
            ),
            Some(&json!("TCP"))
        );
    }

    #[test]
    fn a_live_object_covers_what_it_carries_plus_server_defaults() {
        let live = json!({"metadata": {"name": "a", "uid": "u", "labels": {"x": "1", "y": "2"}},
            "spec": {"ports": [{"port": 9311, "protocol": "TCP"}], "type": "ClusterIP"}});
        let desired = json!({"metadata": {"name": "a", "labels": {"x": "1"}},
            "spec": {"ports": [{"port": 9311}]}});
        assert!(covers(&live, &desired));
    }

    #[test]
    fn a_changed_value_an_added_key_or_a_list_of_another_length_is_not_covered() {
        let live = json!({"spec": {"ports": [{"port": 9311}], "env": ["a", "b"]}});
        assert!(!covers(&live, &json!({"spec": {"ports": [{"port": 80}]}})));
        assert!(!covers(&live, &json!({"spec": {"selector": {"a": "b"}}})));
        assert!(!covers(&live, &json!({"spec": {"env": ["a"]}})));
        assert!(covers(&live, &json!({"spec": {"missing": null}})));
    }

    #[test]
    fn a_selector_emptied_inside_an_atomic_list_is_no_longer_covered() {
        let peer = |labels: serde_json::Value| {
            json!({"metadata": {"name": "b"},
                "spec": {"ingress": [{"from": [{"namespaceSelector": labels}]}]}})
        };
        let live = stamped(peer(json!({"matchLabels": {"team": "a"}})));
        let emptied = stamped(peer(json!({})));
        assert!(
            covers(&live, &peer(json!({}))),
            "without the hash the old list covers the new one"
        );
        assert!(!covers(&live, &emptied), "with it, the edit is applied");
        assert!(covers(
            &live,
            &stamped(peer(json!({"matchLabels": {"team": "a"}})))
        ));
    }

    #[test]
    fn a_field_taken_away_is_applied_away_from_a_cached_copy_without_managed_fields() {
        // The cache keeps no managedFields (`cache::slim`): the applied hash alone must tell
        // that the operator set a field it no longer wants.
        let deployment = |limits: serde_json::Value| {
            json!({"metadata": {"name": "b"},
                "spec": {"template": {"spec": {"priorityClassName": "high",
                    "containers": [{"name": "api", "resources": {"limits": limits}}]}}}})
        };
        let mut live = stamped(deployment(
            json!({"memory": "512Mi", "ephemeral-storage": "1Gi"}),
        ));
        live["metadata"]["resourceVersion"] = json!("7");
        let mut cached: k8s_openapi::api::apps::v1::Deployment =
            serde_json::from_value(live.clone()).unwrap();
        crate::controller::runtime::cache::slim(&mut cached);
        assert!(cached.metadata.managed_fields.is_none());
        let without = stamped(deployment(json!({"memory": "512Mi"})));
        let cached = serde_json::to_value(&cached).unwrap();
        assert!(
            covers(&cached, &deployment(json!({"memory": "512Mi"}))),
            "what is left is still there: without the hash nothing would be applied"
        );
        assert!(!covers(&cached, &without), "the hash differs: applied");
        assert!(!owns_unwanted(
            &serde_json::from_value::<k8s_openapi::api::apps::v1::Deployment>(cached.clone())
                .unwrap(),
            &without
        ));
        assert!(covers(
            &cached,
            &stamped(deployment(
                json!({"memory": "512Mi", "ephemeral-storage": "1Gi"})
            ))
        ));
    }
}
