//! The kubelet's pacing of a Deployment's rollout (`barbican_sim::kubelet::rollout`).

use barbican_sim::kubelet::rollout::{Pods, Step, Strategy, step, strategy};
use serde_json::json;

#[test]
fn bounds_resolve_as_kube_controller_manager_resolves_them() {
    let defaulted = json!({"spec": {"strategy": {"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}});
    assert_eq!(
        strategy(&defaulted, 3),
        Strategy::Rolling {
            surge: 1,
            unavailable: 0
        }
    );
    assert_eq!(
        strategy(&defaulted, 10),
        Strategy::Rolling {
            surge: 3,
            unavailable: 2
        }
    );
    assert_eq!(
        strategy(&json!({"spec": {}}), 4),
        Strategy::Rolling {
            surge: 1,
            unavailable: 1
        }
    );
    let zeros =
        json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}});
    assert_eq!(
        strategy(&zeros, 3),
        Strategy::Rolling {
            surge: 0,
            unavailable: 1
        }
    );
    let recreate = json!({"spec": {"strategy": {"type": "Recreate"}}});
    assert_eq!(strategy(&recreate, 3), Strategy::Recreate);
}

/// Runs a rollout of `replicas` from `replicas` ready old pods, each created pod turning ready
/// on the next pass; returns the most pods and the fewest ready pods seen, and the passes.
fn roll(strategy: Strategy, replicas: usize) -> (usize, usize, usize) {
    let mut pods = Pods {
        old: replicas,
        old_ready: replicas,
        ..Pods::default()
    };
    let (mut most, mut fewest_ready) = (pods.old, pods.old_ready);
    for pass in 1..=100 {
        if pods.new == replicas && pods.new_ready == replicas && pods.old == 0 {
            return (most, fewest_ready, pass);
        }
        // What was created last pass is ready now.
        pods.new_ready = pods.new;
        let Step {
            create,
            delete_unready,
            delete_ready,
        } = step(strategy, replicas, pods);
        pods.new += create;
        pods.old -= delete_unready + delete_ready;
        pods.old_ready -= delete_ready;
        most = most.max(pods.new + pods.old);
        fewest_ready = fewest_ready.min(pods.new_ready + pods.old_ready);
    }
    panic!("the rollout never finished: {pods:?}");
}

#[test]
fn a_rolling_update_of_three_never_runs_more_than_four_pods_nor_fewer_than_three_ready() {
    let rolling = Strategy::Rolling {
        surge: 1,
        unavailable: 0,
    };
    let (most, fewest_ready, _) = roll(rolling, 3);
    assert_eq!(most, 4, "replicas + maxSurge");
    assert_eq!(fewest_ready, 3, "replicas - maxUnavailable");
}

#[test]
fn max_unavailable_lets_old_pods_go_before_new_ones_are_ready() {
    let rolling = Strategy::Rolling {
        surge: 0,
        unavailable: 1,
    };
    let (most, fewest_ready, _) = roll(rolling, 3);
    assert_eq!(most, 3);
    assert_eq!(fewest_ready, 2);
}

#[test]
fn recreate_makes_no_new_pod_while_an_old_one_runs() {
    let first = step(
        Strategy::Recreate,
        3,
        Pods {
            old: 3,
            old_ready: 3,
            ..Pods::default()
        },
    );
    assert_eq!(
        first,
        Step {
            create: 0,
            delete_unready: 0,
            delete_ready: 3
        }
    );
    let then = step(Strategy::Recreate, 3, Pods::default());
    assert_eq!(then.create, 3);
}

#[test]
fn unready_old_pods_go_before_ready_ones_once_a_new_pod_is_ready() {
    let rolling = Strategy::Rolling {
        surge: 1,
        unavailable: 0,
    };
    // Two crash-looping old pods and one ready: the surge pod is made, nothing removed yet.
    let first = step(
        rolling,
        3,
        Pods {
            old: 3,
            old_ready: 1,
            ..Pods::default()
        },
    );
    assert_eq!(
        (first.create, first.delete_unready, first.delete_ready),
        (1, 0, 0)
    );
    // Once it is ready, an unready old pod makes room, never the ready one.
    let then = step(
        rolling,
        3,
        Pods {
            new: 1,
            new_ready: 1,
            old: 3,
            old_ready: 1,
        },
    );
    assert_eq!(
        (then.create, then.delete_unready, then.delete_ready),
        (0, 1, 0)
    );
}

#[test]
fn a_scaled_deployment_without_a_rollout_creates_what_it_lacks() {
    let grown = step(
        Strategy::Rolling {
            surge: 1,
            unavailable: 0,
        },
        5,
        Pods {
            new: 3,
            new_ready: 3,
            ..Pods::default()
        },
    );
    assert_eq!(grown.create, 2);
}

#[test]
fn absurd_bounds_saturate_instead_of_overflowing() {
    let huge = json!({"spec": {"strategy": {"rollingUpdate": {
        "maxSurge": u64::MAX, "maxUnavailable": "18446744073709551615%"}}}});
    let Strategy::Rolling { surge, unavailable } = strategy(&huge, 3) else {
        panic!("a rolling update");
    };
    assert_eq!(surge, usize::MAX);
    assert_eq!(unavailable, usize::MAX / 100);
    let next = step(
        Strategy::Rolling { surge, unavailable },
        3,
        Pods {
            old: 3,
            old_ready: 3,
            ..Pods::default()
        },
    );
    assert_eq!(next.create, 3, "every new pod at once, as the bounds allow");
}
