//! Tests of `barbican_sim::apply`.

use serde_json::Value;
use serde_json::json;

use barbican_sim::apply::*;

const NOW: &str = "2026-01-01T00:00:00Z";

fn schema() -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer"}, "region": {"type": "string"},
        "plugins": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["configSection"],
            "items": {"type": "object", "properties": {"configSection": {"type": "string"}, "name": {"type": "string"}}}}
    }}}})
}

#[test]
fn a_manager_that_stops_applying_a_field_removes_it() {
    let s = schema();
    let first = apply(
        None,
        &json!({"apiVersion": "x/v1", "spec": {"replicas": 3, "region": "R"}}),
        "a",
        None,
        false,
        Some(&s),
        NOW,
    )
    .unwrap();
    let second = apply(
        Some(&first),
        &json!({"apiVersion": "x/v1", "spec": {"replicas": 3}}),
        "a",
        None,
        false,
        Some(&s),
        NOW,
    )
    .unwrap();
    assert_eq!(second["spec"], json!({"replicas": 3}));
    assert_eq!(
        second["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:replicas": {}}})
    );
}

#[test]
fn an_empty_map_applied_then_filled_stays() {
    let first = apply(
        None,
        &json!({"apiVersion": "x/v1", "spec": {"deployment": {}}}),
        "a",
        None,
        false,
        None,
        NOW,
    )
    .unwrap();
    let second = apply(
        Some(&first),
        &json!({"apiVersion": "x/v1", "spec": {"deployment": {"replicas": 1}}}),
        "a",
        None,
        false,
        None,
        NOW,
    )
    .unwrap();
    assert_eq!(second["spec"], json!({"deployment": {"replicas": 1}}));
    let third = apply(
        Some(&second),
        &json!({"apiVersion": "x/v1", "spec": {}}),
        "a",
        None,
        false,
        None,
        NOW,
    )
    .unwrap();
    assert_eq!(third["spec"], json!({}), "and goes when no longer applied");
}

#[test]
fn managers_conflict_on_different_values_until_forced_and_share_equal_ones() {
    let s = schema();
    let base = apply(
        None,
        &json!({"spec": {"replicas": 3}}),
        "a",
        None,
        false,
        Some(&s),
        NOW,
    )
    .unwrap();
    let conflict = apply(
        Some(&base),
        &json!({"spec": {"replicas": 5}}),
        "b",
        None,
        false,
        Some(&s),
        NOW,
    )
    .unwrap_err();
    assert_eq!(
        conflict,
        vec![Conflict {
            manager: "a".into(),
            field: "spec.replicas".into()
        }]
    );
    let shared = apply(
        Some(&base),
        &json!({"spec": {"replicas": 3}}),
        "b",
        None,
        false,
        Some(&s),
        NOW,
    )
    .unwrap();
    assert_eq!(managed(&shared).len(), 2, "equal values are co-owned");
    let forced = apply(
        Some(&base),
        &json!({"spec": {"replicas": 5}}),
        "b",
        None,
        true,
        Some(&s),
        NOW,
    )
    .unwrap();
    assert_eq!(forced["spec"]["replicas"], 5);
    let owners: Vec<String> = managed(&forced).into_iter().map(|m| m.manager).collect();
    assert_eq!(owners, ["b"], "force takes the field");
}

#[test]
fn list_map_items_are_owned_by_key() {
    let s = schema();
    let a = apply(
        None,
        &json!({"spec": {"plugins": [{"configSection": "one", "name": "1"}]}}),
        "a",
        None,
        false,
        Some(&s),
        NOW,
    )
    .unwrap();
    let b = apply(
        Some(&a),
        &json!({"spec": {"plugins": [{"configSection": "two", "name": "2"}]}}),
        "b",
        None,
        false,
        Some(&s),
        NOW,
    )
    .unwrap();
    assert_eq!(
        b["spec"]["plugins"].as_array().unwrap().len(),
        2,
        "items merge by key"
    );
    let a_again = apply(
        Some(&b),
        &json!({"spec": {"replicas": 1}}),
        "a",
        None,
        false,
        Some(&s),
        NOW,
    )
    .unwrap();
    assert_eq!(
        a_again["spec"]["plugins"],
        json!([{"configSection": "two", "name": "2"}]),
        "a drops only its own item"
    );
}

#[test]
fn ordinary_writes_take_the_fields_they_change() {
    let s = schema();
    let applied = apply(
        None,
        &json!({"spec": {"replicas": 3}}),
        "a",
        None,
        false,
        Some(&s),
        NOW,
    )
    .unwrap();
    let mut updated = applied.clone();
    updated["spec"]["replicas"] = json!(4);
    record_update(
        Some(&applied),
        &mut updated,
        "kubectl-edit",
        None,
        Some(&s),
        NOW,
    );
    let entries = managed(&updated);
    assert_eq!(entries.len(), 1);
    assert_eq!(
        (entries[0].manager.as_str(), entries[0].operation.as_str()),
        ("kubectl-edit", "Update")
    );
    let conflict = apply(
        Some(&updated),
        &json!({"spec": {"replicas": 3}}),
        "a",
        None,
        false,
        Some(&s),
        NOW,
    )
    .unwrap_err();
    assert_eq!(conflict[0].manager, "kubectl-edit");
}

/// A list-map of `names`, each item `{"name": n, "v": version}`.
fn items(names: &[&str], version: u32) -> Value {
    Value::Array(
        names
            .iter()
            .map(|n| json!({"name": n, "v": version}))
            .collect(),
    )
}

fn names_of(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_string())
        .collect()
}

/// Since Kubernetes 1.24 (structured-merge-diff 4.2.1) an apply's list order wins: a volume
/// added between two others lands between them, whatever order the live list grew in, and
/// an item only the live list has keeps its place among its neighbours.
#[test]
fn an_applied_list_maps_order_wins_and_live_only_items_keep_their_place() {
    let schema = json!({"type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object"}});
    let merged = |live: &[&str], applied: &[&str]| {
        let mut live = items(live, 1);
        merge(&mut live, &items(applied, 2), Some(&schema), "volumes");
        live
    };
    let result = merged(&["config", "ca", "api"], &["config", "ca", "db", "api"]);
    assert_eq!(names_of(&result), ["config", "ca", "db", "api"]);
    assert!(
        result.as_array().unwrap().iter().all(|i| i["v"] == 2),
        "every applied item is merged"
    );
    assert_eq!(
        names_of(&merged(&["a", "b", "c"], &["c", "b", "a"])),
        ["c", "b", "a"]
    );
    // kubernetes/kubernetes#104641: {nginx} apply {sidecar} = {nginx, sidecar}.
    assert_eq!(
        names_of(&merged(&["nginx"], &["sidecar"])),
        ["nginx", "sidecar"]
    );
    assert_eq!(
        names_of(&merged(&["x", "a", "y", "b"], &["b", "a"])),
        ["x", "y", "b", "a"]
    );
    let set = json!({"type": "array", "x-kubernetes-list-type": "set"});
    let mut live = json!(["a", "c"]);
    merge(&mut live, &json!(["a", "b", "c"]), Some(&set), "finalizers");
    assert_eq!(live, json!(["a", "b", "c"]));
}
