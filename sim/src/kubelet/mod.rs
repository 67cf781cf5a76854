//! A kubelet for the sim (opt-in): the pods of Deployments and Jobs whose image a [`Runtime`]
//! maps to a local root run as real processes on this machine.
//!
//! The kubelet does what the ReplicaSet and Job controllers and a node would: it creates the
//! Pods a ReplicaSet or Job wants (owned by it, as kube-controller-manager names them), starts
//! each pod's containers with their command and args as written, their environment from
//! values, Secrets, ConfigMaps and the pod's fields, and their `secret`, `configMap`,
//! `projected` and `emptyDir` volumes at their `mountPath`s, each pod in a network namespace of
//! its own; it probes them, restarts them as their restart policy says, and writes the Pods'
//! status. A rollout of such a Deployment replaces its pods as its strategy paces it
//! ([`rollout`]: `maxSurge`, `maxUnavailable`, `Recreate`) and completes when its new pods
//! are ready, a Job ends when its pod exits (a new pod after a failure, with the Job
//! controller's backoff, up to `backoffLimit`), Services reach ready pods through the
//! [`ServiceRegistry`](crate::services::ServiceRegistry), pods reach every registered name
//! through [`proxy`], and `pods/<name>/log` serves each container's output.
//!
//! Pods whose image has no mapping keep the simulated controllers' behaviour. Nothing here
//! knows what the images are: the mapping is configuration. The kubelet reads the wall clock
//! (its processes do), needs root, `ip` (iproute2), `unshare` (util-linux) and crun.
//!
//! Each container runs under crun ([`sandbox::Crun`]) from a bundle [`oci`] describes: its own
//! PID, mount, IPC and UTS namespaces, the pod's network namespace, a user namespace mapping
//! the pod to a range of unprivileged host IDs, a read-only root of the image's read-only
//! binds, capabilities, `no_new_privs` and seccomp as [`security`] decides from the
//! `securityContext`. Resources (CPU, memory) are not enforced.

mod admission;
pub mod api_access;
mod api_server;
mod config;
mod container;
mod context;
pub mod env;
pub mod firewall;
pub mod id_ranges;
mod layout;
pub mod logs;
pub mod oci;
mod pod;
pub mod probes;
pub mod proxy;
pub mod rollout;
mod routes;
pub mod sandbox;
pub mod security;
pub mod volumes;

