//! The fault soak behind `barbican-sim soak --seeds K`: every example of `deploy/examples/`
//! (see [`crate::examples`]) under a seeded random schedule of faults, with the operator's
//! invariants checked after every step of virtual time.
//!
//! A seed fixes the schedule ([`schedule`]): API errors and conflicts for the operator's client,
//! dropped watches, compaction, operator restarts, OpenBao outages and revoked secret IDs, failing
//! db-sync Jobs, MariaDB outages, the target cluster going down, and spec edits (release bumps,
//! the default store switched off and on, a store detached and re-attached). When the faults stop, the repairs a person would make are made (see
//! [`Action::Repair`]), everything must become Ready again, and then everything is deleted and
//! must be gone within the spec's windows.
//!
//! The invariants ([`Invariant`]) are checked by reading what the clusters store, the audit
//! log, the operator's log and metrics, and a watch on Jobs of the soak's own; none of it asks
//! the operator. The faults are scoped to the operator's client (`agent=barbican-operator`), so
//! the checks themselves always read.
//!
//! [`Sabotage`] injects a deliberate bug on the operator's behalf; the tests show each is caught.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use barbican_operator::{
    api::{Barbican, BarbicanSecretStore},
    controller::barbican::pod::mounted_config,
    metrics::JobKind,
};
use barbican_sim::controllers::{Controllers, JobRule, JobRules};
use futures::StreamExt;
use k8s_openapi::api::{
    apps::v1::Deployment, batch::v1::Job, core::v1::Secret, networking::v1::NetworkPolicy,
};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams},
    runtime::watcher,
};
use serde_json::{Value, json};

use crate::{
    examples::{self, FULL, LEGACY, NAME, NAMESPACE, REGION, STORE},
    rng::Rng,
    sim_env::{Error, OPERATOR_AGENT, SimEnv},
};

/// How far virtual time moves between two checks of the invariants.
pub const STEP: Duration = Duration::from_secs(2);
/// The fault rules the schedule draws from: errors, conflicts and throttling for the operator's
/// client only.
pub const API_FAULTS: &[&str] = &[
    "agent=barbican-operator,verb=patch,code=409,rate=0.3",
    "agent=barbican-operator,code=500,rate=0.2",
    "agent=barbican-operator,verb=get,code=503,retry-after=1,rate=0.3",
    "agent=barbican-operator,resource=secrets,code=500,rate=0.5",
    "agent=barbican-operator,verb=create,code=429,retry-after=2,rate=0.3",
    "agent=barbican-operator,verb=list,code=500,rate=0.3",
];
/// The release each example Barbican is bumped to, one step past the example's.
/// The brownfield example's store and the URL it names.
const BROWNFIELD_STORE: &str = "vault-legacy";
const BROWNFIELD_URL: &str = "https://vault.example.com:8200";
/// Where [`Action::UrlEdit`] points it: a port no projection has named.
const UNSERVED_URL: &str = "https://vault-dr.example.com:8300";

const BUMPS: &[(&str, &str)] = &[(NAMESPACE, "2026.1"), (LEGACY, "2026.1"), (FULL, "2026.2")];

/// One thing the schedule does.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Adds a fault rule for the operator's client.
    ApiFault(String),
    /// Clears the fault rules.
    ClearApiFaults,
    /// Ends every open watch on the management cluster.
    DropWatches,
    /// Compacts the management cluster's history (watches must relist).
    Compact,
    /// Stops the operator and starts a new one.
    RestartOperator,
    /// The OpenBao of the minimal example refuses connections.
    OpenBaoDown,
    /// It accepts them again.
    OpenBaoUp,
    /// The external OpenBao of the brownfield example refuses connections.
    ExternalOpenBaoDown,
    /// It accepts them again.
    ExternalOpenBaoUp,
    /// The minimal example's OpenBao revokes its store's secret ID.
    RevokeSecretId,
    /// db-sync Jobs fail.
    JobsFail,
    /// Jobs complete again.
    JobsComplete,
    /// The minimal example's MariaDB becomes unready.
    MariaDbDown,
    /// It is ready again.
    MariaDbUp,
    /// The target cluster's API server goes down.
    TargetDown,
    /// It comes back.
    TargetUp,
    /// The Barbican in this namespace moves to its next release (release and image together).
    ReleaseBump(&'static str),
    /// The minimal example's store stops being the default (an invalid projection).
    DefaultOff,
    /// It is the default again.
    DefaultOn,
    /// The minimal example's store is deleted (a detach).
    Detach,
    /// It is applied again.
    Reattach,
    /// The brownfield store's URL moves to a host and port nothing serves: its projection is
    /// invalid, so egress must not open to it.
    UrlEdit,
    /// The URL is the example's again.
    UrlRestore,
    /// A deliberate bug, on the operator's behalf.
    Sabotage(Sabotage),
    /// The end of the faults: every rule cleared, every outage over, every edit undone, and
    /// failed db-sync Jobs deleted. The operator retries a failed Job on a backoff of up to 30
    /// minutes; deleting it is the person's shortcut, which the soak takes.
    Repair,
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::ApiFault(rule) => write!(f, "fault rule {rule}"),
            Action::ReleaseBump(namespace) => write!(f, "release bump in {namespace}"),
            Action::Sabotage(s) => write!(f, "sabotage: {s:?}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// A deliberate bug, done with the operator's own client or metrics, for showing that the
/// soak catches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sabotage {
    /// Deletes the config Secret the minimal example's Deployment mounts.
    DeleteMountedConfig,
    /// Emits an event whose note carries an issued secret ID.
    LeakSecretId,
    /// Writes an installedRelease no db-sync Job ran.
    PromoteWithoutSync,
    /// Counts a db-sync Job a second time.
    CountJobTwice,
    /// Widens the brownfield Barbican's NetworkPolicy to a port no valid projection named.
    WidenEgress,
}

impl Sabotage {
    /// Every sabotage.
    pub const ALL: [Sabotage; 5] = [
        Sabotage::DeleteMountedConfig,
        Sabotage::LeakSecretId,
        Sabotage::PromoteWithoutSync,
        Sabotage::CountJobTwice,
        Sabotage::WidenEgress,
    ];

    /// The invariant that must catch it.
    pub fn caught_by(self) -> Invariant {
        match self {
            Sabotage::DeleteMountedConfig => Invariant::MountedConfigKept,
            Sabotage::LeakSecretId => Invariant::NoSecretMaterial,
            Sabotage::PromoteWithoutSync => Invariant::ReleaseAfterSync,
            Sabotage::CountJobTwice => Invariant::JobsCountedOnce,
            Sabotage::WidenEgress => Invariant::EgressWithinProjection,
        }
    }
}

/// What the soak checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Invariant {
    /// No secret ID or password in any config Secret, event, condition or the operator's log.
    NoSecretMaterial,
    /// The config Secret a live Deployment mounts is never deleted.
    MountedConfigKept,
    /// NetworkPolicy egress names no port outside the baseline and the valid projections.
    EgressWithinProjection,
    /// installedRelease advances only after a successful db-sync Job on that image.
    ReleaseAfterSync,
    /// No Job is counted twice in the metrics.
    JobsCountedOnce,
    /// No CR stays Terminating past the spec's windows.
    TerminatingBounded,
    /// Once the faults stop, everything becomes Ready, and once deleted, everything goes.
    Converges,
}

