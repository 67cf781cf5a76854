//! kube-apiserver's defaulting of built-in kinds, seen through kube-rs: what a client reads
//! back that it never sent, and a server-side apply that keeps working on defaulted objects.

use barbican_sim::Cluster;
use k8s_openapi::api::core::v1::Service;
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use serde_json::json;

fn service(selector: serde_json::Value) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "api", "namespace": "default"},
        "spec": {"ports": [{"port": 9311, "protocol": "TCP", "targetPort": 9311}],
                 "selector": selector}})
}

/// A re-apply that adds a selector key lands on a Service the server defaulted
/// (`sessionAffinity`, a port's `protocol`), as on kube-apiserver.
#[tokio::test]
async fn an_apply_lands_on_a_defaulted_service() {
    let cluster = Cluster::new();
    let services: Api<Service> = Api::namespaced(cluster.client(), "default");
    let params = PatchParams::apply("op").force();
    let first = services
        .patch("api", &params, &Patch::Apply(&service(json!({"a": "1"}))))
        .await
        .unwrap();
    let spec = first.spec.clone().unwrap();
    assert_eq!(spec.session_affinity.as_deref(), Some("None"));
    let second = services
        .patch(
            "api",
            &params,
            &Patch::Apply(&service(json!({"a": "1", "b": "2"}))),
        )
        .await
        .unwrap();
    let selector = second.spec.unwrap().selector.unwrap();
    assert_eq!(
        selector.get("b").map(String::as_str),
        Some("2"),
        "{selector:?}"
    );
    assert_ne!(
        first.metadata.resource_version,
        second.metadata.resource_version
    );
}
