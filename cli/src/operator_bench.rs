//! `barbican-sim bench --barbicans N`: what the operator costs. A simulated cluster with its
//! fakes runs here on the wall clock, served on loopback; the operator runs as a separate
//! process (`barbican-operator run`, so its memory and CPU are its own) against it, reaching
//! the fakes' in-cluster names through `--resolve-overrides`. N Barbicans, each with a managed
//! store, are created at once; the report gives the time until all are Ready, the API
//! requests by verb and resource during convergence and during a steady-state window, the
//! writes per Barbican against the minimum, and the operator's peak RSS and CPU seconds. It
//! asserts nothing: the figures are read, not checked, on these shared machines. The
//! operator runs as the chart's ServiceAccount with the chart's RBAC, enforced by the sim, as
//! an install of the chart runs it.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use barbican_features::{
    chart_identity,
    examples::{example, in_namespace},
    sim_env::{MINIMAL_PREREQUISITES, Site, apply_object, apply_yaml_as},
};
use barbican_sim::{
    audit::{Entry, Tally},
    clock::Clock,
    cluster::WatchEndings,
};
use kube::{
    Api, Client,
    api::{DynamicObject, ListParams},
};
use serde_json::{Value, json};

pub mod guard;
mod report;
pub use report::*;

/// The namespace every Barbican of the run lives in.
const NAMESPACE: &str = "bench";
/// The user agent of the bench's own client (and the fakes use `fakes`): everything else the
/// sim serves is the operator's.
const AGENT: &str = "bench";

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// How many Barbicans (each with a managed store).
    pub barbicans: usize,
    /// The steady-state window after convergence.
    pub steady: Duration,
    /// How long convergence may take before the run gives up.
    pub timeout: Duration,
    /// The `barbican-operator` binary.
    pub operator: PathBuf,
    /// Where to write the operator's steady-state requests other than watches.
    pub steady_log: Option<PathBuf>,
    /// Where to write the operator's requests other than watches while it converges (the
    /// audit keeps a client's last 20,000, so at N of a few hundred or less).
    pub converging_log: Option<PathBuf>,
    /// What else the cluster holds that the operator never reads.
    pub foreign: Foreign,
}

/// Objects of other applications, created before the operator starts and spread over
/// [`FOREIGN_NAMESPACES`] namespaces and the Barbicans' own: what a real cluster holds beside
/// the operator's CRs.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Foreign {
    /// Helm release Secrets (`helm.sh/release.v1`, as Helm keeps every release).
    pub secrets: usize,
    /// The size of each one's `release` value, in bytes.
    pub secret_bytes: usize,
    /// Deployments of other applications.
    pub deployments: usize,
}

/// How many namespaces besides the Barbicans' own hold the foreign objects.
const FOREIGN_NAMESPACES: usize = 10;

/// The namespace of the `i`th foreign object: every eleventh in the Barbicans' own.
fn foreign_namespace(i: usize) -> String {
    match i % (FOREIGN_NAMESPACES + 1) {
        0 => NAMESPACE.to_string(),
        k => format!("foreign-{k}"),
    }
}

/// The `i`th foreign Helm release Secret, its payload `bytes` long (base64 characters that do
/// not compress, as a gzipped release does not).
fn foreign_secret(i: usize, bytes: usize) -> Value {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let release: String = (0..bytes)
        .map(|_| {
            // xorshift: cheap characters that look random.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(ALPHABET[(state % 64) as usize])
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "metadata": {"name": format!("sh.helm.release.v1.app-{i}.v1"),
            "namespace": foreign_namespace(i),
            "labels": {"name": format!("app-{i}"), "owner": "helm", "status": "deployed", "version": "1"}},
        "stringData": {"release": release}})
}

/// The `i`th foreign Deployment.
fn foreign_deployment(i: usize) -> Value {
    let labels = json!({"app.kubernetes.io/name": format!("app-{i}"), "app.kubernetes.io/managed-by": "Helm"});
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": format!("app-{i}"), "namespace": foreign_namespace(i), "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "registry.example/app:1.0",
                    "ports": [{"containerPort": 8080}]}]}}}})
}

