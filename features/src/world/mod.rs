//! The cucumber World and its steps, in the operator's vocabulary. The step library is listed
//! in `features/README.md`; every step names the namespace it works in.

use std::time::Duration;

use barbican_operator::api::Barbican;
use cucumber::{World, gherkin::Step, given, then, when};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::json;

use crate::sim_env::{Error, SimEnv};

mod objects;

/// One scenario's world: a fresh simulated cluster with the operator.
#[derive(Debug, Default, World)]
pub struct BarbicanWorld {
    env: Option<SimEnv>,
    /// When the scenario started (set by [`crate::runner::before`]).
    pub started: Option<std::time::Instant>,
    /// What the API server answered to the last `the following is submitted:`.
    submitted: Option<Result<(), Error>>,
    /// Team B's objects the scenario planted under child names (see [`crate::neighbours`]).
    pub(crate) neighbours: Vec<crate::neighbours::Neighbour>,
}

impl BarbicanWorld {
    /// The operator's metrics as rendered once `settled` holds of them, or after 5 s of real time.
    /// A pass sets its series right after its status write (and a deleted CR's go right after it
    /// is gone), so a scenario that has just seen the status may read the series a moment early:
    /// a few seconds of real time settle it.
    pub async fn settled_metrics(&self, settled: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let rendered = self.env().operator_metrics().render();
            if settled(&rendered) || std::time::Instant::now() >= deadline {
                return rendered;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// The environment, once the first step started it.
    pub fn env_opt(&self) -> Option<&SimEnv> {
        self.env.as_ref()
    }

    /// Starts the scenario on `env` (a setup step other than this module's).
    pub(crate) fn set_env(&mut self, env: SimEnv) {
        self.env = Some(env);
    }

    pub(crate) fn env(&self) -> &SimEnv {
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

/// Panics with the error: how a step fails.
pub(crate) fn ok(result: Result<(), Error>) {
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
    let api = kube::Api::<kube::api::DynamicObject>::all_with(env.scenario_client(), &resource);
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
#[when(expr = "the Secret {string} in {string} holds:")]
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
#[when(expr = "the BarbicanSecretStore {string} in {string} is credential-ready")]
async fn store_ready(world: &mut BarbicanWorld, name: String, namespace: String) {
    let rows = vec![vec![
        "CredentialsReady".to_string(),
        "True".to_string(),
        "CredentialsAvailable".to_string(),
    ]];
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(120), || {
            let (name, namespace, rows) = (name.clone(), namespace.clone(), rows.clone());
            async move {
                check_conditions(
                    &env.conditions("BarbicanSecretStore", &namespace, &name)
                        .await?,
                    &rows,
                )
            }
        })
        .await);
}

#[given(expr = "the OpenBaoCluster {string} in {string} is running")]
async fn openbao_cluster(world: &mut BarbicanWorld, name: String, namespace: String) {
    let env = world.env();
    env.apply(
        json!({"apiVersion": "openbao.org/v1alpha1", "kind": "OpenBaoCluster",
        "metadata": {"name": name, "namespace": namespace}, "spec": {}}),
    )
    .await
    .expect("creating the OpenBaoCluster");
    ok(env
        .eventually(Duration::from_secs(60), || {
            let (name, namespace) = (name.clone(), namespace.clone());
            async move {
                env.here()
                    .openbao
                    .instance(&namespace, &name)
                    .map(|_| ())
                    .ok_or_else(|| format!("OpenBaoCluster {namespace}/{name} has no server yet"))
            }
        })
        .await);
}

#[when(expr = "{int} minute(s) pass(es)")]
async fn minutes_pass(world: &mut BarbicanWorld, minutes: u64) {
    world
        .env()
        .let_time_pass(Duration::from_secs(minutes * 60))
        .await;
}

/// Whether each `condition | status | reason` row holds; the error shows both tables.
pub(crate) fn check_conditions(
    conditions: &[Condition],
    rows: &[Vec<String>],
) -> Result<(), Error> {
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
        return Ok(());
    }
    let expected: Vec<[String; 3]> = rows
        .iter()
        .map(|r| [r[0].clone(), r[1].clone(), r[2].clone()])
        .collect();
    let actual: Vec<[String; 4]> = rows
        .iter()
        .map(|r| match conditions.iter().find(|c| c.type_ == r[0]) {
            Some(c) => [
                c.type_.clone(),
                c.status.clone(),
                c.reason.clone(),
                c.message.clone(),
            ],
            None => [
                r[0].clone(),
                "(not set)".into(),
                String::new(),
                String::new(),
            ],
        })
        .collect();
    Err(format!(
        "{}\n    expected:\n{}    actual:\n{}",
        wrong.join("; "),
        crate::report::table(&["condition", "status", "reason"], &expected),
        crate::report::table(&["condition", "status", "reason", "message"], &actual)
    ))
}

#[given(expr = "within {int} minute(s) the {word} {string} in {string} reports:")]
#[then(expr = "within {int} minute(s) the {word} {string} in {string} reports:")]
async fn reports(
    world: &mut BarbicanWorld,
    minutes: u64,
    kind: String,
    name: String,
    namespace: String,
    step: &Step,
) {
    let rows = table_rows(step);
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let (kind, name, namespace, rows) =
                (kind.clone(), name.clone(), namespace.clone(), rows.clone());
            async move { check_conditions(&env.conditions(&kind, &namespace, &name).await?, &rows) }
        })
        .await);
}

