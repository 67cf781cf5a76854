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

/// Starts a Job that has not started, and finishes it at once when its rule gives no duration.
pub(crate) fn react(
    rules: &JobRules,
    store: &mut Store,
    t: &ResourceType,
    job: &Value,
    timers: &mut Timers,
) {
    if !job["status"]["startTime"].is_null() || job["spec"]["suspend"] == true {
        return;
    }
    let now = store.clock().now();
    let (_, duration) = rules.rule_for(job);
    write_status(
        store,
        t,
        job,
        json!({"startTime": crate::clock::rfc3339(now), "active": 1, "ready": 0,
            "terminating": 0, "uncountedTerminatedPods": {}}),
    );
    let pin = Pin::of(job);
    if duration.is_zero() {
        finish(rules, store, t, &pin, timers);
    } else {
        timers.push((now + signed(duration), Task::JobDone { job: pin }));
    }
}

/// Ends a running Job as its rule says.
pub(crate) fn finish(
    rules: &JobRules,
    store: &mut Store,
    t: &ResourceType,
    pin: &Pin,
    timers: &mut Timers,
) {
    let Some(job) = pin.get(store, t) else {
        return;
    };
    if finished(&job).is_some() {
        return;
    }
    let now = store.clock().now();
    let stamp = crate::clock::rfc3339(now);
    let previous = &job["status"];
    let start = previous["startTime"].clone();
    let status = match rules.rule_for(&job).0 {
        Outcome::Complete => {
            let message = "Reached expected number of succeeded pods";
            json!({
                "startTime": start, "completionTime": stamp, "ready": 0, "terminating": 0,
                "succeeded": job["spec"]["completions"].as_i64().unwrap_or(1),
                "uncountedTerminatedPods": {},
                "conditions": [
                    condition(previous, "SuccessCriteriaMet", "True", "CompletionsReached", message, &stamp, TIMES),
                    condition(previous, "Complete", "True", "CompletionsReached", message, &stamp, TIMES),
                ],
            })
        }
        Outcome::Fail => {
            let message = "Job has reached the specified backoff limit";
            json!({
                "startTime": start, "ready": 0, "terminating": 0,
                "failed": job["spec"]["backoffLimit"].as_i64().unwrap_or(6) + 1,
                "uncountedTerminatedPods": {},
                "conditions": [
                    condition(previous, "FailureTarget", "True", "BackoffLimitExceeded", message, &stamp, TIMES),
                    condition(previous, "Failed", "True", "BackoffLimitExceeded", message, &stamp, TIMES),
                ],
            })
        }
    };
    write_status(store, t, &job, status);
    if !job["spec"]["ttlSecondsAfterFinished"].is_null() {
        let ttl = seconds(&job, "/spec/ttlSecondsAfterFinished", 0);
        timers.push((now + ttl, Task::JobExpired { job: pin.clone() }));
    }
}

/// Deletes a finished Job whose TTL ran out, with its pods.
pub(crate) fn expire(store: &mut Store, t: &ResourceType, pin: &Pin) {
    if pin.get(store, t).is_some() {
        let _ = store.delete(t, &pin.namespace, &pin.name, Propagation::Background, false);
    }
}
