//! `barbican-sim demo`: the operator's main job on the embedded sim. A cluster with its fakes
//! starts on a virtual clock, the operator runs in-process, and every example of
//! `deploy/examples/` is applied where it can become Ready (see [`apply_examples`]): the minimal
//! one with its managed store, the brownfield store against an external OpenBao, and the full
//! one placed on a second simulated cluster. The demo prints each condition of each CR as it
//! changes, what the operator created for the minimal one, and what a pass over it once
//! converged writes (nothing); with `--kubeconfig-out` it then keeps serving.
//!
//! With `--real-barbican` the minimal example runs for real (see
//! [`barbican_features::backend::Backend::RealBarbican`]): its pods are uwsgi and
//! barbican-manage processes on the sim's kubelet, on the wall clock, and the demo stores a
//! secret through barbican's API and reads it back.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use barbican_features::{
    backend::{self, Backend},
    barbican_api_steps,
    examples::{NAME, NAMESPACE, STORE, apply_examples, apply_minimal_example, watched},
    install_steps,
    sim_env::SimEnv,
};

use crate::contained::Stopping;

/// Where the chart installs the operator.
const OPERATOR_NAMESPACE: &str = "barbican-system";

/// The demo's Keystone user, who stores a secret (roles for both of barbican's policy sets).
const DEMO_USER: (&str, &str, &str) = ("demo", "demo-pw", "demo");

