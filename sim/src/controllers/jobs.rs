//! The Job controller: a Job starts when created (unless suspended), runs for the duration its
//! rule gives, then completes or fails as the rule says, with the status fields and conditions
//! kube-controller-manager writes. The TTL-after-finished controller deletes it later if asked.

use serde_json::{Value, json};

use super::{JobRules, Outcome, Pin, Task, Timers, condition, seconds, signed, write_status};
use crate::{resources::ResourceType, store::Propagation, store::Store};

const TIMES: &[&str] = &["lastProbeTime", "lastTransitionTime"];

/// Whether the Job has finished, and how.
pub fn finished(job: &Value) -> Option<Outcome> {
    let conditions = job["status"]["conditions"].as_array()?;
    let holds = |t: &str| {
        conditions
            .iter()
            .any(|c| c["type"] == t && c["status"] == "True")
    };
    if holds("Complete") {
        Some(Outcome::Complete)
    } else if holds("Failed") {
        Some(Outcome::Fail)
    } else {
        None
    }
}

/// Starts a Job that has not started; one whose rule gives no duration finishes in the same
/// status write. A Job whose pod a kubelet runs only starts: its pod ends it.
pub(crate) fn react(
    rules: &JobRules,
    on_kubelet: bool,
    store: &mut Store,
    t: &ResourceType,
    job: &Value,
    timers: &mut Timers,
) {
    if !job["status"]["startTime"].is_null() || job["spec"]["suspend"] == true {
        return;
    }
    let now = store.clock().now();
    let (outcome, duration) = rules.rule_for(job);
    let pin = Pin::of(job);
    if duration.is_zero() && !on_kubelet {
        write_status(
            store,
            t,
            job,
            ended(job, outcome, &crate::clock::rfc3339(now)),
        );
        expire_later(job, &pin, now, timers);
        return;
    }
    write_status(
        store,
        t,
        job,
        json!({"startTime": crate::clock::rfc3339(now), "active": 1, "ready": 0,
            "terminating": 0, "uncountedTerminatedPods": {}}),
    );
    if !on_kubelet {
        timers.push((now + signed(duration), Task::JobDone { job: pin }));
    }
}

/// A running Job's pod counts, as its pods come and fail (a kubelet's report).
pub(crate) fn progress(store: &mut Store, t: &ResourceType, pin: &Pin, active: i64, failed: i64) {
    let Some(job) = pin.get(store, t) else {
        return;
    };
    if finished(&job).is_some() {
        return;
    }
    let mut status = job["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    status["active"] = json!(active);
    if failed > 0 {
        status["failed"] = json!(failed);
    }
    write_status(store, t, &job, status);
}

/// Ends a Job with `outcome`: as its pods did (a kubelet's report) or its rule says.
pub(crate) fn end(
    store: &mut Store,
    t: &ResourceType,
    pin: &Pin,
    outcome: Outcome,
    timers: &mut Timers,
) {
    let Some(job) = pin.get(store, t) else {
        return;
    };
    if finished(&job).is_some() {
        return;
    }
    let now = store.clock().now();
    write_status(
        store,
        t,
        &job,
        ended(&job, outcome, &crate::clock::rfc3339(now)),
    );
    expire_later(&job, pin, now, timers);
}

/// Ends a running Job as its rule says.
pub(crate) fn finish(
    rules: &JobRules,
    store: &mut Store,
    t: &ResourceType,
    pin: &Pin,
    timers: &mut Timers,
) {
    if let Some(job) = pin.get(store, t) {
        end(store, t, pin, rules.rule_for(&job).0, timers);
    }
}

/// The status of a Job that ended at `now` (started then too, if it had not started).
pub fn ended(job: &Value, outcome: Outcome, now: &str) -> Value {
    let previous = &job["status"];
    let start = match &previous["startTime"] {
        Value::Null => json!(now),
        start => start.clone(),
    };
    match outcome {
        Outcome::Complete => {
            let message = "Reached expected number of succeeded pods";
            let mut status = json!({
                "startTime": start, "completionTime": now, "ready": 0, "terminating": 0,
                "succeeded": job["spec"]["completions"].as_i64().unwrap_or(1),
                "uncountedTerminatedPods": {},
                "conditions": [
                    condition(previous, "SuccessCriteriaMet", "True", "CompletionsReached", message, now, TIMES),
                    condition(previous, "Complete", "True", "CompletionsReached", message, now, TIMES),
                ],
            });
            // The pods that failed before one succeeded stay counted, as the Job controller
            // keeps them (`kubectl describe job` shows "1 Succeeded / 2 Failed").
            if let Some(failed) = previous["failed"].as_i64().filter(|n| *n > 0) {
                status["failed"] = json!(failed);
            }
            status
        }
        Outcome::Fail => {
            let message = "Job has reached the specified backoff limit";
            json!({
                "startTime": start, "ready": 0, "terminating": 0,
                "failed": job["spec"]["backoffLimit"].as_i64().unwrap_or(6) + 1,
                "uncountedTerminatedPods": {},
                "conditions": [
                    condition(previous, "FailureTarget", "True", "BackoffLimitExceeded", message, now, TIMES),
                    condition(previous, "Failed", "True", "BackoffLimitExceeded", message, now, TIMES),
                ],
            })
        }
    }
}

/// Sets the TTL-after-finished timer of a Job that just ended.
fn expire_later(job: &Value, pin: &Pin, now: jiff::Timestamp, timers: &mut Timers) {
    if !job["spec"]["ttlSecondsAfterFinished"].is_null() {
        let ttl = seconds(job, "/spec/ttlSecondsAfterFinished", 0);
        timers.push((now + ttl, Task::JobExpired { job: pin.clone() }));
    }
}

/// Deletes a finished Job whose TTL ran out, with its pods.
pub(crate) fn expire(store: &mut Store, t: &ResourceType, pin: &Pin) {
    if pin.get(store, t).is_some() {
        let _ = store.delete(t, &pin.namespace, &pin.name, Propagation::Background, false);
    }
}
