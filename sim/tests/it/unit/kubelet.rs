//! Tests of `barbican_sim::kubelet`.

use std::path::PathBuf;

use serde_json::json;

use barbican_sim::kubelet::*;

#[test]
fn runtimes_parse_from_flags_and_say_what_is_wanted() {
    let runtime: Runtime = "ghcr.io/c5c3/barbican:2025.2*=target/venvs/2025.2"
        .parse()
        .unwrap();
    assert_eq!(runtime.image, "ghcr.io/c5c3/barbican:2025.2*");
    assert_eq!(runtime.root, PathBuf::from("target/venvs/2025.2"));
    assert!(runtime.entrypoint.is_empty());
    let operator: Runtime =
        "ghcr.io/c5c3/barbican-operator:*=target/debug=/w/target/debug/barbican-operator"
            .parse()
            .unwrap();
    assert_eq!(operator.root, PathBuf::from("target/debug"));
    assert_eq!(operator.entrypoint, ["/w/target/debug/barbican-operator"]);
    for bad in ["", "=root", "image=", "no-equals", "image=root="] {
        assert!(
            bad.parse::<Runtime>()
                .unwrap_err()
                .contains("<image glob>=<root directory>")
        );
    }
}

#[test]
fn the_first_matching_runtime_runs_the_pod() {
    let config = KubeletConfig::new(
        vec![
            "*:2025.1=/a".parse().unwrap(),
            "ghcr.io/c5c3/barbican:*=/b".parse().unwrap(),
        ],
        "/state".into(),
    );
    let pod = |image: &str| json!({"spec": {"containers": [{"image": image}]}});
    let root = |image: &str| config.runtime_for(&pod(image)).map(|r| r.root.clone());
    assert_eq!(root("ghcr.io/c5c3/barbican:2025.1"), Some("/a".into()));
    assert_eq!(root("ghcr.io/c5c3/barbican:2025.2"), Some("/b".into()));
    assert_eq!(root("quay.io/other:1"), None);
}

#[test]
fn service_ports_reach_numbered_named_or_same_ports() {
    let pod =
        json!({"spec": {"containers": [{"ports": [{"name": "api", "containerPort": 9311}]}]}});
    assert_eq!(
        target_port(&pod, &json!({"port": 80, "targetPort": 8080})),
        Some(8080)
    );
    assert_eq!(
        target_port(&pod, &json!({"port": 80, "targetPort": "api"})),
        Some(9311)
    );
    assert_eq!(target_port(&pod, &json!({"port": 9311})), Some(9311));
    assert_eq!(
        target_port(&pod, &json!({"port": 80, "targetPort": "nope"})),
        None
    );
}

#[test]
fn pod_names_take_five_characters_of_the_controllers_alphabet() {
    let a = suffix("uid-1", 1);
    assert_eq!(a.len(), 5);
    assert!(
        a.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
        "{a}"
    );
    assert_ne!(a, suffix("uid-1", 2));
    assert_eq!(a, suffix("uid-1", 1));
}

/// A root given relative to the working directory (as the README's `serve` command gives it)
/// is made absolute: it is bound at the same path inside each container.
#[test]
fn runtime_roots_are_made_absolute_and_must_be_directories() {
    let runtimes = absolute_roots(vec!["img*=src".parse().unwrap()]).unwrap();
    assert!(runtimes[0].root.is_absolute(), "{:?}", runtimes[0].root);
    assert!(runtimes[0].root.ends_with("src"));
    assert_eq!(runtimes[0].image, "img*");
    let error = absolute_roots(vec!["img*=Cargo.toml".parse().unwrap()]).unwrap_err();
    assert!(error.to_string().contains("is not a directory"), "{error}");
    assert!(absolute_roots(vec!["img*=no/such/dir".parse().unwrap()]).is_err());
}
