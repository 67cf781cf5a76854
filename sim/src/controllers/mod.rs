//! The simulated control plane: the kube-controller-manager loops an operator relies on,
//! deterministic and switchable one by one.
//!
//! Each controller reacts to the store's events synchronously, inside the write that caused
//! them (the cluster settles every write before answering), and schedules what happens later on
//! the cluster's [`Clock`](crate::clock::Clock): a rollout finishing after its delay, a Job
//! finishing, a CronJob's next run, a finished Job's TTL. On a virtual clock all of that happens
//! while a test advances time, in order.
//!
//! Namespace finalization and garbage collection are the store's own, and always on; so is the
//! Service cluster-IP allocator, which kube-apiserver runs at creation.

pub mod cronjobs;
pub mod deployments;
pub mod hpa;
pub mod jobs;

use std::{collections::BTreeMap, str::FromStr, time::Duration};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::{
    resources::{Registry, ResourceType},
    store::{Event, EventType, Store},
};

/// Which simulated controllers run, and the rules they follow. The default runs none.
#[derive(Clone, Debug, Default)]
pub struct Controllers {
    /// The Deployment controller: rollouts and their status.
    pub deployments: Option<Rollouts>,
    /// The Job controller: each Job completes or fails by rule.
    pub jobs: Option<JobRules>,
    /// The CronJob controller (needs `jobs` to see its Jobs finish).
    pub cronjobs: bool,
    /// The HorizontalPodAutoscaler controller: status, and replicas kept within bounds.
    pub hpa: bool,
    /// Image globs whose pods a [`crate::kubelet`] runs as real processes: a Deployment or
    /// Job with a container image matching one is not ended by rule; its rollout completes
    /// when its pods are ready, and the Job ends when its pod exits.
    pub kubelet_images: Vec<String>,
}

impl Controllers {
    /// Every controller, with rollouts and Jobs finishing at once and Jobs completing.
    pub fn all() -> Self {
        Self {
            deployments: Some(Rollouts::default()),
            jobs: Some(JobRules::default()),
            cronjobs: true,
            hpa: true,
            kubelet_images: Vec::new(),
        }
    }

    /// Whether any controller runs.
    pub fn any(&self) -> bool {
        self.deployments.is_some()
            || self.jobs.is_some()
            || self.cronjobs
            || self.hpa
            || !self.kubelet_images.is_empty()
    }

    /// Whether a kubelet runs the pods of `object` (a Deployment, Job, CronJob or Pod).
    pub fn on_kubelet(&self, object: &Value) -> bool {
        runs_on(&self.kubelet_images, object)
    }
}

/// Whether a container of `object` has an image matching one of `images` (globs).
pub fn runs_on(images: &[String], object: &Value) -> bool {
    !images.is_empty()
        && containers(object).iter().any(|c| {
            c["image"].as_str().is_some_and(|image| {
                images
                    .iter()
                    .any(|glob| crate::selectors::glob_matches(glob, image))
            })
        })
}

/// Which objects a rule applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    /// Every object.
    Any,
    /// Objects whose name matches a glob (`*` for any run of characters).
    Name(String),
    /// Objects carrying the label `key=value`.
    Label(String, String),
    /// Objects with a container (in their pod template) whose image contains this text.
    Image(String),
}

impl Match {
    /// Whether `object` is one of those the rule names.
    pub fn matches(&self, object: &Value) -> bool {
        match self {
            Match::Any => true,
            Match::Name(glob) => crate::selectors::glob_matches(
                glob,
                object["metadata"]["name"].as_str().unwrap_or(""),
            ),
            Match::Label(key, value) => {
                object["metadata"]["labels"][key].as_str() == Some(value.as_str())
            }
            Match::Image(text) => containers(object).iter().any(|c| {
                c["image"]
                    .as_str()
                    .is_some_and(|i| i.contains(text.as_str()))
            }),
        }
    }
}

impl FromStr for Match {
    type Err = String;

