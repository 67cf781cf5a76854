//! `barbican-sim`: run a simulated cluster.

mod contained;
mod demo;
mod operator_bench;
mod soak;

use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

use std::time::Duration;

use barbican_fakes::mariadb_server::MariaDbServer;
use barbican_sim::{
    Cluster,
    controllers::{Controllers, JobRule, JobRules, Match, Rollouts},
    durations::duration,
    faults::Fault,
    kubelet::{Kubelet, KubeletConfig},
};
use clap::{Parser, Subcommand};
use serde_json::Value;

/// A simulated Kubernetes cluster for the operator's tests and demos.
#[derive(Parser, Debug)]
#[command(name = "barbican-sim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve one cluster over HTTP on loopback until interrupted.
    Serve {
        /// Port to listen on (0 picks a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Write a kubeconfig for the cluster here (the cluster administrator's).
        #[arg(long, value_name = "PATH")]
        kubeconfig_out: Option<PathBuf>,
        /// Install the chart's ServiceAccount and RBAC (`features/chart-rbac.yaml`) and write a
        /// kubeconfig here holding a token of that ServiceAccount: the operator run with it has
        /// exactly the chart's grants, which the cluster enforces. Written before
        /// --kubeconfig-out.
        #[arg(long, value_name = "PATH")]
        operator_kubeconfig_out: Option<PathBuf>,
        /// With --operator-kubeconfig-out: `<namespace>=<instance>`, an entry of the chart's
        /// `rbac.secretStoreNamespaces` (repeatable); the namespace is created.
        #[arg(
            long,
            value_name = "NAMESPACE=INSTANCE",
            requires = "operator_kubeconfig_out"
        )]
        secret_store_grant: Vec<String>,
        /// Install every CustomResourceDefinition in the YAML files of this directory instead
        /// of the operator's own CRDs (built into this binary, so that `serve` works from any
        /// directory).
        #[arg(long, value_name = "DIR")]
        crds: Option<PathBuf>,
        /// The simulated controllers to run: `all`, `none`, or a comma-separated list of
        /// deployments, jobs, cronjobs, hpa.
        #[arg(long, value_name = "LIST", default_value = "all", value_parser = parse_controllers)]
        controllers: ControllerSet,
        /// How long a Deployment rollout takes (`0s`, `500ms`, `2m`).
        #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = |s: &str| duration("--rollout-delay", s))]
        rollout_delay: Duration,
        /// Deployments whose rollouts never finish: `name=<glob>`, `label=<k>=<v>`, `image=<text>`
        /// (repeatable).
        #[arg(long, value_name = "MATCH")]
        stuck: Vec<Match>,
        /// How long a Job runs unless a rule says otherwise.
        #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = |s: &str| duration("--job-duration", s))]
        job_duration: Duration,
        /// A Job rule, `<match>:<complete|fail>[:<duration>]`, first match wins (repeatable).
        #[arg(long, value_name = "RULE")]
        job_rule: Vec<JobRule>,
        /// A fault rule, for example `verb=create,resource=configmaps,code=500,every=3`
        /// (repeatable; the grammar is in the faults module's documentation).
        #[arg(long, value_name = "RULE")]
        fault: Vec<Fault>,
        /// Seed for `rate` faults.
        #[arg(long, value_name = "N", default_value_t = 0)]
        fault_seed: u64,
        /// Serve the control API (faults, outage, dropped watches, compaction) on this port.
        #[arg(long, value_name = "PORT")]
        control_port: Option<u16>,
        /// Run the fakes beside the cluster: the third-party CRDs, mariadb-operator, External
        /// Secrets, the OpenBao operator (a fake OpenBao behind each OpenBaoCluster, registered
        /// under its in-cluster name), Gateway API route status, and barbican's healthcheck; and
        /// the chart's admission webhooks, served by the operator's webhook server.
        #[arg(long)]
        with_fakes: bool,
        /// With --with-fakes: leave Gateway API out (its CRDs are not installed).
        #[arg(long, requires = "with_fakes")]
        without_gateway_api: bool,
        /// Register the chart's admission webhooks, served by the operator's webhook server
        /// beside the cluster (implied by --with-fakes).
        #[arg(long)]
        admission: bool,
        /// Run the sim's kubelet: the pods of Deployments and Jobs whose image matches the glob
        /// run as containers made from the root directory (its `bin` first on PATH) under
        /// crun, each pod in network and user namespaces of its own: `<image glob>=<root
        /// directory>[=<entrypoint>]` (the entrypoint runs a container that gives only
        /// `args`; repeatable; needs root, iproute2, util-linux and crun,
        /// `ci/install-crun.sh`). Their Services reach them instead of the fake barbican
        /// healthcheck, and they reach the API as their service account at
        /// `kubernetes.default.svc`.
        #[arg(long, value_name = "IMAGE=ROOT")]
        kubelet_runtime: Vec<barbican_sim::kubelet::Runtime>,
        /// Ready the cluster for `helm install` (the README's Deploying section): the kubelet
        /// runs the chart's image, `ghcr.io/c5c3/barbican-operator`, from the
        /// `barbican-operator` binary beside this one, and no in-process webhook server is
        /// registered: the chart's webhook pods serve admission, with their certificate from
        /// the fake cert-manager (needs root and crun, as `--kubelet-runtime`). Without
        /// `--with-fakes` the third-party CRDs are installed but only the fake cert-manager
        /// runs: the features' harness brings the other fakes and names them through the
        /// control API.
        #[arg(long)]
        operator_pods: bool,
        /// With --with-fakes: the fake mariadb-operator creates Databases, Users and Grants
        /// on a real MariaDB server (the distribution's mariadbd, `ci/install-mariadb.sh`)
        /// keeping its data under this directory, and each MariaDB's Service name reaches it.
        #[arg(long, value_name = "DIR", requires = "with_fakes")]
        real_mariadb: Option<PathBuf>,
    },
    /// What runs that are gone left on this machine (network namespaces, interfaces, Service
    /// addresses, nftables tables, scratch directories, run locks), one per line. Every run
    /// that starts processes removes these as it starts; this lists them, or removes them.
    Leftovers {
        /// Remove them.
        #[arg(long)]
        reap: bool,
        /// Exit 1 when there are any (CI's check that no run left one).
        #[arg(long, conflicts_with = "reap")]
        check: bool,
    },
    /// The operator's main job on the embedded sim: apply the minimal example and its
    /// prerequisites, and print how the Barbican converges, on a virtual clock.
    Demo {
        /// Once converged, serve the cluster on loopback, write a kubeconfig for it here, and
        /// keep the operator running (virtual time then moves with the wall clock) until
        /// Ctrl-C or SIGTERM.
        #[arg(long, value_name = "PATH")]
        kubeconfig_out: Option<PathBuf>,
        /// Run barbican for real: the sim's kubelet runs the minimal example's pods as uwsgi
        /// and barbican-manage processes from `target/catalog-venvs/<release>`
        /// (`ci/install-real-barbican.sh`), on a real MariaDB, with a fake Keystone; the demo
        /// stores and reads back a secret through barbican's API and prints how to do it with
        /// curl. Wall clock; needs root, iproute2, util-linux and crun.
        #[arg(long)]
        real_barbican: bool,
        /// Install the operator as users do (implies `--real-barbican`): the README's `helm
        /// install` of the chart (helm from `ci/install-helm.sh`, or `$BARBICAN_HELM`) against
        /// the served sim, so the operator runs as the chart's two pods on the kubelet, its
        /// webhook pods admit the CRs and `kubectl logs deploy/barbican-operator` shows them;
        /// nothing of the operator runs in this process.
        #[arg(long)]
        installed: bool,
    },
    /// Measure throughput, watch latency and memory on an in-process cluster; prints figures.
    /// With `--barbicans N`, measure the operator instead (see `operator_bench`): build with
    /// `cargo build --release -p barbican-operator -p barbican-sim-cli` and run
    /// `target/release/barbican-sim bench --barbicans N`.
    Bench {
        /// Objects to create, update and delete.
        #[arg(long, default_value_t = 10_000)]
        objects: usize,
        /// Watchers attached while the objects are updated.
        #[arg(long, default_value_t = 20)]
        watchers: usize,
        /// Run the operator (as its own process) over N Barbicans, each with a managed store.
        #[arg(long, value_name = "N")]
        barbicans: Option<usize>,
        /// With --barbicans: the steady-state window after convergence.
        #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = |s: &str| duration("--steady", s))]
        steady: Duration,
        /// With --barbicans: how long convergence may take.
        #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = |s: &str| duration("--timeout", s))]
        timeout: Duration,
        /// With --barbicans: the operator binary (default: `barbican-operator` beside this one).
        #[arg(long, value_name = "PATH")]
        operator: Option<PathBuf>,
        /// With --barbicans: also write the report as JSON here.
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
        /// With --barbicans: write the operator's steady-state requests other than watches
        /// here, one per line, each write followed by the start of its body (what to read
        /// when the steady state is not quiet).
        #[arg(long, value_name = "PATH")]
        steady_log: Option<PathBuf>,
        /// With --barbicans: write the operator's requests other than watches while it
        /// converges here, as --steady-log does (the sim's audit keeps the last 20,000, so
        /// this is for a few hundred Barbicans at most).
        #[arg(long, value_name = "PATH")]
        converging_log: Option<PathBuf>,
        /// With --barbicans: Helm release Secrets of other applications, created first and
        /// spread over ten namespaces and the Barbicans' own.
        #[arg(long, value_name = "N", default_value_t = 0)]
        foreign_secrets: usize,
        /// With --foreign-secrets: the size of each one's payload, in bytes.
        #[arg(long, value_name = "B", default_value_t = 100 * 1024)]
        foreign_secret_bytes: usize,
        /// With --barbicans: Deployments of other applications, spread as the Secrets are.
        #[arg(long, value_name = "N", default_value_t = 0)]
        foreign_deployments: usize,
        /// Run the shape a baseline (`ci/bench-baseline.json`) names and fail on a
        /// steady-state write or non-watch read, writes per Barbican above its floor plus one,
        /// or peak RSS a quarter above its own; Ready time and CPU are printed against it.
        #[arg(long, value_name = "BASELINE", conflicts_with_all = ["barbicans", "steady", "foreign_secrets", "foreign_secret_bytes", "foreign_deployments"])]
        guard: Option<PathBuf>,
    },
    /// Run every example under seeded random faults on the embedded sim, checking the
    /// operator's invariants throughout (see `barbican_features::soak`); exits 1 on any
    /// violation, printing each with its seed.
    Soak {
        /// How many seeds to run.
        #[arg(long, value_name = "K", default_value_t = 5)]
        seeds: u64,
        /// The first seed (seeds run from here up).
        #[arg(long, value_name = "N", default_value_t = 1)]
        first_seed: u64,
        /// How long the faults go on per seed, in virtual time.
        #[arg(long, value_name = "DURATION", default_value = "15m", value_parser = |s: &str| duration("--faults-for", s))]
        faults_for: Duration,
        /// Print each seed's schedule.
        #[arg(long)]
        verbose: bool,
        /// Also write the reports as JSON here.
        #[arg(long, value_name = "PATH")]
        json: Option<PathBuf>,
        /// Instead of faults: the edit-sequence check. Each seed is a generated sequence of
        /// admitted edits to one Barbican and its stores; after it, the children must equal a
        /// fresh install of the final spec (see `barbican_features::edits`). A difference is
        /// shrunk and printed as a scenario for `features/`.
        #[arg(long)]
        edits: bool,
        /// With --edits: how many edits follow each first install.
        #[arg(long, value_name = "M", default_value_t = 4)]
        steps: usize,
        /// With --edits: how many sequences share one simulated cluster (one namespace each).
        /// The cost per sequence grows with the cluster (measured in the release build: about
        /// 0.7 s per sequence in batches of 20, 1.3 s in batches of 50).
        #[arg(long, value_name = "N", default_value_t = 20)]
        batch: usize,
        /// With --edits: how many batches run at once (each on a task of its own, a new one
        /// starting as soon as one ends).
        #[arg(long, value_name = "P", default_value_t = 2)]
        parallel: usize,
        /// With --edits: print differences as found, without shrinking them.
        #[arg(long)]
        no_shrink: bool,
    },
}

