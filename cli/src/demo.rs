//! `barbican-sim demo`: the operator's main job on the embedded sim. A cluster with its fakes
//! starts on a virtual clock, the operator runs in-process, and every example of
//! `deploy/examples/` is applied where it can become Ready (see [`apply_examples`]): the minimal
//! one with its managed store, the brownfield store against an external OpenBao, and the full
//! one placed on a second simulated cluster. The demo prints each condition of each CR as it
//! changes, what the operator created for the minimal one, and what a pass over it once
//! converged writes (nothing); with `--kubeconfig-out` it then keeps serving.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use barbican_features::sim_env::{MINIMAL_PREREQUISITES, SimEnv};

const NAMESPACE: &str = "openstack";
const NAME: &str = "barbican";
const STORE: &str = "openbao-primary";

fn example(file: &str) -> Result<String, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("no workspace")?
        .join("deploy/examples")
        .join(file);
    std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))
}

/// `yaml` with its `openstack` namespace replaced by `namespace`.
fn in_namespace(yaml: &str, namespace: &str) -> String {
    yaml.replace("namespace: openstack", &format!("namespace: {namespace}"))
        .replace("{name: openstack}", &format!("{{name: {namespace}}}"))
}

/// The brownfield example's namespace, and the full example's (on the target cluster).
const LEGACY: &str = "legacy";
const FULL: &str = "full";
/// The target cluster `barbican-full.yaml` names.
const REGION: &str = "region-one";

/// What the full example reads on its target cluster besides the minimal prerequisites.
const FULL_PREREQUISITES: &str = "\
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: openstack-tenant-store, namespace: full}
spec: {provider: {vault: {server: 'https://openbao.openbao.svc:8200'}}}
---
apiVersion: v1
kind: Secret
metadata: {name: mariadb-ca, namespace: full}
stringData: {ca.crt: demo-ca}
---
apiVersion: v1
kind: Secret
metadata: {name: barbican-db-client-tls, namespace: full}
stringData: {tls.crt: demo-cert, tls.key: demo-key}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: barbican-policy, namespace: full}
data: {policy.yaml: '\"secrets:list\": \"role:reader\"'}
";

/// Applies every example of `deploy/examples/`, each where it can become Ready: the minimal
/// one with the managed store in `openstack`; the brownfield store (with its own Barbican) in
/// `legacy`, against an external OpenBao served as `vault.example.com`; the full one in
/// `full`, placed on the target cluster `region-one` with a managed store there.
async fn apply_examples(env: &SimEnv) -> Result<(), String> {
    env.apply_yaml(MINIMAL_PREREQUISITES).await?;
    env.apply_yaml(&example("barbicansecretstore-managed.yaml")?)
        .await?;
    env.apply_yaml(&example("barbican.yaml")?).await?;
    println!(
        "applied into {NAMESPACE}: barbican.yaml, barbicansecretstore-managed.yaml and their prerequisites"
    );

    env.apply_yaml(&in_namespace(MINIMAL_PREREQUISITES, LEGACY))
        .await?;
    env.start_external_openbao("vault", LEGACY, "vault").await?;
    env.expose_external_openbao("vault", "vault.example.com", 8200)?;
    env.provision_external_openbao("vault", "secret-barbican", "tenant-a")?;
    env.issue_external_credentials("vault", "tenant-a", "vault-barbican-approle", LEGACY)
        .await?;
    env.publish_external_ca("vault", "vault-ca", LEGACY).await?;
    env.apply_yaml(&in_namespace(
        &example("barbicansecretstore-brownfield.yaml")?,
        LEGACY,
    ))
    .await?;
    env.apply_yaml(&in_namespace(&example("barbican.yaml")?, LEGACY))
        .await?;
    println!(
        "applied into {LEGACY}: barbicansecretstore-brownfield.yaml (an external OpenBao as vault.example.com) and barbican.yaml"
    );

    env.register_target(REGION).await?;
    env.focus_on(Some(REGION))?;
    env.apply_yaml(&in_namespace(MINIMAL_PREREQUISITES, FULL))
        .await?;
    env.apply_yaml(FULL_PREREQUISITES).await?;
    env.focus_on(None)?;
    env.apply_yaml(&format!(
        "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {FULL}}}\n"
    ))
    .await?;
    env.apply_yaml(&in_namespace(
        &example("barbicansecretstore-managed.yaml")?,
        FULL,
    ))
    .await?;
    env.apply_yaml(&in_namespace(&example("barbican-full.yaml")?, FULL))
        .await?;
    println!(
        "applied into {FULL}: barbican-full.yaml, placed on the target cluster {REGION} (a second simulated cluster), with a managed store there\n"
    );
    Ok(())
}

