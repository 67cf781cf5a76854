//! Tests of `barbican_sim::services`.

use std::net::SocketAddr;

use barbican_sim::services::*;

#[test]
fn in_cluster_names_resolve_to_their_listeners() {
    let registry = ServiceRegistry::default();
    let addr: SocketAddr = "127.0.0.1:41000".parse().unwrap();
    registry.register("openbao", "openbao", 8200, addr);
    for name in [
        "openbao.openbao.svc",
        "openbao.openbao.svc.cluster.local",
        "openbao.openbao.svc.cluster.local.",
    ] {
        assert_eq!(registry.resolve(name, 8200), Some(addr), "{name}");
    }
    assert_eq!(
        registry.resolve_authority("openbao.openbao.svc:8200"),
        Some(addr)
    );
    assert_eq!(registry.resolve("openbao.openbao.svc", 443), None);
    assert_eq!(registry.resolve("openbao.other.svc", 8200), None);
    assert_eq!(registry.resolve("openbao", 8200), None);
    assert_eq!(registry.resolve("example.com", 8200), None);
    registry.unregister("openbao", "openbao", 8200);
    assert_eq!(registry.resolve("openbao.openbao.svc", 8200), None);
}

#[test]
fn a_subscriber_learns_of_every_change_to_the_names() {
    let registry = ServiceRegistry::default();
    let mut changes = registry.subscribe();
    assert!(!changes.has_changed().unwrap(), "nothing yet");
    let addr: SocketAddr = "127.0.0.1:41002".parse().unwrap();
    registry.register("openstack", "barbican", 9311, addr);
    assert!(changes.has_changed().unwrap(), "a Service registered");
    changes.borrow_and_update();
    registry.register_host("vault.example.com", 8200, addr);
    assert!(changes.has_changed().unwrap(), "a host registered");
    changes.borrow_and_update();
    registry.register_pod("openstack", "barbican-0", 9311, addr);
    assert!(
        !changes.has_changed().unwrap(),
        "a Pod is not a name: no overrides line changes"
    );
    registry.unregister("openstack", "barbican", 9311);
    assert!(changes.has_changed().unwrap(), "a Service removed");
}

#[test]
fn the_registry_writes_itself_as_an_overrides_file() {
    let registry = ServiceRegistry::default();
    registry.register(
        "openstack",
        "barbican",
        9311,
        "127.0.0.1:41001".parse().unwrap(),
    );
    registry.register_host(
        "vault.example.com",
        8200,
        "127.0.0.1:41002".parse().unwrap(),
    );
    assert_eq!(
        registry.overrides(),
        "barbican.openstack.svc:9311 127.0.0.1:41001\nbarbican.openstack.svc.cluster.local:9311 127.0.0.1:41001\nvault.example.com:8200 127.0.0.1:41002\n"
    );
}

#[test]
fn peers_stand_in_for_names_another_process_registers_and_own_names_win() {
    let (harness, served) = (ServiceRegistry::default(), ServiceRegistry::default());
    harness.register(
        "openstack",
        "openbao",
        8200,
        "127.0.0.1:41003".parse().unwrap(),
    );
    harness.register_host(
        "vault.example.com",
        8200,
        "127.0.0.1:41004".parse().unwrap(),
    );
    served.register(
        "barbican-system",
        "webhook",
        443,
        "127.0.0.1:41005".parse().unwrap(),
    );
    let changes = served.subscribe();
    assert_eq!(served.set_peers(&harness.overrides()), Ok(3));
    assert!(changes.has_changed().unwrap(), "the kubelet's proxies wake");
    for (host, port, addr) in [
        ("openbao.openstack.svc", 8200, "127.0.0.1:41003"),
        (
            "openbao.openstack.svc.cluster.local",
            8200,
            "127.0.0.1:41003",
        ),
        ("vault.example.com", 8200, "127.0.0.1:41004"),
        ("webhook.barbican-system.svc", 443, "127.0.0.1:41005"),
    ] {
        assert_eq!(
            served.resolve(host, port),
            Some(addr.parse().unwrap()),
            "{host}"
        );
    }
    assert!(
        served
            .overrides()
            .contains("openbao.openstack.svc:8200 127.0.0.1:41003\n"),
        "pods get an address for a peer's name"
    );
    // A peer never takes over a name the cluster itself routes.
    served
        .set_peers("webhook.barbican-system.svc:443 127.0.0.1:1\n")
        .unwrap();
    assert_eq!(
        served.resolve("webhook.barbican-system.svc", 443),
        Some("127.0.0.1:41005".parse().unwrap())
    );
    assert_eq!(
        served.resolve("openbao.openstack.svc", 8200),
        None,
        "replaced whole"
    );
    // A malformed line is refused, naming it, and what was there stays.
    let refused = served.set_peers("openbao.openstack.svc:8200 nowhere\n");
    assert!(
        refused.as_ref().is_err_and(|e| e.contains("nowhere")),
        "{refused:?}"
    );
    assert_eq!(
        served.resolve("webhook.barbican-system.svc", 443),
        Some("127.0.0.1:41005".parse().unwrap())
    );
}