/// An invariant that did not hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// The seed of the schedule.
    pub seed: u64,
    /// Virtual seconds since the faults started.
    pub at: u64,
    /// Which invariant.
    pub invariant: Invariant,
    /// What was seen.
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seed {} at +{}s: {:?}: {}",
            self.seed, self.at, self.invariant, self.detail
        )
    }
}

/// How a soak runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long the faults go on (virtual time).
    pub faults_for: Duration,
    /// How long everything may take to become Ready once they stop, and to go once deleted.
    pub settle_within: Duration,
    /// Deliberate bugs, done halfway through the faults.
    pub sabotage: Vec<Sabotage>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            faults_for: Duration::from_secs(15 * 60),
            settle_within: Duration::from_secs(20 * 60),
            sabotage: Vec::new(),
        }
    }
}

/// What one seed did and found.
#[derive(Clone, Debug)]
pub struct SeedReport {
    /// The seed.
    pub seed: u64,
    /// The schedule it ran, as `+<seconds>s <action>` lines.
    pub schedule: Vec<String>,
    /// Every invariant that did not hold (each once per invariant and subject).
    pub violations: Vec<Violation>,
    /// Virtual seconds from the first fault until everything was Ready again.
    pub converged_after: Option<u64>,
    /// Virtual seconds the run covered.
    pub virtual_seconds: u64,
    /// Wall-clock time the run took.
    pub wall: Duration,
}

impl SeedReport {
    /// The report as JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "seed": self.seed,
            "schedule": self.schedule,
            "violations": self.violations.iter().map(|v| json!({
                "at": v.at, "invariant": format!("{:?}", v.invariant), "detail": v.detail,
            })).collect::<Vec<_>>(),
            "convergedAfterSeconds": self.converged_after,
            "virtualSeconds": self.virtual_seconds,
            "wallSeconds": self.wall.as_secs_f64(),
        })
    }
}

/// The schedule of a seed: what happens at which offset into `span`, ordered, ending with
/// [`Action::Repair`] at `span`. Each fault that has an end gets one within five minutes.
pub fn schedule(seed: u64, span: Duration, sabotage: &[Sabotage]) -> Vec<(Duration, Action)> {
    let mut rng = Rng(seed);
    let span_s = span.as_secs().max(60);
    let mut plan: Vec<(u64, Action)> = Vec::new();
    let mut bumped = BTreeSet::new();
    // About one fault every 40 seconds of virtual time.
    for _ in 0..(span_s / 40).max(4) {
        let at = rng.below(span_s);
        let end = (at + 20 + rng.below(280)).min(span_s);
        let pair = |on: Action, off: Action| vec![(at, on), (end, off)];
        let events = match rng.below(16) {
            0 | 1 => pair(
                Action::ApiFault(
                    API_FAULTS[rng.below(API_FAULTS.len() as u64) as usize].to_string(),
                ),
                Action::ClearApiFaults,
            ),
            2 => vec![(at, Action::DropWatches)],
            3 => vec![(at, Action::Compact)],
            4 => vec![(at, Action::RestartOperator)],
            5 => pair(Action::OpenBaoDown, Action::OpenBaoUp),
            6 => pair(Action::ExternalOpenBaoDown, Action::ExternalOpenBaoUp),
            7 => vec![(at, Action::RevokeSecretId)],
            8 => pair(Action::JobsFail, Action::JobsComplete),
            9 => pair(Action::MariaDbDown, Action::MariaDbUp),
            10 => pair(Action::TargetDown, Action::TargetUp),
            11 => {
                let (namespace, _) = BUMPS[rng.below(BUMPS.len() as u64) as usize];
                if bumped.insert(namespace) {
                    vec![(at, Action::ReleaseBump(namespace))]
                } else {
                    vec![(at, Action::DropWatches)]
                }
            }
            12 => pair(Action::DefaultOff, Action::DefaultOn),
            13 => pair(Action::Detach, Action::Reattach),
            14 => pair(Action::UrlEdit, Action::UrlRestore),
            _ => vec![(at, Action::RestartOperator)],
        };
        plan.extend(events);
    }
    for (i, s) in sabotage.iter().enumerate() {
        plan.push((span_s / 2 + i as u64 * 10, Action::Sabotage(*s)));
    }
    // Stable: an "on" and an "off" at the same second keep their order.
    plan.sort_by_key(|(at, _)| *at);
    plan.push((span_s, Action::Repair));
    plan.into_iter()
        .map(|(at, a)| (Duration::from_secs(at), a))
        .collect()
}

/// A Job as the soak's own watch saw it.
#[derive(Clone, Debug, Default)]
struct SeenJob {
    site: String,
    namespace: String,
    name: String,
    image: String,
    succeeded: bool,
    failed: bool,
}

/// Every Job any site ran, by site and uid, kept after the Jobs are deleted.
type Ledger = Arc<Mutex<BTreeMap<(String, String), SeenJob>>>;

