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

/// A new cluster holds what kube-apiserver starts with: `default/kubernetes` at 10.96.0.1,
/// the bootstrap ClusterRoles bound as kube-apiserver binds them, and a `default`
/// ServiceAccount in every namespace, including one created later.
#[tokio::test]
async fn a_new_cluster_and_a_new_namespace_hold_what_kube_apiserver_gives_them() {
    use k8s_openapi::api::{
        core::v1::{Namespace, ServiceAccount},
        rbac::v1::{ClusterRole, ClusterRoleBinding},
    };
    let cluster = Cluster::new();
    let client = cluster.client();
    let kubernetes = Api::<Service>::namespaced(client.clone(), "default")
        .get("kubernetes")
        .await
        .unwrap();
    let spec = kubernetes.spec.unwrap();
    assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.0.1"));
    assert_eq!(spec.ports.unwrap()[0].port, 443);
    let roles = Api::<ClusterRole>::all(client.clone());
    for name in ["cluster-admin", "admin", "edit", "view"] {
        assert!(roles.get_opt(name).await.unwrap().is_some(), "{name}");
    }
    let view = roles.get("view").await.unwrap().rules.unwrap();
    assert!(
        view.iter().all(|r| r
            .verbs
            .iter()
            .all(|v| ["get", "list", "watch"].contains(&v.as_str()))),
        "view only reads"
    );
    assert!(
        view.iter()
            .all(|r| !r.resources.iter().flatten().any(|res| res == "secrets")),
        "view does not read Secrets"
    );
    let binding = Api::<ClusterRoleBinding>::all(client.clone())
        .get("cluster-admin")
        .await
        .unwrap();
    assert_eq!(binding.subjects.unwrap()[0].name, "system:masters");
    for namespace in ["default", "kube-system", "kube-public"] {
        let accounts = Api::<ServiceAccount>::namespaced(client.clone(), namespace);
        assert!(
            accounts.get_opt("default").await.unwrap().is_some(),
            "{namespace}"
        );
    }
    Api::<Namespace>::all(client.clone())
        .create(
            &Default::default(),
            &serde_json::from_value(json!({"metadata": {"name": "openstack"}})).unwrap(),
        )
        .await
        .unwrap();
    let accounts = Api::<ServiceAccount>::namespaced(client.clone(), "openstack");
    assert!(accounts.get_opt("default").await.unwrap().is_some());
    // A Service created afterwards gets the next address, never the API server's.
    let other = Api::<Service>::namespaced(client, "default")
        .patch(
            "api",
            &PatchParams::apply("op"),
            &Patch::Apply(&service(json!({"a": "1"}))),
        )
        .await
        .unwrap();
    assert_ne!(other.spec.unwrap().cluster_ip.as_deref(), Some("10.96.0.1"));
}

/// A Pod created through the API starts `Pending` with its QoS class and the `default`
/// ServiceAccount, as kube-apiserver's PrepareForCreate and admission leave it.
#[tokio::test]
async fn a_new_pod_starts_pending() {
    use k8s_openapi::api::core::v1::Pod;
    let cluster = Cluster::new();
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let pod = pods
        .create(
            &Default::default(),
            &serde_json::from_value(json!({"metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}}))
            .unwrap(),
        )
        .await
        .unwrap();
    let status = pod.status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Pending"));
    assert_eq!(status.qos_class.as_deref(), Some("BestEffort"));
    let spec = pod.spec.unwrap();
    assert_eq!(spec.service_account_name.as_deref(), Some("default"));
    assert_eq!(
        spec.containers[0].image_pull_policy.as_deref(),
        Some("Always")
    );
}

/// kube-apiserver decodes a body into the type its URL names: a create that leaves out
/// `apiVersion` and `kind` stores a ConfigMap of `v1`, and its managedFields entry records that
/// version (it was empty).
#[tokio::test]
async fn a_body_without_api_version_and_kind_is_read_as_the_urls_type() {
    let client = Cluster::new().client();
    let body = json!({"metadata": {"name": "bare"}, "data": {"a": "1"}});
    let created: serde_json::Value = client
        .request(
            axum::http::Request::post("/api/v1/namespaces/default/configmaps?fieldManager=curl")
                .header("content-type", "application/json")
                .body(serde_json::to_vec(&body).unwrap())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        (&created["apiVersion"], &created["kind"]),
        (&json!("v1"), &json!("ConfigMap"))
    );
    let entry = &created["metadata"]["managedFields"][0];
    assert_eq!(entry["manager"], "curl");
    assert_eq!(entry["apiVersion"], "v1", "{entry}");
}

/// Applying, without force, the manifest another manager created: kube-apiserver finds no
/// conflict, because every field has the same value; the list element as a whole differs (the
/// server defaulted `imagePullPolicy` into it), which structured-merge-diff does not compare.
/// (The official Python client's `create_from_yaml(..., apply=True)` e2e test does this.)
#[tokio::test]
async fn applying_what_another_manager_created_co_owns_it_without_conflict() {
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::api::PostParams;
    let cluster = Cluster::new();
    let deployments: Api<Deployment> = Api::namespaced(cluster.client(), "default");
    let manifest = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "nginx-app", "namespace": "default", "labels": {"app": "nginx"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.15.4",
                    "ports": [{"containerPort": 80}]}]}}}});
    deployments
        .create(
            &PostParams {
                field_manager: Some("creator".into()),
                ..Default::default()
            },
            &serde_json::from_value(manifest.clone()).unwrap(),
        )
        .await
        .unwrap();
    let applied = deployments
        .patch(
            "nginx-app",
            &PatchParams::apply("applier"),
            &Patch::Apply(&manifest),
        )
        .await
        .expect("the same values co-own, without conflict");
    let managers: Vec<String> = applied
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    // kube-apiserver sorts the entries: Apply before Update (sortEncodedManagedFields).
    assert_eq!(managers, ["applier", "creator"]);
    // A different value still conflicts.
    let mut changed = manifest;
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.16");
    match deployments
        .patch(
            "nginx-app",
            &PatchParams::apply("applier"),
            &Patch::Apply(&changed),
        )
        .await
    {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 409);
            assert!(status.message.contains(".image"), "{}", status.message);
        }
        other => panic!("a different image conflicts, got {other:?}"),
    }
}
