//! Tests of `barbican_sim::kubelet::proxy`.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use barbican_sim::kubelet::proxy::*;

#[test]
fn the_registry_lines_give_each_name_and_port() {
    let lines = "db.openstack.svc:3306 127.0.0.1:41000\nvault.example.com:8200 127.0.0.1:41001\n";
    assert_eq!(
        names(lines),
        [
            ("db.openstack.svc".to_string(), 3306),
            ("vault.example.com".to_string(), 8200)
        ]
    );
    assert!(names("garbage\n").is_empty());
}

#[test]
fn pods_resolve_services_by_their_short_names_in_their_own_namespace() {
    let addresses = BTreeMap::from([
        (
            "db.openstack.svc".to_string(),
            Ipv4Addr::new(10, 245, 0, 10),
        ),
        (
            "db.openstack.svc.cluster.local".to_string(),
            Ipv4Addr::new(10, 245, 0, 11),
        ),
        (
            "vault.example.com".to_string(),
            Ipv4Addr::new(10, 245, 0, 12),
        ),
    ]);
    assert_eq!(
        hosts(&addresses, "openstack"),
        "10.245.0.10 db.openstack.svc db.openstack db\n\
         10.245.0.11 db.openstack.svc.cluster.local\n\
         10.245.0.12 vault.example.com\n"
    );
    assert!(hosts(&addresses, "other").starts_with("10.245.0.10 db.openstack.svc db.openstack\n"));
}