/// Watches the Jobs of `client`'s cluster into `ledger` until dropped.
fn watch_jobs(site: &str, client: Client, ledger: Ledger) -> tokio::task::JoinHandle<()> {
    let site = site.to_string();
    tokio::spawn(async move {
        let mut stream =
            std::pin::pin!(watcher(Api::<Job>::all(client), watcher::Config::default()));
        while let Some(event) = stream.next().await {
            let job = match event {
                Ok(watcher::Event::Apply(job) | watcher::Event::InitApply(job)) => job,
                _ => continue,
            };
            let status = job.status.clone().unwrap_or_default();
            let holds = |kind: &str| {
                status
                    .conditions
                    .iter()
                    .flatten()
                    .any(|c| c.type_ == kind && c.status == "True")
            };
            let image = job
                .spec
                .as_ref()
                .and_then(|s| s.template.spec.as_ref())
                .and_then(|s| s.containers.first())
                .and_then(|c| c.image.clone())
                .unwrap_or_default();
            let seen = SeenJob {
                site: site.clone(),
                namespace: job.namespace().unwrap_or_default(),
                name: job.name_any(),
                image,
                succeeded: holds("Complete"),
                failed: holds("Failed"),
            };
            let key = (site.clone(), job.uid().unwrap_or_default());
            let mut ledger = ledger.lock().unwrap_or_else(|p| p.into_inner());
            let entry = ledger.entry(key).or_insert(seen.clone());
            entry.succeeded |= seen.succeeded;
            entry.failed |= seen.failed;
        }
    })
}

/// Every version of a NetworkPolicy named like the examples' Barbicans, as (namespace, egress
/// ports), in the order the soak's watches saw them: a widening the operator undoes within
/// milliseconds is still seen.
type PolicyVersions = Arc<Mutex<Vec<(String, BTreeSet<i32>)>>>;

/// Watches the NetworkPolicies of `client`'s cluster into `versions` until dropped.
fn watch_policies(client: Client, versions: PolicyVersions) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(watcher(
            Api::<NetworkPolicy>::all(client),
            watcher::Config::default()
        ));
        while let Some(event) = stream.next().await {
            if let Ok(watcher::Event::Apply(p) | watcher::Event::InitApply(p)) = event
                && p.name_any() == NAME
            {
                versions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((p.namespace().unwrap_or_default(), egress_ports(&p)));
            }
        }
    })
}

/// A Barbican of the examples and where its children are.
#[derive(Clone)]
struct Subject {
    namespace: &'static str,
    /// `None` for the management cluster, else the target cluster's name.
    site: Option<&'static str>,
}

const SUBJECTS: [Subject; 3] = [
    Subject {
        namespace: NAMESPACE,
        site: None,
    },
    Subject {
        namespace: LEGACY,
        site: None,
    },
    Subject {
        namespace: FULL,
        site: Some(REGION),
    },
];

/// What the checks remember from one step to the next.
struct Observer {
    seed: u64,
    started: jiff::Timestamp,
    ledger: Ledger,
    _watches: Vec<tokio::task::JoinHandle<()>>,
    violations: Vec<Violation>,
    reported: BTreeSet<(Invariant, String)>,
    log_offset: usize,
    /// The installedRelease each Barbican had at the last step, and changes still to confirm.
    releases: BTreeMap<&'static str, Option<String>>,
    promotions: Vec<(&'static str, String, Option<String>)>,
    /// Egress ports allowed per Barbican, and the ports seen at the last step (checked one
    /// step later, once the pass that wrote them has also written its record).
    allowed_ports: BTreeMap<&'static str, BTreeSet<i32>>,
    policy_versions: PolicyVersions,
    pending_ports: Vec<(String, BTreeSet<i32>)>,
    /// The config Secret each Deployment mounted at the last step.
    mounted: BTreeMap<&'static str, String>,
    audit_marks: BTreeMap<String, u64>,
    /// Jobs counted by operator processes that were since restarted, per (namespace, kind).
    counted_before: BTreeMap<(&'static str, usize), u64>,
    /// db-sync/db-clean counts seen at the last step, confirmed one step later.
    pending_counts: Vec<(&'static str, usize, u64)>,
    last_restart: jiff::Timestamp,
}

impl Observer {
    fn violation(&mut self, env: &SimEnv, invariant: Invariant, subject: &str, detail: String) {
        if self.reported.insert((invariant, subject.to_string())) {
            self.violations.push(Violation {
                seed: self.seed,
                at: elapsed(env, self.started),
                invariant,
                detail,
            });
        }
    }
}

fn elapsed(env: &SimEnv, since: jiff::Timestamp) -> u64 {
    env.clock()
        .now()
        .duration_since(since)
        .as_secs()
        .max(0)
        .unsigned_abs()
}

/// The cluster that holds a subject's children.
fn children_client(env: &SimEnv, subject: &Subject) -> Result<Client, Error> {
    match subject.site {
        None => Ok(env.client.clone()),
        Some(name) => Ok(env.target(name)?.client.clone()),
    }
}

/// The port a URL reaches: its own, else the scheme's.
fn url_port(url: &str) -> Option<i32> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    match authority.rsplit_once(':') {
        Some((_, port)) => port.parse().ok(),
        None if url.starts_with("http://") => Some(80),
        None => Some(443),
    }
}

fn egress_ports(policy: &NetworkPolicy) -> BTreeSet<i32> {
    policy
        .spec
        .iter()
        .flat_map(|s| s.egress.iter().flatten())
        .flat_map(|rule| rule.ports.iter().flatten())
        .filter_map(|p| match &p.port {
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n)) => Some(*n),
            _ => None,
        })
        .collect()
}

/// Every value that must never leave the Secrets that hold it: the secret IDs every OpenBao
/// issued and the passwords of the examples' input Secrets.
async fn secret_material(env: &SimEnv) -> Vec<String> {
    let mut material = env.issued_secret_ids();
    for subject in &SUBJECTS {
        let Ok(client) = children_client(env, subject) else {
            continue;
        };
        let secrets = Api::<Secret>::namespaced(client, subject.namespace);
        for name in ["barbican-db", "barbican-keystone"] {
            if let Ok(Some(secret)) = secrets.get_opt(name).await
                && let Some(password) = secret.data.unwrap_or_default().get("password")
            {
                material.push(String::from_utf8_lossy(&password.0).into_owned());
            }
        }
    }
    material.retain(|m| m.len() >= 8);
    material.sort();
    material.dedup();
    material
}

