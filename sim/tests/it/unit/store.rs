//! Tests of `barbican_sim::store`.

use serde_json::json;

use barbican_sim::resources::Registry;
use barbican_sim::store::Store;

#[test]
fn owned_by_finds_only_the_owners_dependents_of_the_type_asked() {
    let registry = Registry::with_builtins();
    let jobs = registry.get("batch", "v1", "jobs").unwrap().clone();
    let maps = registry.get("", "v1", "configmaps").unwrap().clone();
    let mut store = Store::new(100);
    let namespaces = barbican_sim::resources::namespace_type();
    for namespace in ["a", "b"] {
        store
            .create(
                &namespaces,
                "",
                json!({"metadata": {"name": namespace}}),
                false,
            )
            .unwrap();
    }
    let owned = |name: &str, uid: &str| {
        json!({"metadata": {"name": name,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                 "name": "c", "uid": uid, "controller": true}]}})
    };
    for (namespace, name, uid) in [("a", "j1", "u1"), ("b", "j2", "u1"), ("a", "j3", "u2")] {
        store
            .create(&jobs, namespace, owned(name, uid), false)
            .unwrap();
    }
    store.create(&maps, "a", owned("m", "u1"), false).unwrap();
    fn names(
        store: &Store,
        jobs: &barbican_sim::resources::ResourceType,
        uid: &str,
    ) -> Vec<(String, String)> {
        store
            .owned_by(jobs, uid)
            .iter()
            .map(|j| {
                let text = |p: &str| j.pointer(p).and_then(|v| v.as_str()).unwrap();
                (
                    text("/metadata/namespace").into(),
                    text("/metadata/name").into(),
                )
            })
            .collect()
    }
    assert_eq!(
        names(&store, &jobs, "u1"),
        [("a".into(), "j1".into()), ("b".into(), "j2".into())],
        "both namespaces, no ConfigMap"
    );
    assert_eq!(
        names(&store, &jobs, "u2"),
        [("a".to_string(), "j3".to_string())]
    );
    assert!(names(&store, &jobs, "u3").is_empty());
    assert_eq!(
        store.owned_by(&jobs, "u1")[0]["kind"],
        "Job",
        "as the type presents it"
    );
    store
        .delete(
            &jobs,
            "a",
            "j1",
            barbican_sim::store::Propagation::Background,
            false,
        )
        .unwrap();
    assert_eq!(
        names(&store, &jobs, "u1"),
        [("b".to_string(), "j2".to_string())],
        "gone once deleted"
    );
}

#[test]
fn a_write_is_one_copy_shared_by_the_store_and_the_watch_events() {
    let registry = Registry::with_builtins();
    let maps = registry.get("", "v1", "configmaps").unwrap().clone();
    let mut store = Store::new(100);
    let namespaces = barbican_sim::resources::namespace_type();
    store
        .create(&namespaces, "", json!({"metadata": {"name": "a"}}), false)
        .unwrap();
    store.track_changes(true);
    store
        .create(
            &maps,
            "a",
            json!({"metadata": {"name": "m"}, "data": {"k": "1"}}),
            false,
        )
        .unwrap();
    let first = store.stored(&maps, "a", "m").unwrap();
    let replaced = store
        .replace(
            &maps,
            "a",
            "m",
            json!({"metadata": {"name": "m"}, "data": {"k": "2"}}),
            false,
            false,
        )
        .unwrap();
    let second = store.stored(&maps, "a", "m").unwrap();
    assert_eq!(replaced["data"]["k"], "2");
    assert_eq!(*second, replaced, "the answer is what was stored");
    let changes = store.take_changes();
    assert_eq!(changes.len(), 2, "the create and the update");
    assert!(std::sync::Arc::ptr_eq(&changes[0].object, &first));
    assert!(std::sync::Arc::ptr_eq(&changes[1].object, &second));
    let previous = changes[1]
        .previous
        .as_ref()
        .expect("an update carries its previous");
    assert!(
        std::sync::Arc::ptr_eq(previous, &first),
        "the update's previous is the stored copy it replaced, not a new one"
    );
    assert!(std::sync::Arc::ptr_eq(
        &store.history_after(0).last().unwrap().object,
        &second
    ));
}

/// kube-apiserver validates a generateName prefix itself, a trailing '-' allowed: `barbican.`
/// is refused though every name made from it would be valid (the operator's Events were, on a
/// real API server), and a long prefix is cut to 58 characters before the suffix.
#[test]
fn a_generate_name_prefix_is_validated_as_kube_apiserver_validates_it() {
    let registry = Registry::with_builtins();
    let maps = registry.get("", "v1", "configmaps").unwrap().clone();
    let mut store = Store::new(100);
    store
        .create(
            &barbican_sim::resources::namespace_type(),
            "",
            json!({"metadata": {"name": "a"}}),
            false,
        )
        .unwrap();
    let create = |store: &mut Store, prefix: &str| {
        store.create(
            &maps,
            "a",
            json!({"metadata": {"generateName": prefix}}),
            false,
        )
    };
    for refused in ["barbican.", "Barbican-", ".x", "-"] {
        let error = create(&mut store, refused).unwrap_err();
        assert_eq!(error.code, 422, "{refused}");
        assert!(
            error.message.contains(&format!(
                "metadata.generateName: Invalid value: \"{refused}\": a lowercase RFC 1123 subdomain"
            )),
            "{refused}: {}",
            error.message
        );
    }
    for admitted in ["barbican-", "barbican", "barbican.x-"] {
        let created = create(&mut store, admitted).unwrap();
        let name = created["metadata"]["name"].as_str().unwrap();
        assert!(
            name.starts_with(admitted) && name.len() == admitted.len() + 5,
            "{name}"
        );
    }
    let long = format!("{}-", "a".repeat(70));
    let created = create(&mut store, &long).unwrap();
    let name = created["metadata"]["name"].as_str().unwrap();
    assert_eq!(name.len(), 63, "{name}");
    assert!(name.starts_with(&"a".repeat(58)), "{name}");
}
