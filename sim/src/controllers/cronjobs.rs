//! The CronJob controller on the cluster's clock: the schedule (five fields or a descriptor,
//! in `spec.timeZone` or UTC), `suspend`, the concurrency policy, `startingDeadlineSeconds`,
//! `lastScheduleTime` and `lastSuccessfulTime`, the active list, and the job history limits.
//!
//! Like kube-controller-manager, a CronJob that missed runs (it was suspended, or created
//! after a due time passed) starts the most recent missed run when next synced, unless that run
//! is older than `startingDeadlineSeconds`.

use std::collections::BTreeMap;

use croner::{
    Cron,
    parser::{CronParser, Seconds, Year},
};
use jiff::{SignedDuration, Timestamp, tz::TimeZone};
use serde_json::{Value, json};

use super::{Kinds, Pin, Task, Timers, jobs, write_status};
use crate::{
    clock::rfc3339,
    controllers::Outcome,
    store::{Propagation, Store},
};

/// A parsed CronJob schedule.
pub enum Schedule {
    /// Five cron fields (descriptors such as `@daily` are rewritten to them).
    Cron(Box<Cron>),
    /// `@every <duration>`.
    Every(SignedDuration),
}

impl Schedule {
    /// Parses a schedule as Kubernetes accepts it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if let Some(every) = text.strip_prefix("@every ") {
            let duration: SignedDuration = every
                .trim()
                .parse::<jiff::Span>()
                .ok()
                .and_then(|s| SignedDuration::try_from(s).ok())
                .or_else(|| go_duration(every.trim()))
                .filter(|d| d.is_positive())
                .ok_or_else(|| format!("{every:?} is not a duration"))?;
            return Ok(Schedule::Every(duration));
        }
        CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build()
            .parse(text)
            .map(|c| Schedule::Cron(Box::new(c)))
            .map_err(|e| format!("{text:?}: {e}"))
    }

    /// The first run strictly after `after`, counting `@every` from `anchor`.
    pub fn next_after(
        &self,
        after: Timestamp,
        anchor: Timestamp,
        tz: &TimeZone,
    ) -> Option<Timestamp> {
        match self {
            Schedule::Cron(cron) => cron
                .find_next_occurrence(&after.to_zoned(tz.clone()), false)
                .ok()
                .map(|z| z.timestamp()),
            Schedule::Every(step) => {
                let elapsed = after.duration_since(anchor).as_secs().max(0);
                let k = elapsed / step.as_secs().max(1) + 1;
                Some(anchor + *step * i32::try_from(k).ok()?)
            }
        }
    }

    /// The latest run in `(after, until]`, if any.
    pub fn latest_between(
        &self,
        after: Timestamp,
        until: Timestamp,
        anchor: Timestamp,
        tz: &TimeZone,
    ) -> Option<Timestamp> {
        let latest = match self {
            Schedule::Cron(cron) => cron
                .find_previous_occurrence(&until.to_zoned(tz.clone()), true)
                .ok()
                .map(|z| z.timestamp())?,
            Schedule::Every(step) => {
                let elapsed = until.duration_since(anchor).as_secs();
                if elapsed < 0 {
                    return None;
                }
                anchor + *step * i32::try_from(elapsed / step.as_secs().max(1)).ok()?
            }
        };
        (latest > after).then_some(latest)
    }
}

/// Parsed schedules by their text.
pub(crate) type Schedules = BTreeMap<String, std::sync::Arc<Schedule>>;

fn parsed(schedules: &mut Schedules, text: &str) -> Option<std::sync::Arc<Schedule>> {
    if let Some(known) = schedules.get(text) {
        return Some(known.clone());
    }
    let schedule = std::sync::Arc::new(Schedule::parse(text).ok()?);
    schedules.insert(text.to_string(), schedule.clone());
    Some(schedule)
}

