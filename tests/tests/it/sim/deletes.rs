//! Deletes as kube-apiserver answers them, through kube::Client: DeleteOptions in the body
//! (dry run, preconditions), a Status for an object gone at once, the object while a
//! finalizer holds it or for the kinds that return it, and deletecollection.

use barbican_operator::api::{Barbican, fixtures::minimal_barbican};
use barbican_sim::Cluster;
use k8s_openapi::api::core::v1::{ConfigMap, Service, ServiceAccount};
use kube::{
    Api, CustomResourceExt, ResourceExt,
    api::{DeleteParams, ListParams, PostParams, Preconditions},
};
use serde_json::json;

fn config_map(name: &str, labels: serde_json::Value) -> ConfigMap {
    serde_json::from_value(
        json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}),
    )
    .unwrap()
}

#[tokio::test]
async fn a_server_side_dry_run_delete_keeps_the_object() {
    let client = Cluster::new().client();
    let maps: Api<ConfigMap> = Api::namespaced(client, "default");
    maps.create(&PostParams::default(), &config_map("kept", json!({})))
        .await
        .unwrap();
    // kube-rs, like kubectl --dry-run=server, sends dryRun in the DeleteOptions body.
    let params = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    maps.delete("kept", &params).await.unwrap();
    assert!(maps.get_opt("kept").await.unwrap().is_some());
}

#[tokio::test]
async fn preconditions_that_do_not_hold_are_a_409_and_keep_the_object() {
    let client = Cluster::new().client();
    let maps: Api<ConfigMap> = Api::namespaced(client, "default");
    let created = maps
        .create(&PostParams::default(), &config_map("guarded", json!({})))
        .await
        .unwrap();
    for preconditions in [
        Preconditions {
            uid: Some("not-its-uid".into()),
            resource_version: None,
        },
        Preconditions {
            uid: None,
            resource_version: Some("1".into()),
        },
    ] {
        let params = DeleteParams {
            preconditions: Some(preconditions),
            ..DeleteParams::default()
        };
        match maps.delete("guarded", &params).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 409, "{status:?}");
                assert!(
                    status.message.contains("in the precondition")
                        && status.message.contains("does not match")
                        && status
                            .message
                            .starts_with("Operation cannot be fulfilled on ConfigMap \"guarded\""),
                    "{}",
                    status.message
                );
            }
            other => panic!("expected a 409, got {other:?}"),
        }
    }
    assert!(maps.get_opt("guarded").await.unwrap().is_some());
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: created.metadata.uid.clone(),
            resource_version: created.metadata.resource_version.clone(),
        }),
        ..DeleteParams::default()
    };
    maps.delete("guarded", &params).await.unwrap();
    assert!(maps.get_opt("guarded").await.unwrap().is_none());
}

#[tokio::test]
async fn a_delete_answers_a_status_unless_the_object_remains_or_its_kind_returns_it() {
    let client = Cluster::new().client();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    maps.create(&PostParams::default(), &config_map("gone", json!({})))
        .await
        .unwrap();
    let answer = maps.delete("gone", &DeleteParams::default()).await.unwrap();
    let status = answer
        .right()
        .expect("a Status for a ConfigMap gone at once");
    let details = status.details.unwrap();
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("gone", "configmaps")
    );

    let mut held = config_map("held", json!({}));
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    maps.create(&PostParams::default(), &held).await.unwrap();
    let answer = maps.delete("held", &DeleteParams::default()).await.unwrap();
    let object = answer.left().expect("the object a finalizer holds");
    assert!(object.metadata.deletion_timestamp.is_some());

    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "robot"}})).unwrap();
    accounts
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    let answer = accounts
        .delete("robot", &DeleteParams::default())
        .await
        .unwrap();
    assert!(answer.is_left(), "a ServiceAccount's registry returns it");

    let services: Api<Service> = Api::namespaced(client, "default");
    let service: Service = serde_json::from_value(
        json!({"metadata": {"name": "api"}, "spec": {"ports": [{"port": 9311}]}}),
    )
    .unwrap();
    services
        .create(&PostParams::default(), &service)
        .await
        .unwrap();
    let answer = services
        .delete("api", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(
        answer.left().map(|s| s.name_any()).as_deref(),
        Some("api"),
        "a Service's registry returns it"
    );
}

#[tokio::test]
async fn a_custom_resource_delete_answers_the_deleted_object() {
    let cluster = Cluster::new();
    cluster
        .install_crd(serde_json::to_value(Barbican::crd()).unwrap())
        .unwrap();
    let barbicans: Api<Barbican> = Api::namespaced(cluster.client(), "default");
    let mut object: Barbican = serde_json::from_value(minimal_barbican()).unwrap();
    object.metadata.namespace = None;
    let created = barbicans
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    let answer = barbicans
        .delete(&created.name_any(), &DeleteParams::default())
        .await
        .unwrap();
    let deleted = answer.left().expect("the deleted Barbican");
    assert_eq!(deleted.metadata.uid, created.metadata.uid);
    assert!(
        barbicans
            .get_opt(&created.name_any())
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn deletecollection_deletes_what_the_selector_matches() {
    let client = Cluster::new().client();
    let maps: Api<ConfigMap> = Api::namespaced(client, "default");
    for (name, team) in [("a", "red"), ("b", "red"), ("c", "blue")] {
        maps.create(
            &PostParams::default(),
            &config_map(name, json!({"team": team})),
        )
        .await
        .unwrap();
    }
    let answer = maps
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("team=red"),
        )
        .await
        .unwrap();
    let deleted = answer.left().expect("the list of what was deleted");
    let mut names: Vec<String> = deleted
        .items
        .iter()
        .map(|m| m.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    let left: Vec<String> = maps
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|m| m.metadata.name)
        .collect();
    assert_eq!(left, ["c"]);
}
