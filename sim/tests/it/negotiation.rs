//! Content negotiation as kube-apiserver answers it: aggregated discovery for clients that ask
//! for it first (kubectl, kube-rs's `run_aggregated`), and PartialObjectMetadata for metadata
//! reads and watches (kube-rs's `*_metadata` calls, kube-runtime's metadata watcher).

use std::time::Duration;

use barbican_sim::Cluster;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api,
    api::{ListParams, PostParams, WatchEvent, WatchParams},
    core::PartialObjectMeta,
    discovery::{Discovery, Scope},
    runtime::{WatchStreamExt, watcher},
};
use serde_json::json;

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": {"app": "x"}},
        "data": {"secret-ish": "value"}}))
    .unwrap()
}

#[tokio::test]
async fn kube_rs_runs_aggregated_discovery_against_the_sim() {
    let client = Cluster::new().client();
    let discovery = Discovery::new(client).run_aggregated().await.unwrap();
    let apps = discovery.get("apps").expect("the apps group");
    let (deployments, caps) = apps
        .recommended_resources()
        .into_iter()
        .find(|(r, _)| r.plural == "deployments")
        .expect("deployments in apps");
    assert_eq!(
        (deployments.kind.as_str(), deployments.version.as_str()),
        ("Deployment", "v1")
    );
    assert_eq!(caps.scope, Scope::Namespaced);
    assert!(
        caps.subresources
            .iter()
            .any(|(r, _)| r.plural == "deployments/scale" || r.plural == "scale"),
        "{:?}",
        caps.subresources
            .iter()
            .map(|(r, _)| &r.plural)
            .collect::<Vec<_>>()
    );
    let core = discovery.get("").expect("the core group");
    let namespaces = core
        .recommended_resources()
        .into_iter()
        .find(|(r, _)| r.plural == "namespaces")
        .expect("namespaces in core");
    assert_eq!(namespaces.1.scope, Scope::Cluster);
}

#[tokio::test]
async fn aggregated_discovery_answers_in_its_own_media_type() {
    let client = Cluster::new().client();
    let aggregated =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    for path in ["/api", "/apis"] {
        let response = client
            .send(
                axum::http::Request::get(path)
                    .header("accept", aggregated)
                    .body(kube::client::Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(
            response.headers()["content-type"],
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            "{path}: client-go reads the form from the Content-Type"
        );
    }
    // Without the aggregated type first, the plain list, as before.
    let plain: serde_json::Value = client
        .request(axum::http::Request::get("/apis").body(Vec::new()).unwrap())
        .await
        .unwrap();
    assert_eq!(plain["kind"], "APIGroupList");
}

#[tokio::test]
async fn metadata_reads_return_partial_object_metadata() {
    let client = Cluster::new().client();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    maps.create(&PostParams::default(), &config_map("one"))
        .await
        .unwrap();
    let one = maps.get_metadata("one").await.unwrap();
    assert_eq!(one.metadata.name.as_deref(), Some("one"));
    assert_eq!(
        one.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    let list = maps.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    // The raw answer holds no data: only metadata leaves the server.
    let raw: serde_json::Value = client
        .request(
            axum::http::Request::get("/api/v1/namespaces/default/configmaps")
                .header(
                    "accept",
                    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
                )
                .body(Vec::new())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(raw["kind"], "PartialObjectMetadataList");
    assert_eq!(raw["items"][0]["kind"], "PartialObjectMetadata");
    assert!(raw["items"][0].get("data").is_none(), "{raw}");
    assert!(raw["metadata"]["resourceVersion"].is_string(), "{raw}");
}

#[tokio::test]
async fn metadata_watches_stream_partial_objects_and_the_metadata_watcher_follows() {
    let cluster = Cluster::new();
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    let from = cluster.revision().to_string();
    let mut raw = maps
        .watch_metadata(&WatchParams::default().timeout(10), &from)
        .await
        .unwrap()
        .boxed();
    // kube 5's metadata watcher: a watcher over `Api<PartialObjectMeta<K>>`, which asks for
    // PartialObjectMetadata on every list and watch.
    let metadata: Api<PartialObjectMeta<ConfigMap>> = Api::namespaced(cluster.client(), "default");
    let mut watched = watcher(metadata, watcher::Config::default())
        .applied_objects()
        .boxed();
    maps.create(&PostParams::default(), &config_map("seen"))
        .await
        .unwrap();
    let event = tokio::time::timeout(Duration::from_secs(5), raw.try_next())
        .await
        .unwrap()
        .unwrap();
    match event {
        Some(WatchEvent::Added(object)) => {
            assert_eq!(object.metadata.name.as_deref(), Some("seen"));
            assert_eq!(
                object.types.map(|t| t.kind),
                Some("PartialObjectMetadata".into())
            );
        }
        other => panic!("expected the ADDED of `seen`, got {other:?}"),
    }
    let seen = tokio::time::timeout(Duration::from_secs(5), watched.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(seen.metadata.name.as_deref(), Some("seen"));
}

/// A write that asks for PartialObjectMetadata gets it (kube-rs's `patch_metadata`).
#[tokio::test]
async fn a_metadata_patch_answers_partial_object_metadata() {
    use kube::api::{Patch, PatchParams};
    let client = Cluster::new().client();
    let maps: Api<ConfigMap> = Api::namespaced(client, "default");
    maps.create(&PostParams::default(), &config_map("meta"))
        .await
        .unwrap();
    let patched = maps
        .patch_metadata(
            "meta",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"test": "123"}}})),
        )
        .await
        .unwrap();
    let types = patched.types.expect("the answer's type");
    assert_eq!(
        (types.kind.as_str(), types.api_version.as_str()),
        ("PartialObjectMetadata", "meta.k8s.io/v1")
    );
    assert_eq!(
        patched.metadata.annotations.unwrap_or_default().get("test"),
        Some(&"123".to_string())
    );
}

/// kube-rs's cordon and uncordon, and the field selector kubectl drains by: Nodes are served,
/// and an unset `spec.unschedulable` reads `false`.
#[tokio::test]
async fn nodes_cordon_and_select_by_schedulability() {
    use k8s_openapi::api::core::v1::Node;
    let client = Cluster::new().client();
    let nodes: Api<Node> = Api::all(client);
    nodes
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "fakenode"}})).unwrap(),
        )
        .await
        .unwrap();
    let schedulable = ListParams::default().fields("spec.unschedulable==false");
    assert_eq!(nodes.list(&schedulable).await.unwrap().items.len(), 1);
    nodes.cordon("fakenode").await.unwrap();
    assert_eq!(nodes.list(&schedulable).await.unwrap().items.len(), 0);
    nodes.uncordon("fakenode").await.unwrap();
    assert_eq!(nodes.list(&schedulable).await.unwrap().items.len(), 1);
}