/// Creates the foreign objects and their namespaces, 50 writes at a time.
async fn create_foreign(client: &Client, foreign: &Foreign) -> Result<(), String> {
    for k in 1..=FOREIGN_NAMESPACES {
        apply(
            client,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("foreign-{k}")}}),
        )
        .await?;
    }
    let objects = (0..foreign.secrets)
        .map(|i| foreign_secret(i, foreign.secret_bytes))
        .chain((0..foreign.deployments).map(foreign_deployment));
    let objects: Vec<Value> = objects.collect();
    for chunk in objects.chunks(50) {
        futures::future::try_join_all(chunk.iter().map(|o| apply(client, o.clone()))).await?;
    }
    Ok(())
}

async fn apply(client: &Client, object: Value) -> Result<(), String> {
    apply_object(client.clone(), AGENT, object)
        .await
        .map(|_| ())
}

/// How many stores share one OpenBaoCluster: a fake OpenBao answers a few hundred
/// concurrent TLS logins, not a thousand.
const STORES_PER_INSTANCE: usize = 50;

/// The OpenBaoCluster the `i`th store provisions against.
fn instance(i: usize) -> String {
    format!("openbao-{}", i / STORES_PER_INSTANCE)
}

/// The `i`th Barbican and its managed store.
fn pair(i: usize) -> Result<(Value, Value), String> {
    let mut barbican: Value =
        serde_saphyr::from_str(&in_namespace(&example("barbican.yaml")?, NAMESPACE))
            .map_err(|e| e.to_string())?;
    barbican["metadata"]["name"] = json!(format!("b-{i}"));
    let mut store: Value = serde_saphyr::from_str(&in_namespace(
        &example("barbicansecretstore-managed.yaml")?,
        NAMESPACE,
    ))
    .map_err(|e| e.to_string())?;
    store["metadata"]["name"] = json!(format!("s-{i}"));
    store["spec"]["barbicanRef"]["name"] = json!(format!("b-{i}"));
    store["spec"]["openBao"]["instanceRef"]["name"] = json!(instance(i));
    Ok((barbican, store))
}

