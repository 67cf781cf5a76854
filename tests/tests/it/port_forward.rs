//! `pods/portforward` on a simulated cluster served over TCP, and the operator's tunnel through
//! it: bytes reach the Pod's stand-in and come back; a Pod with nothing behind its port says so
//! on the error channel; a Service without a ready endpoint is refused before anything is
//! forwarded.

use barbican_operator::clusters::tunnel::{Tunnel, TunnelError};
use barbican_sim::Cluster;
use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api, Client,
    api::{DynamicObject, Patch, PatchParams},
    discovery::ApiResource,
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// A TCP server that answers every line with `echo: <line>`.
async fn echo_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0u8; 1024];
                while let Ok(n) = tcp.read(&mut buffer).await {
                    if n == 0 {
                        break;
                    }
                    let mut answer = b"echo: ".to_vec();
                    answer.extend_from_slice(&buffer[..n]);
                    if tcp.write_all(&answer).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

async fn apply(client: &Client, api_version: &str, kind: &str, plural: &str, object: Value) {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let resource = ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: api_version.into(),
        kind: kind.into(),
        plural: plural.into(),
    };
    let mut object = object;
    object["apiVersion"] = json!(api_version);
    object["kind"] = json!(kind);
    let name = object["metadata"]["name"].as_str().unwrap().to_string();
    Api::<DynamicObject>::namespaced_with(client.clone(), "default", &resource)
        .patch(&name, &PatchParams::apply("test"), &Patch::Apply(object))
        .await
        .unwrap();
}

/// A cluster served over TCP, a client of it, and the Pod `bao-0` (no backend yet).
async fn served() -> (Cluster, Client) {
    let cluster = Cluster::new();
    let addr = cluster.serve_on_loopback().await.unwrap();
    let client =
        Client::try_from(kube::Config::new(format!("http://{addr}").parse().unwrap())).unwrap();
    apply(
        &client,
        "v1",
        "Pod",
        "pods",
        json!({"metadata": {"name": "bao-0", "labels": {"app": "bao"}},
            "spec": {"containers": [{"name": "bao", "image": "openbao"}]}}),
    )
    .await;
    (cluster, client)
}

#[tokio::test]
async fn a_port_forward_carries_bytes_to_the_pod_and_back() {
    let (cluster, client) = served().await;
    cluster
        .services()
        .register_pod("default", "bao-0", 8200, echo_server().await);
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let mut forwarder = pods.portforward("bao-0", &[8200]).await.unwrap();
    let mut stream = forwarder.take_stream(8200).unwrap();
    stream.write_all(b"ping").await.unwrap();
    let mut answer = [0u8; 10];
    stream.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"echo: ping");
    forwarder.abort();
}

#[tokio::test]
async fn a_pod_without_anything_behind_its_port_says_so_on_the_error_channel() {
    let (_cluster, client) = served().await;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let mut forwarder = pods.portforward("bao-0", &[8200]).await.unwrap();
    let error = forwarder
        .take_error(8200)
        .unwrap()
        .await
        .unwrap_or_default();
    assert!(
        error.contains("error forwarding port 8200 to pod default/bao-0"),
        "{error}"
    );
    assert!(
        pods.portforward("missing-0", &[8200]).await.is_err(),
        "no such Pod"
    );
}

#[tokio::test]
async fn the_tunnel_reaches_a_ready_pod_behind_the_service_and_refuses_without_one() {
    let (cluster, client) = served().await;
    cluster
        .services()
        .register_pod("default", "bao-0", 8200, echo_server().await);
    apply(
        &client,
        "v1",
        "Service",
        "services",
        json!({"metadata": {"name": "bao"},
            "spec": {"selector": {"app": "bao"}, "ports": [{"name": "https", "port": 8200}]}}),
    )
    .await;
    let refused = Tunnel::open(&client, "default", "bao", 8200).await;
    assert!(matches!(refused, Err(TunnelError::NoReadyEndpoints { .. })));
    assert_eq!(
        refused.err().unwrap().to_string(),
        "no ready endpoints for service default/bao"
    );
    apply(
        &client,
        "discovery.k8s.io/v1",
        "EndpointSlice",
        "endpointslices",
        json!({"metadata": {"name": "bao-x", "labels": {"kubernetes.io/service-name": "bao"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.9"], "conditions": {"ready": true},
                "targetRef": {"kind": "Pod", "name": "bao-0", "namespace": "default"}}],
            "ports": [{"name": "https", "port": 8200, "protocol": "TCP"}]}),
    )
    .await;
    let tunnel = Tunnel::open(&client, "default", "bao", 8200).await.unwrap();
    let mut tcp = TcpStream::connect(tunnel.addr()).await.unwrap();
    tcp.write_all(b"hello").await.unwrap();
    let mut answer = [0u8; 11];
    tcp.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"echo: hello");
}
