//! Checks beyond conditions: a key of the rendered barbican.conf, the Deployment's pod template
//! (annotations, env), the operator's metrics by value and labels, conditions waited for in
//! seconds, and invariants held over a span of time.

use std::time::Duration;

use cucumber::{gherkin::Step, given, then, when};

use crate::{
    sim_env::{SimEnv, TICK},
    world::{BarbicanWorld, ok},
};

/// The value of `key` in `[section]` of an INI text; `None` when it is not set.
pub fn ini_value(conf: &str, section: &str, key: &str) -> Option<String> {
    let mut current = String::new();
    for line in conf.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.to_string();
        } else if current == section
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == key
        {
            return Some(v.trim().to_string());
        }
    }
    None
}

#[then(
    expr = "within {int} minute(s) the barbican.conf mounted by the Deployment {string} in {string} sets [{word}] {word} to {string}"
)]
async fn conf_sets(
    world: &mut BarbicanWorld,
    minutes: u64,
    deployment: String,
    namespace: String,
    section: String,
    key: String,
    value: String,
) {
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || async {
            let (secret, conf) = env.mounted_conf(&namespace, &deployment).await?;
            match ini_value(&conf, &section, &key) {
                Some(found) if found == value => Ok(()),
                found => Err(format!(
                    "{secret}'s barbican.conf has [{section}] {key} = {found:?}, not {value:?}"
                )),
            }
        })
        .await);
}

#[then(
    expr = "the barbican.conf mounted by the Deployment {string} in {string} does not set [{word}] {word}"
)]
async fn conf_lacks(
    world: &mut BarbicanWorld,
    deployment: String,
    namespace: String,
    section: String,
    key: String,
) {
    let (secret, conf) = world
        .env()
        .mounted_conf(&namespace, &deployment)
        .await
        .unwrap();
    let found = ini_value(&conf, &section, &key);
    assert!(
        found.is_none(),
        "{secret}'s barbican.conf sets [{section}] {key} = {found:?}"
    );
}

async fn pod_template(env: &SimEnv, namespace: &str, name: &str) -> serde_json::Value {
    env.get("Deployment", namespace, name)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("Deployment {namespace}/{name} does not exist"))
        .data["spec"]["template"]
        .clone()
}

#[then(
    expr = "the pod template of the Deployment {string} in {string} has the annotation {string}"
)]
async fn template_annotation(
    world: &mut BarbicanWorld,
    name: String,
    namespace: String,
    annotation: String,
) {
    let template = pod_template(world.env(), &namespace, &name).await;
    let annotations = &template["metadata"]["annotations"];
    assert!(
        annotations.get(&annotation).is_some(),
        "the pod template of {namespace}/{name} lacks {annotation:?}: {annotations}"
    );
}

