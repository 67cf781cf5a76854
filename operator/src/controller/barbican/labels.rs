//! The labels every child carries, and the selector the API pods are found by.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// `app.kubernetes.io/name` of every child.
pub const APP_NAME: &str = "barbican";
/// `app.kubernetes.io/managed-by` of every child.
pub const MANAGED_BY: &str = "barbican-operator";
/// `app.kubernetes.io/component` of the API Deployment and its pods.
pub const API_COMPONENT: &str = "api";

/// Name and instance: what the Deployment selects its pods by.
pub fn selector(instance: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), APP_NAME.to_string()),
        (
            "app.kubernetes.io/instance".to_string(),
            instance.to_string(),
        ),
    ])
}

/// The labels of every child of the Barbican `instance`.
pub fn common(instance: &str) -> BTreeMap<String, String> {
    let mut labels = selector(instance);
    labels.insert("app.kubernetes.io/managed-by".into(), MANAGED_BY.into());
    labels
}

/// The labels of the API Deployment and its pod template.
pub fn api(instance: &str) -> BTreeMap<String, String> {
    let mut labels = common(instance);
    labels.insert("app.kubernetes.io/component".into(), API_COMPONENT.into());
    labels
}

/// The metadata of a child named `name` (the Barbican's own name) in `namespace`, with the
/// common labels.
pub fn child_metadata(name: &str, namespace: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: Some(namespace.to_string()),
        labels: Some(common(name)),
        ..ObjectMeta::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_are_labelled_as_the_reference_labels_them() {
        assert_eq!(
            selector("barbican").into_iter().collect::<Vec<_>>(),
            [
                (
                    "app.kubernetes.io/instance".to_string(),
                    "barbican".to_string()
                ),
                ("app.kubernetes.io/name".to_string(), "barbican".to_string()),
            ]
        );
        let common = common("kms");
        assert_eq!(common["app.kubernetes.io/managed-by"], "barbican-operator");
        assert!(!common.contains_key("app.kubernetes.io/component"));
        let api = api("kms");
        assert_eq!(api["app.kubernetes.io/component"], "api");
        assert_eq!(api["app.kubernetes.io/instance"], "kms");
        assert!(
            selector("kms").iter().all(|(k, v)| api.get(k) == Some(v)),
            "the pod template carries the selector"
        );
    }
}