impl Observer {
    async fn start(env: &SimEnv, seed: u64) -> Result<Self, Error> {
        let ledger: Ledger = Arc::default();
        let policy_versions: PolicyVersions = Arc::default();
        let mut watches = vec![
            watch_jobs("management", env.client.clone(), ledger.clone()),
            watch_policies(env.client.clone(), policy_versions.clone()),
        ];
        if let Ok(target) = env.target(REGION) {
            watches.push(watch_jobs(REGION, target.client.clone(), ledger.clone()));
            watches.push(watch_policies(
                target.client.clone(),
                policy_versions.clone(),
            ));
        }
        Ok(Self {
            seed,
            started: env.clock().now(),
            ledger,
            _watches: watches,
            violations: Vec::new(),
            reported: BTreeSet::new(),
            log_offset: crate::log_capture::since(usize::MAX).1,
            releases: BTreeMap::new(),
            promotions: Vec::new(),
            allowed_ports: BTreeMap::new(),
            policy_versions,
            pending_ports: Vec::new(),
            mounted: BTreeMap::new(),
            audit_marks: BTreeMap::new(),
            counted_before: BTreeMap::new(),
            pending_counts: Vec::new(),
            last_restart: env.clock().now(),
        })
    }

    /// Records the converged state the invariants compare against: each Barbican's release
    /// and its NetworkPolicy's egress ports.
    async fn baseline(&mut self, env: &SimEnv) -> Result<(), Error> {
        for subject in &SUBJECTS {
            let barbican = env.barbican(subject.namespace, NAME).await?;
            let status = barbican.status.unwrap_or_default();
            self.releases
                .insert(subject.namespace, status.installed_release.clone());
            let policies =
                Api::<NetworkPolicy>::namespaced(children_client(env, subject)?, subject.namespace);
            let ports = policies
                .get_opt(NAME)
                .await
                .map_err(|e| e.to_string())?
                .map(|p| egress_ports(&p))
                .unwrap_or_default();
            self.allowed_ports.insert(subject.namespace, ports);
        }
        for site in self.sites(env) {
            self.audit_marks.insert(site.0.clone(), site.1.audit_mark());
        }
        // What the policies were while converging is the baseline's own history.
        self.policy_versions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.started = env.clock().now();
        Ok(())
    }

    fn sites(&self, env: &SimEnv) -> Vec<(String, barbican_sim::Cluster)> {
        let mut sites = vec![("management".to_string(), env.cluster.clone())];
        if let Ok(target) = env.target(REGION) {
            sites.push((REGION.to_string(), target.site.cluster.clone()));
        }
        sites
    }

    /// The operator is about to be restarted: its metrics go with it.
    fn before_restart(&mut self, env: &SimEnv) {
        for subject in &SUBJECTS {
            for kind in [JobKind::DbSync, JobKind::DbClean] {
                *self
                    .counted_before
                    .entry((subject.namespace, kind as usize))
                    .or_default() += env.metrics.jobs_counted(kind, NAME, subject.namespace);
            }
        }
        self.last_restart = env.clock().now();
    }

    /// Checks every invariant once.
    async fn check(&mut self, env: &SimEnv) {
        self.check_secret_material(env).await;
        self.check_mounted_config(env).await;
        self.check_egress(env).await;
        self.check_releases(env).await;
        self.check_job_counts(env);
        self.check_terminating(env).await;
    }

    async fn check_secret_material(&mut self, env: &SimEnv) {
        let material = secret_material(env).await;
        if material.is_empty() {
            return;
        }
        let mut places: Vec<(String, String)> = Vec::new();
        let (log, end) = crate::log_capture::since(self.log_offset);
        places.push(("the operator's log".into(), log));
        self.log_offset = end;
        for subject in &SUBJECTS {
            let Ok(client) = children_client(env, subject) else {
                continue;
            };
            let prefix = format!("{NAME}-config-");
            if let Ok(list) = Api::<Secret>::namespaced(client, subject.namespace)
                .list(&ListParams::default())
                .await
            {
                for secret in list
                    .items
                    .iter()
                    .filter(|s| s.name_any().starts_with(&prefix))
                {
                    let content: String = secret
                        .data
                        .iter()
                        .flatten()
                        .map(|(_, v)| String::from_utf8_lossy(&v.0).into_owned())
                        .collect();
                    places.push((
                        format!("Secret {}/{}", subject.namespace, secret.name_any()),
                        content,
                    ));
                }
            }
        }
        if let Ok(events) = Api::<k8s_openapi::api::events::v1::Event>::all(env.client.clone())
            .list(&ListParams::default())
            .await
        {
            for event in events.items {
                places.push((
                    format!(
                        "event {} about {}",
                        event.reason.clone().unwrap_or_default(),
                        event
                            .regarding
                            .as_ref()
                            .and_then(|r| r.name.clone())
                            .unwrap_or_default()
                    ),
                    event.note.unwrap_or_default(),
                ));
            }
        }
        for kind in ["Barbican", "BarbicanSecretStore"] {
            for subject in &SUBJECTS {
                if let Ok(api) = env.api_of(kind, subject.namespace).await
                    && let Ok(list) = api.list(&ListParams::default()).await
                {
                    for object in list.items {
                        places.push((
                            format!(
                                "status of {kind} {}/{}",
                                subject.namespace,
                                object.name_any()
                            ),
                            object.data["status"].to_string(),
                        ));
                    }
                }
            }
        }
        let leaks: Vec<(String, String)> = places
            .into_iter()
            .filter(|(_, content)| material.iter().any(|m| content.contains(m.as_str())))
            .collect();
        for (place, _) in leaks {
            self.violation(
                env,
                Invariant::NoSecretMaterial,
                &place,
                format!("secret material appears in {place}"),
            );
        }
    }