/// Go's duration syntax as `@every` takes it (`1h30m`, `90s`, `5m`).
fn go_duration(text: &str) -> Option<SignedDuration> {
    let mut total = 0i64;
    for (amount, unit) in crate::durations::terms(text)? {
        let seconds: i64 = match unit {
            "h" => 3600,
            "m" => 60,
            "s" => 1,
            _ => return None,
        };
        total += i64::try_from(amount).ok()? * seconds;
    }
    Some(SignedDuration::from_secs(total))
}

fn time(object: &Value, pointer: &str) -> Option<Timestamp> {
    object.pointer(pointer)?.as_str()?.parse().ok()
}

/// Runs what is due and sets the timer for the next run.
pub(crate) fn react(
    next_runs: &mut BTreeMap<(String, String), Timestamp>,
    schedules: &mut Schedules,
    store: &mut Store,
    kinds: &Kinds,
    cronjob: &Value,
    timers: &mut Timers,
) {
    let Some(schedule) = parsed(
        schedules,
        cronjob["spec"]["schedule"].as_str().unwrap_or(""),
    ) else {
        return;
    };
    let tz = cronjob["spec"]["timeZone"]
        .as_str()
        .and_then(|name| TimeZone::get(name).ok())
        .unwrap_or(TimeZone::UTC);
    let Some(created) = time(cronjob, "/metadata/creationTimestamp") else {
        return;
    };
    let last = time(cronjob, "/status/lastScheduleTime").unwrap_or(created);
    let now = store.clock().now();
    let suspended = cronjob["spec"]["suspend"] == true;
    if !suspended && let Some(due) = schedule.latest_between(last, now, created, &tz) {
        let deadline = cronjob["spec"]["startingDeadlineSeconds"].as_i64();
        let too_late =
            deadline.is_some_and(|d| now.duration_since(due) > SignedDuration::from_secs(d));
        if !too_late {
            start(store, kinds, cronjob, due);
        }
    }
    let pin = Pin::of(cronjob);
    let key = (pin.namespace.clone(), pin.name.clone());
    match schedule.next_after(now, created, &tz) {
        Some(next) if next_runs.get(&key) != Some(&next) => {
            next_runs.insert(key, next);
            timers.push((
                next,
                Task::CronJobDue {
                    cronjob: pin,
                    at: next,
                },
            ));
        }
        _ => {}
    }
}

/// The active Jobs of a CronJob that still exist and have not finished.
fn active(store: &Store, kinds: &Kinds, cronjob: &Value) -> Vec<Value> {
    let namespace = cronjob["metadata"]["namespace"].as_str().unwrap_or("");
    cronjob["status"]["active"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| {
            store
                .get(&kinds.jobs, namespace, r["name"].as_str().unwrap_or(""))
                .is_ok_and(|j| j["metadata"]["uid"] == r["uid"] && jobs::finished(&j).is_none())
        })
        .cloned()
        .collect()
}

