//! Whether a live child already carries what the operator would apply: the comparison that
//! lets a pass over a converged CR send no write, and still applies a field taken away.

use kube::Resource;
use serde_json::Value;

use super::cache::is_own_apply;

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
