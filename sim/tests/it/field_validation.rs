//! Server-side field validation through kube-rs: Strict refuses a field the type does not
//! declare, naming it; Warn (the default) and Ignore store the object without it.

use barbican_operator::api::{Barbican, fixtures::minimal_barbican};
use barbican_sim::Cluster;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, CustomResourceExt,
    api::{Patch, PatchParams, ValidationDirective},
};
use serde_json::json;

#[tokio::test]
async fn strict_refuses_an_undeclared_field_of_a_custom_resource_and_warn_prunes_it() {
    let cluster = Cluster::new();
    cluster
        .install_crd(serde_json::to_value(Barbican::crd()).unwrap())
        .unwrap();
    let barbicans: Api<Barbican> = Api::namespaced(cluster.client(), "default");
    let mut object = minimal_barbican();
    object["metadata"] = json!({"name": "b", "namespace": "default"});
    object["spec"]["deployment"] = json!({"replicaz": 3});
    let strict = PatchParams::apply("test").validation(ValidationDirective::Strict);
    match barbicans.patch("b", &strict, &Patch::Apply(&object)).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 400, "{status:?}");
            assert_eq!(
                status.message,
                "strict decoding error: unknown field \"spec.deployment.replicaz\""
            );
        }
        other => panic!("Strict must refuse, got {other:?}"),
    }
    assert!(barbicans.get_opt("b").await.unwrap().is_none());
    let warn = PatchParams::apply("test").validation(ValidationDirective::Warn);
    let stored = barbicans
        .patch("b", &warn, &Patch::Apply(&object))
        .await
        .unwrap();
    let stored = serde_json::to_value(stored).unwrap();
    assert!(stored["spec"]["deployment"].get("replicaz").is_none());
}

#[tokio::test]
async fn strict_refuses_an_undeclared_field_of_a_built_in_kind() {
    let maps: Api<ConfigMap> = Api::namespaced(Cluster::new().client(), "default");
    let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "m"}, "datum": {"k": "v"}});
    let strict = PatchParams::apply("test").validation(ValidationDirective::Strict);
    match maps.patch("m", &strict, &Patch::Apply(&object)).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 400, "{status:?}");
            assert!(
                status
                    .message
                    .ends_with("strict decoding error: unknown field \"datum\""),
                "{}",
                status.message
            );
        }
        other => panic!("Strict must refuse, got {other:?}"),
    }
    let ignore = PatchParams::apply("test").validation(ValidationDirective::Ignore);
    maps.patch("m", &ignore, &Patch::Apply(&object))
        .await
        .unwrap();
    let stored = serde_json::to_value(maps.get("m").await.unwrap()).unwrap();
    assert!(stored.get("datum").is_none(), "{stored}");
}
