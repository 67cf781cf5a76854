//! Leader election on the sim: two replicas contend for one Lease, only one holds it at a
//! time, and the other takes over once the holder lets go.

use std::time::Duration;

use barbican_operator::leader::{Election, acquire};
use barbican_sim::Cluster;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;

fn election(identity: &str) -> Election {
    Election {
        duration_seconds: 2,
        grace_seconds: 1,
        ..Election::new("barbican-system", identity)
    }
}

/// A sim with the namespace the Lease lives in, and a client of it (the cluster is kept
/// alongside: the client serves only while it lives).
async fn with_namespace() -> (Cluster, kube::Client) {
    let cluster = Cluster::new();
    let client = cluster.client();
    let ns = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "barbican-system"}});
    Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone())
        .create(&Default::default(), &serde_json::from_value(ns).unwrap())
        .await
        .unwrap();
    (cluster, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_never_lead_at_once_and_the_second_takes_over() {
    let (_cluster, client) = with_namespace().await;

    let first = acquire(client.clone(), &election("replica-a"))
        .await
        .unwrap();
    let holder = || async {
        Api::<Lease>::namespaced(client.clone(), "barbican-system")
            .get("barbican-operator-leader")
            .await
            .unwrap()
            .spec
            .and_then(|s| s.holder_identity)
    };
    assert_eq!(holder().await.as_deref(), Some("replica-a"));

    let second = tokio::spawn({
        let client = client.clone();
        async move { acquire(client, &election("replica-b")).await }
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        !second.is_finished(),
        "the second replica must wait while the first renews"
    );
    assert_eq!(holder().await.as_deref(), Some("replica-a"));

    first.release().await;
    let second = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .expect("the second replica takes over")
        .unwrap()
        .unwrap();
    assert_eq!(holder().await.as_deref(), Some("replica-b"));
    second.release().await;
}

/// With the chart's timings (a 15 s Lease renewed 5 s early), a replica waiting for the Lease
/// takes it as soon as the holder lets go, not when the Lease it last read would have lapsed
/// (up to 15 s later): a deleted leader pod hands over at once, and so does the next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_replica_takes_a_released_lease_at_once() {
    let (_cluster, client) = with_namespace().await;
    let leases = Api::<Lease>::namespaced(client.clone(), "barbican-system");
    let replica = |identity: &'static str| {
        let client = client.clone();
        tokio::spawn(
            async move { acquire(client, &Election::new("barbican-system", identity)).await },
        )
    };
    // Well under the Lease's 15 s: without watching the Lease, the waiting replica would
    // sleep on until about 14 s after the holder's last renewal.
    let within = Duration::from_secs(4);

    let mut holder = replica("replica-a").await.unwrap().unwrap();
    for next in ["replica-b", "replica-c"] {
        let waiting = replica(next);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(
            !waiting.is_finished(),
            "{next} waits while the Lease is held"
        );
        holder.release().await;
        holder = tokio::time::timeout(within, waiting)
            .await
            .unwrap_or_else(|_| panic!("{next} takes the released Lease at once"))
            .unwrap()
            .unwrap();
        let spec = leases.get("barbican-operator-leader").await.unwrap().spec;
        assert_eq!(spec.and_then(|s| s.holder_identity).as_deref(), Some(next));
    }
    holder.release().await;
}
