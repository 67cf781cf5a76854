//! The webhook over real HTTPS: AdmissionReview JSON for both kinds and both endpoints, a
//! malformed body, `/healthz`, and a certificate rotation picked up without a restart.

use std::sync::Arc;

use barbican_operator::{
    admission::{
        lookups::KnownState,
        review::Endpoint,
        server::{provider, router, serve},
        tls::ReloadingCertificate,
    },
    api::fixtures::{ADMISSION_UID, admission_review, managed_store, minimal_barbican, with_spec},
};
use http_body_util::{BodyExt, Full};
use hyper::{Request, body::Bytes};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::{
    ClientConfig, RootCertStore,
    pki_types::{CertificateDer, ServerName, pem::PemObject},
};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsConnector;

/// A CA and a `localhost` serving pair it signed, as PEM.
struct Pki {
    ca: String,
    cert: String,
    key: String,
}

fn pki() -> Pki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    Pki {
        ca: ca.pem(),
        cert: cert.pem(),
        key: key.serialize_pem(),
    }
}

/// A directory of the test's own, removed when dropped.
fn scratch_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("barbican-webhook-{name}-"))
        .tempdir()
        .unwrap()
}

fn write_pair(dir: &std::path::Path, pki: &Pki) {
    // Write to temporary names and rename, as the kubelet's atomic Secret update does.
    for (file, text) in [("tls.crt", &pki.cert), ("tls.key", &pki.key)] {
        let tmp = dir.join(format!(".{file}.tmp"));
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, dir.join(file)).unwrap();
    }
}

struct Webhook {
    addr: std::net::SocketAddr,
    dir: tempfile::TempDir,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

async fn start(name: &str, pki: &Pki, known: KnownState) -> Webhook {
    let dir = scratch_dir(name);
    write_pair(dir.path(), pki);
    let certificate = Arc::new(
        ReloadingCertificate::new(
            dir.path().join("tls.crt"),
            dir.path().join("tls.key"),
            provider(),
        )
        .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(
        listener,
        certificate,
        router(Arc::new(known)),
        async move {
            let _ = rx.await;
        },
    ));
    Webhook {
        addr,
        dir,
        _shutdown: tx,
    }
}

/// A TLS connection to the webhook trusting only `ca`.
async fn connect(
    webhook: &Webhook,
    ca: &str,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, String> {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca.as_bytes()).unwrap())
        .unwrap();
    let config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = TcpStream::connect(webhook.addr)
        .await
        .map_err(|e| e.to_string())?;
    TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .map_err(|e| e.to_string())
}

/// One HTTPS request trusting only `ca`; returns the status and the body.
async fn call(
    webhook: &Webhook,
    ca: &str,
    method: &str,
    path: &str,
    body: Vec<u8>,
) -> Result<(u16, Vec<u8>), String> {
    let tls = connect(webhook, ca).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes()
        .to_vec();
    Ok((status, bytes))
}

fn review_body(kind: &str, object: Value) -> Vec<u8> {
    admission_review(kind, "CREATE", &object, None)
}

async fn review(webhook: &Webhook, ca: &str, endpoint: Endpoint, body: Vec<u8>) -> Value {
    let (status, bytes) = call(webhook, ca, "POST", endpoint.path(), body)
        .await
        .unwrap();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&bytes));
    let review: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    review["response"].clone()
}

#[tokio::test]
async fn both_kinds_and_both_endpoints_answer_over_https() {
    let pki = pki();
    let webhook = start("endpoints", &pki, KnownState::default()).await;

    let mutated = review(
        &webhook,
        &pki.ca,
        Endpoint::MutateBarbican,
        review_body("Barbican", minimal_barbican()),
    )
    .await;
    assert_eq!(mutated["uid"], ADMISSION_UID);
    assert_eq!(
        (mutated["allowed"].clone(), mutated["patchType"].clone()),
        (json!(true), json!("JSONPatch"))
    );

    let valid = review(
        &webhook,
        &pki.ca,
        Endpoint::ValidateBarbican,
        review_body("Barbican", minimal_barbican()),
    )
    .await;
    assert_eq!(valid["allowed"], true);
    let invalid_object = with_spec(
        minimal_barbican(),
        &json!({"region": "a\nb", "networkPolicy": {"ingress": []}}),
    );
    let invalid = review(
        &webhook,
        &pki.ca,
        Endpoint::ValidateBarbican,
        review_body("Barbican", invalid_object),
    )
    .await;
    assert_eq!(invalid["allowed"], false);
    let message = invalid["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("spec.region") && message.contains("spec.networkPolicy.ingress"),
        "{message}"
    );

    let store = review_body("BarbicanSecretStore", managed_store());
    let mutated_store = review(
        &webhook,
        &pki.ca,
        Endpoint::MutateSecretStore,
        store.clone(),
    )
    .await;
    assert_eq!(mutated_store["patchType"], "JSONPatch");
    let valid_store = review(&webhook, &pki.ca, Endpoint::ValidateSecretStore, store).await;
    assert_eq!(valid_store["allowed"], true);
    let mut reserved = managed_store();
    reserved["metadata"]["name"] = json!("DEFAULT");
    let reserved = review(
        &webhook,
        &pki.ca,
        Endpoint::ValidateSecretStore,
        review_body("BarbicanSecretStore", reserved),
    )
    .await;
    assert_eq!(reserved["allowed"], false);
    assert!(
        reserved["status"]["message"]
            .as_str()
            .unwrap()
            .contains("reserved barbican.conf section")
    );
}

