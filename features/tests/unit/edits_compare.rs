//! Tests of `barbican_features::edits::compare`.

use std::collections::BTreeMap;

use serde_json::json;

use barbican_features::edits::compare::*;
use barbican_operator::api::names::SECRET_STORE_CREDENTIALS_HASH_ANNOTATION;

#[test]
fn what_the_server_assigns_and_what_is_minted_compare_equal() {
    let minted = BTreeMap::from([("s3cr3t".to_string(), "<minted a/secret-id>".to_string())]);
    let object = |uid: &str, id: &str, hash: &str| {
        json!({"kind": "Deployment", "metadata": {"name": "b", "uid": uid,
            "resourceVersion": uid, "ownerReferences": [{"kind": "Barbican", "uid": uid}],
            "annotations": {"deployment.kubernetes.io/revision": uid}},
            "spec": {"template": {"metadata": {"annotations": {
                SECRET_STORE_CREDENTIALS_HASH_ANNOTATION: hash, "other": "x"}}},
                "env": id},
            "status": {"replicas": uid.len()}})
    };
    let a = normalise("Deployment", object("1", "s3cr3t", "h1"), &minted);
    let other = BTreeMap::from([("t0p".to_string(), "<minted a/secret-id>".to_string())]);
    let b = normalise("Deployment", object("22", "t0p", "h2"), &other);
    assert_eq!(a, b);
    let c = normalise("Deployment", object("1", "s3cr3t", "h1"), &BTreeMap::new());
    assert_ne!(a, c, "an unminted value is compared");
}

#[test]
fn a_difference_names_the_object_and_the_field() {
    let history = Snapshot::from([
        (
            "Deployment/b".into(),
            json!({"spec": {"a": 1, "b": [1, 2]}}),
        ),
        ("Service/b".into(), json!({})),
    ]);
    let fresh = Snapshot::from([
        (
            "Deployment/b".into(),
            json!({"spec": {"a": 1, "b": [1, 3], "c/d": true}}),
        ),
        ("HTTPRoute/b".into(), json!({})),
    ]);
    assert_eq!(
        differences(&history, &fresh),
        [
            "Deployment/b /spec/b/1: after the edits 2, fresh 3",
            "Deployment/b /spec/c~1d: after the edits null, fresh true",
            "Service/b: only after the edits",
            "HTTPRoute/b: only in the fresh install",
        ]
    );
}

#[test]
fn times_in_messages_are_history() {
    assert_eq!(
        without_times("the secret ID minted at 2026-01-01T00:00:01Z (TTL 5 s) logs in"),
        "the secret ID minted at <time> (TTL 5 s) logs in"
    );
    assert_eq!(without_times("attempt 2 of 3"), "attempt 2 of 3");
}

#[test]
fn only_hash_named_secrets_are_config_history() {
    assert!(is_config_secret("barbican-config-8f641842"));
    assert!(!is_config_secret("barbican-config"));
    assert!(!is_config_secret("barbican-config-x"));
}
