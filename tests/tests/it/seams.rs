//! The operator reads the sim's virtual clock and resolves in-cluster names through the sim's
//! service registry, running in the same process.

use std::{sync::Arc, time::Duration};

use barbican_features::seams::{SimClock, SimResolver};
use barbican_operator::{
    clock::Clock,
    resolve::{Resolve, SystemResolver},
};
use barbican_sim::Cluster;

#[tokio::test]
async fn an_operator_task_sleeping_on_its_clock_wakes_when_virtual_time_reaches_it() {
    let cluster = Cluster::with_clock(barbican_sim::clock::Clock::virtual_time());
    let clock: Arc<dyn Clock> = Arc::new(SimClock(cluster.clock().clone()));
    let start = clock.now();
    let requeue = {
        let clock = clock.clone();
        tokio::spawn(async move {
            // What a reconciler's "requeue after 5 minutes" does through the seam.
            clock.sleep(Duration::from_secs(300)).await;
            clock.now()
        })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!requeue.is_finished(), "virtual time stands still");
    cluster.clock().advance(Duration::from_secs(20 * 60)).await;
    let woke = requeue.await.unwrap();
    assert_eq!(
        woke.duration_since(start),
        jiff::SignedDuration::from_mins(5)
    );
    assert_eq!(
        clock.now().duration_since(start),
        jiff::SignedDuration::from_mins(20)
    );
}

#[test]
fn in_cluster_names_resolve_through_the_sims_registry_and_others_through_dns() {
    let cluster = Cluster::new();
    let addr = "127.0.0.1:45678".parse().unwrap();
    cluster
        .services()
        .register("openbao", "openbao", 8200, addr);
    let resolver: &dyn Resolve = &SimResolver(cluster.services());
    assert_eq!(resolver.resolve("openbao.openbao.svc", 8200), Some(addr));
    assert_eq!(resolver.resolve("keystone.example.com", 5000), None);
    assert_eq!(SystemResolver.resolve("openbao.openbao.svc", 8200), None);
}

#[test]
fn the_sims_registry_is_what_the_operators_overrides_file_reads() {
    let registry = barbican_sim::services::ServiceRegistry::default();
    let addr: std::net::SocketAddr = "127.0.0.1:41003".parse().unwrap();
    registry.register("openstack", "openbao-instance", 8200, addr);
    let table =
        barbican_operator::resolve::parse_overrides("registry", &registry.overrides()).unwrap();
    assert_eq!(
        table.get(&("openbao-instance.openstack.svc".to_string(), 8200)),
        Some(&addr)
    );
}
