//! `kubectl auth whoami` and `kubectl auth can-i`: SelfSubjectReview and
//! SelfSubjectAccessReview answered from the token and the stored RBAC.

use barbican_sim::Cluster;
use k8s_openapi::api::{
    authentication::v1::{SelfSubjectReview, TokenRequest},
    authorization::v1::SelfSubjectAccessReview,
    core::v1::ServiceAccount,
};
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

async fn review_as(client: kube::Client, verb: &str, resource: &str, namespace: &str) -> bool {
    let review: SelfSubjectAccessReview = serde_json::from_value(json!({
        "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace}}
    }))
    .unwrap();
    Api::<SelfSubjectAccessReview>::all(client)
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap()
        .allowed
}

#[tokio::test]
async fn a_service_account_learns_who_it_is_and_what_rbac_lets_it_do() {
    let cluster = Cluster::new();
    let admin = cluster.client();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    accounts
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "reader"}})).unwrap(),
        )
        .await
        .unwrap();
    for object in [
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": "read-maps", "namespace": "default"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "read-maps", "namespace": "default"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-maps"},
               "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "default"}]}),
    ] {
        let resource = if object["kind"] == "Role" {
            "roles"
        } else {
            "rolebindings"
        };
        let api: Api<kube::api::DynamicObject> = Api::namespaced_with(
            admin.clone(),
            "default",
            &kube::api::ApiResource {
                group: "rbac.authorization.k8s.io".into(),
                version: "v1".into(),
                api_version: "rbac.authorization.k8s.io/v1".into(),
                kind: object["kind"].as_str().unwrap().into(),
                plural: resource.into(),
            },
        );
        let name = object["metadata"]["name"].as_str().unwrap().to_string();
        api.patch(&name, &PatchParams::apply("test"), &Patch::Apply(&object))
            .await
            .unwrap();
    }
    let request: TokenRequest = serde_json::from_value(json!({"spec": {}})).unwrap();
    let token = accounts
        .create_token_request("reader", &PostParams::default(), &request)
        .await
        .unwrap()
        .status
        .unwrap()
        .token
        .unwrap();
    cluster.enforce_rbac();
    let reader = cluster.client_with_token("reader", &token);

    let me = Api::<SelfSubjectReview>::all(reader.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({})).unwrap(),
        )
        .await
        .unwrap();
    let user = me.status.unwrap().user_info.unwrap();
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:default:reader")
    );

    assert!(review_as(reader.clone(), "list", "configmaps", "default").await);
    assert!(!review_as(reader.clone(), "delete", "configmaps", "default").await);
    assert!(!review_as(reader, "get", "secrets", "default").await);
    assert!(
        review_as(admin, "delete", "namespaces", "").await,
        "the administrator may do anything"
    );
}