    /// `*`, `name=<glob>`, `label=<key>=<value>` or `image=<text>`.
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text == "*" {
            return Ok(Match::Any);
        }
        match text.split_once('=') {
            Some(("name", glob)) if !glob.is_empty() => Ok(Match::Name(glob.into())),
            Some(("image", image)) if !image.is_empty() => Ok(Match::Image(image.into())),
            Some(("label", pair)) => match pair.split_once('=') {
                Some((k, v)) if !k.is_empty() => Ok(Match::Label(k.into(), v.into())),
                _ => Err(format!("{text:?}: a label match is label=<key>=<value>")),
            },
            _ => Err(format!(
                "{text:?}: a match is *, name=<glob>, label=<key>=<value> or image=<text>"
            )),
        }
    }
}

/// The containers of a Deployment, Job, CronJob or Pod.
fn containers(object: &Value) -> Vec<Value> {
    [
        "/spec/template/spec/containers",
        "/spec/jobTemplate/spec/template/spec/containers",
        "/spec/containers",
    ]
    .iter()
    .filter_map(|p| object.pointer(p).and_then(Value::as_array))
    .flatten()
    .cloned()
    .collect()
}

/// How Deployments roll out.
#[derive(Clone, Debug, Default)]
pub struct Rollouts {
    /// How long a rollout takes (zero: done within the write that started it).
    pub delay: Duration,
    /// Deployments whose rollouts never finish: after `progressDeadlineSeconds` their
    /// Progressing condition turns False with `ProgressDeadlineExceeded`.
    pub stuck: Vec<Match>,
}

/// How a Job ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Its pods succeed: `Complete`.
    Complete,
    /// Its pods fail past the backoff limit: `Failed`.
    Fail,
}

/// A rule for the Jobs it matches; the first matching rule wins.
#[derive(Clone, Debug)]
pub struct JobRule {
    /// Which Jobs.
    pub matches: Match,
    /// How they end.
    pub outcome: Outcome,
    /// How long they run (the default when unset).
    pub duration: Option<Duration>,
}

impl FromStr for JobRule {
    type Err = String;

    /// `<match>:<complete|fail>[:<duration>]`, for example `name=*-db-sync:fail:30s`.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut parts = text.split(':');
        let matches = parts.next().unwrap_or("").parse()?;
        let outcome = match parts.next() {
            Some("complete") => Outcome::Complete,
            Some("fail") => Outcome::Fail,
            other => {
                return Err(format!(
                    "{text:?}: the outcome is complete or fail, not {:?}",
                    other.unwrap_or("")
                ));
            }
        };
        let duration = parts
            .next()
            .map(|d| crate::durations::duration("job rule duration", d))
            .transpose()?;
        if parts.next().is_some() {
            return Err(format!(
                "{text:?}: a job rule is <match>:<complete|fail>[:<duration>]"
            ));
        }
        Ok(Self {
            matches,
            outcome,
            duration,
        })
    }
}

/// How Jobs run: by rule, else they complete after the default duration.
#[derive(Clone, Debug, Default)]
pub struct JobRules {
    /// How long a Job runs unless a rule says otherwise (zero: it finishes within the write
    /// that created it).
    pub duration: Duration,
    /// The rules, first match wins.
    pub rules: Vec<JobRule>,
}

impl JobRules {
    /// What becomes of `job` and after how long: the first rule naming it, else success.
    pub fn rule_for(&self, job: &Value) -> (Outcome, Duration) {
        self.rules
            .iter()
            .find(|r| r.matches.matches(job))
            .map(|r| (r.outcome, r.duration.unwrap_or(self.duration)))
            .unwrap_or((Outcome::Complete, self.duration))
    }
}

/// One object, pinned by uid so a timer set for it never acts on a successor of the same name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pin {
    namespace: String,
    name: String,
    uid: String,
}

