//! A Deployment's rollout as kube-controller-manager paces it, for the Deployments whose pods
//! this kubelet runs: with `RollingUpdate`, new pods only up to `replicas + maxSurge` across
//! every revision, and old pods removed only while `replicas - maxUnavailable` stay available
//! (unready old pods first); with `Recreate`, every old pod gone before a new one starts.
//!
//! Surging every revision at once would run twice the replicas: more than a workload sized for
//! `maxSurge` can hold (barbican's database user allows the connections of `replicas + 1`
//! pods), so its rollout would stall where a cluster's completes.

use serde_json::Value;

/// How a Deployment replaces its pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// `Recreate`: every old pod goes before any new one is made.
    Recreate,
    /// `RollingUpdate`, its bounds resolved against the replicas.
    Rolling {
        /// Pods allowed above the replicas.
        surge: usize,
        /// Pods allowed to be unavailable below the replicas.
        unavailable: usize,
    },
}

/// An IntOrString bound (`1`, `"25%"`) against `replicas`: a percentage rounded up for
/// maxSurge, down for maxUnavailable, as kube-controller-manager resolves them.
fn resolve(bound: &Value, replicas: usize, round_up: bool) -> usize {
    let percent: usize = match bound {
        Value::Number(n) => return n.as_u64().map_or(0, |n| n as usize),
        Value::String(s) => s.trim_end_matches('%').parse().unwrap_or(25),
        _ => 25,
    };
    // The spec's numbers are the user's: saturate rather than overflow on absurd ones.
    let scaled = replicas.saturating_mul(percent);
    if round_up {
        scaled.div_ceil(100)
    } else {
        scaled / 100
    }
}

/// The strategy of `deployment` (`spec.strategy`, defaulted as kube-apiserver defaults it)
/// for `replicas`. Both bounds resolving to zero make maxUnavailable one, as the controller
/// does, so a rollout always progresses.
pub fn strategy(deployment: &Value, replicas: usize) -> Strategy {
    let strategy = &deployment["spec"]["strategy"];
    if strategy["type"] == "Recreate" {
        return Strategy::Recreate;
    }
    let rolling = &strategy["rollingUpdate"];
    let surge = resolve(&rolling["maxSurge"], replicas, true);
    let unavailable = match resolve(&rolling["maxUnavailable"], replicas, false) {
        0 if surge == 0 => 1,
        n => n,
    };
    Strategy::Rolling { surge, unavailable }
}

/// What one pass does: pods of the newest revision to create, and old pods to delete (the
/// unready ones first, then ready ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// New pods to create.
    pub create: usize,
    /// Unready old pods to delete.
    pub delete_unready: usize,
    /// Ready old pods to delete.
    pub delete_ready: usize,
}

/// Pods of a Deployment, by revision and readiness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pods {
    /// Pods of the newest revision.
    pub new: usize,
    /// Of those, ready.
    pub new_ready: usize,
    /// Pods of older revisions.
    pub old: usize,
    /// Of those, ready.
    pub old_ready: usize,
}

/// The next pass of a rollout of `replicas` by `strategy` over `pods` (kube-controller-
/// manager's reconcileNewReplicaSet and reconcileOldReplicaSets, by pod counts).
pub fn step(strategy: Strategy, replicas: usize, pods: Pods) -> Step {
    let unready_old = pods.old.saturating_sub(pods.old_ready);
    match strategy {
        Strategy::Recreate => Step {
            create: if pods.old == 0 {
                replicas.saturating_sub(pods.new)
            } else {
                0
            },
            delete_unready: unready_old,
            delete_ready: pods.old_ready,
        },
        Strategy::Rolling { surge, unavailable } => {
            let total = pods.new + pods.old;
            let create = replicas
                .saturating_sub(pods.new)
                .min(replicas.saturating_add(surge).saturating_sub(total));
            let min_available = replicas.saturating_sub(unavailable);
            let new_unavailable = (pods.new + create).saturating_sub(pods.new_ready);
            // Unready old pods go as long as the pods left can still make min_available.
            let delete_unready = unready_old.min(
                (total + create)
                    .saturating_sub(min_available)
                    .saturating_sub(new_unavailable),
            );
            let available = pods.new_ready + pods.old_ready;
            let delete_ready = pods.old_ready.min(available.saturating_sub(min_available));
            Step {
                create,
                delete_unready,
                delete_ready,
            }
        }
    }
}
