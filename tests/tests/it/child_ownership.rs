//! The ownership rule every write of a child passes (issue: a Barbican named like another
//! team's objects overwrote and deleted them): against a real API server (the sim), a foreign
//! object in a child's place is never applied over, created over or deleted, on the management
//! cluster (ownerReference) and on a target cluster (owner labels); the owner's own children
//! are written as before.

use barbican_operator::controller::runtime::cache::Cache;
use barbican_operator::controller::runtime::children::{ChildError, Children, Owner, owner_labels};
use barbican_sim::Cluster;
use k8s_openapi::api::core::v1::{Namespace, Service};
use kube::{
    Api, Resource,
    api::{ObjectMeta, PostParams},
    runtime::{reflector::store::Writer, watcher},
};
use serde_json::json;

fn owner(uid: &str) -> Owner {
    Owner {
        kind: "Barbican".into(),
        name: "kms".into(),
        namespace: "team-b".into(),
        uid: Some(uid.into()),
    }
}

fn service(labels: Option<std::collections::BTreeMap<String, String>>) -> Service {
    serde_json::from_value(json!({
        "metadata": {"name": "kms", "namespace": "team-b", "labels": labels},
        "spec": {"selector": {"app": "team-b"}, "ports": [{"port": 80}]}
    }))
    .unwrap()
}

/// The Service the Barbican `kms` wants, stamped for `children`.
fn desired(children: &Children, barbican_uid: &str) -> Service {
    let mut barbican = barbican_operator::api::fixtures::barbican();
    barbican.metadata = ObjectMeta {
        name: Some("kms".into()),
        namespace: Some("team-b".into()),
        uid: Some(barbican_uid.into()),
        ..ObjectMeta::default()
    };
    let mut wanted: Service = serde_json::from_value(json!({
        "metadata": {"name": "kms", "namespace": "team-b"},
        "spec": {"selector": {"app": "barbican"}, "ports": [{"port": 9311}]}
    }))
    .unwrap();
    children.stamp(&mut wanted.metadata, &barbican);
    wanted
}

async fn cluster_with_namespace() -> Cluster {
    let cluster = Cluster::new();
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "team-b"}})).unwrap(),
        )
        .await
        .unwrap();
    cluster
}

/// Runs every write against the foreign `kms` Service and checks it is untouched.
async fn a_foreign_service_is_never_written(cluster: &Cluster, children: &Children) {
    let api: Api<Service> = Api::namespaced(cluster.client(), "team-b");
    let foreign = api.get("kms").await.unwrap();
    let version = foreign.meta().resource_version.clone();

    let taken = children
        .ensure(&desired(children, "uid-1"))
        .await
        .unwrap_err();
    let ChildError::NameTaken(taken) = taken else {
        panic!("an API error instead of NameTaken: {taken}")
    };
    assert_eq!(
        (taken.kind.as_str(), taken.name.as_str()),
        ("Service", "kms")
    );
    assert!(
        taken
            .to_string()
            .contains("is not owned by Barbican \"kms\""),
        "{taken}"
    );
    assert!(matches!(
        children.create(&desired(children, "uid-1")).await,
        Err(ChildError::NameTaken(_))
    ));
    assert!(matches!(
        children.own::<Service>("kms").await,
        Err(ChildError::NameTaken(_))
    ));
    assert!(
        !children.delete::<Service>("kms").await.unwrap(),
        "no delete issued"
    );

    let after = api.get("kms").await.unwrap();
    assert_eq!(after.meta().resource_version, version, "never modified");
    assert_eq!(
        after.spec.unwrap().selector.unwrap()["app"],
        "team-b",
        "still selects team B's pods"
    );
}

#[tokio::test]
async fn on_the_management_cluster_only_a_controller_reference_makes_a_child_ours() {
    let cluster = cluster_with_namespace().await;
    let api: Api<Service> = Api::namespaced(cluster.client(), "team-b");
    // Team B's Service, even carrying the owner labels a target cluster would go by.
    let labels = owner_labels("Barbican", "kms", "team-b");
    api.create(&PostParams::default(), &service(Some(labels)))
        .await
        .unwrap();
    let children = Children::local(cluster.client(), owner("uid-1"), Default::default());
    a_foreign_service_is_never_written(&cluster, &children).await;

    // Once team B's Service is gone, the Barbican's own is created, applied and deleted.
    api.delete("kms", &Default::default()).await.unwrap();
    let live = children.ensure(&desired(&children, "uid-1")).await.unwrap();
    assert_eq!(live.spec.unwrap().ports.unwrap()[0].port, 9311);
    assert!(children.own::<Service>("kms").await.unwrap().is_some());
    // Another Barbican of the same name (a new uid) is not its owner either.
    let successor = Children::local(cluster.client(), owner("uid-2"), Default::default());
    assert!(!successor.delete::<Service>("kms").await.unwrap());
    assert!(children.delete::<Service>("kms").await.unwrap());
}