impl Pin {
    /// The object's namespace, name and uid.
    pub(crate) fn of(object: &Value) -> Self {
        let text = |p: &str| {
            object
                .pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        Self {
            namespace: text("/metadata/namespace"),
            name: text("/metadata/name"),
            uid: text("/metadata/uid"),
        }
    }

    /// The live object, if it is still the one pinned.
    fn get(&self, store: &Store, t: &ResourceType) -> Option<Value> {
        store
            .get(t, &self.namespace, &self.name)
            .ok()
            .filter(|o| o["metadata"]["uid"] == self.uid.as_str())
    }
}

/// Something a controller does later, on the clock.
#[derive(Clone, Debug)]
pub(crate) enum Task {
    RolloutDone { deployment: Pin, generation: i64 },
    RolloutDeadline { deployment: Pin, generation: i64 },
    JobDone { job: Pin },
    JobExpired { job: Pin },
    CronJobDue { cronjob: Pin, at: Timestamp },
}

/// What a kubelet tells the controllers about the pods it runs.
#[derive(Clone, Debug)]
pub(crate) enum PodsReport {
    /// `ready` of the pods of the Deployment's `generation` are ready.
    Deployment {
        deployment: Pin,
        generation: i64,
        ready: i64,
    },
    /// The Job's pods ended it.
    JobEnded { job: Pin, outcome: Outcome },
    /// The Job runs: `active` pods now, `failed` so far.
    JobPods { job: Pin, active: i64, failed: i64 },
}

/// Timers the controllers ask for: when, and what.
pub(crate) type Timers = Vec<(Timestamp, Task)>;

/// The simulated control plane's state inside a cluster.
#[derive(Default)]
pub(crate) struct ControlPlane {
    pub settings: Controllers,
    /// The run each CronJob's pending timer is for, so a superseded timer does nothing.
    cron_next: BTreeMap<(String, String), Timestamp>,
    /// Parsed schedules by their text: a CronJob is synced several times per run.
    schedules: cronjobs::Schedules,
    /// The built-in types the controllers work on, looked up once: built-ins never change.
    kinds: Option<Kinds>,
}

/// The types the controllers work on.
pub(crate) struct Kinds {
    deployments: ResourceType,
    replicasets: ResourceType,
    jobs: ResourceType,
    cronjobs: ResourceType,
    hpas: ResourceType,
}

impl Kinds {
    fn of(registry: &Registry) -> Option<Self> {
        Some(Self {
            deployments: registry.get("apps", "v1", "deployments")?.clone(),
            replicasets: registry.get("apps", "v1", "replicasets")?.clone(),
            jobs: registry.get("batch", "v1", "jobs")?.clone(),
            cronjobs: registry.get("batch", "v1", "cronjobs")?.clone(),
            hpas: registry
                .get("autoscaling", "v2", "horizontalpodautoscalers")?
                .clone(),
        })
    }
}

impl ControlPlane {
    /// Looks the controllers' types up on first use; false when the registry lacks one.
    fn know_kinds(&mut self, registry: &Registry) -> bool {
        if self.kinds.is_none() {
            self.kinds = Kinds::of(registry);
        }
        self.kinds.is_some()
    }

    /// Lets every running controller react to `event`.
    pub fn react(
        &mut self,
        store: &mut Store,
        registry: &Registry,
        event: &Event,
        timers: &mut Timers,
    ) {
        if !self.know_kinds(registry) {
            return;
        }
        let Some(kinds) = &self.kinds else { return };
        let object = &event.object;
        let live =
            event.kind != EventType::Deleted && object["metadata"]["deletionTimestamp"].is_null();
        let key = event.storage_key.as_str();
        if kinds.deployments.stores(key) {
            if live && let Some(rollouts) = &self.settings.deployments {
                let on_kubelet = self.settings.on_kubelet(object);
                deployments::react(rollouts, on_kubelet, store, kinds, object, timers);
            }
            if self.settings.hpa {
                hpa::react_to_target(store, kinds, object);
            }
        } else if kinds.jobs.stores(key) {
            if live && let Some(rules) = &self.settings.jobs {
                let on_kubelet = self.settings.on_kubelet(object);
                jobs::react(rules, on_kubelet, store, &kinds.jobs, object, timers);
            }
            if self.settings.cronjobs {
                cronjobs::react_to_job(store, kinds, object, event.kind == EventType::Deleted);
            }
        } else if kinds.cronjobs.stores(key) && self.settings.cronjobs {
            if live {
                cronjobs::react(
                    &mut self.cron_next,
                    &mut self.schedules,
                    store,
                    kinds,
                    object,
                    timers,
                );
            } else {
                self.cron_next.remove(&key_of(object));
            }
        } else if kinds.hpas.stores(key) && live && self.settings.hpa {
            hpa::react(store, kinds, object);
        }
    }

