//! `deploy/examples/`: every example parses into the Rust types without losing a field, passes
//! the CRD's structural schema (strict about unknown fields, as kubectl asks) and its CEL rules.

use barbican_operator::{
    admission::{
        barbican::validate_barbican, lookups::KnownState, secret_store::validate_secret_store,
        verdict::Operation,
    },
    api::{Barbican, BarbicanSecretStore},
};
use barbican_sim::schema;
use barbican_tests::workspace_root;
use kube::{CustomResourceExt, core::cel::Validator};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

fn crd_schema<K: CustomResourceExt>() -> Value {
    barbican_operator::crd::open_api_schema::<K>()
}

fn load(name: &str) -> Value {
    let path = workspace_root().join("deploy/examples").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name} is not valid YAML: {e}"))
}

/// Parses the example into `K`, checks the typed round trip keeps every field, and runs the
/// schema and CEL checks a real API server would.
fn check<K: CustomResourceExt + Serialize + DeserializeOwned>(name: &str) -> K {
    let raw = load(name);
    let schema = crd_schema::<K>();

    let errors = schema::validate(&schema, &raw, "");
    assert!(errors.is_empty(), "{name} fails the schema: {errors:?}");
    if let Err(errors) = Validator::new().validate(&schema, &raw, None) {
        panic!("{name} fails a CEL rule: {errors}");
    }

    let typed: K = serde_json::from_value(raw.clone())
        .unwrap_or_else(|e| panic!("{name} does not parse: {e}"));
    // What etcd stores is the object with schema defaults applied; the typed form must equal it.
    let mut stored = raw;
    schema::apply_defaults(&schema, &mut stored);
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        stored,
        "{name}: the Rust types dropped or changed a field"
    );
    typed
}

/// What the examples assume exists in the cluster.
fn cluster() -> KnownState {
    KnownState {
        priority_classes: vec!["openstack-control-plane".into()],
        ..Default::default()
    }
}

fn admitted_barbican(barbican: &Barbican) {
    let verdict = validate_barbican(Operation::Create, None, barbican, &cluster());
    assert!(
        verdict.allowed(),
        "the webhook refuses the example: {}",
        verdict.message()
    );
}

fn admitted_store(store: &BarbicanSecretStore) {
    let verdict = validate_secret_store(Operation::Create, None, store, &cluster());
    assert!(
        verdict.allowed(),
        "the webhook refuses the example: {}",
        verdict.message()
    );
}

#[test]
fn the_spec_barbican_example_is_valid() {
    let barbican: Barbican = check("barbican.yaml");
    admitted_barbican(&barbican);
    assert_eq!(barbican.spec.open_stack_release, "2025.2");
    assert_eq!(
        barbican.spec.image.reference(),
        "ghcr.io/c5c3/barbican:2025.2"
    );
}

#[test]
fn the_spec_managed_store_example_is_valid() {
    let store: BarbicanSecretStore = check("barbicansecretstore-managed.yaml");
    admitted_store(&store);
    let open_bao = store.spec.open_bao.expect("an openBao block");
    assert_eq!(open_bao.instance_ref.unwrap().name, "openbao-instance");
    assert!(store.spec.is_default);
}

#[test]
fn the_brownfield_store_example_is_valid() {
    let store: BarbicanSecretStore = check("barbicansecretstore-brownfield.yaml");
    admitted_store(&store);
    let open_bao = store.spec.open_bao.expect("an openBao block");
    assert!(open_bao.instance_ref.is_none());
    assert_eq!(
        open_bao.server.unwrap().url,
        "https://vault.example.com:8200"
    );
}

#[test]
fn the_full_example_is_valid_and_sets_every_optional_block() {
    let barbican: Barbican = check("barbican-full.yaml");
    admitted_barbican(&barbican);
    let raw = load("barbican-full.yaml");
    let schema = crd_schema::<Barbican>();
    let spec_properties = schema["properties"]["spec"]["properties"]
        .as_object()
        .unwrap();
    let missing: Vec<_> = spec_properties
        .keys()
        .filter(|k| raw["spec"].get(k.as_str()).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "barbican-full.yaml leaves out {missing:?}"
    );
    assert_eq!(
        barbican.spec.effective_keystone_public_endpoint(),
        "https://keystone.example.com/v3"
    );
}