/// Which controllers `--controllers` names.
#[derive(Clone, Copy, Debug, Default)]
struct ControllerSet {
    deployments: bool,
    jobs: bool,
    cronjobs: bool,
    hpa: bool,
}

fn parse_controllers(text: &str) -> Result<ControllerSet, String> {
    let mut set = ControllerSet::default();
    for name in text.split(',').map(str::trim) {
        match name {
            "all" => {
                set = ControllerSet {
                    deployments: true,
                    jobs: true,
                    cronjobs: true,
                    hpa: true,
                }
            }
            "none" => {}
            "deployments" => set.deployments = true,
            "jobs" => set.jobs = true,
            "cronjobs" => set.cronjobs = true,
            "hpa" => set.hpa = true,
            other => {
                return Err(format!(
                    "unknown controller {other:?}: allowed are all, none, deployments, jobs, cronjobs, hpa"
                ));
            }
        }
    }
    Ok(set)
}

/// The fakes `--with-fakes` runs, held for as long as the cluster is served.
struct Fakes {
    _cert_manager: barbican_fakes::cert_manager::CertManager,
    _mariadb: barbican_fakes::mariadb::MariaDbOperator,
    _external_secrets: barbican_fakes::external_secrets::ExternalSecrets,
    _openbao: barbican_fakes::openbao_cluster::OpenBaoOperator,
    _gateway: Option<barbican_fakes::gateway_api::GatewayApi>,
    _barbican: Option<barbican_fakes::barbican_api::BarbicanApi>,
}