use std::{
    collections::{BTreeMap, BTreeSet},
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use jiff::Timestamp;
use serde_json::{Value, json};
use tokio::{sync::watch, task::JoinHandle};

pub use self::config::{KubeletConfig, KubeletError, Runtime, absolute_roots};
pub use self::routes::target_port;
use self::routes::{RESOLV_CONF, hosts_file};
use self::{
    context::{PodContext, PodStatus},
    pod::PodHandle,
    proxy::ServiceProxies,
    sandbox::PodNetwork,
};
use crate::{
    cluster::Cluster,
    controllers::{Outcome, Pin, PodsReport, runs_on},
};

/// A running kubelet. [`Kubelet::stop`] stops its pods; dropping it stops them less politely.
pub struct Kubelet {
    stop: watch::Sender<bool>,
    task: Mutex<Option<JoinHandle<()>>>,
    /// Where it keeps the files of PersistentVolumeClaims, namespace by namespace.
    claims: KubeletConfig,
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

impl Kubelet {
    /// Checks the machine and the runtimes, tells the cluster's controllers which images it
    /// runs, and starts.
    pub async fn start(cluster: &Cluster, mut config: KubeletConfig) -> Result<Self, KubeletError> {
        config.runtimes = absolute_roots(std::mem::take(&mut config.runtimes))?;
        sandbox::Crun::check().await.map_err(KubeletError::Host)?;
        let ip = tokio::process::Command::new("ip").arg("-V").output().await;
        if !ip.is_ok_and(|o| o.status.success()) {
            return Err(KubeletError::Host("ip -V did not run".into()));
        }
        // A name of this kubelet's own: two clusters of one process starting together (the
        // @real-barbican run takes two scenarios at a time) must not meet on it.
        let probe_name = format!(
            "bsim-probe-{}-{}",
            crate::leftovers::run_id(),
            POD_NUMBERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let probe = tokio::process::Command::new("ip")
            .args(["netns", "add", &probe_name])
            .output()
            .await
            .map_err(|e| KubeletError::Host(e.to_string()))?;
        if !probe.status.success() {
            return Err(KubeletError::Host(
                String::from_utf8_lossy(&probe.stderr).trim().to_string(),
            ));
        }
        let _ = tokio::process::Command::new("ip")
            .args(["netns", "del", &probe_name])
            .output()
            .await;
        sandbox::state_root(&config.state_dir).map_err(|e| KubeletError::State {
            path: config.state_dir.clone(),
            detail: e.to_string(),
        })?;
        let mut controllers = cluster.controllers();
        controllers.kubelet_images = config.runtimes.iter().map(|r| r.image.clone()).collect();
        cluster.set_controllers(controllers);
        let api = api_server::ApiForPods::start(cluster).await?;
        let (stop, stopping) = watch::channel(false);
        let claims = KubeletConfig::new(Vec::new(), config.state_dir.clone());
        let node = Node::new(cluster.clone(), config, api);
        let task = tokio::spawn(node.run(stopping));
        Ok(Self {
            stop,
            task: Mutex::new(Some(task)),
            claims,
        })
    }

    /// The directory holding the files of the PersistentVolumeClaim `namespace/claim`, as
    /// its pods wrote them (what a volume's administrator reads on the node).
    pub fn claim_dir(&self, namespace: &str, claim: &str) -> std::path::PathBuf {
        self.claims.claims_dir(namespace).join(claim)
    }

    /// Stops every pod (gracefully) and removes the sandboxes and Service addresses.
    pub async fn stop(self) {
        self.stop_pods().await;
    }

    /// [`Kubelet::stop`] for a kubelet that is shared: returns once its pods are gone.
    pub async fn stop_pods(&self) {
        let _ = self.stop.send(true);
        let task = lock(&self.task).take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

/// Pod numbers, shared by every kubelet of this process: two clusters in one process (a test
/// run's scenarios) never share a pod's network namespace, interface or address.
static POD_NUMBERS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

/// The kubelet's state.
struct Node {
    /// The API as pods reach it.
    api: api_server::ApiForPods,
    cluster: Cluster,
    config: KubeletConfig,
    /// Names this kubelet's network namespaces and interfaces apart from another's.
    id: u32,
    pods: BTreeMap<String, Running>,
    /// Pod numbers this kubelet used and gave back (numbers come from [`POD_NUMBERS`]).
    free: Arc<Mutex<Vec<u32>>>,
    proxies: ServiceProxies,
    /// The status last written to each pod, by uid.
    written: BTreeMap<String, Value>,
    /// What was last reported for each Deployment: uid → (generation, ready).
    reported: BTreeMap<String, (i64, i64)>,
    /// Service ports registered to a pod.
    registered: BTreeSet<(String, String, u16)>,
    /// What was last reported for each running Job: uid → (active, failed).
    job_counts: BTreeMap<String, (usize, usize)>,
    /// Counts pod names made.
    names: u64,
    /// The run's lock: what it made is a live run's, no other run reaps ([`crate::leftovers`]).
    _run: Option<crate::leftovers::RunLock>,
}

/// A pod the kubelet runs.
struct Running {
    handle: PodHandle,
    index: u32,
    /// The pod's host IDs, held until its sandbox is gone.
    ids: id_ranges::IdRange,
    namespace: String,
    name: String,
}

/// What the store holds that the kubelet acts on.
#[derive(Default)]
struct View {
    replica_sets: Vec<Value>,
    deployments: BTreeMap<String, Value>,
    jobs: Vec<Value>,
    /// Pods owned by those, by owner uid.
    pods: BTreeMap<String, Vec<Value>>,
    services: Vec<Value>,
}

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn controller_uid(object: &Value) -> Option<&str> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)?["uid"]
        .as_str()
}

impl Node {
    fn new(cluster: Cluster, config: KubeletConfig, api: api_server::ApiForPods) -> Self {
        let proxies = ServiceProxies::new(cluster.services(), config.service_octet);
        let id = crate::leftovers::run_id();
        Self {
            api,
            id,
            cluster,
            config,
            pods: BTreeMap::new(),
            free: Arc::default(),
            proxies,
            written: BTreeMap::new(),
            reported: BTreeMap::new(),
            registered: BTreeSet::new(),
            job_counts: BTreeMap::new(),
            names: 0,
            _run: crate::leftovers::RunLock::hold(id).ok(),
        }
    }

    async fn run(mut self, mut stopping: watch::Receiver<bool>) {
        self.proxies.filter_pods(self.id).await;
        loop {
            if let Err(e) = self.sync().await {
                eprintln!("barbican-sim kubelet: {e}");
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(250)) => {}
                _ = stopping.changed() => break,
            }
        }
        let pods = std::mem::take(&mut self.pods);
        let stops = pods.into_values().map(|r| r.handle.stop());
        futures::future::join_all(stops).await;
        self.proxies.remove().await;
    }

    /// One pass: Service addresses, pods wanted and unwanted, statuses and reports.
    async fn sync(&mut self) -> Result<(), String> {
        // A name that cannot be served now is reported and tried again on the next pass;
        // the pods go on meanwhile.
        match self.proxies.refresh().await {
            Ok(true) => self.rewrite_hosts(),
            Ok(false) => {}
            Err(e) => eprintln!("barbican-sim kubelet: {e}"),
        }
        self.publish_root_ca();
        let images: Vec<String> = self
            .config
            .runtimes
            .iter()
            .map(|r| r.image.clone())
            .collect();
        let view = self.cluster.kubelet_view(|store, registry| {
            let list = |group: &str, version: &str, plural: &str| {
                registry
                    .get(group, version, plural)
                    .map(|t| store.list(t, None))
                    .unwrap_or_default()
            };
            let mut view = View {
                replica_sets: list("apps", "v1", "replicasets")
                    .into_iter()
                    .filter(|rs| runs_on(&images, rs))
                    .collect(),
                jobs: list("batch", "v1", "jobs")
                    .into_iter()
                    .filter(|job| runs_on(&images, job))
                    .collect(),
                ..View::default()
            };
            let owners: BTreeSet<String> = view
                .replica_sets
                .iter()
                .chain(view.jobs.iter())
                .map(|o| text(o, "/metadata/uid").to_string())
                .collect();
            let wanted: BTreeSet<String> = view
                .replica_sets
                .iter()
                .filter_map(|rs| controller_uid(rs).map(str::to_string))
                .collect();
            for deployment in list("apps", "v1", "deployments") {
                let uid = text(&deployment, "/metadata/uid").to_string();
                if wanted.contains(&uid) {
                    view.deployments.insert(uid, deployment);
                }
            }
            for pod in list("", "v1", "pods") {
                if let Some(owner) = controller_uid(&pod).filter(|o| owners.contains(*o)) {
                    view.pods.entry(owner.to_string()).or_default().push(pod);
                }
            }
            view.services = list("", "v1", "services");
            view
        });
        self.scale_replica_sets(&view);
        self.run_jobs(&view);
        self.start_and_stop(&view).await;
        self.write_statuses(&view);
        self.report_deployments(&view);
        self.route_services(&view);
        Ok(())
    }

    /// A pod's readiness as this kubelet last saw it.
    fn ready(&self, pod: &Value) -> bool {
        self.pods
            .get(text(pod, "/metadata/uid"))
            .is_some_and(|r| lock(&r.handle.status).ready())
    }

    /// Each ReplicaSet gets its replicas; a Deployment's old revisions give way to its newest
    /// as its strategy paces it (see [`rollout`]).
    fn scale_replica_sets(&mut self, view: &View) {
        for rs in &view.replica_sets {
            let uid = text(rs, "/metadata/uid");
            let pods = view.pods.get(uid).map(Vec::as_slice).unwrap_or_default();
            let deployment = controller_uid(rs).and_then(|owner| {
                let newest = newest_replica_set(view, owner)?;
                Some((owner, view.deployments.get(owner)?, newest))
            });
            match deployment {
                // The newest revision of a Deployment: the rollout decides.
                Some((owner, deployment, newest)) if text(newest, "/metadata/uid") == uid => {
                    self.roll(view, owner, deployment, rs, pods);
                }
                // An older revision: the newest one's pass removes its pods.
                Some(_) => {}
                None => {
                    let wanted =
                        usize::try_from(rs["spec"]["replicas"].as_i64().unwrap_or(1)).unwrap_or(0);
                    for _ in pods.len()..wanted {
                        self.create_pod(rs, "ReplicaSet", "apps/v1");
                    }
                    self.delete_newest(pods, pods.len().saturating_sub(wanted));
                }
            }
        }
    }

    /// One pass of the rollout of the Deployment `owner` whose newest revision is `rs`.
    fn roll(&mut self, view: &View, owner: &str, deployment: &Value, rs: &Value, pods: &[Value]) {
        let replicas = usize::try_from(rs["spec"]["replicas"].as_i64().unwrap_or(1)).unwrap_or(0);
        let mut old: Vec<(&Value, u64)> = view
            .replica_sets
            .iter()
            .filter(|o| {
                controller_uid(o) == Some(owner) && o["metadata"]["uid"] != rs["metadata"]["uid"]
            })
            .flat_map(|o| {
                let revision = revision(o);
                view.pods
                    .get(text(o, "/metadata/uid"))
                    .into_iter()
                    .flatten()
                    .map(move |p| (p, revision))
            })
            .collect();
        let counts = rollout::Pods {
            new: pods.len(),
            new_ready: pods.iter().filter(|p| self.ready(p)).count(),
            old: old.len(),
            old_ready: old.iter().filter(|(p, _)| self.ready(p)).count(),
        };
        let strategy = rollout::strategy(deployment, replicas);
        let step = rollout::step(strategy, replicas, counts);
        for _ in 0..step.create {
            self.create_pod(rs, "ReplicaSet", "apps/v1");
        }
        // Unready pods first, then the oldest revision's.
        old.sort_by_key(|(p, revision)| (self.ready(p), *revision));
        let (unready, ready): (Vec<_>, Vec<_>) = old.into_iter().partition(|(p, _)| !self.ready(p));
        for (pod, _) in unready
            .into_iter()
            .take(step.delete_unready)
            .chain(ready.into_iter().take(step.delete_ready))
        {
            self.delete_pod(pod);
        }
        // A Deployment scaled down: its newest pods go first.
        self.delete_newest(pods, pods.len().saturating_sub(replicas));
    }

    /// The replicas the newest ReplicaSet of the Deployment `owner` (a uid) wants, and how many
    /// of its pods are ready.
    fn newest_revision(&self, view: &View, owner: &str) -> Option<(i64, i64)> {
        let newest = newest_replica_set(view, owner)?;
        let wanted = newest["spec"]["replicas"].as_i64().unwrap_or(1);
        let ready = view
            .pods
            .get(text(newest, "/metadata/uid"))
            .into_iter()
            .flatten()
            .filter(|p| self.ready(p))
            .count();
        Some((wanted, i64::try_from(ready).unwrap_or(i64::MAX)))
    }

    /// Deletes the `count` most recently created of `pods`.
    fn delete_newest(&mut self, pods: &[Value], count: usize) {
        let mut newest: Vec<&Value> = pods.iter().collect();
        newest
            .sort_by_key(|p| std::cmp::Reverse(text(p, "/metadata/creationTimestamp").to_string()));
        for pod in newest.into_iter().take(count) {
            self.delete_pod(pod);
        }
    }

    /// Jobs: one pod at a time; success completes the Job, failures past `backoffLimit` fail
    /// it, and each failure delays the next pod (10 s doubling, at most 6 minutes).
    fn run_jobs(&mut self, view: &View) {
        for job in &view.jobs {
            if crate::controllers::jobs::finished(job).is_some() || job["spec"]["suspend"] == true {
                continue;
            }
            let pods = view
                .pods
                .get(text(job, "/metadata/uid"))
                .map(Vec::as_slice)
                .unwrap_or_default();
            let phase = |pod: &Value| -> String {
                self.pods
                    .get(text(pod, "/metadata/uid"))
                    .map(|r| lock(&r.handle.status).phase.clone())
                    .unwrap_or_else(|| text(pod, "/status/phase").to_string())
            };
            let pin = Pin::of(job);
            if pods.iter().any(|p| phase(p) == "Succeeded") {
                self.cluster.report_pods(PodsReport::JobEnded {
                    job: pin,
                    outcome: Outcome::Complete,
                });
                continue;
            }
            let failed = pods.iter().filter(|p| phase(p) == "Failed").count();
            let limit = usize::try_from(job["spec"]["backoffLimit"].as_i64().unwrap_or(6).max(0))
                .unwrap_or(6);
            if failed > limit {
                self.cluster.report_pods(PodsReport::JobEnded {
                    job: pin,
                    outcome: Outcome::Fail,
                });
                continue;
            }
            let active = pods.len().saturating_sub(failed);
            let counts = (active, failed);
            let uid = text(job, "/metadata/uid").to_string();
            if self.job_counts.get(&uid) != Some(&counts) {
                self.job_counts.insert(uid, counts);
                self.cluster.report_pods(PodsReport::JobPods {
                    job: pin.clone(),
                    active: i64::try_from(active).unwrap_or(i64::MAX),
                    failed: i64::try_from(failed).unwrap_or(i64::MAX),
                });
            }
            if active > 0 {
                continue;
            }
            if failed > 0 {
                let delay = 10u64.saturating_mul(1u64 << (failed - 1).min(6)).min(360);
                let last = pods
                    .iter()
                    .filter_map(|p| self.pods.get(text(p, "/metadata/uid")))
                    .filter_map(|r| {
                        lock(&r.handle.status)
                            .containers
                            .iter()
                            .filter_map(|c| c.state["terminated"]["finishedAt"].as_str())
                            .filter_map(|t| t.parse::<Timestamp>().ok())
                            .max()
                    })
                    .max();
                let due = last.map(|t| t + jiff::SignedDuration::from_secs(delay as i64));
                if due.is_some_and(|due| Timestamp::now() < due) {
                    continue;
                }
            }
            self.create_pod(job, "Job", "batch/v1");
        }
    }

    /// Publishes the CA of the API for pods in every namespace (see [`api_server`]).
    fn publish_root_ca(&self) {
        api_server::publish_root_ca(&self.cluster, &self.api.ca_pem);
    }

    /// Creates a pod of `owner`'s template, named as kube-controller-manager names them.
    fn create_pod(&mut self, owner: &Value, kind: &str, api_version: &str) {
        self.names = self.names.wrapping_add(1);
        let namespace = text(owner, "/metadata/namespace").to_string();
        let owner_name = text(owner, "/metadata/name");
        let name = format!(
            "{owner_name}-{}",
            suffix(text(owner, "/metadata/uid"), self.names)
        );
        let template = &owner["spec"]["template"];
        let mut labels = template["metadata"]["labels"].clone();
        if kind == "Job" {
            labels["batch.kubernetes.io/job-name"] = json!(owner_name);
            labels["job-name"] = json!(owner_name);
            labels["batch.kubernetes.io/controller-uid"] = owner["metadata"]["uid"].clone();
        }
        let mut spec = template["spec"].clone();
        spec["nodeName"] = json!("barbican-sim");
        // kube-apiserver's ServiceAccount admission, on the Pod the controller creates.
        api_access::admit(&mut spec, &suffix(&name, self.names));
        let pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": labels,
                "annotations": template["metadata"]["annotations"],
                "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": owner_name,
                    "uid": owner["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}],
            },
            "spec": spec,
            "status": {"phase": "Pending", "qosClass": "Burstable"},
        });
        self.cluster.kubelet_write(|store, registry| {
            if let Some(refusal) = admission::refusal(store, registry, &namespace, &pod) {
                // As the ReplicaSet and Job controllers report a pod the API server refused.
                admission::refused_event(store, registry, owner, kind, api_version, &refusal);
                return;
            }
            if let Some(t) = registry.get("", "v1", "pods") {
                let _ = store.create(t, &namespace, pod, false);
            }
        });
    }

    fn delete_pod(&mut self, pod: &Value) {
        let (namespace, name) = (
            text(pod, "/metadata/namespace"),
            text(pod, "/metadata/name"),
        );
        self.cluster.kubelet_write(|store, registry| {
            if let Some(t) = registry.get("", "v1", "pods") {
                let _ = store.delete(
                    t,
                    namespace,
                    name,
                    crate::store::Propagation::Background,
                    false,
                );
            }
        });
    }

    /// Starts the pods that exist and are not running; stops those whose Pod is gone.
    async fn start_and_stop(&mut self, view: &View) {
        let live: BTreeMap<&str, &Value> = view
            .pods
            .values()
            .flatten()
            .map(|p| (text(p, "/metadata/uid"), p))
            .collect();
        let gone: Vec<String> = self
            .pods
            .keys()
            .filter(|uid| !live.contains_key(uid.as_str()))
            .cloned()
            .collect();
        for uid in gone {
            if let Some(running) = self.pods.remove(&uid) {
                self.written.remove(&uid);
                // Stopping takes the grace period; the next pass does not wait for it. The
                // pod's number (its namespace, interface and address) is free only once its
                // sandbox is gone: a new pod given it earlier had its network namespace
                // deleted under it by the old pod's teardown, and never became ready.
                let free = self.free.clone();
                tokio::spawn(async move {
                    running.handle.stop().await;
                    lock(&free).push(running.index);
                    drop(running.ids);
                });
            }
        }
        for (uid, pod) in live {
            if self.pods.contains_key(uid) {
                continue;
            }
            let Some(runtime) = self.config.runtime_for(pod) else {
                continue;
            };
            let (root, entrypoint) = (runtime.root.clone(), runtime.entrypoint.clone());
            let reused = lock(&self.free).pop();
            let index = reused.unwrap_or_else(|| {
                PodNetwork::fresh_index(self.id, self.config.pod_octet, || {
                    POD_NUMBERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                })
            });
            let Some(network) = PodNetwork::plan(self.id, index, self.config.pod_octet) else {
                eprintln!(
                    "barbican-sim kubelet: no pod address left for {}",
                    text(pod, "/metadata/name")
                );
                continue;
            };
            let (namespace, name) = (
                text(pod, "/metadata/namespace"),
                text(pod, "/metadata/name"),
            );
            let dir = self
                .config
                .state_dir
                .join(format!("{namespace}_{name}_{uid}"));
            if std::fs::create_dir_all(&dir).is_err() {
                continue;
            }
            let ids = match id_ranges::IdRange::claim(self.id, index) {
                Ok(ids) => ids,
                Err(e) => {
                    eprintln!(
                        "barbican-sim kubelet: no host IDs for {}: {e}",
                        text(pod, "/metadata/name")
                    );
                    lock(&self.free).push(index);
                    continue;
                }
            };
            let hosts = dir.join("etc-hosts");
            let _ = std::fs::write(
                &hosts,
                hosts_file(
                    &network.ip.to_string(),
                    name,
                    &self.proxies.hosts(namespace),
                ),
            );
            // No name server: a name the hosts file lacks fails at once instead of waiting
            // on one the pod's network cannot reach.
            let _ = std::fs::write(dir.join("resolv.conf"), RESOLV_CONF);
            let lookup = context::lookup(&self.cluster, namespace, pod);
            let claims = self.config.claims_dir(namespace);
            let handle = PodHandle::start(PodContext {
                pod: pod.clone(),
                root,
                entrypoint,
                dir,
                claims,
                network,
                lookup,
                hosts,
                logs: self.cluster.pod_logs(),
                status: Arc::new(Mutex::new(PodStatus {
                    phase: "Pending".into(),
                    start_time: crate::clock::rfc3339(Timestamp::now()),
                    ..PodStatus::default()
                })),
                crun: sandbox::Crun::new(self.config.state_dir.join("crun")),
                container_prefix: format!("bsim-{}-{index}", self.id),
                id_base: ids.base(),
            });
            self.pods.insert(
                uid.to_string(),
                Running {
                    handle,
                    index,
                    ids,
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                },
            );
        }
    }

    /// Writes each pod's status when it changed.
    fn write_statuses(&mut self, view: &View) {
        for pod in view.pods.values().flatten() {
            let uid = text(pod, "/metadata/uid");
            let Some(running) = self.pods.get(uid) else {
                continue;
            };
            let status = lock(&running.handle.status).to_json();
            if self.written.get(uid) == Some(&status) {
                continue;
            }
            // `kubectl port-forward` reaches the pod's container ports at its address.
            if let Some(ip) = status["podIP"]
                .as_str()
                .and_then(|ip| ip.parse::<std::net::Ipv4Addr>().ok())
            {
                let registry = self.cluster.services();
                for port in pod["spec"]["containers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|c| c["ports"].as_array().into_iter().flatten())
                    .filter_map(|p| {
                        p["containerPort"]
                            .as_u64()
                            .and_then(|p| u16::try_from(p).ok())
                    })
                {
                    registry.register_pod(
                        text(pod, "/metadata/namespace"),
                        text(pod, "/metadata/name"),
                        port,
                        SocketAddr::from((ip, port)),
                    );
                }
            }
            let (namespace, name) = (
                text(pod, "/metadata/namespace"),
                text(pod, "/metadata/name"),
            );
            let body = json!({"metadata": {"resourceVersion": pod["metadata"]["resourceVersion"]}, "status": status});
            let written = self.cluster.kubelet_write(|store, registry| {
                registry
                    .get("", "v1", "pods")
                    .is_some_and(|t| store.replace(t, namespace, name, body, true, false).is_ok())
            });
            if written {
                self.written.insert(uid.to_string(), status);
            }
        }
    }

    /// Tells the Deployment controller how many pods of each Deployment's newest revision
    /// are ready.
    fn report_deployments(&mut self, view: &View) {
        for (uid, deployment) in &view.deployments {
            let Some((_, ready)) = self.newest_revision(view, uid) else {
                continue;
            };
            let generation = deployment["metadata"]["generation"].as_i64().unwrap_or(1);
            let seen = (generation, ready);
            let settled = deployment["status"]["observedGeneration"].as_i64() == Some(generation)
                && deployment["status"]["readyReplicas"].as_i64().unwrap_or(0) == ready;
            if self.reported.get(uid) == Some(&seen) && settled {
                continue;
            }
            self.reported.insert(uid.clone(), seen);
            self.cluster.report_pods(PodsReport::Deployment {
                deployment: Pin::of(deployment),
                generation,
                ready,
            });
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A ReplicaSet's revision number.
/// The ReplicaSet of the newest revision of the Deployment `owner` (a uid).
fn newest_replica_set<'a>(view: &'a View, owner: &str) -> Option<&'a Value> {
    view.replica_sets
        .iter()
        .filter(|rs| controller_uid(rs) == Some(owner))
        .max_by_key(|rs| revision(rs))
}

fn revision(rs: &Value) -> u64 {
    rs["metadata"]["annotations"][crate::controllers::deployments::REVISION]
        .as_str()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// Five characters from the alphabet kube-controller-manager names pods with.
pub fn suffix(seed: &str, n: u64) -> String {
    use sha2::{Digest, Sha256};
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let digest = Sha256::digest(format!("{seed}/{n}").as_bytes());
    digest
        .iter()
        .take(5)
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}