/// Whether an object's `Ready` condition is `True`.
fn is_ready(object: &DynamicObject) -> bool {
    object.data["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Waits until `want` Barbicans and `want` BarbicanSecretStores of the run are Ready,
/// following a watch of each, and fails if the operator exits or `timeout` passes from
/// `started` first. Both kinds: a store turns Ready (`ConfigProjected`) a pass after its
/// Barbican, so a run that stopped at the Barbicans caught that status write in its steady
/// window. A watch, not a list every half second: at N = 1000 those lists took a tenth of
/// the machine's CPU from the sim and the operator whose convergence they timed.
async fn until_ready(
    client: &Client,
    operator: &mut tokio::process::Child,
    want: usize,
    started: Instant,
    timeout: Duration,
) -> Result<(), String> {
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, watcher};
    let watch = |resource: kube::api::ApiResource| {
        let kind = resource.kind.clone();
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), NAMESPACE, &resource);
        watcher(api, watcher::Config::default())
            .default_backoff()
            .map(move |event| (kind.clone(), event))
    };
    let events = futures::stream::select(
        watch(kube::api::ApiResource::erase::<
            barbican_operator::api::Barbican,
        >(&())),
        watch(kube::api::ApiResource::erase::<
            barbican_operator::api::BarbicanSecretStore,
        >(&())),
    );
    let mut events = std::pin::pin!(events);
    // Per kind, the Ready names as last seen and those of a relist under way.
    type Names = std::collections::BTreeSet<String>;
    let mut ready: std::collections::BTreeMap<String, (Names, Names)> = Default::default();
    let all_ready = |ready: &std::collections::BTreeMap<String, (Names, Names)>| {
        ready.len() == 2 && ready.values().all(|(names, _)| names.len() >= want)
    };
    let mut check = tokio::time::interval(Duration::from_millis(500));
    // A line on stderr this often while it waits: a run at N = 1000 takes minutes.
    const PROGRESS: Duration = Duration::from_secs(10);
    let mut last_progress = Instant::now();
    while !all_ready(&ready) {
        tokio::select! {
            event = events.next() => {
                let Some((kind, event)) = event else {
                    return Err("the watches of the Barbicans and stores ended".into());
                };
                let (names, relisted) = ready.entry(kind.clone()).or_default();
                match event {
                    Ok(watcher::Event::Init) => relisted.clear(),
                    Ok(watcher::Event::InitApply(o)) => {
                        if is_ready(&o) {
                            relisted.insert(o.metadata.name.unwrap_or_default());
                        }
                    }
                    Ok(watcher::Event::InitDone) => *names = std::mem::take(relisted),
                    Ok(watcher::Event::Apply(o)) => {
                        let name = o.metadata.name.clone().unwrap_or_default();
                        if is_ready(&o) {
                            names.insert(name);
                        } else {
                            names.remove(&name);
                        }
                    }
                    Ok(watcher::Event::Delete(o)) => {
                        names.remove(&o.metadata.name.unwrap_or_default());
                    }
                    // The watcher lists again after an error, on its backoff.
                    Err(error) => eprintln!("bench: the watch of the {kind}s: {error}"),
                }
            }
            _ = check.tick() => {
                if last_progress.elapsed() >= PROGRESS {
                    last_progress = Instant::now();
                    let count = |kind: &str| ready.get(kind).map_or(0, |(names, _)| names.len());
                    eprintln!(
                        "bench: {} of {want} Barbicans and {} of {want} stores Ready after {:.0?}",
                        count("Barbican"),
                        count("BarbicanSecretStore"),
                        started.elapsed()
                    );
                }
                if let Ok(Some(status)) = operator.try_wait() {
                    return Err(format!("the operator exited: {status}"));
                }
                if started.elapsed() > timeout {
                    let count = |kind: &str| ready.get(kind).map_or(0, |(names, _)| names.len());
                    return Err(format!(
                        "{} of {want} Barbicans and {} of {want} stores Ready after {timeout:?}",
                        count("Barbican"),
                        count("BarbicanSecretStore")
                    ));
                }
            }
        }
    }
    Ok(())
}

/// How many objects of the kinds the operator writes carry an ownerReference to one of the
/// run's Barbicans or stores.
async fn owned_objects(client: &Client) -> Result<Requests, String> {
    let kinds = [
        ("apps/v1", "Deployment"),
        ("v1", "Service"),
        ("v1", "Secret"),
        ("policy/v1", "PodDisruptionBudget"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
        ("networking.k8s.io/v1", "NetworkPolicy"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ("k8s.mariadb.com/v1alpha1", "Database"),
        ("k8s.mariadb.com/v1alpha1", "User"),
        ("k8s.mariadb.com/v1alpha1", "Grant"),
    ];
    let mut owned = Requests::new();
    for (api_version, kind) in kinds {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let resource = kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            group, version, kind,
        ));
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), NAMESPACE, &resource);
        let Ok(list) = api.list(&ListParams::default()).await else {
            continue;
        };
        let count = list
            .items
            .iter()
            .filter(|o| {
                o.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|r| r.kind == "Barbican" || r.kind == "BarbicanSecretStore")
            })
            .count() as u64;
        if count > 0 {
            owned.insert(format!("{group}/{}", resource.plural), count);
        }
    }
    Ok(owned)
}

/// The least a Barbican's convergence writes, by `group/resource`, from the objects the
/// operator owns for `n` Barbicans: one apply per owned object, the Barbican's finalizer, and
/// one status write for it and for its store.
fn minimum_writes(owned: &Requests, n: f64) -> BTreeMap<String, f64> {
    let mut minimum: BTreeMap<String, f64> = owned
        .iter()
        .map(|(r, count)| (r.clone(), *count as f64 / n))
        .collect();
    for resource in [
        "barbican.openstack.c5c3.io/barbicans",
        "barbican.openstack.c5c3.io/barbicans/status",
        "barbican.openstack.c5c3.io/barbicansecretstores/status",
    ] {
        *minimum.entry(resource.to_string()).or_default() += 1.0;
    }
    minimum
}

