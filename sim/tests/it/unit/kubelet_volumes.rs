//! Tests of `barbican_sim::kubelet::volumes`.

use serde_json::Value;
use serde_json::json;

use barbican_sim::kubelet::volumes::*;

fn lookup(kind: &str, name: &str) -> Option<Value> {
    match (kind, name) {
        ("Secret", "config") => Some(json!({"data": {
            "barbican.conf": "W0RFRkFVTFRd", "policy.yaml": "e30="}})),
        ("ConfigMap", "ca") => Some(json!({"data": {"ca.crt": "PEM"}})),
        _ => None,
    }
}

fn files(volume: Value) -> Vec<(String, String, u32)> {
    match contents(&volume, &lookup).unwrap() {
        Contents::Files(files) => files
            .into_iter()
            .map(|f| {
                (
                    f.path.display().to_string(),
                    String::from_utf8(f.data).unwrap(),
                    f.mode,
                )
            })
            .collect(),
        Contents::Empty => panic!("files expected"),
    }
}

#[test]
fn a_secret_volume_holds_every_key_with_the_default_mode() {
    assert_eq!(
        files(json!({"name": "config", "secret": {"secretName": "config"}})),
        [
            ("barbican.conf".into(), "[DEFAULT]".into(), 0o644),
            ("policy.yaml".into(), "{}".into(), 0o644)
        ]
    );
}

#[test]
fn items_choose_keys_paths_and_modes() {
    let volume = json!({"name": "tls", "projected": {"defaultMode": 0o400, "sources": [
        {"secret": {"name": "config", "items": [{"key": "policy.yaml", "path": "p/policy.yaml"}]}},
        {"configMap": {"name": "ca", "items": [{"key": "ca.crt", "path": "ca.crt", "mode": 0o444}]}},
    ]}});
    assert_eq!(
        files(volume),
        [
            ("p/policy.yaml".into(), "{}".into(), 0o400),
            ("ca.crt".into(), "PEM".into(), 0o444)
        ]
    );
}

#[test]
fn a_missing_object_or_key_names_the_volume_unless_optional() {
    let missing = json!({"name": "db", "secret": {"secretName": "absent"}});
    let error = contents(&missing, &lookup).unwrap_err();
    assert!(
        error.contains("volume \"db\"") && error.contains("absent"),
        "{error}"
    );
    let optional = json!({"name": "db", "secret": {"secretName": "absent", "optional": true}});
    assert_eq!(
        contents(&optional, &lookup).unwrap(),
        Contents::Files(vec![])
    );
    let no_key = json!({"name": "c", "secret": {"secretName": "config", "items": [{"key": "x", "path": "x"}]}});
    assert!(
        contents(&no_key, &lookup)
            .unwrap_err()
            .contains("no key \"x\"")
    );
}

#[test]
fn an_item_path_cannot_leave_the_volume() {
    let volume = json!({"name": "c", "secret": {"secretName": "config",
        "items": [{"key": "policy.yaml", "path": "../../etc/passwd"}]}});
    assert!(
        contents(&volume, &lookup)
            .unwrap_err()
            .contains("must be relative")
    );
}

#[test]
fn an_empty_dir_is_empty_and_other_sources_are_refused_by_name() {
    assert_eq!(
        contents(&json!({"name": "tmp", "emptyDir": {}}), &lookup).unwrap(),
        Contents::Empty
    );
    let error = contents(&json!({"name": "h", "hostPath": {"path": "/"}}), &lookup).unwrap_err();
    assert!(error.contains("volume \"h\""), "{error}");
}
