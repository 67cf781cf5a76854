//! Tests of `barbican_sim::resources`.

use barbican_sim::resources::*;

/// kube-apiserver prefers `autoscaling/v2` to `v1`, and GA to beta to alpha.
#[test]
fn versions_sort_as_kubernetes_prefers_them() {
    let mut versions = vec![
        "v1", "v1alpha1", "foo", "v2", "v1beta2", "v1beta1", "v2alpha1",
    ];
    versions.sort_by(|a, b| by_preference(a, b));
    assert_eq!(
        versions,
        [
            "v2", "v1", "v1beta2", "v1beta1", "v2alpha1", "v1alpha1", "foo"
        ]
    );
}

#[test]
fn a_type_recognises_its_storage_key() {
    let registry = Registry::with_builtins();
    let deployments = registry.get("apps", "v1", "deployments").unwrap();
    assert!(deployments.stores(&deployments.storage_key()));
    assert!(!deployments.stores("batch/jobs"));
    let namespaces = registry.get("", "v1", "namespaces").unwrap();
    assert!(namespaces.stores(&namespaces.storage_key()));
    assert!(!namespaces.stores("apps/namespaces"));
}

/// The comparison without building the string agrees with the built string, for core
/// and grouped types, and refuses near misses.
#[test]
fn a_type_recognises_its_api_version() {
    let registry = Registry::with_builtins();
    let deployments = registry.get("apps", "v1", "deployments").unwrap();
    let namespaces = registry.get("", "v1", "namespaces").unwrap();
    for t in [deployments, namespaces] {
        assert!(t.is_api_version(&t.api_version()));
    }
    for wrong in [
        "apps",
        "apps/",
        "appsv1",
        "apps/v1beta1",
        "v1",
        "batch/v1",
        "",
    ] {
        assert!(!deployments.is_api_version(wrong), "{wrong}");
    }
    assert!(!namespaces.is_api_version("apps/v1"));
}
