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