/// Starts the run scheduled for `at`, as the concurrency policy allows.
fn start(store: &mut Store, kinds: &Kinds, cronjob: &Value, at: Timestamp) {
    let namespace = cronjob["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let name = cronjob["metadata"]["name"].as_str().unwrap_or("");
    let mut running = active(store, kinds, cronjob);
    match cronjob["spec"]["concurrencyPolicy"].as_str() {
        Some("Forbid") if !running.is_empty() => return,
        Some("Replace") => {
            for r in running.drain(..) {
                let _ = store.delete(
                    &kinds.jobs,
                    &namespace,
                    r["name"].as_str().unwrap_or(""),
                    Propagation::Background,
                    false,
                );
            }
        }
        _ => {}
    }
    let template = &cronjob["spec"]["jobTemplate"];
    let mut annotations = template["metadata"]["annotations"].clone();
    if !annotations.is_object() {
        annotations = json!({});
    }
    annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"] = json!(rfc3339(at));
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {
            // kube-controller-manager names a run by its scheduled time in minutes.
            "name": format!("{name}-{}", at.as_second() / 60),
            "labels": template["metadata"]["labels"],
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": name,
                "uid": cronjob["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": template["spec"],
    });
    // Whatever the Job's own creation set off (a Job finishing at once) has been stored by
    // now; read the CronJob again so its status reflects it.
    let Ok(created) = store.create(&kinds.jobs, &namespace, job, false) else {
        return;
    };
    let Ok(mut current) = store.get(&kinds.cronjobs, &namespace, name) else {
        return;
    };
    let mut status = current["status"].take();
    if !status.is_object() {
        status = json!({});
    }
    running.push(
        json!({"apiVersion": "batch/v1", "kind": "Job", "name": created["metadata"]["name"],
        "namespace": namespace, "uid": created["metadata"]["uid"],
        "resourceVersion": created["metadata"]["resourceVersion"]}),
    );
    status["active"] = json!(running);
    status["lastScheduleTime"] = json!(rfc3339(at));
    write_status(store, &kinds.cronjobs, &current, status);
}

/// Follows a CronJob's Jobs: drops finished or deleted ones from `active`, records the last
/// success, and deletes finished Jobs beyond the history limits, oldest first.
pub(crate) fn react_to_job(store: &mut Store, kinds: &Kinds, job: &Value, deleted: bool) {
    let Some(owner) = job["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["controller"] == true && r["kind"] == "CronJob")
    else {
        return;
    };
    let outcome = jobs::finished(job);
    if !deleted && outcome.is_none() {
        return;
    }
    let namespace = job["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let Ok(cronjob) = store.get(
        &kinds.cronjobs,
        &namespace,
        owner["name"].as_str().unwrap_or(""),
    ) else {
        return;
    };
    if cronjob["metadata"]["uid"] != owner["uid"] {
        return;
    }
    let mut status = cronjob["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    let uid = &job["metadata"]["uid"];
    if let Some(active) = status["active"].as_array_mut() {
        active.retain(|r| &r["uid"] != uid);
        if active.is_empty()
            && let Some(status) = status.as_object_mut()
        {
            status.remove("active");
        }
    }
    if outcome == Some(Outcome::Complete)
        && let Some(done) = time(job, "/status/completionTime")
        && time(&status, "/lastSuccessfulTime").is_none_or(|t| t < done)
    {
        status["lastSuccessfulTime"] = json!(rfc3339(done));
    }
    write_status(store, &kinds.cronjobs, &cronjob, status);
    if !deleted {
        prune(store, kinds, &cronjob, &namespace);
    }
}

fn prune(store: &mut Store, kinds: &Kinds, cronjob: &Value, namespace: &str) {
    let uid = &cronjob["metadata"]["uid"];
    let mut finished: Vec<(Outcome, String, String)> = store
        .owned_by(&kinds.jobs, uid.as_str().unwrap_or_default())
        .into_iter()
        .filter(|j| j["metadata"]["namespace"].as_str() == Some(namespace))
        .filter_map(|j| {
            let started = j["status"]["startTime"]
                .as_str()
                .or(j["metadata"]["creationTimestamp"].as_str())
                .unwrap_or("")
                .to_string();
            let name = j["metadata"]["name"].as_str()?.to_string();
            Some((jobs::finished(&j)?, started, name))
        })
        .collect();
    finished.sort_by(|a, b| (&a.1, &a.2).cmp(&(&b.1, &b.2)));
    for (outcome, pointer, default) in [
        (Outcome::Complete, "/spec/successfulJobsHistoryLimit", 3),
        (Outcome::Fail, "/spec/failedJobsHistoryLimit", 1),
    ] {
        let limit = cronjob
            .pointer(pointer)
            .and_then(Value::as_u64)
            .unwrap_or(default) as usize;
        let of_kind: Vec<&String> = finished
            .iter()
            .filter(|f| f.0 == outcome)
            .map(|f| &f.2)
            .collect();
        for name in of_kind.iter().take(of_kind.len().saturating_sub(limit)) {
            let _ = store.delete(&kinds.jobs, namespace, name, Propagation::Background, false);
        }
    }
}
