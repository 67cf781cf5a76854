//! Tests of `barbican_sim::errors`.

use serde_json::json;

use barbican_sim::errors::*;

/// kube-apiserver's NotFound, AlreadyExists and Conflict name the object in `details`:
/// its name, the resource's plural as `kind`, and its group.
#[test]
fn errors_about_one_object_carry_its_details() {
    let exists = ApiError::already_exists("configmaps", "x");
    assert_eq!(
        exists.details,
        Some(json!({"name": "x", "kind": "configmaps"}))
    );
    let missing = ApiError::not_found("barbicans.barbican.openstack.c5c3.io", "b");
    assert_eq!(
        missing.details,
        Some(json!({"name": "b", "kind": "barbicans", "group": "barbican.openstack.c5c3.io"}))
    );
    assert_eq!(
        ApiError::conflict("deployments.apps", "d").details,
        Some(json!({"name": "d", "kind": "deployments", "group": "apps"}))
    );
}