#[then(expr = "the {word} {string} in {string} does not set {string}")]
async fn not_set(
    world: &mut BarbicanWorld,
    kind: String,
    name: String,
    namespace: String,
    type_: String,
) {
    let conditions = world
        .env()
        .conditions(&kind, &namespace, &name)
        .await
        .unwrap();
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

#[then(expr = "a full pass over the Barbican {string} in {string} writes nothing")]
async fn idle_pass(world: &mut BarbicanWorld, name: String, namespace: String) {
    let env = world.env();
    // A pass still in flight when the scenario got here may finish its writes, and so may the
    // other controllers (a store observing the roll the scenario waited for); one full pass
    // and a quiet stretch settle that, and the next pass is the pass over a converged
    // Barbican. The scenario's own annotation writes are not the operator's and do not count.
    ok(env.full_pass(&namespace, &name).await);
    ok(env.operator_quiet().await);
    let mark = env
        .needs_sim("the audit log")
        .unwrap_or_else(|e| panic!("{e}"))
        .audit_mark();
    ok(env.full_pass(&namespace, &name).await);
    let writes = env.operator_writes_since(mark);
    if !writes.is_empty() {
        let now = env.barbican(&namespace, &name).await.unwrap();
        let conditions: Vec<String> = now
            .status
            .unwrap_or_default()
            .conditions
            .iter()
            .map(|c| format!("{}={}/{} ({})", c.type_, c.status, c.reason, c.message))
            .collect();
        panic!(
            "a pass over the ready Barbican {namespace}/{name} wrote:\n{}\nits conditions now:\n{}",
            writes
                .iter()
                .map(|w| format!("{w}\n  {}", w.body))
                .collect::<Vec<_>>()
                .join("\n"),
            conditions.join("\n")
        );
    }
}

#[given(expr = "the following is applied:")]
#[when(expr = "the following is applied:")]
async fn applied(world: &mut BarbicanWorld, step: &Step) {
    let yaml = step.docstring.as_deref().expect("a YAML docstring");
    world
        .env()
        .apply_yaml(yaml)
        .await
        .expect("applying the documents");
}

#[when(expr = "the following is submitted:")]
async fn submitted(world: &mut BarbicanWorld, step: &Step) {
    let yaml = step.docstring.as_deref().expect("a YAML docstring");
    let answer = world.env().apply_yaml(yaml).await;
    world.submitted = Some(answer);
}

#[then(expr = "it is refused with {string}")]
async fn refused_with(world: &mut BarbicanWorld, message: String) {
    let answer = world
        .submitted
        .take()
        .expect("nothing was submitted: use \"When the following is submitted:\"");
    expect_refusal(answer, &message);
}

/// Fails unless `answer` is a refusal whose message contains `message`.
pub fn expect_refusal(answer: Result<(), crate::sim_env::Error>, message: &str) {
    match answer {
        Ok(()) => panic!("the documents were admitted; expected a refusal with {message:?}"),
        Err(refusal) => assert!(
            refusal.contains(message),
            "refused, but the refusal lacks {message:?}: {refusal}"
        ),
    }
}

#[then("it is admitted")]
async fn admitted(world: &mut BarbicanWorld) {
    match world.submitted.take() {
        Some(Ok(())) => {}
        Some(Err(error)) => panic!("it was refused: {error}"),
        None => panic!("nothing was submitted: use \"When the following is submitted:\""),
    }
}

#[given("the admission webhooks are not installed")]
async fn webhooks_not_installed(world: &mut BarbicanWorld) {
    world
        .env()
        .uninstall_webhooks()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

#[given(expr = "the Barbican {string} in {string} is patched with:")]
#[when(expr = "the Barbican {string} in {string} is patched with:")]
async fn patched(world: &mut BarbicanWorld, name: String, namespace: String, step: &Step) {
    let patch: serde_json::Value =
        serde_saphyr::from_str(step.docstring.as_deref().expect("a YAML docstring"))
            .expect("the patch is YAML");
    world
        .env()
        .patch_barbican(&namespace, &name, &patch)
        .await
        .unwrap();
}

#[when(expr = "the {word} {string} in {string} is deleted")]
async fn deleted(world: &mut BarbicanWorld, kind: String, name: String, namespace: String) {
    let api = world.env().api_of(&kind, &namespace).await.unwrap();
    api.delete(&name, &Default::default())
        .await
        .unwrap_or_else(|e| panic!("deleting {kind} {namespace}/{name}: {e}"));
}

#[when(expr = "the barbican API of {string} in {string} answers {word}")]
async fn api_answers(world: &mut BarbicanWorld, name: String, namespace: String, how: String) {
    use barbican_fakes::barbican_api::Health;
    let health = match how.as_str() {
        "healthy" => Health::Healthy,
        "unhealthy" => Health::Unhealthy,
        "slowly" => Health::Slow(Duration::from_secs(5)),
        "nothing" => Health::Refusing,
        "endlessly" => Health::Endless,
        other => {
            panic!("unknown answer {other:?}: healthy, unhealthy, slowly, endlessly or nothing")
        }
    };
    let site = world.env().here();
    let stand_in = site
        .barbican_api
        .as_ref()
        .expect("real barbican runs here: no stand-in answers for it");
    assert!(
        stand_in.set_health(&namespace, &name, health),
        "no barbican API stands in for {namespace}/{name} yet"
    );
}

#[when(expr = "the Gateway refuses the HTTPRoute {string} in {string}")]
async fn gateway_refuses(world: &mut BarbicanWorld, name: String, namespace: String) {
    let site = world.env().here();
    let gateway = site
        .gateway
        .as_ref()
        .expect("the cluster serves the Gateway API");
    gateway
        .set_refused(&namespace, &name, Some("NotAllowedByListeners"))
        .await;
}

#[when(expr = "the Gateway accepts the HTTPRoute {string} in {string}")]
async fn gateway_accepts(world: &mut BarbicanWorld, name: String, namespace: String) {
    let site = world.env().here();
    let gateway = site
        .gateway
        .as_ref()
        .expect("the cluster serves the Gateway API");
    gateway.set_refused(&namespace, &name, None).await;
}

#[given(expr = "Deployment rollouts matching {string} never finish")]
async fn stuck_rollouts(world: &mut BarbicanWorld, rule: String) {
    use barbican_sim::controllers::{Controllers, Match, Rollouts};
    let stuck: Match = rule.parse().unwrap_or_else(|e| panic!("{e}"));
    world
        .env()
        .simulated_here("the simulated Deployment controller")
        .unwrap_or_else(|e| panic!("{e}"))
        .cluster
        .set_controllers(Controllers {
            deployments: Some(Rollouts {
                stuck: vec![stuck],
                ..Rollouts::default()
            }),
            ..Controllers::all()
        });
}

#[given(expr = "the MariaDB {string} in {string} is running")]
async fn mariadb(world: &mut BarbicanWorld, name: String, namespace: String) {
    world
        .env()
        .apply(json!({
            "apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": 1},
        }))
        .await
        .expect("creating the MariaDB");
}

impl BarbicanWorld {
    fn env_mut(&mut self) -> &mut SimEnv {
        self.env
            .as_mut()
            .expect("start with \"Given a simulated cluster with the operator running\"")
    }
}

#[given(expr = "Jobs follow the rule {string}")]
#[when(expr = "Jobs follow the rule {string}")]
async fn job_rule(world: &mut BarbicanWorld, rule: String) {
    use barbican_sim::controllers::{Controllers, JobRule, JobRules};
    let rule: JobRule = rule.parse().unwrap_or_else(|e| panic!("{e}"));
    world
        .env()
        .simulated_here("the simulated Job controller")
        .unwrap_or_else(|e| panic!("{e}"))
        .cluster
        .set_controllers(Controllers {
            jobs: Some(JobRules {
                rules: vec![rule],
                ..JobRules::default()
            }),
            ..Controllers::all()
        });
}

#[when(expr = "the status of the Barbican {string} in {string} is patched with:")]
async fn status_patched(world: &mut BarbicanWorld, name: String, namespace: String, step: &Step) {
    let patch: serde_json::Value =
        serde_saphyr::from_str(step.docstring.as_deref().expect("a YAML docstring"))
            .expect("the patch is YAML");
    kube::Api::<Barbican>::namespaced(world.env().client.clone(), &namespace)
        .patch_status(&name, &Default::default(), &kube::api::Patch::Merge(&patch))
        .await
        .unwrap();
}

#[when(expr = "the MariaDB {string} in {string} goes down")]
async fn mariadb_down(world: &mut BarbicanWorld, name: String, namespace: String) {
    world
        .env()
        .here()
        .mariadb
        .mariadbs
        .hold(
            &namespace,
            &name,
            "StatefulSetNotReady",
            "the primary is unreachable",
        )
        .await;
}

#[when(expr = "the MariaDB {string} in {string} comes back")]
async fn mariadb_back(world: &mut BarbicanWorld, name: String, namespace: String) {
    world
        .env()
        .here()
        .mariadb
        .mariadbs
        .release(&namespace, &name)
        .await;
}

#[given(expr = "the mariadb-operator takes {int} minute(s) to tear a database down")]
async fn slow_teardown(world: &mut BarbicanWorld, minutes: u64) {
    let site = world.env().here();
    let mariadb = &site.mariadb;
    for controller in [&mariadb.databases, &mariadb.users, &mariadb.grants] {
        controller.set_behaviour(|b| b.teardown = Duration::from_secs(minutes * 60));
    }
}

#[when("the operator restarts")]
async fn restart(world: &mut BarbicanWorld) {
    world.env_mut().restart_operator();
}

#[then(
    expr = "the operator has counted {int} db-sync Job(s) for the Barbican {string} in {string}"
)]
async fn counted(world: &mut BarbicanWorld, count: u64, name: String, namespace: String) {
    let counted = world.env().operator_metrics().jobs_counted(
        barbican_operator::metrics::JobKind::DbSync,
        &name,
        &namespace,
    );
    assert_eq!(
        counted, count,
        "db-sync Jobs counted by this operator process"
    );
}

#[then(expr = "the operator's metrics {word} series for the Barbican {string} in {string}")]
async fn metric_series(world: &mut BarbicanWorld, verb: String, name: String, namespace: String) {
    // Its Job series, and (for `lack`) its condition series too.
    let label = format!("barbican=\"{name}\",namespace=\"{namespace}\"");
    let conditions = format!("kind=\"Barbican\",name=\"{name}\",namespace=\"{namespace}\"");
    let text = world
        .settled_metrics(|text| match verb.as_str() {
            "lack" => !text.contains(&label) && !text.contains(&conditions),
            _ => text.contains(&label),
        })
        .await;
    let present = text.contains(&label);
    match verb.as_str() {
        "have" => assert!(present, "no series labelled {label}:\n{text}"),
        "lack" => assert!(
            !present && !text.contains(&conditions),
            "series labelled {label} or {conditions} remain:\n{text}"
        ),
        other => panic!("{other:?}: say have or lack"),
    }
}
