//! The Deployment controller: a new generation rolls out (at once, after a delay, or never, by
//! rule) and the status says so the way kube-controller-manager writes it: observedGeneration,
//! replica counts, and the Available and Progressing conditions.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Pin, Rollouts, Task, Timers, condition, seconds, signed, write_status};
use crate::{resources::ResourceType, store::Store};

const TIMES: &[&str] = &["lastUpdateTime", "lastTransitionTime"];

/// Starts rolling out a generation the status has not seen yet.
pub(crate) fn react(
    rollouts: &Rollouts,
    store: &mut Store,
    t: &ResourceType,
    deployment: &Value,
    timers: &mut Timers,
) {
    let generation = deployment["metadata"]["generation"].as_i64().unwrap_or(1);
    if deployment["status"]["observedGeneration"].as_i64() == Some(generation) {
        return;
    }
    let now = store.clock().now();
    let pin = Pin::of(deployment);
    if deployment["spec"]["paused"] == true {
        let mut status = deployment["status"].clone();
        if !status.is_object() {
            status = json!({});
        }
        status["observedGeneration"] = json!(generation);
        let progressing = condition(
            &deployment["status"],
            "Progressing",
            "Unknown",
            "DeploymentPaused",
            "Deployment is paused",
            &crate::clock::rfc3339(now),
            TIMES,
        );
        status["conditions"] = json!([progressing]);
        write_status(store, t, deployment, status);
        return;
    }
    if rollouts.stuck.iter().any(|m| m.matches(deployment)) {
        write_status(store, t, deployment, progressing(deployment, store));
        let deadline = seconds(deployment, "/spec/progressDeadlineSeconds", 600);
        timers.push((
            now + deadline,
            Task::RolloutDeadline {
                deployment: pin,
                generation,
            },
        ));
    } else if rollouts.delay.is_zero() {
        write_status(store, t, deployment, complete(deployment, store));
    } else {
        write_status(store, t, deployment, progressing(deployment, store));
        timers.push((
            now + signed(rollouts.delay),
            Task::RolloutDone {
                deployment: pin,
                generation,
            },
        ));
    }
}

/// Finishes the rollout of `generation`, unless a newer one superseded it.
pub(crate) fn finish(store: &mut Store, t: &ResourceType, pin: &Pin, generation: i64) {
    if let Some(deployment) = current(store, t, pin, generation) {
        let status = complete(&deployment, store);
        write_status(store, t, &deployment, status);
    }
}

/// Gives up on the rollout of `generation`: Progressing turns False.
pub(crate) fn deadline(store: &mut Store, t: &ResourceType, pin: &Pin, generation: i64) {
    let Some(deployment) = current(store, t, pin, generation) else {
        return;
    };
    let mut status = deployment["status"].clone();
    let now = store.clock().rfc3339();
    let available = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Available")
        .cloned();
    let progressing = condition(
        &deployment["status"],
        "Progressing",
        "False",
        "ProgressDeadlineExceeded",
        &format!(
            "ReplicaSet \"{}\" has timed out progressing.",
            replica_set(&deployment)
        ),
        &now,
        TIMES,
    );
    status["conditions"] = json!(
        available
            .into_iter()
            .chain([progressing])
            .collect::<Vec<_>>()
    );
    write_status(store, t, &deployment, status);
}

fn current(store: &Store, t: &ResourceType, pin: &Pin, generation: i64) -> Option<Value> {
    pin.get(store, t)
        .filter(|d| d["metadata"]["generation"].as_i64() == Some(generation))
}

fn replicas(deployment: &Value) -> i64 {
    deployment["spec"]["replicas"].as_i64().unwrap_or(1)
}

/// The name of the ReplicaSet for the current pod template, as the controller derives it.
fn replica_set(deployment: &Value) -> String {
    let digest = Sha256::digest(deployment["spec"]["template"].to_string().as_bytes());
    let hash: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{hash}",
        deployment["metadata"]["name"].as_str().unwrap_or("")
    )
}

/// Mid-rollout: the new ReplicaSet has no ready pods yet; the old ones still serve.
fn progressing(deployment: &Value, store: &Store) -> Value {
    let now = store.clock().rfc3339();
    let previous = &deployment["status"];
    let wanted = replicas(deployment);
    let available = previous["availableReplicas"].as_i64().unwrap_or(0);
    let generation = deployment["metadata"]["generation"].as_i64().unwrap_or(1);
    let (a_status, a_reason, a_message) = if available >= wanted {
        (
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
        )
    } else {
        (
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
        )
    };
    json!({
        "observedGeneration": generation,
        "replicas": wanted.max(available),
        "updatedReplicas": 0,
        "readyReplicas": previous["readyReplicas"].as_i64().unwrap_or(0),
        "availableReplicas": available,
        "unavailableReplicas": (wanted - available).max(0),
        "conditions": [
            condition(previous, "Available", a_status, a_reason, a_message, &now, TIMES),
            condition(previous, "Progressing", "True", "ReplicaSetUpdated",
                &format!("ReplicaSet \"{}\" is progressing.", replica_set(deployment)), &now, TIMES),
        ],
    })
}

/// Rolled out: every replica updated, ready and available.
fn complete(deployment: &Value, store: &Store) -> Value {
    let now = store.clock().rfc3339();
    let previous = &deployment["status"];
    let wanted = replicas(deployment);
    let generation = deployment["metadata"]["generation"].as_i64().unwrap_or(1);
    json!({
        "observedGeneration": generation,
        "replicas": wanted,
        "updatedReplicas": wanted,
        "readyReplicas": wanted,
        "availableReplicas": wanted,
        "conditions": [
            condition(previous, "Available", "True", "MinimumReplicasAvailable",
                "Deployment has minimum availability.", &now, TIMES),
            condition(previous, "Progressing", "True", "NewReplicaSetAvailable",
                &format!("ReplicaSet \"{}\" has successfully progressed.", replica_set(deployment)), &now, TIMES),
        ],
    })
}
