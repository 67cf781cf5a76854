//! Tests of `barbican_sim::kubelet::volumes`.

use std::path::Path;

use serde_json::Value;
use serde_json::json;

use barbican_sim::kubelet::volumes::*;

fn lookup(kind: &str, name: &str) -> Option<Value> {
    match (kind, name) {
        ("Secret", "config") => Some(json!({"data": {
            "barbican.conf": "W0RFRkFVTFRd", "policy.yaml": "e30="}})),
        ("ConfigMap", "ca") => Some(json!({"data": {"ca.crt": "PEM"}})),
        ("PersistentVolumeClaim", "backups") => Some(json!({"spec": {}})),
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
        Contents::Empty | Contents::Claim(_) => panic!("files expected"),
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

/// A claim's volume is the claim's own directory (the kubelet keeps it across pods); one
/// that does not exist holds the pod as a `FailedMount` would, and a name that would reach
/// another directory is no claim's.
#[test]
fn a_claim_is_its_own_directory_and_a_missing_one_holds_the_pod() {
    assert_eq!(
        contents(
            &json!({"name": "b", "persistentVolumeClaim": {"claimName": "backups"}}),
            &lookup
        )
        .unwrap(),
        Contents::Claim("backups".into())
    );
    let missing = contents(
        &json!({"name": "b", "persistentVolumeClaim": {"claimName": "elsewhere"}}),
        &lookup,
    )
    .unwrap_err();
    assert!(
        missing.contains("persistentvolumeclaim \"elsewhere\" not found"),
        "{missing}"
    );
    for hostile in ["../backups", ".", "", "a/b"] {
        let refused = contents(
            &json!({"name": "b", "persistentVolumeClaim": {"claimName": hostile}}),
            &lookup,
        )
        .unwrap_err();
        assert!(
            refused.contains("is no claim's name"),
            "{hostile}: {refused}"
        );
    }
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

/// A pod writes into its emptyDir; a link it plants there must not lead the kubelet (root on
/// the host) out of the volume, whether the link is on the way or at the end, and whether it
/// is there when the pod starts (`inside`) or appears later (`pin` walks again at each start).
#[test]
fn a_link_a_pod_planted_in_its_volume_never_leads_out_of_it() {
    let base = std::env::temp_dir().join(format!("bsim-pin-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let volume = base.join("scratch");
    std::fs::create_dir_all(volume.join("dir")).unwrap();
    std::fs::write(volume.join("dir/file"), "inside").unwrap();
    std::os::unix::fs::symlink("/etc", volume.join("out")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", volume.join("dir/leak")).unwrap();

    let pinned = pin(&base, Path::new("scratch/dir/file")).unwrap();
    assert!(pinned.file);
    assert!(
        pinned.path.starts_with("/proc"),
        "{}",
        pinned.path.display()
    );
    assert_eq!(std::fs::read_to_string(&pinned.path).unwrap(), "inside");
    let dir = pin(&base, Path::new("scratch/dir")).unwrap();
    assert!(!dir.file);
    for bad in ["scratch/out/passwd", "scratch/out", "scratch/dir/leak"] {
        let error = pin(&base, Path::new(bad)).unwrap_err();
        assert!(error.contains("symbolic link"), "{bad}: {error}");
    }
    assert!(pin(&base, Path::new("scratch/../scratch")).is_err());

    assert_eq!(
        inside(&volume, "dir/file").unwrap(),
        volume.join("dir/file")
    );
    for bad in ["out/passwd", "dir/leak", "../x", "/etc"] {
        assert!(inside(&volume, bad).is_err(), "{bad}");
    }
    // A missing subPath is made, inside the volume.
    assert!(inside(&volume, "new/deeper").unwrap().is_dir());
    let _ = std::fs::remove_dir_all(&base);
}
