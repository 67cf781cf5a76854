//! Tests of `barbican_sim::proxy`.

use serde_json::json;

use barbican_sim::proxy::*;

#[test]
fn the_service_segment_names_scheme_name_and_port() {
    assert_eq!(parse("barbican:9311").port, "9311");
    assert_eq!(parse("barbican").port, "");
    let full = parse("https:vault:api");
    assert_eq!(
        (full.scheme.as_str(), full.name.as_str(), full.port.as_str()),
        ("https", "vault", "api")
    );
    assert_eq!(parse("barbican:9311").scheme, "http");
}

#[test]
fn ports_resolve_by_number_name_or_first() {
    let service = json!({"spec": {"ports": [{"name": "api", "port": 9311}, {"name": "metrics", "port": 9090}]}});
    assert_eq!(port_of(&service, ""), Some(9311));
    assert_eq!(port_of(&service, "metrics"), Some(9090));
    assert_eq!(port_of(&service, "9090"), Some(9090));
    assert_eq!(port_of(&service, "1234"), None);
    assert_eq!(port_of(&service, "nope"), None);
}