#[tokio::test]
async fn a_malformed_body_is_denied_with_a_reason_not_a_500() {
    let pki = pki();
    let webhook = start("malformed", &pki, KnownState::default()).await;
    for endpoint in Endpoint::ALL {
        for body in [
            b"{not json".to_vec(),
            Vec::new(),
            br#"{"kind":"AdmissionReview"}"#.to_vec(),
        ] {
            let response = review(&webhook, &pki.ca, endpoint, body.clone()).await;
            assert_eq!(
                response["allowed"],
                false,
                "{endpoint:?} {}",
                String::from_utf8_lossy(&body)
            );
            assert!(!response["status"]["message"].as_str().unwrap().is_empty());
        }
    }
}

#[tokio::test]
async fn healthz_answers_ok() {
    let pki = pki();
    let webhook = start("healthz", &pki, KnownState::default()).await;
    let (status, body) = call(&webhook, &pki.ca, "GET", "/healthz", Vec::new())
        .await
        .unwrap();
    assert_eq!((status, body.as_slice()), (200, b"ok".as_slice()));
}

#[tokio::test]
async fn a_rotated_certificate_is_served_without_a_restart() {
    let first = pki();
    let webhook = start("rotation", &first, KnownState::default()).await;
    assert!(
        call(&webhook, &first.ca, "GET", "/healthz", Vec::new())
            .await
            .is_ok()
    );

    let second = pki();
    assert!(
        call(&webhook, &second.ca, "GET", "/healthz", Vec::new())
            .await
            .is_err(),
        "the new CA is not trusted yet"
    );
    write_pair(webhook.dir.path(), &second);
    let (status, _) = call(&webhook, &second.ca, "GET", "/healthz", Vec::new())
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert!(
        call(&webhook, &first.ca, "GET", "/healthz", Vec::new())
            .await
            .is_err(),
        "the old certificate is retired"
    );

    // A half-written rotation keeps the working certificate in service.
    std::fs::write(webhook.dir.path().join("tls.key"), "not a key").unwrap();
    assert!(
        call(&webhook, &second.ca, "GET", "/healthz", Vec::new())
            .await
            .is_ok()
    );
}