    async fn check_mounted_config(&mut self, env: &SimEnv) {
        // Deletions since the last step, from each cluster's audit log.
        let mut deleted: Vec<(String, String)> = Vec::new();
        for (site, cluster) in self.sites(env) {
            let mark = self.audit_marks.get(&site).copied().unwrap_or_default();
            for entry in cluster.requests_since(mark) {
                if entry.method == "DELETE"
                    && entry.code < 300
                    && let Some(rest) = entry.path.split('?').next()
                    && let Some((_, tail)) = rest.split_once("/api/v1/namespaces/")
                    && let Some((namespace, name)) = tail.split_once("/secrets/")
                {
                    deleted.push((namespace.to_string(), name.to_string()));
                }
            }
            self.audit_marks.insert(site, cluster.audit_mark());
        }
        for subject in &SUBJECTS {
            let Ok(client) = children_client(env, subject) else {
                continue;
            };
            let deployment = match Api::<Deployment>::namespaced(client.clone(), subject.namespace)
                .get_opt(NAME)
                .await
            {
                Ok(Some(d)) => d,
                _ => continue,
            };
            if deployment.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let Some(now) = mounted_config(&deployment) else {
                continue;
            };
            let before = self.mounted.insert(subject.namespace, now.clone());
            for name in [Some(now.clone()), before].into_iter().flatten() {
                if deleted
                    .iter()
                    .any(|(ns, n)| ns == subject.namespace && *n == name)
                {
                    self.violation(
                        env,
                        Invariant::MountedConfigKept,
                        &format!("{}/{name}", subject.namespace),
                        format!(
                            "the config Secret {}/{name} was deleted while the Deployment mounted it",
                            subject.namespace
                        ),
                    );
                }
            }
            if let Ok(None) = Api::<Secret>::namespaced(client, subject.namespace)
                .get_opt(&now)
                .await
            {
                self.violation(
                    env,
                    Invariant::MountedConfigKept,
                    &format!("{}/{now}", subject.namespace),
                    format!(
                        "the Deployment {}/{NAME} mounts {now}, which does not exist",
                        subject.namespace
                    ),
                );
            }
        }
    }