#[tokio::test]
async fn on_a_target_cluster_only_the_owner_labels_make_a_child_ours() {
    let cluster = cluster_with_namespace().await;
    let api: Api<Service> = Api::namespaced(cluster.client(), "team-b");
    api.create(&PostParams::default(), &service(None))
        .await
        .unwrap();
    let children = Children::remote(cluster.client(), owner("uid-1"), "edge-1", None);
    a_foreign_service_is_never_written(&cluster, &children).await;
    let taken = children
        .ensure(&desired(&children, "uid-1"))
        .await
        .unwrap_err();
    assert!(
        taken.to_string().contains("on cluster \"edge-1\""),
        "{taken}"
    );

    api.delete("kms", &Default::default()).await.unwrap();
    children.ensure(&desired(&children, "uid-1")).await.unwrap();
    assert!(children.delete::<Service>("kms").await.unwrap());
}

/// The operations of `service`'s managedFields entries, in order.
fn operations(service: &Service) -> Vec<String> {
    service
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| e.operation.clone().unwrap_or_default())
        .collect()
}

/// A cache filled with `objects`, as a watch's first list fills it.
fn cache_of(objects: Vec<Service>) -> (Cache, Writer<Service>) {
    let cache = Cache::default();
    let mut writer = cache.writer::<Service>();
    writer.apply_watcher_event(&watcher::Event::Init);
    for mut object in objects {
        // As the operator's watches keep them.
        barbican_operator::controller::runtime::cache::slim(&mut object);
        writer.apply_watcher_event(&watcher::Event::InitApply(object));
    }
    writer.apply_watcher_event(&watcher::Event::InitDone);
    (cache, writer)
}

/// The check and the write leave no window (issue 61, item 6): a child the cache holds as the
/// owner's, replaced by team B's Service before the write, refuses the apply (it names the uid
/// it checked) instead of being taken over; a foreign Service the cache has not seen makes the
/// create a 409, and is then read and refused.
#[tokio::test]
async fn a_child_replaced_after_its_check_is_not_taken_over() {
    let cluster = cluster_with_namespace().await;
    let api: Api<Service> = Api::namespaced(cluster.client(), "team-b");
    let plain = Children::local(cluster.client(), owner("uid-1"), Default::default());
    let ours = plain.ensure(&desired(&plain, "uid-1")).await.unwrap();
    let (cache, _writer) = cache_of(vec![ours]);
    let children = Children::local(cluster.client(), owner("uid-1"), cache);

    api.delete("kms", &Default::default()).await.unwrap();
    api.create(&PostParams::default(), &service(None))
        .await
        .unwrap();
    let foreign = api.get("kms").await.unwrap();
    let mut changed = desired(&children, "uid-1");
    changed.spec.as_mut().unwrap().ports.as_mut().unwrap()[0].port = 9312;
    let refused = children.ensure(&changed).await.unwrap_err();
    assert!(
        refused.to_string().contains("metadata.uid"),
        "refused by the API server for the uid it named: {refused}"
    );
    let after = api.get("kms").await.unwrap();
    assert_eq!(
        after.metadata.resource_version,
        foreign.metadata.resource_version
    );
    assert_eq!(after.spec.unwrap().selector.unwrap()["app"], "team-b");

    let (unseen, _writer) = cache_of(vec![]);
    let children = Children::local(cluster.client(), owner("uid-1"), unseen);
    assert!(matches!(
        children.ensure(&desired(&children, "uid-1")).await,
        Err(ChildError::NameTaken(_))
    ));
    let after = api.get("kms").await.unwrap();
    assert_eq!(
        after.metadata.resource_version,
        foreign.metadata.resource_version
    );
}

/// A child is created by POST, whose fields kube-apiserver records under the operator's
/// `Update` entry; a later spec that leaves one out still removes it from the child (the
/// creation's ownership is folded into the operator's apply entry first).
#[tokio::test]
async fn a_field_a_created_child_no_longer_wants_is_removed() {
    let cluster = cluster_with_namespace().await;
    let (cache, _writer) = cache_of(vec![]);
    let children = Children::local(cluster.client(), owner("uid-1"), cache);
    let mut with_extra = desired(&children, "uid-1");
    with_extra
        .spec
        .as_mut()
        .unwrap()
        .selector
        .as_mut()
        .unwrap()
        .insert("tier".into(), "api".into());
    let created = children.ensure(&with_extra).await.unwrap();
    assert_eq!(operations(&created), ["Update"], "created by POST");

    let live = children.ensure(&desired(&children, "uid-1")).await.unwrap();
    assert_eq!(operations(&live), ["Apply"]);
    let selector = live.spec.unwrap().selector.unwrap();
    assert_eq!(selector.get("tier"), None, "{selector:?}");
}