/// What `--with-fakes` runs beyond the defaults.
struct FakeOptions {
    gateway_api: bool,
    /// The real MariaDB server the fake mariadb-operator works on.
    real_mariadb: Option<std::sync::Arc<tokio::sync::Mutex<MariaDbServer>>>,
    /// Whether the stand-in answers barbican's healthcheck (not when a kubelet runs barbican).
    barbican_stand_in: bool,
}

impl Fakes {
    fn start(cluster: &Cluster, options: FakeOptions) -> Result<Self, String> {
        let (gateway_api, real) = (options.gateway_api, options.real_mariadb.is_some());
        barbican_fakes::crds::install(cluster, gateway_api)?;
        let (client, clock) = (cluster.client(), cluster.clock().clone());
        let fakes = Self {
            _cert_manager: barbican_fakes::cert_manager::CertManager::start(
                client.clone(),
                clock.clone(),
            ),
            _mariadb: match options.real_mariadb {
                Some(server) => barbican_fakes::mariadb::MariaDbOperator::start_real(
                    client.clone(),
                    clock.clone(),
                    server,
                    cluster.services(),
                ),
                None => {
                    barbican_fakes::mariadb::MariaDbOperator::start(client.clone(), clock.clone())
                }
            },
            _external_secrets: barbican_fakes::external_secrets::ExternalSecrets::start(
                client.clone(),
                clock.clone(),
            ),
            _openbao: barbican_fakes::openbao_cluster::OpenBaoOperator::start(
                client.clone(),
                clock.clone(),
                cluster.services(),
            ),
            _gateway: gateway_api.then(|| {
                barbican_fakes::gateway_api::GatewayApi::start(client.clone(), clock.clone())
            }),
            _barbican: options.barbican_stand_in.then(|| {
                barbican_fakes::barbican_api::BarbicanApi::start(client, cluster.services())
            }),
        };
        eprintln!(
            "barbican-sim: fakes running: cert-manager, mariadb-operator{}, external-secrets, openbao-operator{}{}",
            if real { " (real MariaDB)" } else { "" },
            if gateway_api { ", gateway-api" } else { "" },
            if options.barbican_stand_in {
                ", barbican healthcheck"
            } else {
                ""
            },
        );
        Ok(fakes)
    }
}

