//! The `scale` subresource through kube-rs (`get_scale`, `patch_scale`, `replace_scale`), the
//! `all` category and the health checks, as kube-apiserver serves them.

use barbican_sim::Cluster;
use k8s_openapi::api::{apps::v1::Deployment, autoscaling::v1::Scale};
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

fn deployment(name: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "c", "image": "busybox"}]}},
        },
    }))
    .unwrap()
}

#[tokio::test]
async fn a_deployment_scales_through_its_scale_subresource() {
    let client = Cluster::new().client();
    let deployments: Api<Deployment> = Api::namespaced(client, "default");
    deployments
        .create(&PostParams::default(), &deployment("web"))
        .await
        .unwrap();
    let scale = deployments.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(2));
    assert_eq!(scale.status.unwrap().selector.as_deref(), Some("app=web"));

    let scaled = deployments
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(scaled.spec.unwrap().replicas, Some(5));
    let stored = deployments.get("web").await.unwrap();
    assert_eq!(stored.spec.replicas, Some(5));
    assert_eq!(
        stored.metadata.generation,
        Some(2),
        "a scale is a spec change"
    );

    let mut scale: Scale = deployments.get_scale("web").await.unwrap();
    scale.spec.as_mut().unwrap().replicas = Some(1);
    let replaced = deployments
        .replace_scale("web", &PostParams::default(), &scale)
        .await
        .unwrap();
    assert_eq!(replaced.spec.unwrap().replicas, Some(1));

    match deployments
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": -1}})),
        )
        .await
    {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 422, "{status:?}"),
        other => panic!("a negative scale is invalid, got {other:?}"),
    }
}

#[tokio::test]
async fn discovery_lists_the_all_category_and_the_scale_subresource() {
    let client = Cluster::new().client();
    let apps: serde_json::Value = client
        .request(
            axum::http::Request::get("/apis/apps/v1")
                .body(Vec::new())
                .unwrap(),
        )
        .await
        .unwrap();
    let resources = apps["resources"].as_array().unwrap();
    let deployments = resources
        .iter()
        .find(|r| r["name"] == "deployments")
        .unwrap();
    assert_eq!(deployments["categories"], json!(["all"]));
    assert!(
        deployments["verbs"]
            .as_array()
            .unwrap()
            .contains(&json!("deletecollection"))
    );
    let scale = resources
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .unwrap();
    assert_eq!(
        (&scale["group"], &scale["kind"]),
        (&json!("autoscaling"), &json!("Scale"))
    );
}

#[tokio::test]
async fn the_health_checks_answer_ok() {
    let client = Cluster::new().client();
    for path in ["/healthz", "/readyz", "/livez", "/readyz/ping"] {
        let text = client
            .request_text(axum::http::Request::get(path).body(Vec::new()).unwrap())
            .await
            .unwrap();
        assert_eq!(text, "ok", "{path}");
    }
    let verbose = client
        .request_text(
            axum::http::Request::get("/readyz?verbose")
                .body(Vec::new())
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(
        verbose.contains("[+]ping ok") && verbose.ends_with("readyz check passed\n"),
        "{verbose}"
    );
}
