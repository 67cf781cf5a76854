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