    async fn check_egress(&mut self, env: &SimEnv) {
        // The ports the valid projections named, from the records and the rendered configs.
        for subject in &SUBJECTS {
            if let Ok(barbican) = env.barbican(subject.namespace, NAME).await {
                let hosts = barbican
                    .status
                    .unwrap_or_default()
                    .projected_secret_store_hosts;
                let allowed = self.allowed_ports.entry(subject.namespace).or_default();
                allowed.extend(hosts.iter().filter_map(|h| url_port(h)));
            }
        }
        for (namespace, ports) in std::mem::take(&mut self.pending_ports) {
            let Some(subject) = SUBJECTS.iter().find(|s| s.namespace == namespace) else {
                continue;
            };
            let allowed = self
                .allowed_ports
                .get(subject.namespace)
                .cloned()
                .unwrap_or_default();
            let outside: Vec<i32> = ports.difference(&allowed).copied().collect();
            if !outside.is_empty() {
                self.violation(
                    env,
                    Invariant::EgressWithinProjection,
                    &namespace,
                    format!(
                        "the NetworkPolicy {namespace}/{NAME} allowed egress to {outside:?}, which no valid projection named (allowed: {allowed:?})"
                    ),
                );
            }
        }
        // Checked at the next step, once the pass that wrote a version has written its record.
        self.pending_ports = std::mem::take(
            &mut *self
                .policy_versions
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
    }

    async fn check_releases(&mut self, env: &SimEnv) {
        for (namespace, release, image) in std::mem::take(&mut self.promotions) {
            let subject = SUBJECTS.iter().find(|s| s.namespace == namespace);
            let site = subject.and_then(|s| s.site).unwrap_or("management");
            let synced = self
                .ledger
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .values()
                .any(|job| {
                    job.site == site
                        && job.namespace == namespace
                        && job.name == format!("{NAME}-db-sync")
                        && job.succeeded
                        && job.image.ends_with(&format!(":{release}"))
                });
            if !synced {
                self.violation(
                    env,
                    Invariant::ReleaseAfterSync,
                    namespace,
                    format!(
                        "the Barbican {namespace}/{NAME} reports installedRelease {release} (image {image:?}) and no db-sync Job on that image succeeded"
                    ),
                );
            }
        }
        for subject in &SUBJECTS {
            let Ok(barbican) = env.barbican(subject.namespace, NAME).await else {
                continue;
            };
            let status = barbican.status.unwrap_or_default();
            let before = self
                .releases
                .insert(subject.namespace, status.installed_release.clone())
                .flatten();
            if let Some(now) = status.installed_release
                && before.as_ref() != Some(&now)
            {
                self.promotions
                    .push((subject.namespace, now, status.installed_image.clone()));
            }
        }
    }

    fn check_job_counts(&mut self, env: &SimEnv) {
        let ledger = self
            .ledger
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for (namespace, kind, counted) in std::mem::take(&mut self.pending_counts) {
            let subject = SUBJECTS.iter().find(|s| s.namespace == namespace);
            let site = subject.and_then(|s| s.site).unwrap_or("management");
            let ran = ledger
                .values()
                .filter(|job| {
                    job.site == site
                        && job.namespace == namespace
                        && (job.succeeded || job.failed)
                        && if kind == JobKind::DbSync as usize {
                            job.name == format!("{NAME}-db-sync")
                        } else {
                            job.name.starts_with(&format!("{NAME}-db-clean-"))
                        }
                })
                .count() as u64;
            if counted > ran {
                let what = if kind == JobKind::DbSync as usize {
                    "db-sync"
                } else {
                    "db-clean"
                };
                self.violation(
                    env,
                    Invariant::JobsCountedOnce,
                    &format!("{namespace}/{what}"),
                    format!(
                        "the operator counted {counted} {what} Jobs for {namespace}/{NAME}, and {ran} finished"
                    ),
                );
            }
        }
        for subject in &SUBJECTS {
            for kind in [JobKind::DbSync, JobKind::DbClean] {
                let counted = env.metrics.jobs_counted(kind, NAME, subject.namespace)
                    + self
                        .counted_before
                        .get(&(subject.namespace, kind as usize))
                        .copied()
                        .unwrap_or_default();
                self.pending_counts
                    .push((subject.namespace, kind as usize, counted));
            }
        }
    }

    async fn check_terminating(&mut self, env: &SimEnv) {
        // The longest the spec holds a deletion: the five-minute window a lost target cluster
        // gets, counted from when this operator process first failed to reach it (a restart
        // starts its own), plus the 30-second requeues and a minute of slack.
        let window = jiff::SignedDuration::from_secs(5 * 60 + 90);
        let now = env.clock().now();
        let mut terminating: Vec<(String, jiff::Timestamp)> = Vec::new();
        for subject in &SUBJECTS {
            for kind in ["Barbican", "BarbicanSecretStore"] {
                let Ok(api) = env.api_of(kind, subject.namespace).await else {
                    continue;
                };
                let Ok(list) = api.list(&ListParams::default()).await else {
                    continue;
                };
                terminating.extend(list.items.into_iter().filter_map(|object| {
                    let since = object.metadata.deletion_timestamp.as_ref()?.0;
                    Some((
                        format!("{kind} {}/{}", subject.namespace, object.name_any()),
                        since,
                    ))
                }));
            }
        }
        for (what, since) in terminating {
            let from = since.max(self.last_restart);
            if now.duration_since(from) > window {
                self.violation(
                    env,
                    Invariant::TerminatingBounded,
                    &what,
                    format!("{what} has been Terminating since {since}, past the spec's window"),
                );
            }
        }
    }
}

/// Whether every example CR is Ready and every Barbican runs its requested release.
async fn all_ready(env: &SimEnv) -> Result<(), Error> {
    examples::all_ready(env, &examples::watched()).await?;
    for subject in &SUBJECTS {
        let barbican = env.barbican(subject.namespace, NAME).await?;
        let installed = barbican.status.and_then(|s| s.installed_release);
        if installed.as_deref() != Some(barbican.spec.open_stack_release.as_str()) {
            return Err(format!(
                "Barbican {}/{NAME} runs {installed:?}, asked for {}",
                subject.namespace, barbican.spec.open_stack_release
            ));
        }
    }
    Ok(())
}

/// Moves virtual time on by `span`, checking the invariants every [`STEP`].
async fn run_for(env: &SimEnv, observer: &mut Observer, span: Duration) {
    let mut passed = Duration::ZERO;
    while passed < span {
        let next = STEP.min(span - passed);
        env.let_time_pass(next).await;
        passed += next;
        observer.check(env).await;
    }
}

/// Does one action of the schedule.
async fn act(env: &mut SimEnv, observer: &mut Observer, action: &Action) -> Result<(), Error> {
    let site = env.site.clone();
    let target = env.target(REGION)?;
    let store_api =
        |namespace: &str| Api::<BarbicanSecretStore>::namespaced(env.client.clone(), namespace);
    let merge = |value: Value| Patch::Merge(value);
    match action {
        Action::ApiFault(rule) => env.cluster.add_fault(rule.parse()?),
        Action::ClearApiFaults => env.cluster.clear_faults(),
        Action::DropWatches => env.cluster.drop_watches(),
        Action::Compact => env.cluster.compact(),
        Action::RestartOperator => {
            observer.before_restart(env);
            env.restart_operator();
        }
        Action::OpenBaoDown | Action::OpenBaoUp => {
            let outage = if *action == Action::OpenBaoDown {
                barbican_fakes::openbao::Outage::Refused
            } else {
                barbican_fakes::openbao::Outage::None
            };
            if let Some(instance) = site.openbao.instance(NAMESPACE, "openbao-instance") {
                instance.set_outage(outage);
            }
        }
        Action::ExternalOpenBaoDown | Action::ExternalOpenBaoUp => {
            if let Some(server) = env.external_openbao("vault") {
                server.set_outage(if *action == Action::ExternalOpenBaoDown {
                    barbican_fakes::openbao::Outage::Refused
                } else {
                    barbican_fakes::openbao::Outage::None
                });
            }
        }
        Action::RevokeSecretId => {
            let secrets = Api::<Secret>::namespaced(env.client.clone(), NAMESPACE);
            if let Ok(Some(secret)) = secrets.get_opt(&format!("{STORE}-approle")).await
                && let Some(id) = secret.data.unwrap_or_default().get("secret-id")
                && let Some(instance) = site.openbao.instance(NAMESPACE, "openbao-instance")
            {
                instance.revoke_secret_id(&String::from_utf8_lossy(&id.0));
            }
        }
        Action::JobsFail | Action::JobsComplete => {
            let rules = if *action == Action::JobsFail {
                vec!["name=*-db-sync:fail".parse::<JobRule>()?]
            } else {
                vec![]
            };
            for cluster in [&env.cluster, &target.site.cluster] {
                cluster.set_controllers(Controllers {
                    jobs: Some(JobRules {
                        rules: rules.clone(),
                        ..JobRules::default()
                    }),
                    ..Controllers::all()
                });
            }
        }
        Action::MariaDbDown => {
            site.mariadb
                .mariadbs
                .hold(
                    NAMESPACE,
                    "openstack-mariadb",
                    "StatefulSetNotReady",
                    "the primary is unreachable",
                )
                .await;
        }
        Action::MariaDbUp => {
            site.mariadb
                .mariadbs
                .release(NAMESPACE, "openstack-mariadb")
                .await
        }
        Action::TargetDown => target.set_outage(true),
        Action::TargetUp => target.set_outage(false),
        Action::ReleaseBump(namespace) => {
            let release = BUMPS
                .iter()
                .find(|(n, _)| n == namespace)
                .map(|(_, r)| *r)
                .ok_or("no bump for that namespace")?;
            Api::<Barbican>::namespaced(env.client.clone(), namespace)
                .patch(
                    NAME,
                    &PatchParams::default(),
                    &merge(
                        json!({"spec": {"openStackRelease": release, "image": {"tag": release}}}),
                    ),
                )
                .await
                .map_err(|e| format!("bumping {namespace}: {e}"))?;
        }
        Action::DefaultOff | Action::DefaultOn => {
            let patch = merge(json!({"spec": {"isDefault": *action == Action::DefaultOn}}));
            // A detached store has nothing to switch; the repair re-applies it whole.
            let _ = store_api(NAMESPACE)
                .patch(STORE, &PatchParams::default(), &patch)
                .await;
        }
        Action::Detach => {
            let _ = store_api(NAMESPACE)
                .delete(STORE, &DeleteParams::default())
                .await;
        }
        Action::Reattach => reattach(env).await?,
        Action::UrlEdit | Action::UrlRestore => {
            let url = match action {
                Action::UrlEdit => UNSERVED_URL,
                _ => BROWNFIELD_URL,
            };
            store_api(LEGACY)
                .patch(
                    BROWNFIELD_STORE,
                    &PatchParams::default(),
                    &merge(json!({"spec": {"openBao": {"url": url}}})),
                )
                .await
                .map_err(|e| format!("editing the brownfield store's URL: {e}"))?;
        }
        Action::Sabotage(sabotage) => sabotage_retried(env, *sabotage).await?,
        Action::Repair => {
            // Every fault's own "off" action; the re-applied store is the default again.
            for undo in [
                Action::ClearApiFaults,
                Action::JobsComplete,
                Action::TargetUp,
                Action::OpenBaoUp,
                Action::ExternalOpenBaoUp,
                Action::MariaDbUp,
                Action::Reattach,
                Action::UrlRestore,
            ] {
                Box::pin(act(env, observer, &undo)).await?;
            }
            delete_failed_db_syncs(env).await;
        }
    }
    Ok(())
}

/// Applies the minimal example's store again (as the default).
async fn reattach(env: &SimEnv) -> Result<(), Error> {
    env.apply_yaml(&examples::example("barbicansecretstore-managed.yaml")?)
        .await
}

/// Deletes every failed db-sync Job, on every cluster.
async fn delete_failed_db_syncs(env: &SimEnv) {
    let Ok(target) = env.target(REGION) else {
        return;
    };
    for subject in &SUBJECTS {
        let client = match subject.site {
            None => env.client.clone(),
            Some(_) => target.client.clone(),
        };
        let jobs = Api::<Job>::namespaced(client, subject.namespace);
        if let Ok(Some(job)) = jobs.get_opt(&format!("{NAME}-db-sync")).await {
            let failed = job
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Failed" && c.status == "True");
            if failed {
                let _ = jobs
                    .delete(&format!("{NAME}-db-sync"), &DeleteParams::background())
                    .await;
            }
        }
    }
}

/// [`sabotage_now`], tried again on failure: the sabotage writes as the operator, so the
/// fault rules the schedule set for the operator's client (a 429 on creates, say) refuse it
/// too, where the operator would have retried. The last error is returned after ten tries.
async fn sabotage_retried(env: &SimEnv, sabotage: Sabotage) -> Result<(), Error> {
    let mut last = Ok(());
    for _ in 0..10 {
        last = sabotage_now(env, sabotage).await;
        if last.is_ok() {
            break;
        }
    }
    last
}

/// Does a deliberate bug on the operator's behalf.
async fn sabotage_now(env: &SimEnv, sabotage: Sabotage) -> Result<(), Error> {
    let operator = env.cluster.client_as(OPERATOR_AGENT);
    match sabotage {
        Sabotage::DeleteMountedConfig => {
            let deployment = Api::<Deployment>::namespaced(operator.clone(), NAMESPACE)
                .get(NAME)
                .await
                .map_err(|e| e.to_string())?;
            let mounted = mounted_config(&deployment).ok_or("no mounted config")?;
            Api::<Secret>::namespaced(operator, NAMESPACE)
                .delete(&mounted, &DeleteParams::default())
                .await
                .map_err(|e| e.to_string())?;
        }
        Sabotage::LeakSecretId => {
            let id = env
                .issued_secret_ids()
                .into_iter()
                .next()
                .ok_or("no secret ID was issued")?;
            let event: k8s_openapi::api::events::v1::Event = serde_json::from_value(json!({
                "metadata": {"name": "barbican.sabotage", "namespace": NAMESPACE},
                "eventTime": env.clock().rfc3339(),
                "reason": "Sabotage", "type": "Normal", "action": "Reconcile",
                "reportingController": "barbican-operator", "reportingInstance": "soak",
                "regarding": {"kind": "Barbican", "name": NAME, "namespace": NAMESPACE},
                "note": format!("minted {id}"),
            }))
            .map_err(|e| e.to_string())?;
            Api::<k8s_openapi::api::events::v1::Event>::namespaced(operator, NAMESPACE)
                .create(&Default::default(), &event)
                .await
                .map_err(|e| e.to_string())?;
        }
        Sabotage::PromoteWithoutSync => {
            Api::<Barbican>::namespaced(operator, NAMESPACE)
                .patch_status(
                    NAME,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"status": {"installedRelease": "2026.2"}})),
                )
                .await
                .map_err(|e| e.to_string())?;
        }
        Sabotage::CountJobTwice => {
            env.metrics
                .job_finished(JobKind::DbSync, NAME, NAMESPACE, true, None);
        }
        Sabotage::WidenEgress => {
            let api = Api::<NetworkPolicy>::namespaced(operator, LEGACY);
            let mut policy = api.get(NAME).await.map_err(|e| e.to_string())?;
            if let Some(spec) = policy.spec.as_mut() {
                let rule: k8s_openapi::api::networking::v1::NetworkPolicyEgressRule =
                    serde_json::from_value(json!({"ports": [{"protocol": "TCP", "port": 9999}]}))
                        .map_err(|e| e.to_string())?;
                spec.egress.get_or_insert_with(Vec::new).push(rule);
            }
            policy.metadata.managed_fields = None;
            api.replace(NAME, &Default::default(), &policy)
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Gives the brownfield Barbican a NetworkPolicy, so egress is checked on a store whose URL
/// can be edited.
async fn restrict_legacy_egress(env: &SimEnv) -> Result<(), Error> {
    Api::<Barbican>::namespaced(env.client.clone(), LEGACY)
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(json!({
                "spec": {"networkPolicy": {"ingress": [{"namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}
                }}]}},
            })),
        )
        .await
        .map_err(|e| format!("adding a NetworkPolicy to {LEGACY}/{NAME}: {e}"))?;
    Ok(())
}

