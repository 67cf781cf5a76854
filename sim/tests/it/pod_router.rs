//! The API as the kubelet serves it to pods (`Cluster::pod_router`): a service-account token
//! is required and RBAC decides, even on a cluster that lets its other clients act as its
//! administrator. Without this a tenant's pod reaching `kubernetes.default.svc` would be
//! cluster-admin.

use barbican_sim::Cluster;
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use serde_json::json;

async fn status(router: axum::Router, path: &str, token: Option<&str>) -> u16 {
    let mut request = axum::http::Request::get(path);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response =
        tower::ServiceExt::oneshot(router, request.body(axum::body::Body::empty()).unwrap())
            .await
            .unwrap();
    response.status().as_u16()
}

#[tokio::test]
async fn a_pod_needs_its_token_and_gets_only_what_rbac_grants() {
    let cluster = Cluster::new();
    let path = "/api/v1/namespaces/default/configmaps";
    // The tests' own clients: the administrator, RBAC not enforced.
    assert_eq!(status(cluster.router(), path, None).await, 200);
    // A pod: no token, no answer; its token, only what RBAC grants.
    assert_eq!(status(cluster.pod_router(), path, None).await, 401);
    assert_eq!(
        status(cluster.pod_router(), path, Some("forged.token.value")).await,
        401
    );
    let token = cluster
        .service_account_token("default", "default", &[], 3607, None)
        .unwrap();
    assert_eq!(status(cluster.pod_router(), path, Some(&token)).await, 403);
    let admin = cluster.client();
    for (plural, kind, object) in [
        (
            "roles",
            "Role",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "read-maps", "namespace": "default"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]}),
        ),
        (
            "rolebindings",
            "RoleBinding",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding", "metadata": {"name": "read-maps", "namespace": "default"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read-maps"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "default"}]}),
        ),
    ] {
        let api: Api<kube::api::DynamicObject> = Api::namespaced_with(
            admin.clone(),
            "default",
            &kube::api::ApiResource {
                group: "rbac.authorization.k8s.io".into(),
                version: "v1".into(),
                api_version: "rbac.authorization.k8s.io/v1".into(),
                kind: kind.into(),
                plural: plural.into(),
            },
        );
        api.patch(
            "read-maps",
            &PatchParams::apply("test"),
            &Patch::Apply(&object),
        )
        .await
        .unwrap();
    }
    assert_eq!(status(cluster.pod_router(), path, Some(&token)).await, 200);
    let secrets = "/api/v1/namespaces/default/secrets";
    assert_eq!(
        status(cluster.pod_router(), secrets, Some(&token)).await,
        403
    );
    // Anyone authenticated may ask the server's version.
    assert_eq!(
        status(cluster.pod_router(), "/version", Some(&token)).await,
        200
    );
}
