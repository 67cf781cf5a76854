//! Tests of `barbican_sim::field_validation`.

use serde_json::Value;
use serde_json::json;

use barbican_sim::field_validation::*;

use super::builtin_type as builtin;

#[test]
fn an_undeclared_field_of_a_built_in_kind_is_found_by_its_path() {
    let body = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "imagee": "busybox"}]}}},
    });
    assert_eq!(
        unknown_fields(&builtin("deployments"), &body),
        ["spec.template.spec.containers[0].imagee"]
    );
    let mut map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "datum": {"k": "v"}});
    assert_eq!(unknown_fields(&builtin("configmaps"), &map), ["datum"]);
    drop_undeclared(&builtin("configmaps"), &mut map);
    assert_eq!(
        map,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    );
}

#[test]
fn the_levels_refuse_warn_or_ignore() {
    let t = builtin("configmaps");
    let body = json!({"metadata": {"name": "x"}, "datum": {"k": "v"}});
    let raw = serde_json::to_vec(&body).unwrap();
    let refused = check(&t, &raw, &body, Level::Strict).unwrap_err();
    assert_eq!(refused.code, 400);
    assert_eq!(
        refused.message,
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"datum\""
    );
    assert_eq!(
        check(&t, &raw, &body, Level::Warn).unwrap(),
        ["unknown field \"datum\""]
    );
    assert!(check(&t, &raw, &body, Level::Ignore).unwrap().is_empty());
    let clean = json!({"metadata": {"name": "x"}, "data": {"k": "v"}});
    let clean_raw = serde_json::to_vec(&clean).unwrap();
    assert!(
        check(&t, &clean_raw, &clean, Level::Strict)
            .unwrap()
            .is_empty()
    );
    assert!(Level::of(Some("Loose")).is_err());
    assert_eq!(Level::of(None).unwrap(), Level::Warn);
}

/// kube-apiserver's strict decoder names a repeated key by its path, before the unknown
/// fields; Warn says the same in warnings.
#[test]
fn a_repeated_key_is_a_duplicate_field() {
    let t = builtin("configmaps");
    let raw = br#"{"metadata": {"name": "x", "name": "y"}, "data": {"a": "1", "a": "2"},
        "items": [{"k": 1, "k": 2}], "datum": {}}"#;
    assert_eq!(
        duplicate_fields(raw),
        ["metadata.name", "data.a", "items[0].k"]
    );
    let body: Value = serde_json::from_slice(raw).unwrap();
    let refused = check(&t, raw, &body, Level::Strict).unwrap_err();
    assert_eq!(
        refused.message,
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: duplicate field \"metadata.name\", duplicate field \"data.a\", duplicate field \"items[0].k\", unknown field \"items\""
    );
    assert_eq!(
        check(&t, raw, &body, Level::Warn).unwrap()[0],
        "duplicate field \"metadata.name\""
    );
    assert!(duplicate_fields(b"not json").is_empty());
}
