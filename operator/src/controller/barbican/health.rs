//! The HealthCheck step: `GET /healthcheck` on the cluster-local Service, through a probe
//! cache shared across passes. The paste composite routes that path outside the authtoken
//! pipeline, so a 2xx means the WSGI app serves requests without a token or a database round
//! trip.

use std::{net::SocketAddr, time::Duration};

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use kube::ResourceExt;

use super::{handoffs::ApiTls, state::State};
use crate::{
    api::{
        conditions::{BarbicanConditionType as T, Reason},
        names::API_PORT,
    },
    controller::probe_cache::cache_key,
    controller::{
        pipeline::{Outcome, StepFuture},
        status::Report,
    },
    peer_http::{Peer, chain},
    resolve::Resolve,
};

/// Health-check retry.
pub const HEALTH_REQUEUE: Duration = Duration::from_secs(10);
/// How long one probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of an unhealthy answer's body the condition quotes.
pub const BODY_QUOTE: usize = 256;
/// The most of a `/healthcheck` answer that is read: the endpoint is the tenant's, and an
/// answer of any size must not grow the operator.
pub const MAX_BODY: usize = 64 * 1024;

/// Reads at most [`MAX_BODY`] bytes of `body`; a longer one is an error.
async fn bounded<B>(body: B) -> Result<Bytes, String>
where
    B: hyper::body::Body,
    B::Error: std::fmt::Display + Send + Sync + 'static,
    Box<dyn std::error::Error + Send + Sync>: From<B::Error>,
{
    http_body_util::Limited::new(body, MAX_BODY)
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .map_err(|e| {
            if e.is::<http_body_util::LengthLimitError>() {
                format!("the answer is larger than {MAX_BODY} bytes")
            } else {
                e.to_string()
            }
        })
}

/// What one probe found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A 2xx.
    Healthy,
    /// Another status, with the start of the body.
    Unhealthy(u16, String),
    /// No answer within the timeout.
    Timeout,
    /// No connection.
    ConnectionFailed(String),
    /// Anything else (a broken HTTP exchange).
    Failed(String),
}

impl Probe {
    /// The condition for this probe of `url`.
    pub fn report(&self, url: &str) -> Report {
        let t = T::BarbicanAPIReady;
        match self {
            Probe::Healthy => Report::ready(t, Reason::APIHealthy, format!("{url} answers")),
            Probe::Unhealthy(code, body) => Report::not_ready(
                t,
                Reason::APIUnhealthy,
                format!("{url} answered {code}: {body}"),
            ),
            Probe::Timeout => Report::not_ready(
                t,
                Reason::HealthCheckTimeout,
                format!("{url} did not answer within {}s", PROBE_TIMEOUT.as_secs()),
            ),
            Probe::ConnectionFailed(e) => Report::not_ready(
                t,
                Reason::ConnectionFailed,
                format!("connecting to {url}: {e}"),
            ),
            Probe::Failed(e) => {
                Report::not_ready(t, Reason::HealthCheckFailed, format!("probing {url}: {e}"))
            }
        }
    }
}

/// The start of a body, cut at a character boundary at most [`BODY_QUOTE`] bytes in.
pub fn quote(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut end = text.len().min(BODY_QUOTE);
    while !text.is_char_boundary(end) {
        end = end.saturating_sub(1);
    }
    text[..end].trim().to_string()
}

async fn exchange(host: &str, addr: SocketAddr, path: &str) -> Probe {
    let stream = match tokio::net::TcpStream::connect(addr).await {
        Ok(stream) => stream,
        Err(e) => return Probe::ConnectionFailed(e.to_string()),
    };
    let io = hyper_util::rt::TokioIo::new(stream);
    let (mut sender, connection) = match hyper::client::conn::http1::handshake(io).await {
        Ok(pair) => pair,
        Err(e) => return Probe::Failed(e.to_string()),
    };
    let driver = tokio::spawn(connection);
    let request = match hyper::Request::get(path)
        .header(hyper::header::HOST, format!("{host}:{API_PORT}"))
        .body(Empty::<Bytes>::new())
    {
        Ok(request) => request,
        Err(e) => {
            driver.abort();
            return Probe::Failed(e.to_string());
        }
    };
    let probe = match sender.send_request(request).await {
        Err(e) => Probe::Failed(e.to_string()),
        Ok(response) => {
            let status = response.status();
            match bounded(response.into_body()).await {
                Ok(_) if status.is_success() => Probe::Healthy,
                Ok(body) => Probe::Unhealthy(status.as_u16(), quote(&body)),
                Err(e) => Probe::Failed(e),
            }
        }
    };
    driver.abort();
    probe
}

