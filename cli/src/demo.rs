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

use barbican_features::{
    examples::{NAME, NAMESPACE, apply_examples, watched},
    sim_env::SimEnv,
};

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