/// Kills the child on drop, so a failing assertion leaves no server behind.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn the_binary_serves_the_webhook_and_fails_closed_without_an_api_server() {
    let pki = pki();
    let scratch = scratch_dir("binary");
    let dir = scratch.path().to_path_buf();
    write_pair(&dir, &pki);
    // A kubeconfig whose API server does not answer: the client builds, every lookup fails.
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n\
         users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u, namespace: openstack}}]\n\
         current-context: x\n",
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _child = Child(
        std::process::Command::new(env!("CARGO_BIN_EXE_barbican-operator"))
            .args(["webhook", "--bind", &format!("127.0.0.1:{port}")])
            .arg("--tls-cert-file")
            .arg(dir.join("tls.crt"))
            .arg("--tls-key-file")
            .arg(dir.join("tls.key"))
            .env("KUBECONFIG", &kubeconfig)
            .env("RUST_LOG", "warn")
            .spawn()
            .unwrap(),
    );
    let (tx, _rx) = tokio::sync::oneshot::channel::<()>();
    let webhook = Webhook {
        addr: format!("127.0.0.1:{port}").parse().unwrap(),
        dir: scratch,
        _shutdown: tx,
    };
    // Wait for the process to listen: bounded retries, no assertion on how long it takes.
    let mut ready = false;
    for _ in 0..200 {
        if call(&webhook, &pki.ca, "GET", "/healthz", Vec::new())
            .await
            .is_ok()
        {
            ready = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(ready, "the webhook binary never answered /healthz");

    let mutated = review(
        &webhook,
        &pki.ca,
        Endpoint::MutateBarbican,
        review_body("Barbican", minimal_barbican()),
    )
    .await;
    assert_eq!(mutated["patchType"], "JSONPatch");
    let store = review(
        &webhook,
        &pki.ca,
        Endpoint::ValidateSecretStore,
        review_body("BarbicanSecretStore", managed_store()),
    )
    .await;
    assert_eq!(store["allowed"], false);
    assert!(
        store["status"]["message"]
            .as_str()
            .unwrap()
            .contains("could not list the other stores"),
        "{store}"
    );
}

#[tokio::test]
async fn an_update_of_a_large_object_is_judged_and_a_body_past_the_bound_refused() {
    use barbican_operator::admission::server::{MAX_OBJECT_BYTES, MAX_REVIEW_BYTES};
    let pki = pki();
    let webhook = start("large", &pki, KnownState::default()).await;
    // An update of a 2.5 MiB Barbican: the object and the old object, 5 MiB in all, which
    // kube-apiserver (3 MiB per object) passes on.
    let mut object = minimal_barbican();
    object["metadata"]["annotations"] =
        json!({"example.com/blob": "x".repeat(MAX_OBJECT_BYTES * 5 / 6)});
    let body = admission_review("Barbican", "UPDATE", &object, Some(&object));
    assert!(body.len() > 2 * 1024 * 1024, "{}", body.len());
    let response = review(&webhook, &pki.ca, Endpoint::ValidateBarbican, body).await;
    assert_eq!(response["uid"], ADMISSION_UID);
    // Past the bound: refused without being read whole.
    let (status, _) = call(
        &webhook,
        &pki.ca,
        "POST",
        Endpoint::ValidateBarbican.path(),
        vec![b' '; MAX_REVIEW_BYTES + 1],
    )
    .await
    .unwrap();
    assert_eq!(status, 413);
}

/// Waits until the server closes `stream`, which it must do within `timeout` (and a margin):
/// a read ends with nothing or an error (real time: a paused clock would also fire the
/// timeouts of the clients that do speak).
async fn closes_within(
    stream: &mut (impl tokio::io::AsyncRead + Unpin),
    timeout: std::time::Duration,
) {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(
        timeout + std::time::Duration::from_secs(5),
        stream.read(&mut buf),
    )
    .await
    .expect("the server closed the connection");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
}

#[tokio::test]
async fn a_silent_client_is_cut_off_after_the_handshake_timeout() {
    use barbican_operator::admission::server::HANDSHAKE_TIMEOUT;
    let pki = pki();
    let webhook = start("silent", &pki, KnownState::default()).await;
    let mut silent = TcpStream::connect(webhook.addr).await.unwrap();
    // Say nothing: the server gives up on the handshake and closes the connection.
    closes_within(&mut silent, HANDSHAKE_TIMEOUT).await;
    // The server still serves everyone else.
    let (status, _) = call(&webhook, &pki.ca, "GET", "/healthz", Vec::new())
        .await
        .unwrap();
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_client_that_completes_the_handshake_and_says_nothing_is_cut_off() {
    use barbican_operator::admission::server::HEADER_TIMEOUT;
    let pki = pki();
    let webhook = start("idle", &pki, KnownState::default()).await;
    let mut idle = connect(&webhook, &pki.ca).await.unwrap();
    closes_within(&mut idle, HEADER_TIMEOUT).await;
}

/// Opens a connection that starts a review announcing a 7 MB body and sends one byte of it:
/// what a client trickling its body one byte every few seconds looks like to the server.
async fn trickling(webhook: &Webhook, ca: &str) -> tokio_rustls::client::TlsStream<TcpStream> {
    use tokio::io::AsyncWriteExt;
    let mut tls = connect(webhook, ca).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 7000000\r\n\r\n{{",
        Endpoint::ValidateBarbican.path()
    );
    tls.write_all(head.as_bytes()).await.unwrap();
    tls.flush().await.unwrap();
    tls
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_past_every_slot_leave_an_honest_review_answered_at_once() {
    use barbican_operator::admission::server::MAX_CONNECTIONS;
    let pki = pki();
    let webhook = start("slowloris", &pki, KnownState::default()).await;
    // More trickling clients than the server has slots: each new one takes the slot of the
    // one stalled longest.
    let mut slow = Vec::new();
    for _ in 0..MAX_CONNECTIONS + 44 {
        slow.push(trickling(&webhook, &pki.ca).await);
    }
    let answer = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        review(
            &webhook,
            &pki.ca,
            Endpoint::ValidateBarbican,
            review_body("Barbican", minimal_barbican()),
        ),
    )
    .await
    .expect("an honest review is answered within a second");
    assert_eq!(answer["allowed"], true, "{answer}");
    assert_eq!(answer["uid"], ADMISSION_UID);
    drop(slow);
}

#[tokio::test]
async fn a_body_trickled_past_the_request_deadline_is_answered_408_and_closed() {
    use barbican_operator::admission::server::REQUEST_TIMEOUT;
    use tokio::io::AsyncReadExt;
    let pki = pki();
    let webhook = start("trickle", &pki, KnownState::default()).await;
    let mut slow = trickling(&webhook, &pki.ca).await;
    let mut answer = Vec::new();
    tokio::time::timeout(
        REQUEST_TIMEOUT + std::time::Duration::from_secs(5),
        slow.read_to_end(&mut answer),
    )
    .await
    .expect("the server ends the request at its deadline")
    .ok();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

/// A TLS connection to the webhook that asks for HTTP/2 (ALPN `h2`).
async fn connect_h2(webhook: &Webhook, ca: &str) -> tokio_rustls::client::TlsStream<TcpStream> {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca.as_bytes()).unwrap())
        .unwrap();
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = TcpStream::connect(webhook.addr).await.unwrap();
    TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_connection_has_at_most_its_stream_limit_in_flight() {
    use barbican_operator::admission::server::{MAX_STREAMS, REQUEST_TIMEOUT};
    use futures::StreamExt;
    use http_body_util::{BodyExt, StreamBody};
    use hyper::body::Frame;
    let pki = pki();
    let webhook = start("streams", &pki, KnownState::default()).await;
    let tls = connect_h2(&webhook, &pki.ca).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (sender, connection) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        TokioIo::new(tls),
    )
    .await
    .unwrap();
    tokio::spawn(connection);
    // Every stream the server allows, each a review whose body never ends.
    let mut held = Vec::new();
    for _ in 0..MAX_STREAMS {
        let trickle = futures::stream::once(async {
            Ok::<_, std::convert::Infallible>(Frame::data(Bytes::from_static(b"{")))
        })
        .chain(futures::stream::pending());
        let request = Request::builder()
            .method("POST")
            .uri(format!(
                "https://localhost{}",
                Endpoint::ValidateBarbican.path()
            ))
            .header("content-type", "application/json")
            .body(BodyExt::boxed(StreamBody::new(trickle)))
            .unwrap();
        let mut sender = sender.clone();
        let mut sent = Box::pin(async move { sender.send_request(request).await });
        // Polled once here, the request is queued on the connection in this order, ahead of
        // the one past the limit.
        assert!(futures::poll!(&mut sent).is_pending());
        held.push(tokio::spawn(sent));
    }
    let honest = || {
        let body = BodyExt::boxed(
            Full::new(Bytes::from(review_body("Barbican", minimal_barbican())))
                .map_err(|never| match never {}),
        );
        Request::builder()
            .method("POST")
            .uri(format!(
                "https://localhost{}",
                Endpoint::ValidateBarbican.path()
            ))
            .header("content-type", "application/json")
            .body(body)
            .unwrap()
    };
    // One more stream is refused (REFUSED_STREAM) or waits while all are held...
    let mut extra = sender.clone();
    match tokio::time::timeout(
        std::time::Duration::from_secs(2),
        extra.send_request(honest()),
    )
    .await
    {
        Err(_) => {}
        Ok(Err(e)) => assert!(format!("{e:?}").contains("REFUSED_STREAM"), "{e:?}"),
        Ok(Ok(answer)) => panic!("a stream past the limit was served: {}", answer.status()),
    }
    // ...the held ones end at the request deadline, and the connection serves again.
    for held in held {
        let answer =
            tokio::time::timeout(REQUEST_TIMEOUT + std::time::Duration::from_secs(5), held)
                .await
                .expect("a held stream ends at the request deadline")
                .unwrap()
                .unwrap();
        assert_eq!(answer.status(), 408);
    }
    let mut sender = sender.clone();
    let answer = sender.send_request(honest()).await.unwrap();
    assert_eq!(answer.status(), 200);
}
