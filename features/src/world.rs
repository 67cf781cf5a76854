//! The cucumber World and its steps, in the operator's vocabulary. The step library is listed
//! in `features/README.md`; every step names the namespace it works in.

use std::time::Duration;

use barbican_operator::api::Barbican;
use cucumber::{World, gherkin::Step, given, then, when};
use serde_json::json;

use crate::sim_env::{Error, SimEnv};

/// One scenario's world: a fresh simulated cluster with the operator.
#[derive(Debug, Default, World)]
pub struct BarbicanWorld {
    env: Option<SimEnv>,
}

impl BarbicanWorld {
    fn env(&self) -> &SimEnv {
        self.env
            .as_ref()
            .expect("start with \"Given a simulated cluster with the operator running\"")
    }
}

fn workspace_file(relative: &str) -> Result<String, Error> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("features/ sits in the workspace")
        .join(relative);
    std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))
}

fn table_rows(step: &Step) -> Vec<Vec<String>> {
    step.table
        .as_ref()
        .map(|t| t.rows.iter().skip(1).cloned().collect())
        .unwrap_or_default()
}

fn ok(result: Result<(), Error>) {
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[given("a simulated cluster with the operator running")]
async fn cluster(world: &mut BarbicanWorld) {
    world.env = Some(SimEnv::start(true).await.expect("starting the sim"));
}

#[given("a simulated cluster without the Gateway API and the operator running")]
async fn cluster_without_gateway(world: &mut BarbicanWorld) {
    world.env = Some(SimEnv::start(false).await.expect("starting the sim"));
}

#[given(expr = "the namespace {string}")]
async fn namespace(world: &mut BarbicanWorld, name: String) {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    world.env().apply(ns).await.expect("creating the namespace");
}

#[given(expr = "the External Secrets ClusterSecretStore {string} is ready")]
async fn eso_store(world: &mut BarbicanWorld, name: String) {
    let env = world.env();
    env.apply(json!({
        "apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
        "metadata": {"name": name},
        "spec": {"provider": {"vault": {"server": "https://openbao.openbao.svc:8200"}}},
    }))
    .await
    .expect("creating the ClusterSecretStore");
    let resource = env
        .resource("external-secrets.io/v1", "ClusterSecretStore")
        .await
        .unwrap();
    let api = kube::Api::<kube::api::DynamicObject>::all_with(env.client.clone(), &resource);
    ok(env
        .eventually(Duration::from_secs(60), || {
            let (api, name) = (api.clone(), name.clone());
            async move {
                let store = api.get(&name).await.map_err(|e| e.to_string())?;
                let ready = store.data["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True");
                if ready {
                    Ok(())
                } else {
                    Err(format!("ClusterSecretStore {name} is not Ready"))
                }
            }
        })
        .await);
}

#[given(expr = "the Secret {string} in {string} holds:")]
async fn secret(world: &mut BarbicanWorld, name: String, namespace: String, step: &Step) {
    let data: serde_json::Map<String, serde_json::Value> = table_rows(step)
        .into_iter()
        .map(|row| (row[0].clone(), json!(row[1])))
        .collect();
    world
        .env()
        .apply(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace},
            "stringData": data,
        }))
        .await
        .expect("writing the Secret");
}

#[given(expr = "the example {string} is applied")]
#[when(expr = "the example {string} is applied")]
async fn example(world: &mut BarbicanWorld, file: String) {
    let yaml = workspace_file(&format!("deploy/examples/{file}")).unwrap();
    world
        .env()
        .apply_yaml(&yaml)
        .await
        .expect("applying the example");
}

#[given(expr = "the BarbicanSecretStore {string} in {string} is credential-ready")]
async fn store_ready(world: &mut BarbicanWorld, name: String, namespace: String) {
    world
        .env()
        .mark_store_credential_ready(&namespace, &name)
        .await
        .unwrap();
}

#[when(expr = "{int} minute(s) pass(es)")]
async fn minutes_pass(world: &mut BarbicanWorld, minutes: u64) {
    world
        .env()
        .clock()
        .advance(Duration::from_secs(minutes * 60))
        .await;
}

fn check_conditions(barbican: &Barbican, rows: &[Vec<String>]) -> Result<(), Error> {
    let conditions = barbican
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    let mut wrong = vec![];
    for row in rows {
        let (type_, status, reason) = (&row[0], &row[1], &row[2]);
        match conditions.iter().find(|c| &c.type_ == type_) {
            Some(c) if &c.status == status && &c.reason == reason => {}
            Some(c) => wrong.push(format!(
                "{type_} is {}/{} ({}), not {status}/{reason}",
                c.status, c.reason, c.message
            )),
            None => wrong.push(format!("{type_} is not set")),
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(wrong.join("; "))
    }
}

#[then(expr = "within {int} minute(s) the Barbican {string} in {string} reports:")]
async fn reports(
    world: &mut BarbicanWorld,
    minutes: u64,
    name: String,
    namespace: String,
    step: &Step,
) {
    let rows = table_rows(step);
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let (name, namespace, rows) = (name.clone(), namespace.clone(), rows.clone());
            async move { check_conditions(&env.barbican(&namespace, &name).await?, &rows) }
        })
        .await);
}

#[then(expr = "the Barbican {string} in {string} does not set {string}")]
async fn not_set(world: &mut BarbicanWorld, name: String, namespace: String, type_: String) {
    let barbican = world.env().barbican(&namespace, &name).await.unwrap();
    let conditions = barbican.status.unwrap_or_default().conditions;
    assert!(
        conditions.iter().all(|c| c.type_ != type_),
        "{type_} is set: {conditions:?}"
    );
}

#[then(expr = "the Ready message of the Barbican {string} in {string} names {string}")]
async fn ready_names(world: &mut BarbicanWorld, name: String, namespace: String, types: String) {
    let barbican = world.env().barbican(&namespace, &name).await.unwrap();
    let conditions = barbican.status.unwrap_or_default().conditions;
    let ready = conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .expect("Ready is set");
    let expected = format!("not ready: {types}");
    assert_eq!(ready.message, expected);
}

#[then(expr = "the Barbican {string} in {string} reports the endpoint {string}")]
async fn endpoint(world: &mut BarbicanWorld, name: String, namespace: String, url: String) {
    let barbican = world.env().barbican(&namespace, &name).await.unwrap();
    assert_eq!(
        barbican.status.unwrap_or_default().endpoint.as_deref(),
        Some(url.as_str())
    );
}

const PARALLEL: [&str; 4] = ["HTTPRoute", "HealthCheck", "HPA", "NetworkPolicy"];

#[then(expr = "a full pass over the Barbican {string} in {string} writes nothing")]
async fn idle_pass(world: &mut BarbicanWorld, name: String, namespace: String) {
    let env = world.env();
    let before: Vec<u64> = PARALLEL.iter().map(|s| env.metrics.step_runs(s)).collect();
    let mark = env.cluster.audit_mark();
    // The periodic resync brings the next pass; nothing else has changed.
    env.clock()
        .advance(barbican_operator::controller::manager::RESYNC)
        .await;
    ok(env
        .eventually(Duration::from_secs(60), || {
            let before = before.clone();
            async move {
                let done = PARALLEL
                    .iter()
                    .zip(&before)
                    .all(|(s, b)| env.metrics.step_runs(s) > *b);
                if done {
                    Ok(())
                } else {
                    Err("no full pass has run".into())
                }
            }
        })
        .await);
    let writes = env.operator_writes_since(mark);
    assert!(
        writes.is_empty(),
        "a pass over the ready Barbican {namespace}/{name} wrote:\n{}",
        writes
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
