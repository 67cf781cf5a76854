//! The Deployment controller: a new generation rolls out (at once, after a delay, or never, by
//! rule) and the status says so the way kube-controller-manager writes it: observedGeneration,
//! replica counts, and the Available and Progressing conditions. Each pod template a
//! Deployment has had is a ReplicaSet it controls, numbered by the `deployment.kubernetes.io/
//! revision` annotation, so `kubectl rollout history` lists them and `kubectl rollout undo`
//! brings one back (as the newest revision, under its old name).

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Kinds, Pin, Rollouts, Task, Timers, condition, seconds, signed, write_status};
use crate::store::Store;

/// The annotation numbering a Deployment's revisions, on the Deployment and its ReplicaSets.
pub const REVISION: &str = "deployment.kubernetes.io/revision";
/// The label telling a ReplicaSet's pods from another revision's.
const TEMPLATE_HASH: &str = "pod-template-hash";
/// How many old ReplicaSets a Deployment keeps when it does not say (`revisionHistoryLimit`).
const HISTORY: usize = 10;

const TIMES: &[&str] = &["lastUpdateTime", "lastTransitionTime"];

/// Starts rolling out a generation the status has not seen yet. The rollout of a Deployment
/// whose pods a kubelet runs (`on_kubelet`) progresses until the kubelet reports its pods
/// ready ([`pods_ready`]), within the progress deadline.
pub(crate) fn react(
    rollouts: &Rollouts,
    on_kubelet: bool,
    store: &mut Store,
    kinds: &Kinds,
    deployment: &Value,
    timers: &mut Timers,
) {
    let t = &kinds.deployments;
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
    // The revision's ReplicaSet first; the Deployment, read again, then carries its number.
    let Some(deployment) = &roll_replica_sets(store, kinds, deployment) else {
        return;
    };
    if on_kubelet || rollouts.stuck.iter().any(|m| m.matches(deployment)) {
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
        replica_sets_rolled_out(store, kinds, deployment);
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
pub(crate) fn finish(store: &mut Store, kinds: &Kinds, pin: &Pin, generation: i64) {
    let t = &kinds.deployments;
    if let Some(deployment) = current(store, t, pin, generation) {
        let status = complete(&deployment, store);
        write_status(store, t, &deployment, status);
        replica_sets_rolled_out(store, kinds, &deployment);
    }
}

/// Takes in how many of the pods of `generation` a kubelet finds ready: all of them finish the
/// rollout; fewer leave it progressing (or, once rolled out, unavailable).
pub(crate) fn pods_ready(store: &mut Store, kinds: &Kinds, pin: &Pin, generation: i64, ready: i64) {
    let t = &kinds.deployments;
    let Some(deployment) = current(store, t, pin, generation) else {
        return;
    };
    if ready >= replicas(&deployment) {
        let status = complete(&deployment, store);
        write_status(store, t, &deployment, status);
        replica_sets_rolled_out(store, kinds, &deployment);
        return;
    }
    let mut seen = deployment.clone();
    seen["status"]["readyReplicas"] = json!(ready);
    seen["status"]["availableReplicas"] = json!(ready);
    let status = progressing(&seen, store);
    write_status(store, t, &deployment, status);
}

/// Gives up on the rollout of `generation`: Progressing turns False.
pub(crate) fn deadline(store: &mut Store, kinds: &Kinds, pin: &Pin, generation: i64) {
    let t = &kinds.deployments;
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

fn current(
    store: &Store,
    t: &crate::resources::ResourceType,
    pin: &Pin,
    generation: i64,
) -> Option<Value> {
    pin.get(store, t)
        .filter(|d| d["metadata"]["generation"].as_i64() == Some(generation))
}

fn replicas(deployment: &Value) -> i64 {
    deployment["spec"]["replicas"].as_i64().unwrap_or(1)
}

/// The `pod-template-hash` of a pod template: of the template without that label, so a
/// template brought back from an old ReplicaSet hashes as it did then. kube-controller-manager
/// hashes the decoded template, where a `null` is no field at all (`kubectl rollout undo`
/// sends `creationTimestamp: null`), so nulls are left out here too.
fn template_hash(template: &Value) -> String {
    let mut template = template.clone();
    if let Some(labels) = template["metadata"]["labels"].as_object_mut() {
        labels.remove(TEMPLATE_HASH);
    }
    without_nulls(&mut template);
    let digest = Sha256::digest(template.to_string().as_bytes());
    digest.iter().take(5).map(|b| format!("{b:02x}")).collect()
}

fn without_nulls(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.retain(|_, v| !v.is_null());
            fields.values_mut().for_each(without_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(without_nulls),
        _ => {}
    }
}

/// The name of the ReplicaSet for the current pod template, as the controller derives it.
fn replica_set(deployment: &Value) -> String {
    replica_set_of(deployment, &template_hash(&deployment["spec"]["template"]))
}

/// The name of `deployment`'s ReplicaSet for the template hashing to `hash`.
fn replica_set_of(deployment: &Value, hash: &str) -> String {
    format!(
        "{}-{hash}",
        deployment["metadata"]["name"].as_str().unwrap_or("")
    )
}

/// A ReplicaSet's revision number (0 when it has none).
fn revision(object: &Value) -> u64 {
    object["metadata"]["annotations"][REVISION]
        .as_str()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

/// The ReplicaSets `deployment` controls, oldest revision first.
fn owned_replica_sets(store: &Store, kinds: &Kinds, deployment: &Value) -> Vec<Value> {
    let uid = &deployment["metadata"]["uid"];
    let mut owned: Vec<Value> = store
        .owned_by(&kinds.replicasets, uid.as_str().unwrap_or_default())
        .into_iter()
        .filter(|rs| {
            rs["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|refs| {
                    refs.iter()
                        .any(|r| r["controller"] == true && &r["uid"] == uid)
                })
        })
        .collect();
    owned.sort_by_key(revision);
    owned
}

/// Makes the current template's ReplicaSet the newest revision (creating it, or renumbering
/// an old one a rollback brought back), scales the others to zero, drops those beyond
/// `revisionHistoryLimit`, and sets the revision on the Deployment. Returns the Deployment as
/// stored afterwards; `None` if it is gone.
fn roll_replica_sets(store: &mut Store, kinds: &Kinds, deployment: &Value) -> Option<Value> {
    let owned = owned_replica_sets(store, kinds, deployment);
    let hash = template_hash(&deployment["spec"]["template"]);
    let name = replica_set_of(deployment, &hash);
    let namespace = deployment["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let newest = owned.iter().map(revision).max().unwrap_or(0);
    let wanted = replicas(deployment);
    let current = owned
        .iter()
        .find(|rs| rs["metadata"]["name"] == name.as_str());
    let number = match current {
        Some(rs) if revision(rs) == newest => newest,
        _ => newest.saturating_add(1),
    };
    match current {
        Some(rs) => {
            let mut next = rs.clone();
            next["metadata"]["annotations"][REVISION] = json!(number.to_string());
            next["spec"]["replicas"] = json!(wanted);
            let _ = store.replace(&kinds.replicasets, &namespace, &name, next, false, false);
        }
        None => {
            let mut template = deployment["spec"]["template"].clone();
            template["metadata"]["labels"][TEMPLATE_HASH] = json!(hash);
            let mut selector = deployment["spec"]["selector"].clone();
            selector["matchLabels"][TEMPLATE_HASH] = json!(hash);
            let labels = template["metadata"]["labels"].clone();
            let rs = json!({
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": labels,
                    "annotations": {
                        REVISION: number.to_string(),
                        "deployment.kubernetes.io/desired-replicas": wanted.to_string(),
                        "deployment.kubernetes.io/max-replicas": (wanted + 1).to_string(),
                    },
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                        "name": deployment["metadata"]["name"],
                        "uid": deployment["metadata"]["uid"],
                        "controller": true, "blockOwnerDeletion": true}],
                },
                "spec": {"replicas": wanted, "selector": selector, "template": template},
            });
            let _ = store.create(&kinds.replicasets, &namespace, rs, false);
        }
    }
    // The old revisions: none of their pods are wanted; the oldest go past the limit.
    let keep = deployment["spec"]["revisionHistoryLimit"]
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(HISTORY);
    let old: Vec<&Value> = owned
        .iter()
        .filter(|rs| rs["metadata"]["name"] != name.as_str())
        .collect();
    let beyond = old.len().saturating_sub(keep);
    for (i, rs) in old.into_iter().enumerate() {
        let rs_name = rs["metadata"]["name"].as_str().unwrap_or("").to_string();
        if i < beyond {
            let _ = store.delete(
                &kinds.replicasets,
                &namespace,
                &rs_name,
                crate::store::Propagation::Background,
                false,
            );
        } else if rs["spec"]["replicas"] != 0 {
            let mut next = rs.clone();
            next["spec"]["replicas"] = json!(0);
            if let Ok(stored) =
                store.replace(&kinds.replicasets, &namespace, &rs_name, next, false, false)
            {
                write_status(
                    store,
                    &kinds.replicasets,
                    &stored,
                    replica_set_status(&stored, 0),
                );
            }
        }
    }
    let pin = Pin::of(deployment);
    let live = pin.get(store, &kinds.deployments)?;
    if revision(&live) == number {
        return Some(live);
    }
    let mut next = live.clone();
    next["metadata"]["annotations"][REVISION] = json!(number.to_string());
    store
        .replace(
            &kinds.deployments,
            &namespace,
            &pin.name,
            next,
            false,
            false,
        )
        .ok()
        .or(Some(live))
}

/// The current revision's ReplicaSet has all its replicas ready.
fn replica_sets_rolled_out(store: &mut Store, kinds: &Kinds, deployment: &Value) {
    let namespace = deployment["metadata"]["namespace"].as_str().unwrap_or("");
    if let Ok(rs) = store.get(&kinds.replicasets, namespace, &replica_set(deployment)) {
        let ready = rs["spec"]["replicas"].as_i64().unwrap_or(1);
        write_status(
            store,
            &kinds.replicasets,
            &rs,
            replica_set_status(&rs, ready),
        );
    }
}

/// A ReplicaSet's status with `ready` of its pods ready and available.
fn replica_set_status(rs: &Value, ready: i64) -> Value {
    json!({
        "observedGeneration": rs["metadata"]["generation"].as_i64().unwrap_or(1),
        "replicas": ready,
        "fullyLabeledReplicas": ready,
        "readyReplicas": ready,
        "availableReplicas": ready,
    })
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
