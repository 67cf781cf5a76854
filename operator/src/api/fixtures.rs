//! The minimal valid objects of both kinds, as JSON: the starting point tests mutate, shared so
//! every suite agrees on what "valid" means.

use serde_json::{Value, json};

/// The spec's minimal Barbican (`openstack/barbican`), as a whole object.
pub fn minimal_barbican() -> Value {
    json!({
        "apiVersion": "barbican.openstack.c5c3.io/v1alpha1",
        "kind": "Barbican",
        "metadata": {"name": "barbican", "namespace": "openstack"},
        "spec": {
            "openStackRelease": "2025.2",
            "image": {"repository": "ghcr.io/c5c3/barbican", "tag": "2025.2"},
            "database": {"clusterRef": {"name": "openstack-mariadb"}, "database": "barbican", "secretRef": {"name": "barbican-db"}},
            "cache": {"clusterRef": {"name": "openstack-memcached"}},
            "keystoneEndpoint": "http://keystone.openstack.svc.cluster.local:5000/v3",
            "serviceUser": {"secretRef": {"name": "barbican-keystone"}}
        }
    })
}

/// The spec's managed store (`openstack/openbao-primary`), default, attached to `barbican`.
pub fn managed_store() -> Value {
    json!({
        "apiVersion": "barbican.openstack.c5c3.io/v1alpha1",
        "kind": "BarbicanSecretStore",
        "metadata": {"name": "openbao-primary", "namespace": "openstack"},
        "spec": {
            "barbicanRef": {"name": "barbican"},
            "type": "OpenBao",
            "isDefault": true,
            "openBao": {"instanceRef": {"name": "openbao-instance"}}
        }
    })
}

/// `base` with `spec_patch` merged into its spec (JSON merge patch: `null` deletes).
pub fn with_spec(mut base: Value, spec_patch: &Value) -> Value {
    json_patch::merge(&mut base["spec"], spec_patch);
    base
}

/// The uid of every [`admission_review`].
pub const ADMISSION_UID: &str = "705ab4f5-6393-11e8-b7cc-42010a800002";

/// An AdmissionReview v1 request body, as kube-apiserver sends it to a webhook, for an object
/// of `kind` (`Barbican` or `BarbicanSecretStore`) in `openstack`.
pub fn admission_review(
    kind: &str,
    operation: &str,
    object: &Value,
    old: Option<&Value>,
) -> Vec<u8> {
    let resource = if kind == "Barbican" {
        "barbicans"
    } else {
        "barbicansecretstores"
    };
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": ADMISSION_UID,
            "kind": {"group": "barbican.openstack.c5c3.io", "version": "v1alpha1", "kind": kind},
            "resource": {"group": "barbican.openstack.c5c3.io", "version": "v1alpha1", "resource": resource},
            "name": object["metadata"]["name"],
            "namespace": "openstack",
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]},
            "object": object,
            "oldObject": old,
            "dryRun": false
        }
    }))
    .expect("JSON values serialize")
}

/// [`minimal_barbican`] as the typed resource.
pub fn barbican() -> super::barbican::Barbican {
    serde_json::from_value(minimal_barbican()).expect("the minimal Barbican is valid")
}
