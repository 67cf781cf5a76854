//! Tests of `barbican_sim::kubelet::env`.

use serde_json::Value;
use serde_json::json;

use barbican_sim::kubelet::env::*;

fn lookup(kind: &str, name: &str) -> Option<Value> {
    match (kind, name) {
        // "mysql+pymysql://u:p@db/b" and "s3cret"
        ("Secret", "db") => {
            Some(json!({"data": {"connection": "bXlzcWwrcHlteXNxbDovL3U6cEBkYi9i"}}))
        }
        ("Secret", "approle") => Some(json!({"data": {"secret-id": "czNjcmV0"}})),
        ("ConfigMap", "settings") => Some(json!({"data": {"A": "1", "B": "2"}})),
        _ => None,
    }
}

#[test]
fn values_come_from_secrets_configmaps_and_the_pod_with_later_entries_winning() {
    let container = json!({
    "envFrom": [{"configMapRef": {"name": "settings"}, "prefix": "X_"}],
    "env": [
        {"name": "OS_DATABASE__CONNECTION", "valueFrom": {"secretKeyRef": {"name": "db", "key": "connection"}}},
        {"name": "OS_VAULT_PLUGIN__APPROLE_SECRET_ID", "valueFrom": {"secretKeyRef": {"name": "approle", "key": "secret-id"}}},
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "X_A", "value": "override"},
    ]});
    let pod = json!({"metadata": {"name": "barbican-abc12"}});
    assert_eq!(
        container_env(&container, &pod, &lookup).unwrap(),
        [
            ("X_B".to_string(), "2".to_string()),
            (
                "OS_DATABASE__CONNECTION".into(),
                "mysql+pymysql://u:p@db/b".into()
            ),
            ("OS_VAULT_PLUGIN__APPROLE_SECRET_ID".into(), "s3cret".into()),
            ("POD".into(), "barbican-abc12".into()),
            ("X_A".into(), "override".into()),
        ]
    );
}

#[test]
fn a_missing_key_holds_the_container_unless_optional() {
    let missing = json!({"env": [{"name": "P", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}]});
    let error = container_env(&missing, &json!({}), &lookup).unwrap_err();
    assert!(
        error.contains("\"P\"") && error.contains("password"),
        "{error}"
    );
    let optional = json!({"env": [{"name": "P", "valueFrom": {"secretKeyRef": {"name": "x", "key": "y", "optional": true}}}]});
    assert_eq!(container_env(&optional, &json!({}), &lookup).unwrap(), []);
}
