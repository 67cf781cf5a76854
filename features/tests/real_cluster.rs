//! The feature files on a real Kubernetes API server (see [`barbican_features::backend`]).
//!
//! Which server: the cluster `$BARBICAN_E2E_KUBECONFIG` names (for example one made by `kind
//! create cluster`, or k3s); else, with `$BARBICAN_E2E_CONTROL_PLANE` naming the directory
//! `ci/install-control-plane.sh` printed, a control plane of Kubernetes' own binaries started
//! here ([`barbican_features::control_plane`]) and torn down after the run, which fails if it
//! left a process, a port or a file behind; else a kwok control plane started through
//! testcontainers when a Docker engine answers. With none, the run prints one line saying so
//! and passes.
//!
//! The scenarios tagged `@sim-only` (the virtual clock, the audit log, faults, second
//! simulated clusters) are left out; the rest run one at a time, each cleaning up after
//! itself. `--tags` and `--name` (or `FEATURES_TAGS` / `FEATURES_SCENARIO`) narrow the run as
//! for the sim's harness; `FEATURES_SHARD=k/n` runs every n-th feature file from the k-th, so
//! n processes on n clusters share the files (CI runs two on two served sims). For nextest
//! this binary is one test, `all_features`.
//!
//! With `$BARBICAN_E2E_INSTALLED_OPERATOR` (a served sim's control API) the cluster already
//! runs the operator as the chart installed it: no operator starts here, and the scenarios
//! tagged `@in-process-operator` (its metrics registry, its restarts) are left out too. CI
//! runs one shard so, on `barbican-sim serve --operator-pods` after the README's `helm
//! install`.

use std::path::PathBuf;

use barbican_features::{
    backend::{
        self, Backend, IN_PROCESS_OPERATOR, INSTALLED_OPERATOR_VAR, KUBECONFIG_VAR, REAL_BARBICAN,
        SIM_ONLY,
    },
    control_plane::{CONTROL_PLANE_VAR, ControlPlane},
    runner::{self, Selection},
};

/// The one test this binary lists.
const TEST: &str = "all_features";

/// A kwok control plane in a container, and the kubeconfig that names it.
struct Kwok {
    _container: testcontainers::ContainerAsync<testcontainers_modules::kwok::KwokCluster>,
    kubeconfig: PathBuf,
}

/// Starts kwok through testcontainers; the error says why not (no Docker engine, no image).
fn start_kwok() -> Result<Kwok, String> {
    use testcontainers::runners::AsyncRunner as _;
    use testcontainers_modules::kwok::{KWOK_CLUSTER_PORT, KwokCluster};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let container = KwokCluster::default()
            .start()
            .await
            .map_err(|e| format!("starting kwok through testcontainers: {e}"))?;
        let host = container.get_host().await.map_err(|e| e.to_string())?;
        let port = container
            .get_host_port_ipv4(KWOK_CLUSTER_PORT)
            .await
            .map_err(|e| e.to_string())?;
        let kubeconfig =
            std::env::temp_dir().join(format!("barbican-kwok-{}.kubeconfig", std::process::id()));
        std::fs::write(
            &kubeconfig,
            backend::kubeconfig(&format!("http://{host}:{port}"), None),
        )
        .map_err(|e| e.to_string())?;
        Ok(Kwok {
            _container: container,
            kubeconfig,
        })
    })
}

/// Whether this runner is the first (or only) of its shards.
fn first_shard() -> bool {
    std::env::var(runner::SHARD_VAR).map_or(true, |spec| spec.starts_with("1/"))
}