/// Probes `https://<host>:9311/healthcheck`, connecting where `resolver` says (DNS otherwise)
/// and verifying the certificate for `host` against `ca_pem` (the platform's roots without
/// it), as a client of the API would.
pub async fn probe_https(
    host: &str,
    ca_pem: Option<&[u8]>,
    resolver: &dyn Resolve,
    timeout: Duration,
) -> Probe {
    let url = format!("https://{host}:{API_PORT}");
    let peer = match Peer::connect(&url, "the API URL", true, ca_pem, resolver, timeout) {
        Ok(peer) => peer,
        Err(e) => return Probe::Failed(e.to_string()),
    };
    let attempt = async {
        let mut response = match peer
            .http
            .get(format!("{}/healthcheck", peer.base))
            .send()
            .await
        {
            Ok(response) => response,
            Err(e) if e.is_timeout() => return Probe::Timeout,
            Err(e) if e.is_connect() => return Probe::ConnectionFailed(chain(&e)),
            Err(e) => return Probe::Failed(chain(&e)),
        };
        let status = response.status();
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) if body.len().saturating_add(chunk.len()) > MAX_BODY => {
                    return Probe::Failed(format!("the answer is larger than {MAX_BODY} bytes"));
                }
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(e) if e.is_timeout() => return Probe::Timeout,
                Err(e) => return Probe::Failed(chain(&e)),
            }
        }
        if status.is_success() {
            Probe::Healthy
        } else {
            Probe::Unhealthy(status.as_u16(), quote(&body))
        }
    };
    tokio::time::timeout(timeout, attempt)
        .await
        .unwrap_or(Probe::Timeout)
}

/// Probes `http://<host>:9311/healthcheck`, connecting where `resolver` says (DNS otherwise).
pub async fn probe(host: &str, resolver: &dyn Resolve, timeout: Duration) -> Probe {
    let attempt = async {
        let addr = match resolver.resolve(host, API_PORT as u16) {
            Some(addr) => addr,
            None => match tokio::net::lookup_host((host, API_PORT as u16)).await {
                Ok(mut addrs) => match addrs.next() {
                    Some(addr) => addr,
                    None => return Probe::ConnectionFailed(format!("{host} has no address")),
                },
                Err(e) => return Probe::ConnectionFailed(format!("resolving {host}: {e}")),
            },
        };
        exchange(host, addr, "/healthcheck").await
    };
    tokio::time::timeout(timeout, attempt)
        .await
        .unwrap_or(Probe::Timeout)
}

/// The path of `GET /healthcheck` on a Barbican's Service through the API server's
/// `services/proxy` (how a Barbican on a target cluster is probed), over `scheme` (`http` or
/// `https`: the API server does not verify a backend's certificate).
pub fn proxy_path(name: &str, namespace: &str, scheme: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/services/{scheme}:{name}:{API_PORT}/proxy/healthcheck")
}

/// Classifies an answer that came through `services/proxy`: the backend's own answer is
/// healthy or not by its status; a 503 carrying the API server's `Status` (no endpoint, or the
/// backend could not be reached) is a failed connection.
pub fn proxied(status: u16, body: &[u8]) -> Probe {
    if (200..300).contains(&status) {
        return Probe::Healthy;
    }
    let api_status = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .filter(|v| v["kind"] == "Status");
    match api_status {
        Some(v) if status == 503 => {
            Probe::ConnectionFailed(v["message"].as_str().unwrap_or_default().to_string())
        }
        _ => Probe::Unhealthy(status, quote(body)),
    }
}

/// Probes a Barbican's `/healthcheck` through the `services/proxy` of the cluster `client`
/// talks to.
pub async fn probe_through_proxy(
    client: &kube::Client,
    name: &str,
    namespace: &str,
    scheme: &str,
    timeout: Duration,
) -> Probe {
    let attempt = async {
        let request = match hyper::Request::get(proxy_path(name, namespace, scheme))
            .body(kube::client::Body::empty())
        {
            Ok(request) => request,
            Err(e) => return Probe::Failed(e.to_string()),
        };
        let response = match client.send(request).await {
            Ok(response) => response,
            Err(e) => return Probe::ConnectionFailed(e.to_string()),
        };
        let status = response.status().as_u16();
        match bounded(response.into_body()).await {
            Ok(body) => proxied(status, &body),
            Err(e) => Probe::Failed(e),
        }
    };
    tokio::time::timeout(timeout, attempt)
        .await
        .unwrap_or(Probe::Timeout)
}

