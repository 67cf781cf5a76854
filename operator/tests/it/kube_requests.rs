//! The operator's client counts every request by verb, resource and answer, and fails one that
//! has no answer in time, watches excepted (`barbican_operator::kube_requests`).

use std::time::Duration;

use barbican_operator::{
    kube_requests::{CountRequests, classify},
    metrics::Metrics,
};
use http::{Request, Response};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, Client,
    api::{ListParams, PostParams, WatchParams},
    client::Body,
};
use prometheus::{IntCounterVec, Opts};
use tower::Layer;

#[test]
fn requests_are_named_as_kube_apiserver_names_them() {
    let cases = [
        (
            "GET",
            "/api/v1/namespaces/ns/secrets/s",
            "",
            ("get", "secrets"),
        ),
        (
            "GET",
            "/api/v1/namespaces/ns/secrets",
            "limit=500",
            ("list", "secrets"),
        ),
        (
            "GET",
            "/api/v1/secrets",
            "watch=true&resourceVersion=1",
            ("watch", "secrets"),
        ),
        (
            "GET",
            "/api/v1/namespaces/openstack",
            "",
            ("get", "namespaces"),
        ),
        ("GET", "/api/v1/namespaces", "", ("list", "namespaces")),
        (
            "POST",
            "/apis/apps/v1/namespaces/ns/deployments",
            "",
            ("create", "deployments.apps"),
        ),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/ns/deployments/d",
            "fieldManager=x",
            ("patch", "deployments.apps"),
        ),
        (
            "PATCH",
            "/apis/barbican.openstack.c5c3.io/v1alpha1/namespaces/ns/barbicans/b/status",
            "",
            ("patch", "barbicans.barbican.openstack.c5c3.io/status"),
        ),
        (
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l",
            "",
            ("update", "leases.coordination.k8s.io"),
        ),
        (
            "DELETE",
            "/api/v1/namespaces/ns/pods/p",
            "",
            ("delete", "pods"),
        ),
        (
            "DELETE",
            "/api/v1/namespaces/ns/pods",
            "",
            ("deletecollection", "pods"),
        ),
        (
            "POST",
            "/api/v1/namespaces/ns/serviceaccounts/sa/token",
            "",
            ("create", "serviceaccounts/token"),
        ),
        ("GET", "/apis", "", ("list", "nonresource")),
        ("GET", "/version", "", ("list", "nonresource")),
    ];
    for (method, path, query, (verb, resource)) in cases {
        assert_eq!(
            classify(method, path, query),
            (verb, resource.to_string()),
            "{method} {path}?{query}"
        );
    }
}

fn counter() -> IntCounterVec {
    IntCounterVec::new(Opts::new("requests", "test"), &["verb", "resource", "code"]).unwrap()
}

fn count(counter: &IntCounterVec, verb: &str, resource: &str, code: &str) -> u64 {
    counter.with_label_values(&[verb, resource, code]).get()
}

/// A client whose requests go through the layer to a mock server.
fn client(
    counter: &IntCounterVec,
    timeout: Duration,
) -> (
    Client,
    tower_test::mock::Handle<Request<Body>, Response<Body>>,
) {
    let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let layered = CountRequests::new(counter.clone(), timeout).layer(service);
    (Client::new(layered, "default"), handle)
}

fn answer(status: u16, body: serde_json::Value) -> Response<Body> {
    Response::builder()
        .status(status)
        .body(Body::from(serde_json::to_vec(&body).unwrap()))
        .unwrap()
}

#[tokio::test]
async fn answers_are_counted_by_code_and_an_unanswered_request_times_out() {
    let counter = counter();
    let (client, mut handle) = client(&counter, Duration::from_millis(100));
    let server = tokio::spawn(async move {
        // A list, a conflicting create, then a get left unanswered.
        let (_, send) = handle.next_request().await.unwrap();
        send.send_response(answer(
            200,
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMapList",
            "metadata": {"resourceVersion": "1"}, "items": []}),
        ));
        let (_, send) = handle.next_request().await.unwrap();
        send.send_response(answer(
            409,
            serde_json::json!({"apiVersion": "v1", "kind": "Status",
            "status": "Failure", "reason": "AlreadyExists", "code": 409, "message": "exists"}),
        ));
        let (_, send) = handle.next_request().await.unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
        drop(send);
    });
    let maps: Api<ConfigMap> = Api::namespaced(client, "ns");
    maps.list(&ListParams::default()).await.unwrap();
    let mut map = ConfigMap::default();
    map.metadata.name = Some("m".into());
    assert!(maps.create(&PostParams::default(), &map).await.is_err());
    let unanswered = maps.get("m").await.unwrap_err();
    assert!(
        unanswered
            .to_string()
            .contains("did not answer get configmaps"),
        "{unanswered}"
    );
    assert_eq!(count(&counter, "list", "configmaps", "200"), 1);
    assert_eq!(count(&counter, "create", "configmaps", "409"), 1);
    assert_eq!(count(&counter, "get", "configmaps", "timeout"), 1);
    server.abort();
}

#[tokio::test]
async fn a_watch_outlives_the_timeout() {
    let counter = counter();
    let (client, mut handle) = client(&counter, Duration::from_millis(50));
    let maps: Api<ConfigMap> = Api::namespaced(client, "ns");
    let watching =
        tokio::spawn(async move { maps.watch(&WatchParams::default(), "0").await.map(|_| ()) });
    let (request, send) = handle.next_request().await.unwrap();
    assert!(request.uri().query().unwrap_or("").contains("watch=true"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !watching.is_finished(),
        "a watch must not be cut off by the timeout"
    );
    send.send_response(answer(200, serde_json::json!({})));
    watching.await.unwrap().unwrap();
    assert_eq!(count(&counter, "watch", "configmaps", "200"), 1);
    assert_eq!(count(&counter, "watch", "configmaps", "timeout"), 0);
}

#[tokio::test]
async fn the_operators_metrics_export_the_series() {
    let metrics = Metrics::new();
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = Client::new(metrics.count_requests().layer(service), "default");
    tokio::spawn(async move {
        let (_, send) = handle.next_request().await.unwrap();
        send.send_response(answer(
            200,
            serde_json::json!({"apiVersion": "v1",
            "kind": "ConfigMapList", "metadata": {}, "items": []}),
        ));
    });
    Api::<ConfigMap>::namespaced(client, "ns")
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(metrics.kube_requests("list", "configmaps", "200"), 1);
    let rendered = metrics.render();
    assert!(
        rendered.contains(
            "barbican_operator_kube_requests_total{code=\"200\",resource=\"configmaps\",verb=\"list\"} 1"
        ),
        "{rendered}"
    );
}
