//! The examples' prerequisites agree with what the fakes are told of them.

use barbican_features::sim_env::{MINIMAL_PREREQUISITES, SERVICE_USER_PASSWORD};

#[test]
fn the_keystone_service_user_has_the_password_of_the_prerequisites_secret() {
    assert!(
        MINIMAL_PREREQUISITES.contains(&format!(
            "metadata: {{name: barbican-keystone, namespace: openstack}}\nstringData: {{password: {SERVICE_USER_PASSWORD}}}"
        )),
        "the fake Keystone's user and the Secret the pods and the operator read must agree"
    );
}
