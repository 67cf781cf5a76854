//! Steps that install the chart as a user does (the `@installed` scenarios): real `helm`
//! against the sim served on loopback, the operator running as the chart's pods on the
//! kubelet, and its leader election seen through the Lease.

use std::{path::PathBuf, process::Command, time::Duration};

use cucumber::{given, then, when};
use k8s_openapi::api::{coordination::v1::Lease, core::v1::Pod};
use kube::{
    Api,
    api::{DeleteParams, ListParams},
};

use crate::{
    sim_env::SimEnv,
    world::{BarbicanWorld, ok},
};

/// The README's install command (its Deploying section; a test keeps the two the same).
pub const INSTALL: &str = "helm install barbican-operator deploy/helm/barbican-operator \\
  --namespace barbican-system --create-namespace \\
  --set 'watchNamespaces={openstack}' \\
  --set 'rbac.secretStoreNamespaces.openstack={openbao-instance}'";

/// The helm binary: `$BARBICAN_HELM`, else the one `ci/install-helm.sh` puts under
/// `target/tools-venv`, else `helm` on `PATH`.
pub fn helm() -> PathBuf {
    if let Some(path) = std::env::var_os("BARBICAN_HELM") {
        return path.into();
    }
    let installed = workspace_root().join("target/tools-venv/bin/helm");
    if installed.exists() {
        return installed;
    }
    PathBuf::from("helm")
}

/// The workspace's root: where the README's commands run from.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("features/ sits in the workspace")
        .to_path_buf()
}

/// The command lines of a docstring: one per line, a trailing `\` continuing it, `#` lines
/// left out; each split into words as a shell does for plain and single- or double-quoted
/// words, a `#` word ending the line (no expansions).
pub fn command_lines(text: &str) -> Result<Vec<Vec<String>>, String> {
    let joined = text.replace("\\\n", " ");
    joined
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(words)
        .collect()
}

fn words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            // A `#` starting a word comments out the rest of the line, as in a shell.
            (None, '#') if word.is_none() => break,
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("an unclosed quote in: {line}"));
    }
    words.extend(word);
    Ok(words)
}

#[given("a simulated cluster served for helm, without the operator")]
async fn served_for_helm(world: &mut BarbicanWorld) {
    let env = SimEnv::start_for_install()
        .await
        .expect("starting the sim for an install");
    world.set_env(env);
}

/// Runs each `helm …` line of `script` (see [`command_lines`]) from the workspace's root
/// against the sim `env` serves on loopback, as a user runs the README's commands; a nonzero
/// exit is an error carrying helm's output.
pub async fn run_helm(env: &SimEnv, script: &str) -> Result<(), String> {
    let real = env
        .site
        .real
        .as_ref()
        .ok_or("helm needs the served sim of a real-barbican site")?;
    let kubeconfig = real.kubeconfig(&env.cluster).await?;
    let home = real.dir.join("helm");
    let lines = command_lines(script)?;
    if lines.is_empty() {
        return Err("no command to run".into());
    }
    for line in lines {
        let Some((_, args)) = line.split_first().filter(|(p, _)| *p == "helm") else {
            return Err(format!("only helm commands run here: {}", line.join(" ")));
        };
        let mut command = Command::new(helm());
        command
            .args(args)
            .current_dir(workspace_root())
            .env("KUBECONFIG", &kubeconfig)
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_DATA_HOME", home.join("data"));
        let output = tokio::process::Command::from(command)
            .output()
            .await
            .map_err(|e| format!("running {}: {e}", helm().display()))?;
        if !output.status.success() {
            return Err(format!(
                "`{}` failed ({}):\n{}{}",
                line.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    Ok(())
}

#[given("helm runs:")]
#[when("helm runs:")]
async fn helm_runs(world: &mut BarbicanWorld, step: &cucumber::gherkin::Step) {
    ok(run_helm(world.env(), step.docstring.as_deref().unwrap_or("")).await);
}

/// The pod a Lease's holder identity names (`<pod>_<pid>`, the operator's form).
pub fn holder_pod(identity: &str) -> &str {
    identity.rsplit_once('_').map_or(identity, |(pod, _)| pod)
}

async fn holder(env: &SimEnv, namespace: &str, lease: &str) -> Result<String, String> {
    let leases: Api<Lease> = Api::namespaced(env.scenario_client(), namespace);
    let lease = leases
        .get(lease)
        .await
        .map_err(|e| format!("reading the Lease: {e}"))?;
    lease
        .spec
        .and_then(|s| s.holder_identity)
        .filter(|h| !h.is_empty())
        .ok_or_else(|| "the Lease has no holder".to_string())
}

#[when(expr = "the pod holding the Lease {string} in {string} is deleted")]
async fn delete_leader(world: &mut BarbicanWorld, lease: String, namespace: String) {
    let env = world.env();
    let identity = holder(env, &namespace, &lease).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.scenario_client(), &namespace);
    pods.delete(holder_pod(&identity), &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("deleting the leader's pod {identity}: {e}"));
    env.remember(&format!("lease-holder {namespace}/{lease}"), identity);
}

#[then(expr = "within {int} seconds the Lease {string} in {string} is held by another running pod")]
async fn lease_handed_over(
    world: &mut BarbicanWorld,
    seconds: u64,
    lease: String,
    namespace: String,
) {
    let env = world.env();
    let before = env
        .remembered(&format!("lease-holder {namespace}/{lease}"))
        .expect("the pod holding the Lease was deleted earlier in the scenario");
    let pods: Api<Pod> = Api::namespaced(env.scenario_client(), &namespace);
    ok(env
        .eventually(Duration::from_secs(seconds), || {
            let (pods, before) = (pods.clone(), before.clone());
            let (namespace, lease) = (namespace.clone(), lease.clone());
            async move {
                let now = holder(env, &namespace, &lease).await?;
                if holder_pod(&now) == holder_pod(&before) {
                    return Err(format!("the deleted pod's {before} still holds it"));
                }
                let running = pods
                    .list(&ListParams::default())
                    .await
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .any(|p| {
                        p.metadata.name.as_deref() == Some(holder_pod(&now))
                            && p.status.and_then(|s| s.phase).as_deref() == Some("Running")
                    });
                match running {
                    true => Ok(()),
                    false => Err(format!("{now} holds it, but no such pod runs")),
                }
            }
        })
        .await);
}

/// A GET of `path` where the Service `namespace/name` sends `port` answers 200: the chart's
/// Services select the operator's pods and name their ports rightly.
#[then(
    expr = "within {int} minute(s) the Service {string} in {string} answers {string} on port {int}"
)]
async fn service_answers(
    world: &mut BarbicanWorld,
    minutes: u64,
    name: String,
    namespace: String,
    path: String,
    port: u16,
) {
    let env = world.env();
    let host = format!("{name}.{namespace}.svc");
    let (host, path, name, namespace) = (&host, &path, &name, &namespace);
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || async move {
            let addr = env
                .here()
                .cluster
                .services()
                .resolve(host, port)
                .ok_or_else(|| format!("the Service {namespace}/{name} reaches no ready pod"))?;
            let answer = crate::http::request(addr, host, "GET", path, &[], None).await?;
            match answer.status {
                200 => Ok(()),
                status => Err(format!("GET {path} on {host}:{port} answered {status}")),
            }
        })
        .await);
}
