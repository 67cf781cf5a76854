//! The HTTPS webhook server: four AdmissionReview v1 endpoints and `/healthz`, over TLS from
//! mounted files that are reloaded when they change.
//!
//! Each handler decodes the body, asks its [`LookupSource`] for the cluster state the rules
//! consult, and answers through [`review`](super::review). A body that does not decode is
//! answered with a denial that says why: never a panic, never a 500.

use std::{future::Future, net::SocketAddr, sync::Arc};

use axum::{
    Json, Router,
    body::Bytes,
    extract::State,
    routing::{get, post},
};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
    service::TowerToHyperService,
};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::{
    Api, Client, ResourceExt,
    api::ListParams,
    core::{
        DynamicObject,
        admission::{AdmissionRequest, AdmissionReview},
    },
};
use rustls::{ServerConfig, crypto::CryptoProvider, server::ResolvesServerCert};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::{
    lookups::KnownState,
    review::{Endpoint, decode, denial, review},
};
use crate::api::BarbicanSecretStore;

/// Where the rules' cluster state comes from for one request.
pub trait LookupSource: Send + Sync + 'static {
    /// The state `endpoint` needs to judge `request`.
    fn known_state(
        &self,
        endpoint: Endpoint,
        request: &AdmissionRequest<DynamicObject>,
    ) -> impl Future<Output = KnownState> + Send;
}

/// Fixed state, for tests and for running without an API server.
impl LookupSource for KnownState {
    async fn known_state(
        &self,
        _endpoint: Endpoint,
        _request: &AdmissionRequest<DynamicObject>,
    ) -> KnownState {
        self.clone()
    }
}

/// Reads what the rules need from the API server, uncached, so a sibling created a moment
/// ago is seen.
#[derive(Clone)]
pub struct ApiLookups {
    client: Client,
}

impl ApiLookups {
    /// Lookups through `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }
}

impl LookupSource for ApiLookups {
    async fn known_state(
        &self,
        endpoint: Endpoint,
        request: &AdmissionRequest<DynamicObject>,
    ) -> KnownState {
        let mut known = KnownState::default();
        let Some(object) = &request.object else {
            return known;
        };
        let result: Result<(), kube::Error> = async {
            match endpoint {
                Endpoint::ValidateBarbican => {
                    let class = object
                        .data
                        .pointer("/spec/deployment/priorityClassName")
                        .and_then(|v| v.as_str());
                    if let Some(class) = class {
                        let api: Api<PriorityClass> = Api::all(self.client.clone());
                        if api.get_opt(class).await?.is_some() {
                            known.priority_classes.push(class.to_string());
                        }
                    }
                }
                Endpoint::ValidateSecretStore => {
                    let namespace = object
                        .namespace()
                        .unwrap_or_else(|| request.namespace.clone().unwrap_or_default());
                    let api: Api<BarbicanSecretStore> =
                        Api::namespaced(self.client.clone(), &namespace);
                    known.secret_stores = api.list(&ListParams::default()).await?.items;
                }
                Endpoint::MutateBarbican | Endpoint::MutateSecretStore => {}
            }
            Ok(())
        }
        .await;
        if let Err(e) = result {
            known.unavailable = Some(e.to_string());
        }
        known
    }
}

/// The largest object kube-apiserver stores (its request limit, 3 MiB).
pub const MAX_OBJECT_BYTES: usize = 3 * 1024 * 1024;
/// The largest AdmissionReview read: an update carries the object and the old object, each up
/// to [`MAX_OBJECT_BYTES`], and the request around them. Anything kube-apiserver would pass on
/// is read; a larger body is refused (413) without being read whole.
pub const MAX_REVIEW_BYTES: usize = 2 * MAX_OBJECT_BYTES + 1024 * 1024;
/// How long a client may take over the TLS handshake.
pub const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a client may take to send a request's headers, and how long a connection may sit
/// idle before its first request or between two (kube-apiserver sends its request at once and
/// reconnects when it needs to).
pub const HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long one request may take from its headers to the answer, its body included: a client
/// that trickles a body is answered 408 and its connection closed. kube-apiserver's own
/// webhook timeout is 10 s by default, so no honest request needs longer.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a connection is served in all; then it is closed gracefully (the request in
/// flight is answered) and the client reconnects, as kube-apiserver does.
pub const CONNECTION_LIFETIME: std::time::Duration = std::time::Duration::from_secs(300);
/// The most requests one HTTP/2 connection may have in flight at once.
pub const MAX_STREAMS: u32 = 16;
/// The most connections served at once. When every slot is taken, a new connection takes the
/// slot of the one that has gone longest without progress (see [`Stalls`]), so clients that
/// trickle bytes cannot keep an honest one out.
pub const MAX_CONNECTIONS: usize = 256;

