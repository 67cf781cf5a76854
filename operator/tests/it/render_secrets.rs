//! No secret value ever appears in a rendered file or a render error: sentinels are planted
//! everywhere a CR or a store could try to smuggle one in, bypassing the webhook.

use std::collections::BTreeMap;

use barbican_operator::{
    api::{
        BarbicanSpec,
        fixtures::{minimal_barbican, with_spec},
    },
    render::{self, Inputs, ProjectedStore, secrets},
};
use serde_json::json;

const SENTINEL: &str = "SENTINEL-c0ffee";

fn spec(patch: serde_json::Value) -> BarbicanSpec {
    serde_json::from_value(with_spec(minimal_barbican(), &patch)["spec"].clone()).unwrap()
}

fn store_with_secret_options() -> ProjectedStore {
    let mut store =
        ProjectedStore::managed("openbao-primary", "openbao", "openstack", "role-id", true);
    store.extra_options = BTreeMap::from([
        (
            "approle_secret_id".to_string(),
            format!("{SENTINEL}-secret-id"),
        ),
        (
            "root_token_id".to_string(),
            format!("{SENTINEL}-root-token"),
        ),
        (
            "vault_url".to_string(),
            format!("https://{SENTINEL}.example.com"),
        ),
    ]);
    store
}

#[test]
fn store_options_carrying_credentials_are_never_rendered() {
    let inputs = Inputs {
        name: "barbican".into(),
        namespace: "openstack".into(),
        stores: vec![store_with_secret_options()],
        ..Default::default()
    };
    let rendered = render::render(&spec(json!({})), &inputs).unwrap();
    for (file, content) in &rendered.files {
        assert!(
            !content.contains(SENTINEL),
            "{file} carries a planted secret:\n{content}"
        );
    }
    let conf = &rendered.files[render::BARBICAN_CONF];
    for key in ["approle_secret_id", "root_token_id", "password"] {
        let line = format!("{key} =");
        assert!(
            !conf.lines().any(|l| l.starts_with(&line)),
            "{key} is rendered:
{conf}"
        );
    }
}

#[test]
fn extra_config_credentials_are_refused_without_echoing_them() {
    for (section, key) in [
        ("keystone_authtoken", "password"),
        ("vault_plugin", "approle_secret_id"),
        ("vault_plugin", "root_token_id"),
    ] {
        let spec = spec(json!({"extraConfig": {section: {key: SENTINEL}}}));
        let error = render::render(&spec, &Inputs::default()).unwrap_err();
        assert_eq!(error.field, format!("spec.extraConfig[{section}][{key}]"));
        assert!(!error.to_string().contains(SENTINEL), "{error}");
    }
}

#[test]
fn refused_values_are_never_echoed() {
    let spec = spec(json!({"region": format!("{SENTINEL}\n[vault_plugin]\nroot_token_id = x")}));
    let error = render::render(&spec, &Inputs::default()).unwrap_err();
    assert_eq!(error.field, "spec.region");
    assert!(!error.to_string().contains(SENTINEL), "{error}");
}

#[test]
fn credentials_travel_as_env_vars_with_digests() {
    assert_eq!(
        secrets::KEYSTONE_PASSWORD_ENV,
        "OS_KEYSTONE_AUTHTOKEN__PASSWORD"
    );
    assert_eq!(secrets::DATABASE_CONNECTION_ENV, "OS_DATABASE__CONNECTION");
    assert_eq!(
        secrets::APPROLE_SECRET_ID_ENV,
        "OS_VAULT_PLUGIN__APPROLE_SECRET_ID"
    );
    let digest = secrets::digest(SENTINEL.as_bytes()).unwrap();
    assert_eq!(digest.len(), 64);
    assert!(!digest.contains(SENTINEL));
}
