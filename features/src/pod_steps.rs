//! Steps about pods a kubelet runs for real (the `@real-barbican` scenarios): what their
//! containers printed, read through `pods/<name>/log` as `kubectl logs` reads it.

use std::time::Duration;

use cucumber::{given, then, when};
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api,
    api::{ListParams, LogParams},
};

use crate::world::{BarbicanWorld, ok};

/// How long the output may take to show (a process starting, a migration running).
const WITHIN: Duration = Duration::from_secs(120);

/// Each pod `selector` picks and what it printed (`(no log: …)` when that cannot be read).
async fn logs_of(pods: &Api<Pod>, selector: &str) -> Result<Vec<(String, String)>, String> {
    let listed = pods
        .list(&ListParams::default().labels(selector))
        .await
        .map_err(|e| format!("listing pods {selector}: {e}"))?;
    let mut logs = Vec::new();
    for pod in listed {
        let name = pod.metadata.name.unwrap_or_default();
        let log = pods
            .logs(&name, &LogParams::default())
            .await
            .unwrap_or_else(|e| format!("(no log: {e})"));
        logs.push((name, log));
    }
    Ok(logs)
}

/// Waits until the log of some pod `selector` picks in `namespace` contains `text`; the error
/// says what each pod printed last.
async fn some_log_contains(
    world: &BarbicanWorld,
    namespace: &str,
    selector: &str,
    text: &str,
) -> Result<(), String> {
    let env = world.env();
    let pods: Api<Pod> = Api::namespaced(env.scenario_client(), namespace);
    env.eventually(WITHIN, || {
        let pods = pods.clone();
        async move {
            let mut seen = Vec::new();
            for (name, log) in logs_of(&pods, selector).await? {
                if log.contains(text) {
                    return Ok(());
                }
                let tail: Vec<&str> = log.lines().rev().take(5).collect();
                seen.push(format!(
                    "{name}: …{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                ));
            }
            Err(format!(
                "no pod {selector} printed {text:?}; {}",
                if seen.is_empty() {
                    "there are no such pods".to_string()
                } else {
                    seen.join("; ")
                }
            ))
        }
    })
    .await
}

/// The last `lines` lines each pod `selector` picks in `namespace` printed, for a failure's
/// report.
pub(crate) async fn log_tails(
    world: &BarbicanWorld,
    namespace: &str,
    selector: &str,
    lines: usize,
) -> String {
    let pods: Api<Pod> = Api::namespaced(world.env().scenario_client(), namespace);
    let Ok(listed) = pods.list(&ListParams::default().labels(selector)).await else {
        return String::new();
    };
    let mut out = String::new();
    for pod in listed {
        let name = pod.metadata.name.unwrap_or_default();
        let params = LogParams {
            tail_lines: i64::try_from(lines).ok(),
            ..LogParams::default()
        };
        let log = pods.logs(&name, &params).await.unwrap_or_default();
        out.push_str(&format!("\n--- the last lines of {name}:\n{log}"));
    }
    out
}

#[then(expr = "the log of the Job {string} in {string} contains {string}")]
async fn job_log(world: &mut BarbicanWorld, job: String, namespace: String, text: String) {
    let selector = format!("batch.kubernetes.io/job-name={job}");
    ok(some_log_contains(world, &namespace, &selector, &text).await);
}

/// The label selector of the Deployment `namespace/deployment`'s pods.
async fn deployment_selector(world: &BarbicanWorld, deployment: &str, namespace: &str) -> String {
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(world.env().scenario_client(), namespace);
    let found = deployments
        .get(deployment)
        .await
        .unwrap_or_else(|e| panic!("reading the Deployment {namespace}/{deployment}: {e}"));
    let labels = found.spec.selector.match_labels.unwrap_or_default();
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[then(expr = "the log of a pod of the Deployment {string} in {string} contains {string}")]
async fn deployment_log(
    world: &mut BarbicanWorld,
    deployment: String,
    namespace: String,
    text: String,
) {
    let selector = deployment_selector(world, &deployment, &namespace).await;
    ok(some_log_contains(world, &namespace, &selector, &text).await);
}

/// Exactly `count` of the Deployment's pods printed `text` (within 30 s): for the operator's
/// replicas and `leading`, one leader, not two.
#[then(expr = "exactly {int} pod(s) of the Deployment {string} in {string} logged {string}")]
async fn pods_logged(
    world: &mut BarbicanWorld,
    count: usize,
    deployment: String,
    namespace: String,
    text: String,
) {
    let selector = deployment_selector(world, &deployment, &namespace).await;
    let env = world.env();
    let pods: Api<Pod> = Api::namespaced(env.scenario_client(), &namespace);
    let (selector, text) = (&selector, &text);
    // A log line lands a moment after what it reports (a Lease taken): waited for briefly.
    ok(env
        .eventually(Duration::from_secs(30), || {
            let pods = pods.clone();
            async move {
                let printed: Vec<String> = logs_of(&pods, selector)
                    .await?
                    .into_iter()
                    .filter(|(_, log)| log.contains(text.as_str()))
                    .map(|(name, _)| name)
                    .collect();
                match printed.len() == count {
                    true => Ok(()),
                    false => Err(format!("the pods that printed {text:?}: {printed:?}")),
                }
            }
        })
        .await);
}

/// The chart's ServiceAccount (`barbican-operator` in `barbican-system`), ClusterRole and
/// bindings, as `features/chart-rbac.yaml` holds them: what the operator's own pods run as.
#[given(expr = "the chart's ServiceAccount and RBAC are installed")]
async fn chart_rbac(world: &mut BarbicanWorld) {
    let client = world.env().scenario_client();
    ok(crate::chart_identity::install(&client, &crate::chart_identity::StoreGrants::new()).await);
}

/// The scenario's real MariaDB server (`@real-barbican`).
fn real_mariadb(
    world: &BarbicanWorld,
) -> std::sync::Arc<tokio::sync::Mutex<barbican_fakes::mariadb_server::MariaDbServer>> {
    world
        .env()
        .here()
        .real
        .as_ref()
        .map(|r| r.mariadb.clone())
        .expect("no real MariaDB runs here: tag the scenario @real-barbican")
}

#[given(expr = "the real MariaDB server is stopped")]
#[when(expr = "the real MariaDB server is stopped")]
async fn mariadb_stopped(world: &mut BarbicanWorld) {
    real_mariadb(world).lock().await.stop().await;
}

#[when(expr = "the real MariaDB server starts again")]
async fn mariadb_started(world: &mut BarbicanWorld) {
    let started = real_mariadb(world).lock().await.resume().await;
    ok(started.map_err(|e| e.to_string()));
}

#[when(expr = "a Job {string} is created from the CronJob {string} in {string}")]
async fn job_from_cronjob(
    world: &mut BarbicanWorld,
    job: String,
    cronjob: String,
    namespace: String,
) {
    use k8s_openapi::api::batch::v1::{CronJob, Job};
    let client = world.env().scenario_client();
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), &namespace);
    let found = cronjobs
        .get(&cronjob)
        .await
        .unwrap_or_else(|e| panic!("reading the CronJob {namespace}/{cronjob}: {e}"));
    // What `kubectl create job --from=cronjob/<name>` sends: the job template, annotated as
    // a manual run and owned by the CronJob.
    let template = found.spec.job_template.clone();
    let mut annotations = template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    annotations.insert("cronjob.kubernetes.io/instantiate".into(), "manual".into());
    let created = Job {
        metadata: kube::api::ObjectMeta {
            name: Some(job.clone()),
            namespace: Some(namespace.clone()),
            labels: template.metadata.as_ref().and_then(|m| m.labels.clone()),
            annotations: Some(annotations),
            owner_references: Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                    api_version: "batch/v1".into(),
                    kind: "CronJob".into(),
                    name: cronjob.clone(),
                    uid: found.metadata.uid.clone().unwrap_or_default(),
                    controller: Some(true),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        },
        spec: template.spec,
        ..Default::default()
    };
    Api::<Job>::namespaced(client, &namespace)
        .create(&Default::default(), &created)
        .await
        .unwrap_or_else(|e| panic!("creating the Job {namespace}/{job}: {e}"));
}

/// Every pod template of the Deployments, Jobs and CronJobs in `namespace` (the operator's
/// children among them) as kube-apiserver's Pod Security Admission would judge a pod made
/// from it at `level` (`baseline` or `restricted`): the step fails naming each template and
/// the checks it fails.
#[then(expr = "every pod template in {string} meets the Pod Security Standard {string}")]
async fn templates_meet(world: &mut BarbicanWorld, namespace: String, level: String) {
    use barbican_sim::pod_security::{Level, violations};
    let level = match level.as_str() {
        "baseline" => Level::Baseline,
        "restricted" => Level::Restricted,
        other => panic!("no Pod Security Standard {other:?}: baseline or restricted"),
    };
    let env = world.env();
    let mut templates = Vec::new();
    for (api_version, kind, pointer) in [
        ("apps/v1", "Deployment", "/spec/template"),
        ("batch/v1", "Job", "/spec/template"),
        ("batch/v1", "CronJob", "/spec/jobTemplate/spec/template"),
    ] {
        let resource = env.resource(api_version, kind).await.unwrap();
        let api: Api<kube::api::DynamicObject> =
            Api::namespaced_with(env.scenario_client(), &namespace, &resource);
        for object in api.list(&ListParams::default()).await.unwrap() {
            let value = serde_json::to_value(&object).unwrap();
            let template = value.pointer(pointer).cloned().unwrap_or_default();
            templates.push((
                format!("{kind} {}", object.metadata.name.unwrap_or_default()),
                template,
            ));
        }
    }
    assert!(!templates.is_empty(), "no pod templates in {namespace}");
    let failing: Vec<String> = templates
        .iter()
        .filter_map(|(what, pod)| {
            let found = violations(level, pod);
            (!found.is_empty()).then(|| format!("{what}: {}", found.join(", ")))
        })
        .collect();
    assert!(failing.is_empty(), "{}", failing.join("\n"));
}