/// Runs the demo, printing as it goes; with `kubeconfig_out`, keeps serving afterwards, until
/// `stopping` says so. Whenever it ends, the pods and MariaDB are stopped (their grace periods
/// honoured) and the demo's directory is removed.
pub async fn run(
    kubeconfig_out: Option<&std::path::Path>,
    real: bool,
    installed: bool,
    mut stopping: Stopping,
) -> Result<(), String> {
    let real = real || installed;
    let state_dir = barbican_sim::leftovers::scratch_dir("barbican-demo-");
    let watched: Vec<(&str, &str, &str)> = if real {
        let runtimes = backend::real_barbican_runtimes()?;
        println!(
            "starting a simulated cluster (wall clock) whose kubelet runs barbican from {}",
            runtimes
                .iter()
                .map(|r| format!("{} ({})", r.image, r.root.display()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        backend::choose(Backend::RealBarbican {
            runtimes,
            state_dir: state_dir.clone(),
        });
        vec![
            ("BarbicanSecretStore", NAMESPACE, STORE),
            ("Barbican", NAMESPACE, NAME),
        ]
    } else {
        println!("starting a simulated cluster (virtual clock) with its fakes and the operator");
        watched()
    };
    let started = tokio::select! {
        env = async {
            if installed {
                SimEnv::start_for_install().await
            } else {
                SimEnv::start(true).await
            }
        } => Some(env),
        () = stopping.requested() => None,
    };
    let (shown, stopped) = match started {
        Some(Ok(env)) => {
            let (shown, stopped) = tokio::select! {
                shown = show(&env, real, installed, &watched, kubeconfig_out) => (shown, false),
                () = stopping.requested() => (Ok(()), true),
                () = crate::contained::panic_on_request() => (Ok(()), true),
            };
            if let Some(real) = env.here().real.as_ref() {
                real.stop().await;
            }
            (shown, stopped)
        }
        Some(Err(e)) => (Err(e), false),
        None => (Ok(()), true),
    };
    if real {
        let _ = std::fs::remove_dir_all(&state_dir);
    }
    if stopped {
        println!("stopped");
    }
    shown
}

/// The demo proper: examples applied and converged, what the operator made, a quiet pass or
/// the operator's pods, a secret through barbican; then serving when asked to.
async fn show(
    env: &SimEnv,
    real: bool,
    installed: bool,
    watched: &[(&str, &str, &str)],
    kubeconfig_out: Option<&std::path::Path>,
) -> Result<(), String> {
    if installed {
        install(env).await?;
    }
    if real {
        // barbican's service user is known through apply_minimal_example; the demo's own
        // user stores and reads a secret.
        env.here()
            .keystone
            .add_user(barbican_fakes::keystone::User {
                name: DEMO_USER.0.into(),
                password: DEMO_USER.1.into(),
                project: DEMO_USER.2.into(),
                roles: vec!["member".into(), "creator".into()],
            });
        apply_minimal_example(env).await?;
    } else {
        apply_examples(env).await?;
    }

    let start = env.clock().now();
    let seen: Arc<Mutex<BTreeMap<String, String>>> = Arc::default();
    let converged = env
        .eventually(Duration::from_secs(300), || {
            let (seen, watched) = (seen.clone(), &watched);
            async move {
                let mut all_ready = true;
                for (kind, namespace, name) in watched.iter().copied() {
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

    if installed {
        show_the_operator_pods(env).await?;
    } else {
        show_a_quiet_pass(env).await?;
    }
    if real {
        show_a_secret(env).await?;
    }
    match kubeconfig_out {
        Some(path) => serve(env, path).await,
        None => Ok(()),
    }
}

/// Installs the chart with the README's command and waits for both replicas.
async fn install(env: &SimEnv) -> Result<(), String> {
    println!(
        "installing the chart as the README does:\n  {}",
        install_steps::INSTALL
    );
    // The chart's Roles for the watched namespace and the target clusters' registrations go
    // into these, as the README's `kubectl create namespace` lines have them.
    for namespace in [NAMESPACE, "c5c3-clusters"] {
        env.apply(serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": namespace}}))
            .await?;
    }
    install_steps::run_helm(env, install_steps::INSTALL).await?;
    env.eventually(Duration::from_secs(180), || async {
        let ready = env
            .read_pointer(
                "Deployment",
                OPERATOR_NAMESPACE,
                "barbican-operator",
                "/status/readyReplicas",
            )
            .await?;
        match ready.as_deref() {
            Some("2") => Ok(()),
            other => Err(format!(
                "the operator's Deployment has {other:?} ready replicas"
            )),
        }
    })
    .await?;
    println!("the operator's Deployment has 2 ready replicas\n");
    Ok(())
}

/// The operator's pods, which one leads, and how to read their logs.
async fn show_the_operator_pods(env: &SimEnv) -> Result<(), String> {
    let leader = env
        .read_pointer(
            "coordination.k8s.io/v1/Lease",
            OPERATOR_NAMESPACE,
            barbican_operator::leader::LEASE_NAME,
            "/spec/holderIdentity",
        )
        .await?
        .unwrap_or_default();
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(env.scenario_client(), OPERATOR_NAMESPACE);
    println!("\nthe operator runs as the chart's pods in {OPERATOR_NAMESPACE}:");
    for pod in pods
        .list(&Default::default())
        .await
        .map_err(|e| format!("listing the operator's pods: {e}"))?
    {
        let name = pod.metadata.name.unwrap_or_default();
        let phase = pod.status.and_then(|s| s.phase).unwrap_or_default();
        let leads = install_steps::holder_pod(&leader) == name;
        println!(
            "  {name:<44} {phase:<8} {}",
            if leads { "leader" } else { "" }
        );
    }
    Ok(())
}

/// What a periodic pass over the converged Barbican writes (nothing), and the passes so far.
async fn show_a_quiet_pass(env: &SimEnv) -> Result<(), String> {
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
    Ok(())
}

/// Stores a secret through the real barbican and reads it back, then prints how to do the
/// same with curl.
async fn show_a_secret(env: &SimEnv) -> Result<(), String> {
    let (user, password, project) = DEMO_USER;
    let token = barbican_api_steps::token(env, user, password, project).await?;
    let payload = "my first secret";
    let reference = barbican_api_steps::store(env, &token, NAMESPACE, NAME, payload).await?;
    let read = barbican_api_steps::read_payload(env, &token, NAMESPACE, NAME, &reference).await?;
    println!(
        "
stored {payload:?} as {user} through barbican's API: {reference}"
    );
    println!("read back: {read:?}");
    let site = env.here();
    let keystone = site.keystone.addr();
    let api = site
        .cluster
        .services()
        .resolve(&format!("{NAME}.{NAMESPACE}.svc"), 9311)
        .ok_or("the Service reaches no pod")?;
    let auth = format!(
        r#"{{"auth": {{"identity": {{"methods": ["password"], "password": {{"user": {{"name": "{user}", "domain": {{"name": "Default"}}, "password": "{password}"}}}}}}, "scope": {{"project": {{"name": "{project}", "domain": {{"name": "Default"}}}}}}}}}}"#
    );
    println!(
        "\nthe same with curl, from this machine (Keystone on {keystone}, a barbican pod on {api}):"
    );
    println!(
        r#"TOKEN=$(curl -si http://{keystone}/v3/auth/tokens -H 'content-type: application/json' -d '{auth}' | awk 'tolower($1) == "x-subject-token:" {{print $2}}' | tr -d '\r')"#
    );
    println!(
        r#"curl -s http://{api}/v1/secrets -H "X-Auth-Token: $TOKEN" -H 'content-type: application/json' -d '{{"payload": "hello", "payload_content_type": "text/plain"}}'"#
    );
    println!(
        r#"curl -s -H "X-Auth-Token: $TOKEN" -H 'accept: text/plain' http://{api}/v1/secrets/<id>/payload"#
    );
    Ok(())
}

/// Serves the demo's cluster on loopback with a kubeconfig at `path`, the operator still
/// running and virtual time moving a second per wall-clock second, until the demo is stopped.
async fn serve(env: &SimEnv, path: &std::path::Path) -> Result<(), String> {
    // An installed demo is served already (helm reached it there).
    let installed = match env.here().real.as_ref() {
        Some(real) if real.is_served() => Some(real.kubeconfig(&env.cluster).await?),
        _ => None,
    };
    let address = match &installed {
        Some(served) => {
            std::fs::copy(served, path).map_err(|e| format!("writing {}: {e}", path.display()))?;
            "loopback".to_string()
        }
        None => {
            let addr = env
                .cluster
                .serve_on_loopback()
                .await
                .map_err(|e| format!("serving the cluster: {e}"))?;
            std::fs::write(path, crate::kubeconfig(addr))
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
            format!("http://{addr}")
        }
    };
    println!(
        "\nserving the cluster on {address}; try\n  kubectl --kubeconfig {} get barbicans,barbicansecretstores -A",
        path.display()
    );
    if installed.is_some() {
        println!(
            "  kubectl --kubeconfig {} -n {OPERATOR_NAMESPACE} logs deploy/barbican-operator",
            path.display()
        );
    }
    println!("Ctrl-C (or SIGTERM) stops the demo.");
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        env.clock().advance(Duration::from_secs(1)).await;
    }
}
