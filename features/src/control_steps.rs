//! Steps that change the world around the operator: objects built from a table of fields, one
//! field edited, an External Secrets store that stops being ready, a target cluster that goes
//! down, and fault rules on the API server.

use cucumber::{gherkin::Step, given, when};
use serde_json::{Map, Value, json};

use crate::{
    sim_env::{Error, api_version_of},
    world::BarbicanWorld,
};

/// A table cell as YAML would read it: `2` a number, `true` a boolean, `[a, b]` a list,
/// anything else a string.
pub fn scalar(text: &str) -> Value {
    serde_saphyr::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// Sets the dotted `path` (`spec.deployment.replicas`) of `object` to `value`, creating the
/// maps on the way.
pub fn set_path(object: &mut Value, path: &str, value: Value) -> Result<(), Error> {
    let mut at = object;
    let keys: Vec<&str> = path.split('.').collect();
    for (i, key) in keys.iter().enumerate() {
        if key.is_empty() {
            return Err(format!("{path:?} has an empty segment"));
        }
        let map = at
            .as_object_mut()
            .ok_or_else(|| format!("{path:?} runs through a value that is not a map"))?;
        if i == keys.len() - 1 {
            map.insert(key.to_string(), value);
            return Ok(());
        }
        at = map
            .entry(key.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Ok(())
}

#[given(expr = "the {word} {string} in {string} is applied with the fields:")]
#[when(expr = "the {word} {string} in {string} is applied with the fields:")]
async fn applied_with_fields(
    world: &mut BarbicanWorld,
    kind: String,
    name: String,
    namespace: String,
    step: &Step,
) {
    let (api_version, kind) = api_version_of(&kind).expect("a kind the steps know");
    let mut object = json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": namespace}});
    for row in step.table.iter().flat_map(|t| t.rows.iter().skip(1)) {
        set_path(&mut object, &row[0], scalar(&row[1])).expect("a field path");
    }
    world
        .env()
        .apply(object)
        .await
        .expect("applying the object");
}

#[when(expr = "the field {string} of the {word} {string} in {string} is set to {string}")]
async fn set_field(
    world: &mut BarbicanWorld,
    path: String,
    kind: String,
    name: String,
    namespace: String,
    value: String,
) {
    let mut patch = json!({});
    set_path(&mut patch, &path, scalar(&value)).expect("a field path");
    merge_patch(world, &kind, &name, &namespace, &patch).await;
}

/// Merge-patches the object as a user would, under a field manager of its own.
async fn merge_patch(
    world: &BarbicanWorld,
    kind: &str,
    name: &str,
    namespace: &str,
    patch: &Value,
) {
    world
        .env()
        .api_of(kind, namespace)
        .await
        .expect("a kind the steps know")
        .patch(
            name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(patch),
        )
        .await
        .expect("merge-patching the object");
}

/// Takes a label off an object with a merge patch of another field manager (a user's
/// `kubectl label … key-`): the label may hold dots and slashes, which a dotted field path
/// cannot name.
#[when(expr = "the label {string} is taken off the {word} {string} in {string}")]
async fn take_label_off(
    world: &mut BarbicanWorld,
    label: String,
    kind: String,
    name: String,
    namespace: String,
) {
    let patch = json!({"metadata": {"labels": {label: null}}});
    merge_patch(world, &kind, &name, &namespace, &patch).await;
}

#[when(expr = "the External Secrets ClusterSecretStore {string} stops being ready")]
async fn eso_store_down(world: &mut BarbicanWorld, name: String) {
    world
        .env()
        .here()
        .external_secrets
        .cluster_stores
        .hold(
            "",
            &name,
            "InvalidProviderConfig",
            "the provider could not be reached",
        )
        .await;
}

#[when(expr = "the External Secrets ClusterSecretStore {string} is ready again")]
async fn eso_store_back(world: &mut BarbicanWorld, name: String) {
    world
        .env()
        .here()
        .external_secrets
        .cluster_stores
        .release("", &name)
        .await;
}

#[when(expr = "the target cluster {string} goes down")]
async fn target_down(world: &mut BarbicanWorld, name: String) {
    let target = world.env().target(&name).expect("a started target cluster");
    target.set_outage(true);
}

#[when(expr = "the target cluster {string} comes back")]
async fn target_back(world: &mut BarbicanWorld, name: String) {
    let target = world.env().target(&name).expect("a started target cluster");
    target.set_outage(false);
}

#[given(expr = "the API server answers by the fault rule {string}")]
#[when(expr = "the API server answers by the fault rule {string}")]
async fn fault(world: &mut BarbicanWorld, rule: String) {
    let rule = rule
        .parse::<barbican_sim::faults::Fault>()
        .unwrap_or_else(|e| panic!("the fault rule {rule:?}: {e}"));
    world
        .env()
        .simulated_here("fault injection")
        .unwrap_or_else(|e| panic!("{e}"))
        .cluster
        .add_fault(rule);
}

#[when("the API server's fault rules are cleared")]
async fn faults_cleared(world: &mut BarbicanWorld) {
    world
        .env()
        .simulated_here("fault injection")
        .unwrap_or_else(|e| panic!("{e}"))
        .cluster
        .clear_faults();
}

#[given(expr = "the edit-sequence prerequisites in {string}")]
async fn edit_prerequisites(world: &mut BarbicanWorld, namespace: String) {
    crate::world::ok(crate::edits::prerequisites(world.env(), &namespace).await);
}

#[given(expr = "the operator converges on {string}")]
#[when(expr = "the operator converges on {string}")]
async fn converges(world: &mut BarbicanWorld, namespace: String) {
    let env = world.env();
    crate::world::ok(
        crate::edits::converge(env, false)
            .await
            .map_err(|e| format!("{namespace}: {e}")),
    );
}
