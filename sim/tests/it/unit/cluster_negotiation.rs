//! Tests of `barbican_sim::cluster::negotiation`.

use axum::http::{HeaderMap, header};

use barbican_sim::cluster::negotiation::*;

fn accept(value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::ACCEPT, value.parse().unwrap());
    headers
}

#[test]
fn the_first_form_the_server_serves_wins_as_in_kube_apiserver() {
    // kubectl get
    let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    assert_eq!(presentation(&accept(kubectl)), Presentation::Table);
    // kube-rs's metadata calls and client-go's metadata client
    let metadata =
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    assert_eq!(presentation(&accept(metadata)), Presentation::Metadata);
    assert_eq!(
        presentation(&accept("application/json")),
        Presentation::Object
    );
    assert_eq!(presentation(&HeaderMap::new()), Presentation::Object);
    // plain JSON first: the object itself
    assert_eq!(
        presentation(&accept(
            "application/json, application/json;as=Table;g=meta.k8s.io;v=v1"
        )),
        Presentation::Object
    );
}

#[test]
fn aggregated_discovery_only_for_v2_asked_before_plain_json() {
    let client_go = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    assert!(wants_aggregated_discovery(&accept(client_go)));
    assert!(!wants_aggregated_discovery(&accept(
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
    )));
    assert!(!wants_aggregated_discovery(&accept("application/json")));
    assert!(!wants_aggregated_discovery(&accept(
        "application/json,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    )));
}