/// A kubeconfig for a sim served at `addr`.
pub fn kubeconfig(addr: SocketAddr) -> String {
    kubeconfig_with_token(addr, "barbican-sim")
}

/// A kubeconfig for the cluster served on `addr`, authenticating with `token`.
pub fn kubeconfig_with_token(addr: SocketAddr, token: &str) -> String {
    barbican_features::backend::kubeconfig(&format!("http://{addr}"), Some(token))
}

/// Installs the chart's identity on `cluster` with the `--secret-store-grant`s `grants`
/// (creating their namespaces) and returns a token of its ServiceAccount.
async fn operator_identity(cluster: &Cluster, grants: &[String]) -> Result<String, String> {
    use barbican_features::chart_identity::{self, StoreGrants};
    let mut parsed = StoreGrants::new();
    for grant in grants {
        let Some((namespace, instance)) = grant
            .split_once('=')
            .filter(|(n, i)| !n.is_empty() && !i.is_empty())
        else {
            return Err(format!(
                "--secret-store-grant {grant:?}: expected <namespace>=<instance>"
            ));
        };
        parsed
            .entry(namespace.to_string())
            .or_default()
            .insert(instance.to_string());
    }
    let admin = cluster.client();
    let namespaces: String = parsed
        .keys()
        .map(|n| format!("---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {n}}}\n"))
        .collect();
    barbican_features::sim_env::apply_yaml_as(&admin, "barbican-sim", &namespaces).await?;
    chart_identity::install_and_token(&admin, &parsed).await
}