/// The CRs the demo waits on, in the order it prints them.
fn watched() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("BarbicanSecretStore", NAMESPACE, STORE),
        ("Barbican", NAMESPACE, NAME),
        ("BarbicanSecretStore", LEGACY, "vault-legacy"),
        ("Barbican", LEGACY, NAME),
        ("BarbicanSecretStore", FULL, STORE),
        ("Barbican", FULL, NAME),
    ]
}

/// Runs the demo, printing as it goes; with `kubeconfig_out`, keeps serving afterwards.
pub async fn run(kubeconfig_out: Option<&std::path::Path>) -> Result<(), String> {
    println!("starting a simulated cluster (virtual clock) with its fakes and the operator");
    let env = SimEnv::start(true).await?;
    apply_examples(&env).await?;

    let start = env.clock().now();
    let seen: Arc<Mutex<BTreeMap<String, String>>> = Arc::default();
    let converged = env
        .eventually(Duration::from_secs(300), || {
            let (env, seen) = (&env, seen.clone());
            async move {
                let mut all_ready = true;
                for (kind, namespace, name) in watched() {
                    let conditions = env.conditions(kind, namespace, name).await?;
                    let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
                    for c in &conditions {
                        let key = format!("{kind}/{namespace}/{name}/{}", c.type_);
                        let now = format!("{} {}", c.status, c.reason);
                        if seen.get(&key) != Some(&now) {
                            let at = env.clock().now().duration_since(start).as_secs();
                            println!(
                                "  +{at:>3}s  {:<42} {:<19} {:<5} {:<26} {}",
                                format!("{kind}/{namespace}/{name}"),
                                c.type_,
                                c.status,
                                c.reason,
                                c.message
                            );
                            seen.insert(key, now);
                        }
                    }
                    all_ready &= conditions
                        .iter()
                        .any(|c| c.type_ == "Ready" && c.status == "True");
                }
                if all_ready {
                    Ok(())
                } else {
                    Err("still converging".into())
                }
            }
        })
        .await;
    converged?;

    println!("\nwhat the operator created in {NAMESPACE}:");
    for (kind, name) in [
        ("Deployment", NAME.to_string()),
        ("Service", NAME.to_string()),
        ("PodDisruptionBudget", NAME.to_string()),
        ("Secret", format!("{NAME}-db-connection")),
    ] {
        if env.get(kind, NAMESPACE, &name).await?.is_some() {
            println!("  {kind}/{name}");
        }
    }
    let barbican = env.barbican(NAMESPACE, NAME).await?;
    let status = barbican.status.unwrap_or_default();
    println!("  endpoint: {}", status.endpoint.unwrap_or_default());
    if let Some(ready) = status.conditions.iter().find(|c| c.type_ == "Ready") {
        println!(
            "  Ready: {} {} ({})",
            ready.status, ready.reason, ready.message
        );
    }

    // One pass settles whatever was in flight; the next is the pass over a converged Barbican.
    env.full_pass(NAMESPACE, NAME).await?;
    let mark = env.cluster.audit_mark();
    env.full_pass(NAMESPACE, NAME).await?;
    let writes = env.operator_writes_since(mark);
    println!(
        "\na periodic pass over the converged Barbican sent {} write(s) to the API server",
        writes.len()
    );
    for w in &writes {
        println!("  {w}");
    }
    println!(
        "\npipeline passes so far: {} (see barbican_operator_reconcile_duration_seconds)",
        env.passes()
    );
    match kubeconfig_out {
        Some(path) => serve(&env, path).await,
        None => Ok(()),
    }
}

/// Serves the demo's cluster on loopback with a kubeconfig at `path`, the operator still
/// running and virtual time moving a second per wall-clock second, until Ctrl-C.
async fn serve(env: &SimEnv, path: &std::path::Path) -> Result<(), String> {
    let addr = env
        .cluster
        .serve_on_loopback()
        .await
        .map_err(|e| format!("serving the cluster: {e}"))?;
    std::fs::write(path, crate::kubeconfig(addr))
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!(
        "\nserving the cluster on http://{addr}; try\n  kubectl --kubeconfig {} get barbicans,barbicansecretstores -A\nCtrl-C stops the demo.",
        path.display()
    );
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        tokio::select! {
            _ = &mut ctrl_c => break,
            () = tokio::time::sleep(Duration::from_secs(1)) => {
                env.clock().advance(Duration::from_secs(1)).await;
            }
        }
    }
    println!("stopped");
    Ok(())
}
