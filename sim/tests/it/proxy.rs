//! `services/<name:port>/proxy/<path>` forwards to the Service's backend as kube-apiserver does,
//! and answers 404 without the Service and 503 without an endpoint.

use axum::{Router, extract::RawQuery, http, routing::get};
use barbican_sim::Cluster;
use k8s_openapi::api::core::v1::Service;
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use serde_json::json;

async fn backend() -> std::net::SocketAddr {
    let app = Router::new().route(
        "/healthcheck",
        get(|RawQuery(query): RawQuery| async move {
            (
                http::StatusCode::from_u16(if query.as_deref() == Some("fail=1") {
                    503
                } else {
                    200
                })
                .unwrap(),
                format!("ok query={}", query.unwrap_or_default()),
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

async fn proxied(client: &kube::Client, path: &str) -> (u16, String) {
    let request = http::Request::get(path).body(Vec::new()).unwrap();
    match client.request_text(request).await {
        Ok(text) => (200, text),
        Err(kube::Error::Api(status)) => (status.code, status.message),
        Err(other) => panic!("{other}"),
    }
}

#[tokio::test]
async fn the_proxy_reaches_the_backend_by_port_number_or_name_and_says_when_it_cannot() {
    let cluster = Cluster::new();
    let client = cluster.client();
    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    for name in ["barbican", "lonely"] {
        services
            .patch(
                name,
                &PatchParams::apply("test"),
                &Patch::Apply(json!({"apiVersion": "v1", "kind": "Service",
                    "metadata": {"name": name},
                    "spec": {"ports": [{"name": "api", "port": 9311}]}})),
            )
            .await
            .unwrap();
    }
    cluster
        .services()
        .register("default", "barbican", 9311, backend().await);

    let base = "/api/v1/namespaces/default/services";
    assert_eq!(
        proxied(
            &client,
            &format!("{base}/barbican:9311/proxy/healthcheck?x=1")
        )
        .await,
        (200, "ok query=x=1".to_string())
    );
    assert_eq!(
        proxied(&client, &format!("{base}/barbican:api/proxy/healthcheck"))
            .await
            .0,
        200,
        "a named port"
    );
    assert_eq!(
        proxied(&client, &format!("{base}/barbican/proxy/healthcheck"))
            .await
            .0,
        200,
        "the first port"
    );
    let (code, _) = proxied(
        &client,
        &format!("{base}/barbican:9311/proxy/healthcheck?fail=1"),
    )
    .await;
    assert_eq!(code, 503, "the backend's own status comes back");
    assert_eq!(
        proxied(&client, &format!("{base}/lonely:9311/proxy/healthcheck")).await,
        (
            503,
            "no endpoints available for service \"lonely\"".to_string()
        )
    );
    assert_eq!(
        proxied(&client, &format!("{base}/ghost:9311/proxy/healthcheck"))
            .await
            .0,
        404
    );
}

/// `https:` speaks TLS to the backend and takes its certificate unverified, as kube-apiserver
/// does; `http:` against the same TLS backend gets no answer it can read.
#[tokio::test]
async fn the_https_scheme_reaches_a_tls_backend_without_verifying_it() {
    let cluster = Cluster::new();
    let client = cluster.client();
    Api::<Service>::namespaced(client.clone(), "default")
        .patch(
            "kms",
            &PatchParams::apply("test"),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "kms"}, "spec": {"ports": [{"port": 9311}]}})),
        )
        .await
        .unwrap();
    let authority = std::sync::Arc::new(barbican_sim::tls::Authority::new());
    let config = std::sync::Arc::new(authority.server_config("127.0.0.1").unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().route("/healthcheck", get(|| async { "ok over tls" }));
    let (_down, watching) = tokio::sync::watch::channel(false);
    tokio::spawn(barbican_sim::listener::serve_router_with_outages_and_tls(
        listener,
        watching,
        app,
        std::sync::Arc::new(move || Some(config.clone())),
    ));
    cluster.services().register("default", "kms", 9311, addr);
    let base = "/api/v1/namespaces/default/services";
    assert_eq!(
        proxied(&client, &format!("{base}/https:kms:9311/proxy/healthcheck")).await,
        (200, "ok over tls".to_string())
    );
    assert_eq!(
        proxied(&client, &format!("{base}/http:kms:9311/proxy/healthcheck"))
            .await
            .0,
        503
    );
    assert_eq!(
        proxied(&client, &format!("{base}/ftp:kms:9311/proxy/healthcheck"))
            .await
            .0,
        400
    );
}
