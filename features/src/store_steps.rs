//! Steps about the secret stores and the OpenBao servers behind them: the fake OpenBao of a
//! managed instance, an external (brownfield) server, their faults, the re-mint metric, and the
//! invariant that no secret ID leaks.

use std::{sync::Arc, time::Duration};

use barbican_fakes::openbao::{FakeOpenBao, Outage};
use barbican_operator::metrics::Trigger;
use cucumber::{given, then, when};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use crate::{
    sim_env::SimEnv,
    world::{BarbicanWorld, ok},
};

/// The OpenBao behind the managed instance `namespace/name`.
fn instance(env: &SimEnv, namespace: &str, name: &str) -> Arc<FakeOpenBao> {
    env.here()
        .openbao
        .instance(namespace, name)
        .unwrap_or_else(|| panic!("no OpenBao runs for OpenBaoCluster {namespace}/{name}"))
}

/// The external server `name`.
fn external(env: &SimEnv, name: &str) -> Arc<FakeOpenBao> {
    env.started_external(name).unwrap_or_else(|e| panic!("{e}"))
}

async fn current_value(
    env: &SimEnv,
    namespace: &str,
    name: &str,
    key: &str,
) -> Result<Option<String>, String> {
    let secret = Api::<Secret>::namespaced(env.scenario_client(), namespace)
        .get_opt(name)
        .await
        .map_err(|e| format!("reading Secret {namespace}/{name}: {e}"))?;
    Ok(secret
        .and_then(|s| s.data)
        .and_then(|d| d.get(key).cloned())
        .map(|b| String::from_utf8_lossy(&b.0).into_owned()))
}

/// The text of `key` in the Secret `namespace/name`; panics (failing the step) when absent.
pub(crate) async fn secret_value(env: &SimEnv, namespace: &str, name: &str, key: &str) -> String {
    current_value(env, namespace, name, key)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|| panic!("Secret {namespace}/{name} has no {key}"))
}

/// The pod-template annotation that digests the store credentials the pods get.
const CREDENTIALS_HASH: &str =
    "/spec/template/metadata/annotations/barbican.c5c3.io~1secret-store-credentials-hash";

/// Waits up to `minutes` for `read` to give a value that is set and differs from `noted`.
async fn changes_from<F, Fut>(
    env: &SimEnv,
    minutes: u64,
    noted: Option<String>,
    what: &str,
    read: F,
) -> Result<(), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Option<String>, String>>,
{
    env.eventually(Duration::from_secs(minutes * 60), || {
        let (noted, read) = (noted.clone(), &read);
        async move {
            let now = read().await?;
            if now.is_some() && now != noted {
                Ok(())
            } else {
                Err(format!("{what} is still {now:?}"))
            }
        }
    })
    .await
}

#[given(
    expr = "the external OpenBao {string} serves {string} in {string} with the mount {string} in the namespace {string}"
)]
async fn external_server(
    world: &mut BarbicanWorld,
    name: String,
    service: String,
    service_namespace: String,
    mount: String,
    namespace: String,
) {
    let env = world.env();
    env.start_external_openbao(&name, &service_namespace, &service)
        .await
        .expect("starting the external OpenBao");
    env.provision_external_openbao(&name, &mount, &namespace)
        .expect("provisioning the external OpenBao");
}

#[given(
    expr = "the external OpenBao {string} issued AppRole credentials in {string} into the Secret {string} in {string}"
)]
async fn external_credentials(
    world: &mut BarbicanWorld,
    name: String,
    namespace: String,
    secret: String,
    secret_namespace: String,
) {
    world
        .env()
        .issue_external_credentials(&name, &namespace, &secret, &secret_namespace)
        .await
        .expect("writing the credentials Secret");
}

#[given(expr = "the CA of the external OpenBao {string} is in the Secret {string} in {string}")]
async fn external_ca(world: &mut BarbicanWorld, name: String, secret: String, namespace: String) {
    world
        .env()
        .publish_external_ca(&name, &secret, &namespace)
        .await
        .expect("writing the CA Secret");
}

#[given(expr = "the external OpenBao {string} issues tokens holding a control character")]
async fn external_hostile_tokens(world: &mut BarbicanWorld, name: String) {
    external(world.env(), &name).issue_hostile_tokens(true);
}

#[given(expr = "the external OpenBao {string} denies {string} on {string}")]
#[when(expr = "the external OpenBao {string} denies {string} on {string}")]
async fn external_denies(
    world: &mut BarbicanWorld,
    name: String,
    capability: String,
    path: String,
) {
    external(world.env(), &name).deny(&path, &capability);
}

#[then(expr = "the external OpenBao {string} was only logged in to and asked for capabilities")]
async fn external_read_only(world: &mut BarbicanWorld, name: String) {
    let requests = external(world.env(), &name).requests();
    assert!(!requests.is_empty(), "the operator never called {name}");
    let writes: Vec<String> = requests
        .iter()
        .filter(|r| {
            !matches!(
                r.path.as_str(),
                "auth/approle/login" | "sys/capabilities-self" | "auth/token/revoke-self"
            )
        })
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(
        writes.is_empty(),
        "the operator called {name} with: {writes:?}"
    );
}

