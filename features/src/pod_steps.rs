//! Steps about pods a kubelet runs for real (the `@real-barbican` scenarios): what their
//! containers printed, read through `pods/<name>/log` as `kubectl logs` reads it.

use std::time::Duration;

use cucumber::then;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api,
    api::{ListParams, LogParams},
};

use crate::world::{BarbicanWorld, ok};

/// How long the output may take to show (a process starting, a migration running).
const WITHIN: Duration = Duration::from_secs(120);

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
            let listed = pods
                .list(&ListParams::default().labels(selector))
                .await
                .map_err(|e| format!("listing pods {selector}: {e}"))?;
            let mut seen = Vec::new();
            for pod in listed {
                let name = pod.metadata.name.unwrap_or_default();
                let log = pods
                    .logs(&name, &LogParams::default())
                    .await
                    .unwrap_or_else(|e| format!("(no log: {e})"));
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

#[then(expr = "the log of a pod of the Deployment {string} in {string} contains {string}")]
async fn deployment_log(
    world: &mut BarbicanWorld,
    deployment: String,
    namespace: String,
    text: String,
) {
    let env = world.env();
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(env.scenario_client(), &namespace);
    let found = deployments
        .get(&deployment)
        .await
        .unwrap_or_else(|e| panic!("reading the Deployment {namespace}/{deployment}: {e}"));
    let labels = found.spec.selector.match_labels.unwrap_or_default();
    let selector = labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    ok(some_log_contains(world, &namespace, &selector, &text).await);
}
