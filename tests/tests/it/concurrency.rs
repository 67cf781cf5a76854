//! `--max-concurrent-reconciles`: with one pass at a time, a Barbican whose pass is stuck on a
//! slow API server holds the next one back; with two, the next one goes ahead.

use std::time::Duration;

use barbican_features::{
    examples::{example, in_namespace},
    sim_env::{MINIMAL_PREREQUISITES, SimEnv},
};

/// Applies the minimal example into `namespace`.
async fn minimal_in(env: &SimEnv, namespace: &str) {
    env.apply_yaml(&in_namespace(MINIMAL_PREREQUISITES, namespace))
        .await
        .unwrap();
    env.apply_yaml(&in_namespace(&example("barbican.yaml").unwrap(), namespace))
        .await
        .unwrap();
}

async fn finalized(env: &SimEnv, namespace: &str) -> bool {
    env.get("Barbican", namespace, "barbican")
        .await
        .unwrap()
        .is_some_and(|b| b.metadata.finalizers.is_some_and(|f| !f.is_empty()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passes_beyond_the_bound_wait_for_a_free_slot() {
    let mut env = SimEnv::start(true).await.unwrap();
    env.set_concurrency(1);
    // Every request the operator makes about the namespace "slow" takes a minute of real time.
    env.cluster.add_fault(
        "agent=barbican-operator,namespace=slow,latency=60s"
            .parse()
            .unwrap(),
    );
    minimal_in(&env, "slow").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    minimal_in(&env, "fast").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        !finalized(&env, "fast").await,
        "with one pass at a time, fast/barbican was reconciled while slow/barbican's pass was stuck"
    );

    env.set_concurrency(2);
    env.eventually(Duration::from_secs(60), || async {
        if finalized(&env, "fast").await {
            Ok(())
        } else {
            Err("fast/barbican has no finalizer yet".to_string())
        }
    })
    .await
    .unwrap();
    assert!(
        !finalized(&env, "slow").await,
        "slow/barbican's requests are still held"
    );
}