/// Runs one seed: the examples converge, the schedule runs with the invariants checked every
/// [`STEP`], the repairs are made, everything must become Ready within
/// [`Options::settle_within`], then everything is deleted and must be gone within it.
pub async fn run_seed(seed: u64, options: &Options) -> Result<SeedReport, Error> {
    let wall = Instant::now();
    crate::log_capture::install();
    let mut env = SimEnv::start(true).await?;
    env.cluster.seed_faults(seed);
    examples::apply_examples(&env).await?;
    restrict_legacy_egress(&env).await?;
    let mut observer = Observer::start(&env, seed).await?;
    env.eventually(Duration::from_secs(600), || all_ready(&env))
        .await
        .map_err(|e| {
            format!("seed {seed}: the examples did not converge before the faults: {e}")
        })?;
    // One more step so the NetworkPolicies carry the projections' ports.
    env.let_time_pass(Duration::from_secs(30)).await;
    observer.baseline(&env).await?;

    let plan = schedule(seed, options.faults_for, &options.sabotage);
    let mut log = Vec::new();
    let mut now = Duration::ZERO;
    for (at, action) in &plan {
        if *at > now {
            run_for(&env, &mut observer, *at - now).await;
            now = *at;
        }
        log.push(format!("+{}s {action}", at.as_secs()));
        act(&mut env, &mut observer, action).await?;
        observer.check(&env).await;
    }

    let faults_over = env.clock().now();
    let mut converged_after = None;
    let deadline = options.settle_within;
    let mut waited = Duration::ZERO;
    let mut last = String::new();
    while waited < deadline {
        match all_ready(&env).await {
            Ok(()) => {
                converged_after = Some(elapsed(&env, observer.started));
                break;
            }
            Err(e) => last = e,
        }
        run_for(&env, &mut observer, STEP).await;
        waited += STEP;
    }
    if converged_after.is_none() {
        observer.violation(
            &env,
            Invariant::Converges,
            "ready",
            format!(
                "not Ready {}s after the faults stopped: {last}",
                elapsed(&env, faults_over)
            ),
        );
    } else {
        teardown(&env, &mut observer, options.settle_within).await?;
    }
    let virtual_seconds = elapsed(&env, observer.started);
    Ok(SeedReport {
        seed,
        schedule: log,
        violations: observer.violations,
        converged_after,
        virtual_seconds,
        wall: wall.elapsed(),
    })
}