/// Where the writes above the minimum went, per Barbican, by `group/resource` (the writes of
/// every verb to it, less its minimum); only resources written more than their minimum.
fn writes_above_minimum(
    requests: &Requests,
    minimum: &BTreeMap<String, f64>,
    n: f64,
) -> BTreeMap<String, f64> {
    let mut by_resource = Requests::new();
    for (key, count) in requests.iter().filter(|(k, _)| is_write(k)) {
        let resource = key.split_once(' ').map_or(key.as_str(), |(_, r)| r);
        *by_resource.entry(resource.to_string()).or_default() += count;
    }
    by_resource
        .into_iter()
        .map(|(resource, count)| {
            let least = minimum.get(&resource).copied().unwrap_or(0.0);
            (resource, count as f64 / n - least)
        })
        .filter(|(_, above)| *above > 0.05)
        .collect()
}

/// Keeps `path` equal to the registry's overrides, rewriting it (atomically) as soon as they
/// change: a file 100 ms behind made the operator's first health probe of each new Service
/// fail and wait its 10 s retry, where a cluster's DNS answers at once.
fn keep_overrides(services: barbican_sim::services::ServiceRegistry, path: PathBuf) {
    let mut changes = services.subscribe();
    tokio::spawn(async move {
        let mut written = String::new();
        loop {
            changes.borrow_and_update();
            write_overrides(&services, &path, &mut written);
            // A failed write is tried again after a while even without a change.
            let _ = tokio::time::timeout(Duration::from_millis(100), changes.changed()).await;
        }
    });
}

/// Writes the registry's overrides to `path` (atomically) if they differ from `written`.
fn write_overrides(
    services: &barbican_sim::services::ServiceRegistry,
    path: &Path,
    written: &mut String,
) {
    let now = services.overrides();
    if now != *written {
        let staged = path.with_extension("new");
        if std::fs::write(&staged, &now).is_ok() && std::fs::rename(&staged, path).is_ok() {
            *written = now;
        }
    }
}