#[then(expr = "every request to the external OpenBao {string} named the namespace {string}")]
async fn external_namespace(world: &mut BarbicanWorld, name: String, namespace: String) {
    let requests = external(world.env(), &name).requests();
    let others: Vec<String> = requests
        .iter()
        .filter(|r| r.namespace != namespace)
        .map(|r| format!("{} {} in {:?}", r.method, r.path, r.namespace))
        .collect();
    assert!(
        !requests.is_empty() && others.is_empty(),
        "requests outside {namespace:?}: {others:?}"
    );
}

#[when(expr = "the OpenBao of {string} in {string} revokes the secret ID of the store {string}")]
async fn revoke(
    world: &mut BarbicanWorld,
    instance_name: String,
    namespace: String,
    store: String,
) {
    let env = world.env();
    let secret_id = secret_value(env, &namespace, &format!("{store}-approle"), "secret-id").await;
    instance(env, &namespace, &instance_name).revoke_secret_id(&secret_id);
}

/// Sets the TTL of the secret IDs minted from now on (those already minted keep theirs).
#[given(expr = "the OpenBao of {string} in {string} issues secret IDs for {int} seconds")]
#[when(expr = "the OpenBao of {string} in {string} issues secret IDs for {int} seconds")]
async fn secret_id_ttl(
    world: &mut BarbicanWorld,
    instance_name: String,
    namespace: String,
    ttl: i64,
) {
    instance(world.env(), &namespace, &instance_name).with_state(|state| {
        if let Some(role) = state.space("").approles.get_mut("barbican") {
            role.secret_id_ttl = ttl;
        }
    });
}

#[when(expr = "the OpenBao of {string} in {string} goes down")]
async fn down(world: &mut BarbicanWorld, instance_name: String, namespace: String) {
    instance(world.env(), &namespace, &instance_name).set_outage(Outage::Refused);
}

#[when(expr = "the OpenBao of {string} in {string} comes back")]
async fn back(world: &mut BarbicanWorld, instance_name: String, namespace: String) {
    instance(world.env(), &namespace, &instance_name).set_outage(Outage::None);
}

#[then(
    expr = "the operator counted {int} proactive and {int} reactive re-mint(s) of the store {string} in {string}"
)]
async fn remints(
    world: &mut BarbicanWorld,
    proactive: u64,
    reactive: u64,
    store: String,
    namespace: String,
) {
    let metrics = world.env().operator_metrics();
    assert_eq!(
        (
            metrics.remints(&store, &namespace, Trigger::Proactive),
            metrics.remints(&store, &namespace, Trigger::Reactive)
        ),
        (proactive, reactive),
        "(proactive, reactive) re-mints of {namespace}/{store}"
    );
}

#[then(expr = "the secret ID of the store {string} in {string} has changed")]
async fn changed(world: &mut BarbicanWorld, store: String, namespace: String) {
    changed_within(world, 0, store, namespace).await;
}

#[then(expr = "within {int} minute(s) the secret ID of the store {string} in {string} has changed")]
async fn changed_within(world: &mut BarbicanWorld, minutes: u64, store: String, namespace: String) {
    let env = world.env();
    let name = format!("{store}-approle");
    ok(changes_from(
        env,
        minutes,
        env.remembered(&name),
        &format!("the secret ID in {name}"),
        || current_value(env, &namespace, &name, "secret-id"),
    )
    .await);
}

#[given(expr = "the secret ID of the store {string} in {string} is noted")]
#[when(expr = "the secret ID of the store {string} in {string} is noted")]
async fn note(world: &mut BarbicanWorld, store: String, namespace: String) {
    let env = world.env();
    let name = format!("{store}-approle");
    let value = secret_value(env, &namespace, &name, "secret-id").await;
    env.remember(&name, value);
}

#[then(expr = "no secret ID issued by any OpenBao appears in {string}")]
async fn no_leak(world: &mut BarbicanWorld, namespace: String) {
    ok(world.env().secret_ids_stay_put(&namespace).await);
}

#[then(expr = "within {int} minute(s) the pods of the Deployment {string} in {string} roll")]
async fn rolled(world: &mut BarbicanWorld, minutes: u64, name: String, namespace: String) {
    let env = world.env();
    ok(changes_from(
        env,
        minutes,
        env.remembered(&format!("hash:{namespace}/{name}")),
        "the credentials hash",
        || env.read_pointer("Deployment", &namespace, &name, CREDENTIALS_HASH),
    )
    .await);
}

#[given(expr = "the pod template of the Deployment {string} in {string} is noted")]
#[when(expr = "the pod template of the Deployment {string} in {string} is noted")]
async fn note_template(world: &mut BarbicanWorld, name: String, namespace: String) {
    let env = world.env();
    let hash = env
        .read_pointer("Deployment", &namespace, &name, CREDENTIALS_HASH)
        .await
        .unwrap()
        .unwrap_or_default();
    env.remember(&format!("hash:{namespace}/{name}"), hash);
}