/// Runs the API differential corpus against the control plane `kubeconfig` names and the sim,
/// printing the report; whether they answered alike (or as allowed).
fn api_differential(kubeconfig: &std::path::Path) -> bool {
    use barbican_features::api_differential::{allowlist, compare, report};
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("api differential: {e}");
            return false;
        }
    };
    let compared = runtime.block_on(async {
        let client = backend::client(kubeconfig).await?;
        compare(&client).await
    });
    match (compared, allowlist()) {
        (Ok(compared), Ok(allowed)) => {
            let (text, failed) = report(&compared, &allowed);
            print!("{text}");
            !failed
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("api differential: {e}");
            false
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    if flag("--list") {
        if !flag("--ignored") {
            println!("{TEST}: test");
        }
        return;
    }
    let selection = match Selection::from(&args, |v| std::env::var(v).ok()) {
        Ok(selection) => selection.excluding(SIM_ONLY).excluding(REAL_BARBICAN),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut _kwok = None;
    let mut control_plane = None;
    let mut admission = None;
    let mut differs = false;
    let chosen = match (
        std::env::var_os(KUBECONFIG_VAR),
        std::env::var_os(CONTROL_PLANE_VAR),
    ) {
        (Some(path), _) => Backend::Cluster {
            description: format!("${KUBECONFIG_VAR} ({})", PathBuf::from(&path).display()),
            kubeconfig: path.into(),
            installed_operator: std::env::var(INSTALLED_OPERATOR_VAR).ok(),
        },
        (None, Some(binaries)) => match ControlPlane::start(binaries.as_ref()) {
            Ok(plane) => {
                let kubeconfig = plane.kubeconfig.clone();
                // The API itself is compared with the sim's first, before the webhooks
                // stand in front of it (features/src/api_differential.rs).
                differs = first_shard() && !api_differential(&kubeconfig);
                control_plane = Some(plane);
                // Nothing else admits the CRs here: the chart's webhooks, served in this
                // process, are registered with the API server for the whole run.
                match barbican_features::admission::serve_for_api_server(&kubeconfig) {
                    Ok(served) => admission = Some(served),
                    Err(why) => {
                        eprintln!("registering the chart's webhooks: {why}");
                        std::process::exit(1);
                    }
                }
                Backend::Cluster {
                    kubeconfig,
                    description: format!(
                        "a control plane of Kubernetes' own binaries (${CONTROL_PLANE_VAR})"
                    ),
                    installed_operator: None,
                }
            }
            Err(why) => {
                eprintln!("starting the control plane: {why}");
                std::process::exit(1);
            }
        },
        (None, None) => match start_kwok() {
            Ok(kwok) => {
                let kubeconfig = kwok.kubeconfig.clone();
                _kwok = Some(kwok);
                Backend::Cluster {
                    kubeconfig,
                    description: "kwok (testcontainers)".into(),
                    installed_operator: None,
                }
            }
            Err(why) => {
                println!(
                    "real-cluster features skipped: ${KUBECONFIG_VAR} is unset and no kwok cluster could be started ({})",
                    why.lines().next().unwrap_or_default()
                );
                return;
            }
        },
    };
    let mut selection = selection;
    match backend::choose(chosen) {
        Backend::Cluster {
            description,
            installed_operator: Some(_),
            ..
        } => {
            println!(
                "running the features on {description} against the operator installed there, leaving out @{SIM_ONLY} and @{IN_PROCESS_OPERATOR}"
            );
            selection = selection.excluding(IN_PROCESS_OPERATOR);
        }
        Backend::Cluster { description, .. } => {
            println!("running the features on {description}, leaving out @{SIM_ONLY}");
        }
        _ => {}
    }
    let files = runner::feature_files();
    let files: Vec<&PathBuf> = match std::env::var(runner::SHARD_VAR) {
        Ok(spec) => match runner::shard(&files, &spec) {
            Ok(files) => files,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        },
        Err(_) => files.iter().collect(),
    };
    // One scenario at a time: they share the cluster and its namespaces.
    let failed = runner::run_files(&files, &selection, 1) || differs;
    drop(admission);
    if let Some(plane) = control_plane
        && let Err(left) = plane.stop()
    {
        eprintln!("{left}");
        std::process::exit(1);
    }
    if failed {
        std::process::exit(1);
    }
}