/// The cluster-local host of a Barbican's Service.
pub fn service_host(name: &str, namespace: &str) -> String {
    format!("{name}.{namespace}.svc.cluster.local")
}

/// The HealthCheck step.
pub fn health_check(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let Some(endpoint) = state.status.endpoint.clone() else {
            state.report(Report::not_ready(
                T::BarbicanAPIReady,
                Reason::EndpointNotReady,
                "waiting for the Deployment to report an endpoint",
            ));
            return Ok(Outcome::Requeue(HEALTH_REQUEUE));
        };
        let (name, namespace) = (state.name(), state.namespace());
        let key = cache_key(&namespace, &name);
        let uid = state.barbican.uid().unwrap_or_default();
        let now = state.env.clock.now();
        let healthy_now = state
            .condition(T::BarbicanAPIReady.as_str())
            .is_some_and(|c| c.status == "True");
        if healthy_now && state.env.probes.fresh(&key, &uid, &endpoint, now) {
            return Ok(Outcome::Done);
        }
        let host = service_host(&name, &namespace);
        let timeout = state.env.probe_timeout;
        let tls = state.handoffs.need::<ApiTls>()?.0.clone();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{host}:{API_PORT}/healthcheck");
        let resolver = state.env.resolver.as_ref();
        let (url, result) = match (state.children.cluster(), &tls) {
            (None, None) => (url, probe(&host, resolver, timeout).await),
            (None, Some(tls)) => (
                url,
                probe_https(&host, tls.ca.as_deref(), resolver, timeout).await,
            ),
            // The operator has no route into a target cluster's network: its API server
            // forwards the probe.
            (Some(cluster), _) => (
                format!("{url} (through the services/proxy of cluster {cluster:?})"),
                probe_through_proxy(
                    state.children.probe_client(),
                    &name,
                    &namespace,
                    scheme,
                    timeout,
                )
                .await,
            ),
        };
        state.report(result.report(&url));
        if result == Probe::Healthy {
            state.env.probes.record(&key, &uid, &endpoint, now);
            Ok(Outcome::Done)
        } else {
            state.env.probes.evict(&key);
            Ok(Outcome::Requeue(HEALTH_REQUEUE))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unhealthy_answer_quotes_at_most_256_bytes_of_its_body() {
        let body = "é".repeat(200);
        let quoted = quote(body.as_bytes());
        assert!(quoted.len() <= BODY_QUOTE);
        let report = Probe::Unhealthy(503, quoted).report("http://x/healthcheck");
        assert_eq!(report.reason, Reason::APIUnhealthy);
        assert!(
            report
                .message
                .starts_with("http://x/healthcheck answered 503: é")
        );
    }

    #[test]
    fn each_failure_has_its_reason() {
        let url = "http://x";
        assert_eq!(
            Probe::Timeout.report(url).reason,
            Reason::HealthCheckTimeout
        );
        assert_eq!(
            Probe::ConnectionFailed("refused".into()).report(url).reason,
            Reason::ConnectionFailed
        );
        assert_eq!(
            Probe::Failed("bad".into()).report(url).reason,
            Reason::HealthCheckFailed
        );
        assert!(Probe::Healthy.report(url).ready);
    }

    struct To(SocketAddr);
    impl Resolve for To {
        fn resolve(&self, _: &str, _: u16) -> Option<SocketAddr> {
            Some(self.0)
        }
    }

    async fn serve_once(answer: &'static str) -> SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await;
            let _ = socket.write_all(answer.as_bytes()).await;
        });
        addr
    }

    #[tokio::test]
    async fn probes_classify_real_answers() {
        let ok = serve_once("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nOK").await;
        assert_eq!(
            probe("kms.ns.svc.cluster.local", &To(ok), PROBE_TIMEOUT).await,
            Probe::Healthy
        );
        let bad =
            serve_once("HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\n\r\ndown").await;
        assert_eq!(
            probe("kms.ns.svc.cluster.local", &To(bad), PROBE_TIMEOUT).await,
            Probe::Unhealthy(503, "down".into())
        );
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        };
        assert!(matches!(
            probe("kms", &To(closed), PROBE_TIMEOUT).await,
            Probe::ConnectionFailed(_)
        ));
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = silent.local_addr().unwrap();
        assert_eq!(
            probe("kms", &To(addr), Duration::from_millis(50)).await,
            Probe::Timeout
        );
        drop(silent);
    }

    #[tokio::test]
    async fn an_endless_answer_is_read_only_up_to_the_bound() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await;
            let _ = socket
                .write_all(b"HTTP/1.1 500 Oops\r\ntransfer-encoding: chunked\r\n\r\n")
                .await;
            // A megabyte at a time, for as long as the operator reads.
            let chunk = format!("{:x}\r\n{}\r\n", 1 << 20, "x".repeat(1 << 20));
            let mut sent = 0usize;
            while socket.write_all(chunk.as_bytes()).await.is_ok() {
                sent += 1 << 20;
                if sent > 64 << 20 {
                    break;
                }
            }
            sent
        });
        let outcome = probe("kms", &To(addr), PROBE_TIMEOUT).await;
        assert_eq!(
            outcome,
            Probe::Failed(format!("the answer is larger than {MAX_BODY} bytes"))
        );
        assert!(served.await.unwrap() < 64 << 20, "the reading stopped");
    }

    #[test]
    fn a_proxied_answer_is_the_backends_unless_the_api_server_could_not_reach_it() {
        assert_eq!(proxied(200, b"ok"), Probe::Healthy);
        assert_eq!(
            proxied(500, b"database down"),
            Probe::Unhealthy(500, "database down".into())
        );
        let no_endpoints = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no endpoints available for service \"kms\"","reason":"ServiceUnavailable","code":503}"#;
        assert_eq!(
            proxied(503, no_endpoints),
            Probe::ConnectionFailed("no endpoints available for service \"kms\"".into())
        );
        assert_eq!(
            proxied(503, b"maintenance"),
            Probe::Unhealthy(503, "maintenance".into()),
            "a backend's own 503"
        );
        assert_eq!(
            proxy_path("kms", "openstack", "http"),
            "/api/v1/namespaces/openstack/services/http:kms:9311/proxy/healthcheck"
        );
        assert_eq!(
            proxy_path("kms", "openstack", "https"),
            "/api/v1/namespaces/openstack/services/https:kms:9311/proxy/healthcheck"
        );
    }

    /// A TLS listener serving `answer` to each connection with a certificate for `name`
    /// signed by a fresh CA; returns its address and the CA (PEM).
    async fn serve_tls(name: &str, answer: &'static str) -> (SocketAddr, String) {
        use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
        use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec![name.to_string()])
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        let config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from_pem_slice(cert.pem().as_bytes()).unwrap()],
                PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes()).unwrap(),
            )
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(socket).await else {
                        return;
                    };
                    let mut buf = [0u8; 1024];
                    let _ = tls.read(&mut buf).await;
                    let _ = tls.write_all(answer.as_bytes()).await;
                    let _ = tls.shutdown().await;
                });
            }
        });
        (addr, ca.pem())
    }

    #[tokio::test]
    async fn an_https_probe_verifies_the_certificate_against_the_secrets_ca() {
        let host = "kms.openstack.svc.cluster.local";
        let ok = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nOK";
        let (addr, ca) = serve_tls(host, ok).await;
        let timeout = Duration::from_secs(5);
        assert_eq!(
            probe_https(host, Some(ca.as_bytes()), &To(addr), timeout).await,
            Probe::Healthy
        );
        // Another CA: the certificate is not trusted, and the condition says so.
        let (_, other_ca) = serve_tls(host, ok).await;
        let refused = probe_https(host, Some(other_ca.as_bytes()), &To(addr), timeout).await;
        let Probe::ConnectionFailed(message) = &refused else {
            panic!("{refused:?}");
        };
        assert!(message.contains("certificate"), "{message}");
        // The right CA, but a certificate for another name.
        let (elsewhere, ca) = serve_tls("other.example", ok).await;
        let refused = probe_https(host, Some(ca.as_bytes()), &To(elsewhere), timeout).await;
        assert!(matches!(refused, Probe::ConnectionFailed(_)), "{refused:?}");
        // A plain-HTTP prober reaching a TLS listener gets no answer it can read.
        assert!(!matches!(
            probe(host, &To(addr), timeout).await,
            Probe::Healthy
        ));
        let unhealthy = "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 4\r\nconnection: close\r\n\r\ndown";
        let (addr, ca) = serve_tls(host, unhealthy).await;
        assert_eq!(
            probe_https(host, Some(ca.as_bytes()), &To(addr), timeout).await,
            Probe::Unhealthy(503, "down".into())
        );
    }
}