/// Deletes every example CR and waits for all of them to go.
async fn teardown(env: &SimEnv, observer: &mut Observer, within: Duration) -> Result<(), Error> {
    for (kind, namespace, name) in examples::watched() {
        let api = env.api_of(kind, namespace).await?;
        let _ = api.delete(name, &DeleteParams::default()).await;
    }
    let mut waited = Duration::ZERO;
    let mut left = Vec::new();
    while waited < within {
        left.clear();
        for (kind, namespace, name) in examples::watched() {
            if env.get(kind, namespace, name).await?.is_some() {
                left.push(format!("{kind} {namespace}/{name}"));
            }
        }
        if left.is_empty() {
            return Ok(());
        }
        run_for(env, observer, STEP).await;
        waited += STEP;
    }
    observer.violation(
        env,
        Invariant::Converges,
        "deleted",
        format!(
            "still there {}s after deletion: {}",
            within.as_secs(),
            left.join(", ")
        ),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_fixes_its_schedule_and_seeds_differ() {
        let span = Duration::from_secs(900);
        assert_eq!(schedule(7, span, &[]), schedule(7, span, &[]));
        assert_ne!(schedule(7, span, &[]), schedule(8, span, &[]));
        let plan = schedule(7, span, &[]);
        assert_eq!(
            plan.last().map(|(at, a)| (*at, a.clone())),
            Some((span, Action::Repair))
        );
        assert!(plan.windows(2).all(|w| w[0].0 <= w[1].0), "ordered by time");
    }

    #[test]
    fn the_schedules_cover_every_kind_of_fault() {
        let mut seen = BTreeSet::new();
        for seed in 0..20 {
            for (_, action) in schedule(seed, Duration::from_secs(900), &[]) {
                let kind = format!("{action:?}");
                seen.insert(kind.split('(').next().unwrap_or_default().to_string());
            }
        }
        for kind in [
            "ApiFault",
            "ClearApiFaults",
            "DropWatches",
            "Compact",
            "RestartOperator",
            "OpenBaoDown",
            "ExternalOpenBaoDown",
            "RevokeSecretId",
            "JobsFail",
            "MariaDbDown",
            "TargetDown",
            "ReleaseBump",
            "DefaultOff",
            "Detach",
            "UrlEdit",
            "Repair",
        ] {
            assert!(seen.contains(kind), "no schedule has {kind}: {seen:?}");
        }
    }

    #[test]
    fn the_url_edit_undoes_to_the_examples_own_url() {
        let example = examples::example("barbicansecretstore-brownfield.yaml").unwrap();
        assert!(example.contains(&format!("name: {BROWNFIELD_STORE}")));
        assert!(example.contains(&format!("url: {BROWNFIELD_URL}")));
        assert_ne!(url_port(UNSERVED_URL), url_port(BROWNFIELD_URL));
    }

    #[test]
    fn a_release_is_bumped_at_most_once_per_seed() {
        for seed in 0..50 {
            let bumps: Vec<_> = schedule(seed, Duration::from_secs(3600), &[])
                .into_iter()
                .filter_map(|(_, a)| match a {
                    Action::ReleaseBump(ns) => Some(ns),
                    _ => None,
                })
                .collect();
            let distinct: BTreeSet<_> = bumps.iter().collect();
            assert_eq!(distinct.len(), bumps.len(), "seed {seed}: {bumps:?}");
        }
    }

    #[test]
    fn ports_come_from_the_url_or_its_scheme() {
        assert_eq!(url_port("https://vault.example.com:8200"), Some(8200));
        assert_eq!(url_port("https://openbao.openbao.svc/v1"), Some(443));
        assert_eq!(url_port("http://openbao:80/x"), Some(80));
        assert_eq!(url_port("http://openbao"), Some(80));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_seeds_converge_with_no_violation() {
        let options = Options {
            faults_for: Duration::from_secs(8 * 60),
            ..Options::default()
        };
        for seed in [1, 2] {
            let report = run_seed(seed, &options).await.unwrap();
            assert!(
                report.violations.is_empty(),
                "seed {seed}:\n{}\nschedule:\n{}",
                report
                    .violations
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join("\n"),
                report.schedule.join("\n")
            );
            assert!(report.converged_after.is_some());
            assert!(report.schedule.len() > 5, "{:?}", report.schedule);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_injected_bug_is_caught_with_its_seed() {
        let options = Options {
            faults_for: Duration::from_secs(4 * 60),
            sabotage: Sabotage::ALL.to_vec(),
            ..Options::default()
        };
        let report = run_seed(11, &options).await.unwrap();
        for sabotage in Sabotage::ALL {
            let invariant = sabotage.caught_by();
            assert!(
                report
                    .violations
                    .iter()
                    .any(|v| v.invariant == invariant && v.seed == 11),
                "{sabotage:?} was not caught as {invariant:?}: {:#?}",
                report.violations
            );
        }
    }
}