/// Installs the operator's CRDs as this binary was built with them (what `deploy/crds` holds).
fn install_own_crds(cluster: &Cluster) -> Result<usize, String> {
    use kube::CustomResourceExt;
    let crds = [
        barbican_operator::api::Barbican::crd(),
        barbican_operator::api::BarbicanSecretStore::crd(),
    ];
    for crd in &crds {
        let crd = serde_json::to_value(crd).map_err(|e| e.to_string())?;
        cluster.install_crd(crd).map_err(|e| e.to_string())?;
    }
    Ok(crds.len())
}

fn install_crds(cluster: &Cluster, dir: &PathBuf) -> Result<usize, String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    entries.sort();
    let mut installed = 0;
    for path in entries {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let docs: Vec<Value> =
            serde_saphyr::from_multiple(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        for doc in docs
            .into_iter()
            .filter(|d| d["kind"] == "CustomResourceDefinition")
        {
            cluster
                .install_crd(doc)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            installed += 1;
        }
    }
    Ok(installed)
}

impl Command {
    /// Whether the run starts processes on this machine (pods, MariaDB): those run contained
    /// ([`contained`]).
    fn starts_processes(&self) -> bool {
        match self {
            Command::Demo {
                real_barbican,
                installed,
                ..
            } => *real_barbican || *installed,
            Command::Serve {
                kubelet_runtime,
                operator_pods,
                real_mariadb,
                ..
            } => !kubelet_runtime.is_empty() || *operator_pods || real_mariadb.is_some(),
            _ => false,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.command.starts_processes() && !contained::inside() {
        return contained::launch(std::env::args_os().skip(1).collect());
    }
    if contained::inside()
        && let Err(e) = contained::private_netns_dir()
    {
        eprintln!("barbican-sim: {e}");
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("barbican-sim: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve {
                port,
                kubeconfig_out,
                operator_kubeconfig_out,
                secret_store_grant,
                crds,
                controllers,
                rollout_delay,
                stuck,
                job_duration,
                job_rule,
                fault,
                fault_seed,
                control_port,
                with_fakes,
                without_gateway_api,
                admission,
                mut kubelet_runtime,
                operator_pods,
                real_mariadb,
            } => {
                let mut stopping = contained::Stopping::listen();
                let barbican_runs = !kubelet_runtime.is_empty();
                if operator_pods {
                    kubelet_runtime.push(barbican_features::backend::operator_runtime().ok_or(
                        "--operator-pods: no barbican-operator binary beside this one (cargo build -p barbican-operator)",
                    )?);
                }
                // A real operator process reads the wall clock, so the served cluster does too.
                let cluster = Cluster::new();
                let installed = match &crds {
                    Some(dir) => install_crds(&cluster, dir)?,
                    None => install_own_crds(&cluster)?,
                };
                cluster.set_controllers(Controllers {
                    deployments: controllers.deployments.then_some(Rollouts {
                        delay: rollout_delay,
                        stuck,
                    }),
                    jobs: controllers.jobs.then_some(JobRules {
                        duration: job_duration,
                        rules: job_rule,
                    }),
                    cronjobs: controllers.cronjobs,
                    hpa: controllers.hpa,
                    kubelet_images: Vec::new(),
                });
                for rule in fault {
                    cluster.add_fault(rule);
                }
                let mariadb = match &real_mariadb {
                    Some(dir) => {
                        let server = MariaDbServer::start(dir).await.map_err(|e| e.to_string())?;
                        eprintln!(
                            "barbican-sim: MariaDB on 127.0.0.1:{} (data under {})",
                            server.port(),
                            dir.display()
                        );
                        Some(std::sync::Arc::new(tokio::sync::Mutex::new(server)))
                    }
                    None => None,
                };
                // Kept alive while serving: dropping a fake stops it.
                let _fakes = if with_fakes {
                    Some(Fakes::start(
                        &cluster,
                        FakeOptions {
                            gateway_api: !without_gateway_api,
                            real_mariadb: mariadb.clone(),
                            barbican_stand_in: !barbican_runs,
                        },
                    )?)
                } else {
                    None
                };
                // Without the other fakes (a harness runs its own and names them through the
                // control API's `/services/peers`) the cluster still has what an install of the
                // chart presupposes: the CRDs of the operators it works with, there before the
                // operator starts as on a cluster prepared for it, and cert-manager to issue the
                // chart's webhook certificate.
                let _cert_manager = if operator_pods && !with_fakes {
                    barbican_fakes::crds::install(&cluster, true)?;
                    eprintln!("barbican-sim: fakes running: cert-manager");
                    Some(barbican_fakes::cert_manager::CertManager::start(
                        cluster.client(),
                        cluster.clock().clone(),
                    ))
                } else {
                    None
                };
                let kubelet_state =
                    barbican_sim::leftovers::scratch_dir("barbican-sim-kubelet-");
                let kubelet = if kubelet_runtime.is_empty() {
                    None
                } else {
                    let config = KubeletConfig::new(kubelet_runtime, kubelet_state.clone());
                    let kubelet = Kubelet::start(&cluster, config)
                        .await
                        .map_err(|e| e.to_string())?;
                    eprintln!(
                        "barbican-sim: kubelet running pods under {}",
                        kubelet_state.display()
                    );
                    Some(kubelet)
                };
                // With the fakes (or --admission) the served cluster is a whole install: the
                // chart's webhooks in front of the CRs, served beside it by the operator's
                // webhook server.
                let _admission = if (with_fakes || admission) && !operator_pods {
                    let admission = barbican_features::admission::install(&cluster).await?;
                    eprintln!(
                        "barbican-sim: admission webhooks registered as the chart renders them, served as {}/{}",
                        admission.service.0, admission.service.1
                    );
                    Some(admission)
                } else {
                    None
                };
                cluster.seed_faults(fault_seed);
                if let Some(port) = control_port {
                    let control = tokio::net::TcpListener::bind(("127.0.0.1", port))
                        .await
                        .map_err(|e| format!("binding control port {port}: {e}"))?;
                    let addr = control.local_addr().map_err(|e| e.to_string())?;
                    eprintln!("barbican-sim: control API on http://{addr}");
                    let router = barbican_sim::control::router(cluster.clone());
                    tokio::spawn(async move { axum::serve(control, router).await });
                }
                let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
                    .await
                    .map_err(|e| format!("binding port {port}: {e}"))?;
                let addr = listener.local_addr().map_err(|e| e.to_string())?;
                // Tokens this cluster mints (the operator's among them) are held to RBAC, as on
                // any API server; the administrator's kubeconfig is not such a token.
                cluster.enforce_rbac();
                if let Some(path) = operator_kubeconfig_out {
                    let token = operator_identity(&cluster, &secret_store_grant).await?;
                    std::fs::write(&path, kubeconfig_with_token(addr, &token))
                        .map_err(|e| format!("writing {}: {e}", path.display()))?;
                }
                if let Some(path) = kubeconfig_out {
                    std::fs::write(&path, kubeconfig(addr))
                        .map_err(|e| format!("writing {}: {e}", path.display()))?;
                }
                eprintln!(
                    "barbican-sim: serving http://{addr} with {installed} CRD(s) from {}",
                    crds.as_ref().map_or_else(
                        || "this binary".to_string(),
                        |dir| dir.display().to_string()
                    )
                );
                let served = tokio::select! {
                    served = cluster.serve(listener) => served.map_err(|e| e.to_string()),
                    () = stopping.requested() => Ok(()),
                    () = contained::panic_on_request() => Ok(()),
                };
                if let Some(kubelet) = kubelet {
                    kubelet.stop().await;
                    let _ = std::fs::remove_dir_all(&kubelet_state);
                }
                if let Some(server) = mariadb {
                    server.lock().await.stop().await;
                }
                served
            }
            Command::Leftovers { reap, check } => contained::leftovers(reap, check),
            Command::Demo {
                kubeconfig_out,
                real_barbican,
                installed,
            } => {
                let stopping = contained::Stopping::listen();
                demo::run(kubeconfig_out.as_deref(), real_barbican, installed, stopping).await
            }
            Command::Soak {
                seeds,
                first_seed,
                edits: true,
                steps,
                batch,
                parallel,
                no_shrink,
                ..
            } => {
                let seeds = first_seed..first_seed + seeds;
                soak::edits(seeds, steps, batch, parallel, !no_shrink).await
            }
            Command::Soak {
                seeds,
                first_seed,
                faults_for,
                verbose,
                json,
                ..
            } => {
                soak::run(
                    first_seed..first_seed + seeds,
                    faults_for,
                    verbose,
                    json.as_deref(),
                )
                .await
            }
            Command::Bench {
                guard: Some(baseline),
                timeout,
                operator,
                json,
                steady_log,
                ..
            } => {
                let operator = operator.unwrap_or_else(operator_bench::operator_beside_this_binary);
                operator_bench::guard::run(&baseline, operator, timeout, json, steady_log).await
            }
            Command::Bench {
                barbicans: Some(barbicans),
                steady,
                timeout,
                operator,
                json,
                steady_log,
                converging_log,
                foreign_secrets,
                foreign_secret_bytes,
                foreign_deployments,
                ..
            } => {
                let options = operator_bench::Options {
                    barbicans,
                    steady,
                    timeout,
                    steady_log,
                    converging_log,
                    foreign: operator_bench::Foreign {
                        secrets: foreign_secrets,
                        secret_bytes: foreign_secret_bytes,
                        deployments: foreign_deployments,
                    },
                    operator: operator.unwrap_or_else(operator_bench::operator_beside_this_binary),
                };
                let report = operator_bench::run(&options).await?;
                let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
                println!("{text}");
                if let Some(path) = json {
                    std::fs::write(&path, &text)
                        .map_err(|e| format!("writing {}: {e}", path.display()))?;
                }
                println!("{}", report.summary());
                Ok(())
            }
            Command::Bench {
                objects, watchers, ..
            } => {
                println!("{}", barbican_sim::bench::run(objects, watchers).await);
                println!("{}", barbican_sim::bench::cron_day().await);
                Ok(())
            }
        }
    });
    drop(runtime);
    if contained::inside() {
        // Its kubelet's hold on the run's lock ended with the runtime.
        barbican_sim::leftovers::release(barbican_sim::leftovers::run_id());
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("barbican-sim: {e}");
            ExitCode::FAILURE
        }
    }
}