/// The JSON pointer of the pod-template annotation `annotation`.
fn annotation_pointer(annotation: &str) -> String {
    format!(
        "/spec/template/metadata/annotations/{}",
        annotation.replace('~', "~0").replace('/', "~1")
    )
}

/// The pod-template annotation `annotation` of the Deployment `namespace/name`, now.
async fn read_annotation(
    env: &SimEnv,
    annotation: &str,
    name: &str,
    namespace: &str,
) -> Option<String> {
    env.read_pointer(
        "Deployment",
        namespace,
        name,
        &annotation_pointer(annotation),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

#[given(
    expr = "the pod-template annotation {string} of the Deployment {string} in {string} is noted"
)]
#[when(
    expr = "the pod-template annotation {string} of the Deployment {string} in {string} is noted"
)]
async fn note_annotation(
    world: &mut BarbicanWorld,
    annotation: String,
    name: String,
    namespace: String,
) {
    let env = world.env();
    let value = read_annotation(env, &annotation, &name, &namespace)
        .await
        .unwrap_or_else(|| panic!("the pod template of {namespace}/{name} has no {annotation}"));
    env.remember(
        &format!("annotation:{namespace}/{name}/{annotation}"),
        value,
    );
}

#[then(
    expr = "within {int} minute(s) the pod-template annotation {string} of the Deployment {string} in {string} has changed"
)]
async fn annotation_changed(
    world: &mut BarbicanWorld,
    minutes: u64,
    annotation: String,
    name: String,
    namespace: String,
) {
    let env = world.env();
    let pointer = annotation_pointer(&annotation);
    ok(changes_from(
        env,
        minutes,
        env.remembered(&format!("annotation:{namespace}/{name}/{annotation}")),
        &annotation,
        || env.read_pointer("Deployment", &namespace, &name, &pointer),
    )
    .await);
}

#[then(
    expr = "the pod-template annotation {string} of the Deployment {string} in {string} has not changed"
)]
async fn annotation_unchanged(
    world: &mut BarbicanWorld,
    annotation: String,
    name: String,
    namespace: String,
) {
    let env = world.env();
    let now = read_annotation(env, &annotation, &name, &namespace).await;
    assert_eq!(
        now,
        env.remembered(&format!("annotation:{namespace}/{name}/{annotation}")),
        "{annotation} of {namespace}/{name}"
    );
}

#[when(expr = "the BarbicanSecretStore {string} in {string} is patched with:")]
async fn patch_store(
    world: &mut BarbicanWorld,
    name: String,
    namespace: String,
    step: &cucumber::gherkin::Step,
) {
    let yaml = step.docstring.as_deref().expect("a YAML docstring");
    let patch: serde_json::Value = serde_saphyr::from_str(yaml).expect("YAML");
    Api::<barbican_operator::api::BarbicanSecretStore>::namespaced(
        world.env().client.clone(),
        &namespace,
    )
    .patch(
        &name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&patch),
    )
    .await
    .unwrap_or_else(|e| panic!("patching BarbicanSecretStore {namespace}/{name}: {e}"));
}

#[when(expr = "the OpenBao of {string} in {string} rejects logins")]
async fn rejects_logins(world: &mut BarbicanWorld, instance_name: String, namespace: String) {
    instance(world.env(), &namespace, &instance_name).reject_logins(true);
}

#[when(expr = "the OpenBao of {string} in {string} accepts logins again")]
async fn accepts_logins(world: &mut BarbicanWorld, instance_name: String, namespace: String) {
    instance(world.env(), &namespace, &instance_name).reject_logins(false);
}

#[when(expr = "the OpenBao of {string} in {string} loses its barbican mount")]
async fn loses_mount(world: &mut BarbicanWorld, instance_name: String, namespace: String) {
    instance(world.env(), &namespace, &instance_name).with_state(|state| {
        state.space("").mounts.remove("barbican");
    });
}

#[then(
    expr = "within {int} minute(s) the operator's metrics {word} re-mint series for the store {string} in {string}"
)]
async fn remint_series(
    world: &mut BarbicanWorld,
    minutes: u64,
    verb: String,
    store: String,
    namespace: String,
) {
    let want = match verb.as_str() {
        "have" => true,
        "lack" => false,
        other => panic!("{other:?}: say have or lack"),
    };
    let env = world.env();
    let label = format!("namespace=\"{namespace}\",store=\"{store}\"");
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let label = label.clone();
            async move {
                let text = env.operator_metrics().render();
                let present = text.lines().any(|l| {
                    l.starts_with("barbican_operator_secretstore_remints_total")
                        && l.contains(&label)
                });
                if present == want {
                    Ok(())
                } else {
                    Err(format!(
                        "re-mint series labelled {label} present: {present}"
                    ))
                }
            }
        })
        .await);
}