    /// Takes in what a kubelet says about the pods it runs.
    pub fn pods_report(
        &mut self,
        store: &mut Store,
        registry: &Registry,
        report: PodsReport,
        timers: &mut Timers,
    ) {
        if !self.know_kinds(registry) {
            return;
        }
        let Some(kinds) = &self.kinds else { return };
        match report {
            PodsReport::Deployment {
                deployment,
                generation,
                ready,
            } => deployments::pods_ready(store, kinds, &deployment, generation, ready),
            PodsReport::JobEnded { job, outcome } => {
                jobs::end(store, &kinds.jobs, &job, outcome, timers)
            }
            PodsReport::JobPods {
                job,
                active,
                failed,
            } => jobs::progress(store, &kinds.jobs, &job, active, failed),
        }
    }

    /// Does what a timer was set for.
    pub fn run(&mut self, store: &mut Store, registry: &Registry, task: Task, timers: &mut Timers) {
        if !self.know_kinds(registry) {
            return;
        }
        let Some(kinds) = &self.kinds else { return };
        match task {
            Task::RolloutDone {
                deployment,
                generation,
            } => deployments::finish(store, kinds, &deployment, generation),
            Task::RolloutDeadline {
                deployment,
                generation,
            } => deployments::deadline(store, kinds, &deployment, generation),
            Task::JobDone { job } => {
                if let Some(rules) = &self.settings.jobs {
                    jobs::finish(rules, store, &kinds.jobs, &job, timers);
                }
            }
            Task::JobExpired { job } => jobs::expire(store, &kinds.jobs, &job),
            Task::CronJobDue { cronjob, at } => {
                let key = (cronjob.namespace.clone(), cronjob.name.clone());
                if self.cron_next.get(&key) != Some(&at) || !self.settings.cronjobs {
                    return;
                }
                self.cron_next.remove(&key);
                if let Some(object) = cronjob.get(store, &kinds.cronjobs) {
                    cronjobs::react(
                        &mut self.cron_next,
                        &mut self.schedules,
                        store,
                        kinds,
                        &object,
                        timers,
                    );
                }
            }
        }
    }
}

fn key_of(object: &Value) -> (String, String) {
    let pin = Pin::of(object);
    (pin.namespace, pin.name)
}

/// `object` with `status` replaced, written through the status subresource. A write that
/// changes nothing is no write at all, so controllers reacting to their own writes settle.
fn write_status(store: &mut Store, t: &ResourceType, object: &Value, status: Value) {
    // A status write takes only the status (and the resourceVersion it was read at) from the
    // object sent, so there is no need to copy the rest.
    let next = json!({
        "metadata": {"resourceVersion": object["metadata"]["resourceVersion"]},
        "status": status,
    });
    let pin = Pin::of(object);
    let _ = store.replace(t, &pin.namespace, &pin.name, next, true, false);
}

/// A condition of `type_`, keeping the previous `lastTransitionTime` (and `since` fields)
/// when its status did not change. `times` names the timestamp fields the kind uses.
pub fn condition(
    previous: &Value,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: &str,
    times: &[&str],
) -> Value {
    let old = previous["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_);
    let mut c = json!({"type": type_, "status": status, "reason": reason, "message": message});
    for field in times {
        let keep = *field == "lastTransitionTime" && old.is_some_and(|o| o["status"] == status)
            || *field != "lastTransitionTime"
                && old.is_some_and(|o| o["status"] == status && o["reason"] == reason);
        c[*field] = match old {
            Some(o) if keep => o[*field].clone(),
            _ => json!(now),
        };
    }
    c
}

fn seconds(object: &Value, pointer: &str, default: i64) -> SignedDuration {
    SignedDuration::from_secs(
        object
            .pointer(pointer)
            .and_then(Value::as_i64)
            .unwrap_or(default),
    )
}

fn signed(duration: Duration) -> SignedDuration {
    SignedDuration::try_from(duration).unwrap_or(SignedDuration::MAX)
}