/// The router: the four endpoints and `/healthz`.
pub fn router<L: LookupSource>(lookups: Arc<L>) -> Router {
    let mut router = Router::new().route("/healthz", get(|| async { "ok" }));
    for endpoint in Endpoint::ALL {
        router = router.route(
            endpoint.path(),
            post(move |State(lookups): State<Arc<L>>, body: Bytes| handle(lookups, endpoint, body)),
        );
    }
    router
        .layer(axum::extract::DefaultBodyLimit::max(MAX_REVIEW_BYTES))
        .with_state(lookups)
}

async fn handle<L: LookupSource>(
    lookups: Arc<L>,
    endpoint: Endpoint,
    body: Bytes,
) -> Json<AdmissionReview<DynamicObject>> {
    let answer = match decode(&body) {
        Ok(request) => {
            let known = lookups.known_state(endpoint, &request).await;
            review(endpoint, &request, &known).into_review()
        }
        Err(reason) => denial(reason),
    };
    Json(answer)
}

/// The crypto provider the webhook uses (ring, as the rest of the operator).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Serves `router` over TLS on `listener` until `shutdown` completes. The certificate comes
/// from `certificate`: the operator's [`super::tls::ReloadingCertificate`], or a harness's own
/// CA.
pub async fn serve(
    listener: TcpListener,
    certificate: Arc<dyn ResolvesServerCert>,
    router: Router,
    shutdown: impl Future<Output = ()>,
) -> Result<(), rustls::Error> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(certificate);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    tokio::pin!(shutdown);
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let stalls = Arc::new(Stalls::default());
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "webhook accept failed");
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        // Every slot taken: the connection stalled longest gives its slot up. It ends at once
        // (its task drops the connection), so the wait is short; a slot not freed within the
        // handshake bound means the new connection is dropped, not that the loop stops.
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => {
                stalls.evict_oldest();
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, slots.clone().acquire_owned()).await {
                    Ok(Ok(slot)) => slot,
                    Ok(Err(_)) => return Ok(()),
                    Err(_) => {
                        tracing::warn!(%peer, "webhook connection dropped: no slot came free");
                        continue;
                    }
                }
            }
        };
        let acceptor = acceptor.clone();
        let service = router.clone();
        let stalls = stalls.clone();
        tokio::spawn(async move {
            let (id, evicted) = stalls.enter();
            tokio::select! {
                () = connection(acceptor, tcp, peer, service, &stalls, id) => {}
                () = evicted.notified() => {
                    tracing::debug!(%peer, "webhook connection evicted: it made no progress the longest while every slot was taken");
                }
            }
            stalls.leave(id);
            drop(slot);
        });
    }
}

/// When each connection being served last made progress (it was accepted, a request of it
/// started, or an answer of it was sent), so that a full server can take the slot of the one
/// stalled longest. A client trickling a body stalls from the moment its request starts; an
/// honest request in flight made progress a moment ago; an idle keep-alive connection stalls
/// from its last answer, and is the cheapest to close (its client reconnects).
#[derive(Default)]
pub struct Stalls {
    live: std::sync::Mutex<StallTable>,
}

#[derive(Default)]
struct StallTable {
    next: u64,
    connections: std::collections::BTreeMap<u64, (std::time::Instant, Arc<tokio::sync::Notify>)>,
}

impl Stalls {
    fn table(&self) -> std::sync::MutexGuard<'_, StallTable> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a new connection; returns its id and what tells it to end.
    pub fn enter(&self) -> (u64, Arc<tokio::sync::Notify>) {
        let mut table = self.table();
        let id = table.next;
        table.next = table.next.wrapping_add(1);
        let evicted = Arc::new(tokio::sync::Notify::new());
        table
            .connections
            .insert(id, (std::time::Instant::now(), evicted.clone()));
        (id, evicted)
    }

