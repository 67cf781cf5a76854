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
    api::{Barbican, BarbicanSecretStore, names::mounted_config},
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

mod actions;
mod observer;
pub use self::observer::url_port;
use self::{actions::*, observer::*};

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
/// The namespace where team B's objects take every child name of the minimal example
/// (Barbican [`NAME`] with the store [`STORE`]) before it is applied: the soak's proof that
/// no fault, restart, edit or deletion makes the operator touch an object it does not own.
pub const NEIGHBOURS: &str = "neighbours";
/// The brownfield example's store.
pub const BROWNFIELD_STORE: &str = "vault-legacy";
/// The URL the brownfield example's store names.
pub const BROWNFIELD_URL: &str = "https://vault.example.com:8200";
/// Where [`Action::UrlEdit`] points it: a port no projection has named.
pub const UNSERVED_URL: &str = "https://vault-dr.example.com:8300";

/// The release each example Barbican is bumped to, one step past the example's.
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
    /// Puts the operator's owner labels on team B's Service in [`NEIGHBOURS`].
    TakeOverNeighbour,
}

impl Sabotage {
    /// Every sabotage.
    pub const ALL: [Sabotage; 6] = [
        Sabotage::DeleteMountedConfig,
        Sabotage::LeakSecretId,
        Sabotage::PromoteWithoutSync,
        Sabotage::CountJobTwice,
        Sabotage::WidenEgress,
        Sabotage::TakeOverNeighbour,
    ];

    /// The invariant that must catch it.
    pub fn caught_by(self) -> Invariant {
        match self {
            Sabotage::DeleteMountedConfig => Invariant::MountedConfigKept,
            Sabotage::LeakSecretId => Invariant::NoSecretMaterial,
            Sabotage::PromoteWithoutSync => Invariant::ReleaseAfterSync,
            Sabotage::CountJobTwice => Invariant::JobsCountedOnce,
            Sabotage::WidenEgress => Invariant::EgressWithinProjection,
            Sabotage::TakeOverNeighbour => Invariant::ForeignObjectsUntouched,
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
    /// Team B's objects under every child name of the Barbican in [`NEIGHBOURS`] are never
    /// modified or deleted, and that Barbican reports the names taken.
    ForeignObjectsUntouched,
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

/// Runs one seed: the examples converge, the schedule runs with the invariants checked every
/// [`STEP`], the repairs are made, everything must become Ready within
/// [`Options::settle_within`], then everything is deleted and must be gone within it.
pub async fn run_seed(seed: u64, options: &Options) -> Result<SeedReport, Error> {
    let wall = Instant::now();
    crate::log_capture::install();
    let mut env = SimEnv::start(true).await?;
    env.cluster.seed_faults(seed);
    examples::apply_examples(&env).await?;
    let neighbours = plant_neighbours(&env).await?;
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
        // The neighbours' Barbican too must have reported the names taken: a pass that met a
        // fault before the name was on the error backoff when the faults stopped.
        let settled = match all_ready(&env).await {
            Ok(()) => names_taken_reported(&env).await,
            Err(e) => Err(e),
        };
        match settled {
            Ok(()) => {
                converged_after = Some(elapsed(&env, observer.started));
                break;
            }
            Err(e) => last = e,
        }
        run_for(&env, &mut observer, STEP).await;
        waited += STEP;
    }
    check_neighbours(&env, &mut observer, &neighbours, true).await?;
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
        check_neighbours(&env, &mut observer, &neighbours, false).await?;
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

/// The CRs of the [`NEIGHBOURS`] namespace.
fn neighbour_crs() -> [(&'static str, &'static str, &'static str); 2] {
    [
        ("BarbicanSecretStore", NEIGHBOURS, STORE),
        ("Barbican", NEIGHBOURS, NAME),
    ]
}

/// Gives [`NEIGHBOURS`] the minimal example's prerequisites, team B's objects under every
/// child name of its Barbican and store, then the example itself.
async fn plant_neighbours(env: &SimEnv) -> Result<Vec<crate::neighbours::Neighbour>, Error> {
    use crate::{examples::in_namespace, neighbours, sim_env::MINIMAL_PREREQUISITES};
    env.apply_yaml(&in_namespace(MINIMAL_PREREQUISITES, NEIGHBOURS))
        .await?;
    let planted =
        neighbours::plant(env, NEIGHBOURS, &neighbours::child_names(NAME, &[STORE])).await?;
    env.apply_yaml(&in_namespace(
        &examples::example("barbicansecretstore-managed.yaml")?,
        NEIGHBOURS,
    ))
    .await?;
    env.apply_yaml(&in_namespace(
        &examples::example("barbican.yaml")?,
        NEIGHBOURS,
    ))
    .await?;
    Ok(planted)
}

/// [`Invariant::ForeignObjectsUntouched`]: team B's objects are as they were made, and (while
/// the Barbican is there, `live`) it reports a name taken.
async fn check_neighbours(
    env: &SimEnv,
    observer: &mut Observer,
    planted: &[crate::neighbours::Neighbour],
    live: bool,
) -> Result<(), Error> {
    let touched = crate::neighbours::touched(env, planted).await?;
    if !touched.is_empty() {
        observer.violation(
            env,
            Invariant::ForeignObjectsUntouched,
            "neighbours",
            touched.join("; "),
        );
    }
    if live && let Err(missing) = names_taken_reported(env).await {
        observer.violation(
            env,
            Invariant::ForeignObjectsUntouched,
            "neighbours-reported",
            missing,
        );
    }
    Ok(())
}

/// Whether the Barbican in [`NEIGHBOURS`] reports a name taken; the error lists its
/// conditions.
async fn names_taken_reported(env: &SimEnv) -> Result<(), Error> {
    let barbican = env.barbican(NEIGHBOURS, NAME).await?;
    let conditions = barbican.status.map(|s| s.conditions).unwrap_or_default();
    if conditions.iter().any(|c| c.reason == "NameTaken") {
        return Ok(());
    }
    let seen: Vec<String> = conditions
        .iter()
        .map(|c| format!("{} {} {}", c.type_, c.status, c.reason))
        .collect();
    Err(format!(
        "Barbican {NEIGHBOURS}/{NAME} reports no NameTaken condition: {}",
        seen.join(", ")
    ))
}

/// Deletes every example CR and waits for all of them to go.
async fn teardown(env: &SimEnv, observer: &mut Observer, within: Duration) -> Result<(), Error> {
    for (kind, namespace, name) in examples::watched().into_iter().chain(neighbour_crs()) {
        let api = env.api_of(kind, namespace).await?;
        let _ = api.delete(name, &DeleteParams::default()).await;
    }
    let mut waited = Duration::ZERO;
    let mut left = Vec::new();
    while waited < within {
        left.clear();
        for (kind, namespace, name) in examples::watched().into_iter().chain(neighbour_crs()) {
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
