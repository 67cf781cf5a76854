//! The target-cluster registry kept in step with registration Secrets on a simulated
//! management cluster: registered, re-engaged on a changed hash, refused with the reason,
//! deregistered on delete or when the label goes.

use std::time::Duration;

use barbican_operator::clusters::{REGISTRATION_LABEL, Registry, ResolveError, run_registry};
use barbican_sim::Cluster;
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api,
    api::{DeleteParams, Patch, PatchParams},
};
use serde_json::json;

const NAMESPACE: &str = "c5c3-clusters";

fn kubeconfig(token: &str, user_block: Option<&str>) -> String {
    let user = user_block
        .map(String::from)
        .unwrap_or_else(|| format!("{{token: {token}}}"));
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: edge\n  cluster: {{server: 'https://edge.example:6443'}}\nusers:\n- name: operator\n  user: {user}\ncontexts:\n- name: edge\n  context: {{cluster: edge, user: operator}}\ncurrent-context: edge\n"
    )
}

async fn register(api: &Api<Secret>, name: &str, label: &str, data: serde_json::Value) {
    api.patch(
        name,
        &PatchParams::apply("test").force(),
        &Patch::Apply(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "labels": {REGISTRATION_LABEL: label}},
            "stringData": data})),
    )
    .await
    .unwrap();
}

/// Waits (real time: the registry follows a watch) until `check` holds.
async fn until(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never: {what}");
}

#[tokio::test]
async fn registrations_engage_re_engage_refuse_and_deregister() {
    let cluster = Cluster::new();
    let client = cluster.client();
    barbican_tests::namespace(&client, NAMESPACE).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let registry = Registry::default();
    let task = tokio::spawn(run_registry(
        client,
        NAMESPACE.to_string(),
        registry.clone(),
        std::future::pending(),
    ));

    assert_eq!(
        registry.resolve("edge-1").unwrap_err(),
        ResolveError::NotFound
    );
    assert_eq!(
        registry.resolve("edge-1").unwrap_err().to_string(),
        "cluster not found"
    );

    register(
        &secrets,
        "edge-1",
        "true",
        json!({"kubeconfig": kubeconfig("a", None)}),
    )
    .await;
    until("edge-1 engages", || registry.resolve("edge-1").is_ok()).await;
    let first = registry.resolve("edge-1").unwrap();
    assert_eq!(first.namespaces, None);

    register(
        &secrets,
        "edge-1",
        "true",
        json!({"kubeconfig": kubeconfig("a", None), "namespaces": "openstack"}),
    )
    .await;
    until("edge-1 re-engages", || {
        registry
            .resolve("edge-1")
            .is_ok_and(|e| e.hash != first.hash)
    })
    .await;
    assert_eq!(
        registry.resolve("edge-1").unwrap().namespaces,
        Some(vec!["openstack".to_string()])
    );

    register(
        &secrets,
        "edge-2",
        "true",
        json!({"kubeconfig": kubeconfig("", Some("{exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}"))}),
    )
    .await;
    until("edge-2 is refused", || {
        matches!(
            registry.resolve("edge-2"),
            Err(ResolveError::Refused { .. })
        )
    })
    .await;
    assert!(
        registry
            .resolve("edge-2")
            .unwrap_err()
            .to_string()
            .contains("exec")
    );

    register(
        &secrets,
        "edge-3",
        "false",
        json!({"kubeconfig": kubeconfig("c", None)}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        registry.resolve("edge-3").unwrap_err(),
        ResolveError::NotFound
    );

    secrets
        .delete("edge-1", &DeleteParams::default())
        .await
        .unwrap();
    until("edge-1 deregisters", || {
        matches!(registry.resolve("edge-1"), Err(ResolveError::NotFound))
    })
    .await;
    task.abort();

    assert_eq!(
        Registry::disabled().resolve("edge-1").unwrap_err(),
        ResolveError::Disabled
    );
}

/// A target cluster's client counts its requests into the operator's
/// `barbican_operator_kube_requests_total`, as the management cluster's does: here one that
/// cannot connect (nothing listens at port 1) is counted as `error`.
#[tokio::test]
async fn an_engaged_clusters_requests_are_counted() {
    let cluster = Cluster::new();
    let client = cluster.client();
    barbican_tests::namespace(&client, NAMESPACE).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let metrics = barbican_operator::metrics::Metrics::new();
    let registry = Registry::default().counting(metrics.count_requests());
    let task = tokio::spawn(run_registry(
        client,
        NAMESPACE.to_string(),
        registry.clone(),
        std::future::pending(),
    ));
    let unreachable =
        kubeconfig("a", None).replace("https://edge.example:6443", "https://127.0.0.1:1");
    register(
        &secrets,
        "edge-1",
        "true",
        json!({"kubeconfig": unreachable}),
    )
    .await;
    until("edge-1 engages", || registry.resolve("edge-1").is_ok()).await;
    let edge = registry.resolve("edge-1").unwrap();
    let listed = Api::<Secret>::all(edge.client)
        .list(&Default::default())
        .await;
    assert!(listed.is_err(), "nothing listens at 127.0.0.1:1");
    assert_eq!(metrics.kube_requests("list", "secrets", "error"), 1);
    task.abort();
}