    /// Connection `id` made progress now.
    pub fn progressed(&self, id: u64) {
        if let Some(entry) = self.table().connections.get_mut(&id) {
            entry.0 = std::time::Instant::now();
        }
    }

    /// Connection `id` has ended.
    pub fn leave(&self, id: u64) {
        self.table().connections.remove(&id);
    }

    /// Tells the connection that has gone longest without progress to end; `false` when
    /// there is none.
    pub fn evict_oldest(&self) -> bool {
        let mut table = self.table();
        let oldest = table
            .connections
            .iter()
            .min_by_key(|(_, (since, _))| *since)
            .map(|(id, _)| *id);
        match oldest.and_then(|id| table.connections.remove(&id)) {
            Some((_, evicted)) => {
                // `notify_one` keeps the permit for a task not yet waiting on it.
                evicted.notify_one();
                true
            }
            None => false,
        }
    }
}

async fn connection(
    acceptor: TlsAcceptor,
    tcp: tokio::net::TcpStream,
    peer: SocketAddr,
    service: Router,
    stalls: &Arc<Stalls>,
    id: u64,
) {
    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "webhook TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "webhook TLS handshake timed out");
            return;
        }
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    builder
        .http2()
        .timer(hyper_util::rt::TokioTimer::new())
        .keep_alive_interval(Some(HEADER_TIMEOUT))
        .keep_alive_timeout(HEADER_TIMEOUT)
        .max_concurrent_streams(MAX_STREAMS)
        // Streams a client opens and resets at once cost the server work but count against
        // no limit: a handful is what a client legitimately cancels.
        .max_pending_accept_reset_streams(Some(MAX_STREAMS as usize))
        .max_header_list_size(64 * 1024);
    // hyper's header timeout runs from the first request on; a client that completes the
    // handshake and then says nothing is cut off here.
    let first_request = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let noted = first_request.clone();
    let stalls = stalls.clone();
    let service = TowerToHyperService::new(tower::service_fn(
        move |request: hyper::Request<hyper::body::Incoming>| {
            noted.store(true, std::sync::atomic::Ordering::Relaxed);
            stalls.progressed(id);
            let (stalls, service) = (stalls.clone(), service.clone());
            async move {
                let answer = bounded(service, request).await;
                stalls.progressed(id);
                Ok::<_, std::convert::Infallible>(answer)
            }
        },
    ));
    let connection = builder.serve_connection(TokioIo::new(tls), service);
    tokio::pin!(connection);
    let silent = async {
        tokio::time::sleep(HEADER_TIMEOUT).await;
        if first_request.load(std::sync::atomic::Ordering::Relaxed) {
            std::future::pending::<()>().await;
        }
    };
    let served = tokio::select! {
        served = &mut connection => served,
        () = silent => {
            tracing::debug!(%peer, "webhook client sent no request; connection closed");
            return;
        }
        () = tokio::time::sleep(CONNECTION_LIFETIME) => {
            // Past its lifetime: the request in flight is answered, then the connection ends
            // (bounded by the request deadline).
            connection.as_mut().graceful_shutdown();
            tokio::time::timeout(REQUEST_TIMEOUT, &mut connection)
                .await
                .unwrap_or(Ok(()))
        }
    };
    if let Err(e) = served {
        tracing::debug!(%peer, error = %e, "webhook connection ended with an error");
    }
}

/// Serves `request` within [`REQUEST_TIMEOUT`], its body's reading included; past it the
/// answer is 408 and the unread body ends the connection.
async fn bounded(
    service: Router,
    request: hyper::Request<hyper::body::Incoming>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let call = tower::ServiceExt::oneshot(service, request.map(axum::body::Body::new));
    match tokio::time::timeout(REQUEST_TIMEOUT, call).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(never)) => match never {},
        Err(_) => (
            http::StatusCode::REQUEST_TIMEOUT,
            [(http::header::CONNECTION, "close")],
            "the request was not received within the webhook's request deadline",
        )
            .into_response(),
    }
}
