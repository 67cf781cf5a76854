//! The `barbican-operator` binary.

#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use std::{net::SocketAddr, path::PathBuf, process::ExitCode, sync::Arc};

use barbican_operator::{
    admission::{
        server::{ApiLookups, provider, router, serve},
        tls::ReloadingCertificate,
    },
    clock::SystemClock,
    clusters,
    controller::{
        manager::{Settings, run_barbican_controller},
        runtime::scope::WatchScope,
    },
    crd,
    endpoints::{Liveness, Readiness, health_router, metrics_router},
    leader,
    metrics::Metrics,
    resolve::{OverridesFile, Resolve, SystemResolver},
};
use clap::{Parser, Subcommand, ValueEnum};

/// Kubernetes operator for OpenStack Barbican and its OpenBao secret stores.
#[derive(Parser, Debug)]
#[command(name = "barbican-operator", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print both CustomResourceDefinitions as a YAML stream, or write one file per CRD.
    Crd {
        /// Write `<plural>.<group>.yaml` files into this directory instead of printing.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
    /// Run the operator: the Barbican controller, the admission webhooks, `/metrics`,
    /// `/healthz` and `/readyz`, with leader election on a Lease.
    Run(RunArgs),
    /// Serve the defaulting and validating admission webhooks for both kinds over HTTPS.
    Webhook {
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0:9443")]
        bind: SocketAddr,
        /// PEM certificate chain; reloaded when the file changes (cert-manager rotation).
        #[arg(long, default_value = "/tmp/k8s-webhook-server/serving-certs/tls.crt")]
        tls_cert_file: PathBuf,
        /// PEM private key; reloaded together with the certificate.
        #[arg(long, default_value = "/tmp/k8s-webhook-server/serving-certs/tls.key")]
        tls_key_file: PathBuf,
    },
}

/// How logs are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// Kubeconfig to use; without it, the in-cluster config or $KUBECONFIG.
    #[arg(long, value_name = "PATH")]
    kubeconfig: Option<PathBuf>,
    /// Where `/metrics` is served; "0" turns it off.
    #[arg(long, default_value = "0.0.0.0:8080")]
    metrics_bind_address: String,
    /// Where `/healthz` and `/readyz` are served; "0" turns them off.
    #[arg(long, default_value = "0.0.0.0:8081")]
    health_probe_bind_address: String,
    /// Where the admission webhooks are served over HTTPS; "0" turns them off. They are also
    /// off, with a warning, while the certificate file does not exist.
    #[arg(long, default_value = "0.0.0.0:9443")]
    webhook_bind_address: String,
    /// PEM certificate chain of the webhook server; reloaded when it changes.
    #[arg(long, default_value = "/tmp/k8s-webhook-server/serving-certs/tls.crt")]
    tls_cert_file: PathBuf,
    /// PEM private key of the webhook server.
    #[arg(long, default_value = "/tmp/k8s-webhook-server/serving-certs/tls.key")]
    tls_key_file: PathBuf,
    /// Elect a leader through a Lease, so only one replica reconciles.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    leader_elect: bool,
    /// The namespace the operator runs in: the Lease lives there, and the API pods'
    /// NetworkPolicy lets it in.
    #[arg(long, env = "POD_NAMESPACE", default_value = "barbican-system")]
    namespace: String,
    /// This replica's name (events and the Lease holder).
    #[arg(long, env = "POD_NAME", default_value = "barbican-operator")]
    pod_name: String,
    /// Log format.
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Where target clusters are registered (Secrets labelled
    /// `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"`); empty switches them off.
    #[arg(long, default_value = barbican_operator::clusters::DEFAULT_CLUSTERS_NAMESPACE)]
    clusters_namespace: String,
    /// The namespaces whose Barbicans and stores are reconciled, comma-separated; empty
    /// watches every namespace. With a list, the operator needs Roles in those namespaces
    /// only (plus read access to ClusterSecretStores and PriorityClasses).
    #[arg(long, env = "WATCH_NAMESPACES", default_value = "", value_parser = |s: &str| WatchScope::parse(s))]
    watch_namespaces: WatchScope,
    /// A file of `host:port address:port` lines that fix where in-cluster names connect, for
    /// running the operator outside the cluster it manages (re-read when it changes).
    #[arg(long, value_name = "PATH")]
    resolve_overrides: Option<PathBuf>,
    /// How many Barbicans (and, separately, stores) are reconciled at once; 0 is unbounded.
    #[arg(long, value_name = "N", default_value_t = barbican_operator::controller::manager::CONCURRENT_RECONCILES)]
    max_concurrent_reconciles: u16,
    /// The most connections one Barbican's SQL user may hold on a managed MariaDB
    /// (`maxUserConnections` of its User); 0 leaves the sizing from its topology alone. A
    /// platform setting: the servers are shared between tenants.
    #[arg(long, value_name = "N", default_value_t = 0)]
    max_user_connections: u32,
}

/// The log filter when `RUST_LOG` is unset.
const DEFAULT_LOG_FILTER: &str = "info";