/// Waits until every OpenBao instance of the run has its in-cluster name in the overrides
/// file, as a cluster's DNS would answer for a Service that exists. Without this the first
/// passes raced the file's refresh, found the name unresolvable and waited the stores' 30 s
/// retry: most of the time to Ready at small N was that wait, which a cluster does not have.
async fn until_instances_resolve(
    services: &barbican_sim::services::ServiceRegistry,
    path: &Path,
    instances: usize,
) -> Result<(), String> {
    let started = Instant::now();
    let mut written = String::new();
    loop {
        write_overrides(services, path, &mut written);
        // The file as the operator reads it, with the operator's own parser.
        let table =
            barbican_operator::resolve::parse_overrides(&path.display().to_string(), &written)
                .map_err(|e| e.to_string())?;
        let missing = (0..instances)
            .map(|k| format!("{}.{NAMESPACE}.svc", instance(k * STORES_PER_INSTANCE)))
            .filter(|host| !table.contains_key(&(host.clone(), 8200)))
            .count();
        if missing == 0 {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(60) {
            return Err(format!(
                "{missing} of {instances} OpenBao instances had no address after 60 s"
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The `barbican-operator` binary beside this one (a release build puts both in
/// `target/release/`).
pub fn operator_beside_this_binary() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("barbican-operator")))
        .unwrap_or_else(|| PathBuf::from("barbican-operator"))
}

fn scratch() -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("barbican-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    Ok(dir)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Runs the benchmark.
pub async fn run(options: &Options) -> Result<Report, String> {
    if !options.operator.exists() {
        return Err(format!(
            "{} does not exist: cargo build --release -p barbican-operator -p barbican-sim-cli",
            options.operator.display()
        ));
    }
    let site = Site::start(&Clock::wall(), true, "")?;
    let cluster = site.cluster.clone();
    let addr = cluster
        .serve_on_loopback()
        .await
        .map_err(|e| format!("serving the cluster: {e}"))?;
    let dir = scratch()?;
    let overrides = dir.join("overrides");
    write(&overrides, "")?;
    keep_overrides(cluster.services(), overrides.clone());

    let client = cluster.client_as(AGENT);
    apply_yaml_as(
        &client,
        AGENT,
        &in_namespace(MINIMAL_PREREQUISITES, NAMESPACE),
    )
    .await?;
    create_foreign(&client, &options.foreign).await?;
    for k in 0..options.barbicans.div_ceil(STORES_PER_INSTANCE) {
        apply(
            &client,
            json!({"apiVersion": "openbao.org/v1alpha1", "kind": "OpenBaoCluster",
                   "metadata": {"name": instance(k * STORES_PER_INSTANCE), "namespace": NAMESPACE},
                   "spec": {}}),
        )
        .await?;
    }
    until_instances_resolve(
        &cluster.services(),
        &overrides,
        options.barbicans.div_ceil(STORES_PER_INSTANCE),
    )
    .await?;
    // The operator runs as the chart's ServiceAccount with the chart's grants (the stores'
    // instances in `rbac.secretStoreNamespaces`), which the cluster enforces.
    let grants = chart_identity::StoreGrants::from([(
        NAMESPACE.to_string(),
        (0..options.barbicans).map(instance).collect(),
    )]);
    let token = chart_identity::install_and_token(&cluster.client(), &grants).await?;
    cluster.enforce_rbac();
    let kubeconfig = dir.join("kubeconfig");
    write(&kubeconfig, &crate::kubeconfig_with_token(addr, &token))?;

    // The operator's requests from its first one: its own count is checked against them.
    let before = cluster.request_tally();
    let converging_mark = cluster.audit_mark();
    let endings_before = cluster.watch_endings();
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("finding a port for the operator's metrics: {e}"))?
        .port();
    let mut operator = tokio::process::Command::new(&options.operator)
        .args(["run", "--kubeconfig"])
        .arg(&kubeconfig)
        .arg("--metrics-bind-address")
        .arg(format!("127.0.0.1:{metrics_port}"))
        .args([
            "--health-probe-bind-address",
            "0",
            "--webhook-bind-address",
            "0",
            "--leader-elect",
            "false",
            "--clusters-namespace",
            "",
            "--resolve-overrides",
        ])
        .arg(&overrides)
        // The operator's log goes to this process's stderr: errors only, unless
        // BARBICAN_BENCH_LOG gives another filter (for example `warn` when a figure needs
        // explaining).
        .env(
            "RUST_LOG",
            std::env::var("BARBICAN_BENCH_LOG")
                .unwrap_or_else(|_| "error,vaultrs=off,rustify=off".to_string()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", options.operator.display()))?;
    let pid = operator.id().ok_or("the operator exited at once")?;

    let started = Instant::now();
    let pairs: Vec<(Value, Value)> = (0..options.barbicans).map(pair).collect::<Result<_, _>>()?;
    for chunk in pairs.chunks(50) {
        let writes = chunk.iter().map(|(barbican, store)| {
            let client = client.clone();
            async move {
                apply(&client, store.clone()).await?;
                apply(&client, barbican.clone()).await
            }
        });
        futures::future::try_join_all(writes).await?;
    }
    until_ready(
        &client,
        &mut operator,
        options.barbicans,
        started,
        options.timeout,
    )
    .await?;
    let converge_seconds = started.elapsed().as_secs_f64();
    let scraped_converged = scrape_metrics(metrics_port).await?;
    let converged = cluster.request_tally();
    let endings_converged = cluster.watch_endings();
    let steady_mark = cluster.audit_mark();
    if let Some(path) = &options.converging_log {
        write(path, &steady_log(&cluster.requests_since(converging_mark)))?;
    }
    let owned = owned_objects(&client).await?;

    let steady_started = Instant::now();
    tokio::time::sleep(options.steady).await;
    // Scraped before the tally: a write that lands between is in the audit, not in the scrape,
    // and the check below names it.
    let scraped = scrape_metrics(metrics_port).await?;
    let after = cluster.request_tally();
    let endings_after = cluster.watch_endings();
    if let Some(path) = &options.steady_log {
        write(path, &steady_log(&cluster.requests_since(steady_mark)))?;
    }
    let steady_seconds = steady_started.elapsed().as_secs_f64();
    let (operator_peak_rss_mib, operator_cpu_seconds) = process_figures(pid);
    let _ = operator.kill().await;
    let _ = std::fs::remove_dir_all(&dir);

    let convergence_requests = operator_requests(&before, &converged);
    let steady_requests = operator_requests(&converged, &after);
    let operator_counted_writes = counted_writes(&scraped);
    let audited = writes(&convergence_requests) + writes(&steady_requests);
    if operator_counted_writes != audited {
        return Err(format!(
            "the operator counted {operator_counted_writes} writes (barbican_operator_kube_requests_total), the API server's audit {audited}"
        ));
    }
    let n = options.barbicans.max(1) as f64;
    let minimum = minimum_writes(&owned, n);
    Ok(Report {
        barbicans: options.barbicans,
        foreign: options.foreign,
        converge_seconds,
        writes_per_barbican: writes(&convergence_requests) as f64 / n,
        minimum_writes_per_barbican: minimum.values().sum(),
        writes_above_minimum_per_barbican: writes_above_minimum(&convergence_requests, &minimum, n),
        reads_per_barbican: counted_reads_per_barbican(&scraped_converged, n),
        read_floors: READ_FLOORS
            .iter()
            .map(|(verb, floor, why)| (verb.to_string(), (*floor, why.to_string())))
            .collect(),
        steady_writes: writes(&steady_requests),
        steady_non_watch_reads: non_watch_reads(&steady_requests),
        convergence_requests,
        convergence_watch_endings: watch_endings_between(&endings_before, &endings_converged),
        steady_watch_endings: watch_endings_between(&endings_converged, &endings_after),
        steady_seconds,
        steady_requests,
        operator_counted_writes,
        operator_peak_rss_mib,
        operator_cpu_seconds,
    })
}

/// The operator's `/metrics` page, over plain HTTP/1.0.
async fn scrape_metrics(port: u16) -> Result<String, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| format!("scraping the operator's metrics: {e}"))?;
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .map_err(|e| format!("scraping the operator's metrics: {e}"))?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .await
        .map_err(|e| format!("scraping the operator's metrics: {e}"))?;
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(entries: &[(&str, &str, &str, u64)]) -> Tally {
        entries
            .iter()
            .map(|(a, v, r, n)| ((a.to_string(), v.to_string(), r.to_string()), *n))
            .collect()
    }

    #[test]
    fn the_counted_writes_are_the_answered_writes_of_the_operators_page() {
        let page = "# HELP barbican_operator_kube_requests_total Requests\n\
barbican_operator_kube_requests_total{code=\"200\",resource=\"deployments.apps\",verb=\"patch\"} 7\n\
barbican_operator_kube_requests_total{code=\"201\",resource=\"secrets\",verb=\"create\"} 2\n\
barbican_operator_kube_requests_total{code=\"409\",resource=\"secrets\",verb=\"create\"} 1\n\
barbican_operator_kube_requests_total{code=\"timeout\",resource=\"secrets\",verb=\"patch\"} 5\n\
barbican_operator_kube_requests_total{code=\"200\",resource=\"secrets\",verb=\"list\"} 40\n\
barbican_operator_kube_requests_total{code=\"200\",resource=\"pods\",verb=\"deletecollection\"} 1\n";
        assert_eq!(counted_writes(page), 11);
    }

    #[test]
    fn the_operators_requests_are_the_tallys_growth_without_the_bench_and_the_fakes() {
        let before = tally(&[("kube-rs", "patch", "apps/deployments", 2)]);
        let after = tally(&[
            ("kube-rs", "patch", "apps/deployments", 5),
            ("kube-rs", "watch", "/secrets", 1),
            ("kube-rs", "get", "/secrets", 4),
            ("bench", "patch", "barbican.openstack.c5c3.io/barbicans", 9),
            ("fakes", "patch", "k8s.mariadb.com/mariadbs/status", 9),
        ]);
        let requests = operator_requests(&before, &after);
        assert_eq!(
            requests,
            Requests::from([
                ("get /secrets".to_string(), 4),
                ("patch apps/deployments".to_string(), 3),
                ("watch /secrets".to_string(), 1),
            ])
        );
        assert_eq!(writes(&requests), 3);
        assert_eq!(non_watch_reads(&requests), 4);
    }

    #[test]
    fn the_writes_above_the_minimum_are_each_resources_writes_less_its_owned_objects() {
        let owned = Requests::from([
            ("apps/deployments".to_string(), 2),
            ("/secrets".to_string(), 6),
        ]);
        let minimum = minimum_writes(&owned, 2.0);
        assert_eq!(minimum["apps/deployments"], 1.0);
        assert_eq!(minimum["barbican.openstack.c5c3.io/barbicans/status"], 1.0);
        assert_eq!(minimum.values().sum::<f64>(), 1.0 + 3.0 + 3.0);
        let requests = Requests::from([
            ("patch apps/deployments".to_string(), 4),
            ("create /secrets".to_string(), 6),
            ("get /secrets".to_string(), 50),
            (
                "patch barbican.openstack.c5c3.io/barbicans/status".to_string(),
                6,
            ),
            ("create events.k8s.io/events".to_string(), 3),
        ]);
        let above = writes_above_minimum(&requests, &minimum, 2.0);
        assert_eq!(
            above,
            BTreeMap::from([
                ("apps/deployments".to_string(), 1.0),
                (
                    "barbican.openstack.c5c3.io/barbicans/status".to_string(),
                    2.0
                ),
                ("events.k8s.io/events".to_string(), 1.5),
            ]),
            "reads and writes at their minimum are left out"
        );
    }

    #[test]
    fn watch_endings_are_the_growth_and_expired_ones_count_as_relists() {
        let before = WatchEndings::from([(("/secrets".to_string(), "timeout"), 2)]);
        let after = WatchEndings::from([
            (("/secrets".to_string(), "timeout"), 5),
            (("/secrets".to_string(), "expired"), 1),
            (("apps/deployments".to_string(), "unresponsive"), 4),
            (("apps/deployments".to_string(), "expired"), 2),
        ]);
        let endings = watch_endings_between(&before, &after);
        assert_eq!(
            endings,
            Requests::from([
                ("/secrets expired".to_string(), 1),
                ("/secrets timeout".to_string(), 3),
                ("apps/deployments expired".to_string(), 2),
                ("apps/deployments unresponsive".to_string(), 4),
            ])
        );
        assert_eq!(expired(&endings), 3);
        assert!(watch_endings_between(&after, &after).is_empty());
    }

    #[test]
    fn the_steady_log_lists_the_operators_reads_and_writes_with_their_bodies() {
        let entry = |agent: &str, method: &str, path: &str, body: &str| Entry {
            user_agent: agent.to_string(),
            method: method.to_string(),
            path: path.to_string(),
            code: 200,
            body: body.to_string(),
        };
        let log = steady_log(&[
            entry(
                "barbican-operator/0.1.0",
                "GET",
                "/api/v1/namespaces/bench/secrets/a",
                "",
            ),
            entry(
                "barbican-operator/0.1.0",
                "GET",
                "/api/v1/secrets?watch=true",
                "",
            ),
            entry("bench", "GET", "/api/v1/namespaces/bench/secrets/b", ""),
            entry(
                "barbican-operator/0.1.0",
                "PATCH",
                "/api/v1/namespaces/bench/secrets/a",
                "{\"data\":\n{}}",
            ),
        ]);
        assert_eq!(
            log,
            "GET /api/v1/namespaces/bench/secrets/a → 200 (barbican-operator/0.1.0)\n\
             PATCH /api/v1/namespaces/bench/secrets/a → 200 (barbican-operator/0.1.0)\n    {\"data\": {}}\n"
        );
    }

    #[test]
    fn process_figures_read_this_process() {
        let (rss, cpu) = process_figures(std::process::id());
        assert!(rss > 1.0, "a running process has a resident set: {rss}");
        assert!(cpu >= 0.0);
    }
}