#[then(
    expr = "the Deployment {string} in {string} takes the env {string} from the Secret {string} key {string}"
)]
async fn template_env(
    world: &mut BarbicanWorld,
    name: String,
    namespace: String,
    variable: String,
    secret: String,
    key: String,
) {
    let template = pod_template(world.env(), &namespace, &name).await;
    let found: Vec<(String, String)> = template["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["env"].as_array().cloned().unwrap_or_default())
        .filter(|e| e["name"] == variable.as_str())
        .map(|e| {
            let reference = &e["valueFrom"]["secretKeyRef"];
            (
                reference["name"].as_str().unwrap_or_default().to_string(),
                reference["key"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert!(
        found.contains(&(secret.clone(), key.clone())),
        "{namespace}/{name} takes {variable} from {found:?}, not from {secret}/{key}"
    );
}

/// The operator's requests an API server refused with 403 Forbidden, as `(verb, resource,
/// count)`, from its metrics page `rendered` (`barbican_operator_kube_requests_total`).
pub fn forbidden_requests(rendered: &str) -> Vec<(String, String, f64)> {
    let label = |line: &str, name: &str| {
        let start = line.find(&format!("{name}=\""))? + name.len() + 2;
        let end = line.get(start..)?.find('"')? + start;
        line.get(start..end).map(str::to_string)
    };
    rendered
        .lines()
        .filter(|l| l.starts_with("barbican_operator_kube_requests_total{"))
        .filter(|l| label(l, "code").as_deref() == Some("403"))
        .filter_map(|l| {
            let count: f64 = l.rsplit_once(' ')?.1.parse().ok()?;
            Some((label(l, "verb")?, label(l, "resource")?, count))
        })
        .filter(|(_, _, count)| *count > 0.0)
        .collect()
}

/// The value of the sample of `metric` whose labels include every `k=v` of `labels`, from the
/// Prometheus text `rendered`.
pub fn metric_value(rendered: &str, metric: &str, labels: &str) -> Option<f64> {
    let wanted: Vec<String> = labels
        .split(',')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| match l.split_once('=') {
            Some((k, v)) => format!("{k}=\"{v}\""),
            None => l.to_string(),
        })
        .collect();
    rendered
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            l.strip_prefix(metric)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .find(|l| wanted.iter().all(|w| l.contains(w.as_str())))
        .and_then(|l| l.rsplit_once(' '))
        .and_then(|(_, v)| v.parse().ok())
}

#[then(expr = "the operator's metric {string} with {string} reads {int}")]
async fn metric_reads(world: &mut BarbicanWorld, metric: String, labels: String, value: i64) {
    let rendered = world
        .settled_metrics(|rendered| metric_value(rendered, &metric, &labels) == Some(value as f64))
        .await;
    let found = metric_value(&rendered, &metric, &labels);
    assert_eq!(
        found,
        Some(value as f64),
        "{metric}{{{labels}}} in:\n{}",
        rendered
            .lines()
            .filter(|l| l.starts_with(metric.as_str()))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[then(expr = "within {int} second(s) the {word} {string} in {string} reports:")]
async fn reports_in_seconds(
    world: &mut BarbicanWorld,
    seconds: u64,
    kind: String,
    name: String,
    namespace: String,
    step: &Step,
) {
    let rows: Vec<Vec<String>> = step
        .table
        .iter()
        .flat_map(|t| t.rows.iter().skip(1).cloned())
        .collect();
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(seconds), || async {
            crate::world::check_conditions(&env.conditions(&kind, &namespace, &name).await?, &rows)
        })
        .await);
}

#[then(
    expr = "for {int} minute(s) the {word} condition of the {word} {string} in {string} never reads {word}"
)]
async fn never(
    world: &mut BarbicanWorld,
    minutes: u64,
    type_: String,
    kind: String,
    name: String,
    namespace: String,
    status: String,
) {
    let env = world.env();
    let span = Duration::from_secs(minutes * 60);
    let step = TICK.max(span / 100);
    let mut passed = Duration::ZERO;
    while passed <= span {
        let conditions = env.conditions(&kind, &namespace, &name).await.unwrap();
        if let Some(c) = conditions.iter().find(|c| c.type_ == type_) {
            assert!(
                c.status != status,
                "{type_} of {kind} {namespace}/{name} read {status} after {}s: {} ({})",
                passed.as_secs(),
                c.reason,
                c.message
            );
        }
        env.let_time_pass(step).await;
        passed += step;
    }
}

#[when(expr = "applying the following is refused with {string}:")]
#[then(expr = "applying the following is refused with {string}:")]
async fn refused(world: &mut BarbicanWorld, message: String, step: &Step) {
    let yaml = step.docstring.as_deref().expect("a YAML docstring");
    crate::world::expect_refusal(world.env().apply_yaml(yaml).await, &message);
}

#[then(expr = "{string} appears nowhere in {string}")]
async fn nowhere(world: &mut BarbicanWorld, planted: String, namespace: String) {
    ok(world
        .env()
        .nowhere_in(&namespace, &[planted], "the planted string")
        .await);
}

#[given(expr = "the target cluster {string} is registered with the kubeconfig:")]
#[when(expr = "the target cluster {string} is registered with the kubeconfig:")]
async fn registered_with(world: &mut BarbicanWorld, name: String, step: &Step) {
    let kubeconfig = step.docstring.as_deref().expect("a kubeconfig docstring");
    ok(world.env().register(&name, kubeconfig, None).await);
}

#[then(
    expr = "the event {string} about {string} in {string} is one Event whose series counts at least {int}"
)]
async fn one_series(
    world: &mut BarbicanWorld,
    reason: String,
    name: String,
    namespace: String,
    least: i32,
) {
    let counts = world
        .env()
        .event_counts(&namespace, &name, &reason)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        counts.len() == 1 && counts[0] >= least,
        "expected one {reason} Event counting at least {least}, found the counts {counts:?}"
    );
}

#[then(expr = "the children in {string} equal a fresh install of what it holds")]
async fn equal_a_fresh_install(world: &mut BarbicanWorld, namespace: String) {
    let found = crate::edits::compare_with_fresh(world.env(), std::slice::from_ref(&namespace))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let differences = found.get(&namespace).cloned().unwrap_or_default();
    assert!(
        differences.is_empty(),
        "the children in {namespace} differ from a fresh install of what it holds:\n  {}",
        differences.join("\n  ")
    );
}