fn main() -> ExitCode {
    let cli = Cli::parse();
    // One TLS provider for every client and server in the process (kube, the webhook).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| DEFAULT_LOG_FILTER.into());
    let json = matches!(&cli.command, Command::Run(args) if args.log_format == LogFormat::Json);
    if json {
        tracing_subscriber::fmt()
            .json()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init();
    } else {
        // Colours only for a person at a terminal: a pod's log (`kubectl logs`) or a file
        // gets plain text, not escape sequences.
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init();
    }
    // A panic is contained to its pass (see `controller::runtime::supervision::contained`); its message
    // may quote what a tenant wrote, so the log names only where it happened.
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::error!(at, "panicked");
    }));
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("barbican-operator: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Writes to stdout; a reader that closed the pipe early (`| head`) is a normal end, not an error.
fn write_stdout(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("writing to stdout: {e}"))
        }
        _ => Ok(()),
    }
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Crd { out_dir } => {
            let manifests = crd::manifests().map_err(|e| e.to_string())?;
            match out_dir {
                None => write_stdout(&crd::stream(&manifests))?,
                Some(dir) => {
                    std::fs::create_dir_all(&dir)
                        .map_err(|e| format!("creating {}: {e}", dir.display()))?;
                    for manifest in &manifests {
                        let path = dir.join(&manifest.file_name);
                        std::fs::write(&path, &manifest.yaml)
                            .map_err(|e| format!("writing {}: {e}", path.display()))?;
                    }
                }
            }
            Ok(())
        }
        Command::Run(args) => {
            let runtime =
                tokio::runtime::Runtime::new().map_err(|e| format!("starting the runtime: {e}"))?;
            runtime.block_on(operate(args))
        }
        Command::Webhook {
            bind,
            tls_cert_file,
            tls_key_file,
        } => {
            let runtime =
                tokio::runtime::Runtime::new().map_err(|e| format!("starting the runtime: {e}"))?;
            runtime.block_on(webhook(bind, tls_cert_file, tls_key_file))
        }
    }
}

async fn webhook(bind: SocketAddr, cert: PathBuf, key: PathBuf) -> Result<(), String> {
    let certificate = ReloadingCertificate::new(cert, key, provider())
        .map_err(|e| format!("loading the serving certificate: {e}"))?;
    let client = kube::Client::try_default()
        .await
        .map_err(|e| format!("building the API client (in-cluster or KUBECONFIG): {e}"))?;
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|e| format!("binding {bind}: {e}"))?;
    tracing::info!(%bind, "serving admission webhooks");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    serve(
        listener,
        Arc::new(certificate),
        router(Arc::new(ApiLookups::new(client))),
        shutdown,
    )
    .await
    .map_err(|e| format!("configuring TLS: {e}"))
}

/// Completes on SIGTERM or Ctrl-C.
async fn terminated() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The operator's client: every request counted and bounded in time (`metrics`).
async fn client_for(
    kubeconfig: Option<&PathBuf>,
    metrics: &Metrics,
) -> Result<kube::Client, String> {
    let mut config = match kubeconfig {
        Some(path) => {
            let kubeconfig = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .map_err(|e| format!("loading {}: {e}", path.display()))?
        }
        None => kube::Config::infer()
            .await
            .map_err(|e| format!("finding a cluster (in-cluster or KUBECONFIG): {e}"))?,
    };
    barbican_operator::clusters::identify(&mut config);
    let builder = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| format!("building the API client: {e}"))?;
    Ok(builder.with_layer(&metrics.count_requests()).build())
}

/// Serves `router` on `address` over plain HTTP until the process ends; "0" serves nothing.
async fn serve_plain(
    address: &str,
    router: axum::Router,
    what: &'static str,
) -> Result<(), String> {
    if address == "0" {
        return Ok(());
    }
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| format!("binding {address} for {what}: {e}"))?;
    tracing::info!(address, what, "serving");
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::error!(%error, what, "server stopped");
        }
    });
    Ok(())
}

