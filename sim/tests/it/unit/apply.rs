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
            described: "\"a\"".into(),
            field: ".spec.replicas".into()
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

/// kube-apiserver's field manager compares an ordinary write with the object before it (for a
/// create, the kind's zero value): a map or struct it adds is owned as a member of its own
/// (`.`), one the zero value already holds is not (tests/corpus/api, "create a ConfigMap").
#[test]
fn an_ordinary_write_owns_the_maps_it_adds_as_members() {
    let mut config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "one", "labels": {"tier": "a"}}, "data": {"k": "v"}});
    record_update(None, &mut config_map, "m", None, None, NOW);
    assert_eq!(
        config_map["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:tier": {}}}})
    );
    // A Deployment's spec, template and strategy are Go struct values, there before any write,
    // and its containers a list without `omitempty`, null there; its selector is a pointer
    // and its labels a map: added.
    let mut deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "strategy": {"type": "Recreate"},
            "template": {"metadata": {"labels": {"app": "d"}},
                "spec": {"restartPolicy": "Always", "containers": [{"name": "c", "image": "i"}]}}}});
    record_update(None, &mut deployment, "m", None, None, NOW);
    assert_eq!(
        deployment["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"],
        json!({"f:selector": {".": {}, "f:matchLabels": {".": {}, "f:app": {}}},
            "f:strategy": {"f:type": {}},
            "f:template": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {"f:restartPolicy": {},
                    "f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:name": {}, "f:image": {}}}}}})
    );
    // A custom resource's zero value is empty: its spec is added too.
    let mut custom = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "x"},
        "spec": {"replicas": 3}});
    record_update(None, &mut custom, "m", None, Some(&schema()), NOW);
    assert_eq!(
        custom["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {".": {}, "f:replicas": {}}})
    );
    // An update that adds a field to a map already there takes the field, not the map.
    let mut updated = config_map.clone();
    updated["data"]["added"] = json!("x");
    record_update(Some(&config_map), &mut updated, "other", None, None, NOW);
    let entries = managed(&updated);
    assert_eq!(entries.len(), 2);
    assert!(
        entries[0]
            .fields
            .contains(&vec!["f:data".to_string(), ".".to_string()])
    );
    // A set-like list an update adds is a member of its own too.
    let mut finalized = config_map.clone();
    finalized["metadata"]["finalizers"] = json!(["x/y"]);
    record_update(Some(&config_map), &mut finalized, "f", None, None, NOW);
    let finalizing = managed(&finalized);
    assert_eq!(finalizing[0].manager, "f");
    let owned: Vec<Vec<&str>> = finalizing[0]
        .fields
        .iter()
        .map(|p| p.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        owned,
        [
            vec!["f:metadata", "f:finalizers", "."],
            vec!["f:metadata", "f:finalizers", "v:\"x/y\""]
        ]
    );
    assert_eq!(
        entries[1].fields.iter().cloned().collect::<Vec<_>>(),
        [vec!["f:data".to_string(), "f:added".to_string()]]
    );
}

/// kube-apiserver names each conflicting field as a `FieldManagerConflict` cause, an `Update`
/// manager with its API version and time, and sorts the entries (Apply first, then by time and
/// manager), not by when a manager last wrote.
#[test]
fn a_conflict_names_the_manager_as_kube_apiserver_does_and_entries_keep_their_order() {
    let mut base = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
        "data": {"a": "1", "b": "2"}});
    record_update(None, &mut base, "kubectl-edit", None, None, NOW);
    let conflict = apply(
        Some(&base),
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "9", "b": "8"}}),
        "applier",
        None,
        false,
        None,
        NOW,
    )
    .unwrap_err();
    let described = format!("\"kubectl-edit\" using v1 at {NOW}");
    assert_eq!(
        conflict
            .iter()
            .map(|c| (c.described.as_str(), c.field.as_str()))
            .collect::<Vec<_>>(),
        [
            (described.as_str(), ".data.a"),
            (described.as_str(), ".data.b")
        ]
    );
    let error = conflict_error(&conflict);
    assert_eq!(
        error.message,
        format!("Apply failed with 2 conflicts: conflicts with {described}:\n- .data.a\n- .data.b")
    );
    assert_eq!(
        error.details.unwrap()["causes"][1],
        json!({"reason": "FieldManagerConflict", "message": format!("conflict with {described}"), "field": ".data.b"})
    );
    // Two appliers; the first re-applies after the second took its field, and still comes
    // first; an Update entry comes after both.
    let cm_apply = |live: Option<&Value>, data: Value, manager: &str, force: bool| {
        let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": data});
        apply(live, &applied, manager, None, force, None, NOW).unwrap()
    };
    let first = cm_apply(None, json!({"a": "1"}), "first", false);
    let taken = cm_apply(Some(&first), json!({"a": "2"}), "second", true);
    let mut again = cm_apply(Some(&taken), json!({"c": "3"}), "first", false);
    let before = again.clone();
    again["data"]["d"] = json!("4");
    record_update(Some(&before), &mut again, "an-editor", None, None, NOW);
    let order: Vec<String> = managed(&again).into_iter().map(|m| m.manager).collect();
    assert_eq!(order, ["first", "second", "an-editor"]);
}

/// The zero values an ordinary create is compared with: the value-typed structs and the null
/// lists of the Go types, parents included.
#[test]
fn the_zero_values_hold_the_go_struct_values_and_null_lists() {
    use barbican_sim::zero_values::zero_object;
    assert_eq!(
        zero_object("apps/v1", "Deployment"),
        json!({"spec": {"strategy": {}, "template": {"metadata": {}, "spec": {"containers": null}}}, "status": {}})
    );
    assert_eq!(
        zero_object("batch/v1", "CronJob"),
        json!({"spec": {"jobTemplate": {"metadata": {}, "spec": {"template": {"metadata": {}, "spec": {"containers": null}}}}}, "status": {}})
    );
    assert_eq!(
        zero_object("v1", "PodTemplate"),
        json!({"template": {"metadata": {}, "spec": {"containers": null}}})
    );
    assert_eq!(
        zero_object("v1", "Node"),
        json!({"spec": {}, "status": {"daemonEndpoints": {"kubeletEndpoint": {}}, "nodeInfo": {}}})
    );
    assert_eq!(zero_object("v1", "ConfigMap"), json!({}));
    assert_eq!(
        zero_object("rbac.authorization.k8s.io/v1", "Role"),
        json!({"rules": null})
    );
}