async fn operate(args: RunArgs) -> Result<(), String> {
    // A bad overrides file is refused at start-up, not once this replica leads.
    let resolver: Arc<dyn Resolve> = match &args.resolve_overrides {
        Some(path) => Arc::new(OverridesFile::open(path)?),
        None => Arc::new(SystemResolver),
    };
    let metrics = Arc::new(Metrics::new());
    let client = client_for(args.kubeconfig.as_ref(), &metrics).await?;
    let readiness = Readiness::default();
    let liveness = Liveness::default();
    serve_plain(
        &args.metrics_bind_address,
        metrics_router(metrics.clone()),
        "metrics",
    )
    .await?;
    serve_plain(
        &args.health_probe_bind_address,
        health_router(readiness.clone(), liveness.clone()),
        "health probes",
    )
    .await?;

    if args.webhook_bind_address != "0" {
        if args.tls_cert_file.exists() {
            let certificate = ReloadingCertificate::new(
                args.tls_cert_file.clone(),
                args.tls_key_file.clone(),
                provider(),
            )
            .map_err(|e| format!("loading the webhook certificate: {e}"))?;
            let listener = tokio::net::TcpListener::bind(&args.webhook_bind_address)
                .await
                .map_err(|e| format!("binding {}: {e}", args.webhook_bind_address))?;
            let lookups = Arc::new(ApiLookups::new(client.clone()));
            tracing::info!(address = %args.webhook_bind_address, "serving admission webhooks");
            tokio::spawn(async move {
                let _ = serve(
                    listener,
                    Arc::new(certificate),
                    router(lookups),
                    std::future::pending(),
                )
                .await;
            });
        } else {
            tracing::warn!(
                certificate = %args.tls_cert_file.display(),
                "admission webhooks are off: no certificate (mount one, or pass --webhook-bind-address=0)"
            );
        }
    }

    let version = client
        .apiserver_version()
        .await
        .map_err(|e| format!("reaching the API server: {e}"))?;
    tracing::info!(server = %version.git_version, "connected to the API server");
    readiness.set(true);

    let mut leadership = if args.leader_elect {
        let identity = format!("{}_{:08x}", args.pod_name, std::process::id());
        let election = leader::Election::new(&args.namespace, &identity);
        tracing::info!(lease = %election.lease, namespace = %election.namespace, %identity, "waiting for leadership");
        let acquired = tokio::select! {
            acquired = leader::acquire(client.clone(), &election) => acquired.map_err(|e| format!("leader election: {e}"))?,
            _ = terminated() => return Ok(()),
        };
        tracing::info!("leading");
        Some(acquired)
    } else {
        None
    };

    let mut settings = Settings::new(Arc::new(SystemClock), resolver, metrics);
    settings.operator_namespace = args.namespace.clone();
    settings.instance = args.pod_name.clone();
    settings.watch_scope = args.watch_namespaces.clone();
    settings.concurrency = args.max_concurrent_reconciles;
    settings.max_user_connections =
        (args.max_user_connections > 0).then_some(i64::from(args.max_user_connections));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let shutdown = {
        let stopped = stopped.clone();
        async move {
            let mut stopped = stopped;
            let _ = stopped.wait_for(|s| *s).await;
        }
    };
    if args.clusters_namespace.is_empty() {
        settings.clusters = clusters::Registry::disabled();
    } else {
        let mut stopped = stopped;
        tokio::spawn(clusters::run_registry(
            client.clone(),
            args.clusters_namespace.clone(),
            settings.clusters.clone(),
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            },
        ));
    }
    let mut controller = tokio::spawn(run_barbican_controller(client, settings, shutdown));
    let lost = async {
        match leadership.as_mut() {
            Some(l) => l.lost().await,
            None => std::future::pending().await,
        }
    };
    let outcome = tokio::select! {
        _ = terminated() => Ok(()),
        _ = lost => Err("lost the leader Lease; exiting so a restart rejoins the election".to_string()),
        ended = &mut controller => {
            // Nothing reconciles any more: fail /healthz, give up the Lease and exit non-zero
            // so Kubernetes restarts the pod and another replica may lead.
            liveness.fail();
            let why = match ended {
                Ok(Err(stopped)) => stopped.to_string(),
                Ok(Ok(())) => "the controllers ended".to_string(),
                Err(_) => "the controllers' task panicked".to_string(),
            };
            if let Some(leadership) = leadership {
                leadership.release().await;
            }
            return Err(why);
        }
    };
    tracing::info!("stopping the controllers");
    let _ = stop.send(true);
    let _ = controller.await;
    if let Some(leadership) = leadership {
        leadership.release().await;
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_clusters_are_read_from_c5c3_clusters_unless_switched_off() {
        let namespace = |args: &[&str]| match Cli::try_parse_from(args).unwrap().command {
            Command::Run(run) => run.clusters_namespace,
            _ => unreachable!("a run command"),
        };
        assert_eq!(namespace(&["barbican-operator", "run"]), "c5c3-clusters");
        assert_eq!(
            namespace(&["barbican-operator", "run", "--clusters-namespace", ""]),
            ""
        );
    }

    #[test]
    fn watched_namespaces_default_to_all_and_refuse_a_bad_name() {
        let scope = |args: &[&str]| match Cli::try_parse_from(args).map(|c| c.command) {
            Ok(Command::Run(run)) => Ok(run.watch_namespaces),
            Ok(_) => unreachable!("a run command"),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(scope(&["barbican-operator", "run"]), Ok(WatchScope::All));
        assert_eq!(
            scope(&[
                "barbican-operator",
                "run",
                "--watch-namespaces",
                "openstack,legacy"
            ]),
            Ok(WatchScope::Namespaces(
                ["legacy", "openstack"].map(String::from).into()
            ))
        );
        let refused = scope(&[
            "barbican-operator",
            "run",
            "--watch-namespaces",
            "Open_Stack",
        ])
        .unwrap_err();
        assert!(
            refused.contains("\"Open_Stack\" is not a namespace name"),
            "{refused}"
        );
    }
}
