//! A stand-in for barbican's API: for every Service that exposes port 9311, a loopback listener
//! registered as `<svc>.<ns>.svc:9311` in the sim's service registry answers `GET /healthcheck`
//! healthy (200 `OK`), unhealthy (503), slowly, endlessly (a 500 whose body streams on, as a
//! hostile endpoint would), or not at all (connection refused), per scenario.
//!
//! It serves what the pods of the Service's Deployment would: HTTPS when their uWSGI command
//! says `--https :9311,<crt>,<key>`, with the certificate and key of the Secret mounted where
//! those paths point (read when the Deployment changes, as a rollout's new pods read it), and
//! plain HTTP otherwise.

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Router, extract::State, http::StatusCode, routing::get};
use barbican_sim::{
    listener::{TlsAtAccept, serve_router_with_outages_and_tls},
    services::ServiceRegistry,
};
use futures::StreamExt;
use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{Secret, Service},
};
use kube::{
    Api, Client, ResourceExt,
    runtime::{WatchStreamExt, watcher},
};
use tokio::{net::TcpListener, sync::watch};

/// barbican's API port.
pub const PORT: u16 = 9311;

/// How a stand-in answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    /// 200 `OK`.
    Healthy,
    /// 503.
    Unhealthy,
    /// 200 after this long (real time: it is the prober's timeout that matters).
    Slow(Duration),
    /// The listener is closed: connections are refused.
    Refusing,
    /// 500 with a body that streams on (64 MiB, then it ends, so a reader that does not stop
    /// still finishes).
    Endless,
}

/// How much an [`Health::Endless`] answer streams at most.
pub const ENDLESS_BYTES: usize = 64 * 1024 * 1024;

/// The TLS configuration each Deployment's pods serve with, by (namespace, name): a Service
/// of the same name answers with it.
type Served = Arc<Mutex<BTreeMap<(String, String), Arc<rustls::ServerConfig>>>>;

struct Endpoint {
    health: Arc<Mutex<Health>>,
    down: watch::Sender<bool>,
    addr: SocketAddr,
    _task: tokio::task::JoinHandle<()>,
}

type Endpoints = Arc<Mutex<BTreeMap<(String, String), Endpoint>>>;

/// The stand-in for every barbican Service.
pub struct BarbicanApi {
    endpoints: Endpoints,
    task: tokio::task::JoinHandle<()>,
    deployments: tokio::task::JoinHandle<()>,
}

impl Drop for BarbicanApi {
    fn drop(&mut self) {
        self.task.abort();
        self.deployments.abort();
    }
}

async fn healthcheck(State(health): State<Arc<Mutex<Health>>>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let health = *health.lock().unwrap_or_else(|p| p.into_inner());
    match health {
        Health::Healthy | Health::Refusing => (StatusCode::OK, "OK").into_response(),
        Health::Unhealthy => {
            (StatusCode::SERVICE_UNAVAILABLE, "backend unavailable").into_response()
        }
        Health::Slow(wait) => {
            tokio::time::sleep(wait).await;
            (StatusCode::OK, "OK").into_response()
        }
        Health::Endless => {
            const CHUNK: usize = 64 * 1024;
            let chunks = futures::stream::iter(0..ENDLESS_BYTES / CHUNK).map(|_| {
                Ok::<_, std::convert::Infallible>(axum::body::Bytes::from_static(&[b'x'; CHUNK]))
            });
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                axum::body::Body::from_stream(chunks),
            )
                .into_response()
        }
    }
}

async fn listen(
    health: Arc<Mutex<Health>>,
    key: (String, String),
    served: Served,
) -> std::io::Result<Endpoint> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = Router::new()
        .route("/healthcheck", get(healthcheck))
        .with_state(health.clone());
    let (down, watching) = watch::channel(false);
    let tls: TlsAtAccept = Arc::new(move || {
        served
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned()
    });
    let task = tokio::spawn(async move {
        let _ = serve_router_with_outages_and_tls(listener, watching, app, tls).await;
    });
    Ok(Endpoint {
        health,
        down,
        addr,
        _task: task,
    })
}

fn exposes_barbican(service: &Service) -> bool {
    service
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .is_some_and(|ports| ports.iter().any(|p| p.port == i32::from(PORT)))
}

/// Where a barbican container serves TLS from: the `--https :9311,<crt>,<key>` of its
/// command, each path resolved through the volume mounted at its directory to (Secret, key).
pub fn https_sources(deployment: &Deployment) -> Option<((String, String), (String, String))> {
    let pod = deployment.spec.template.spec.as_ref()?;
    let container = pod.containers.first()?;
    let command = container.command.as_deref().unwrap_or_default();
    let at = command.iter().position(|w| w == "--https")?;
    let mut parts = command.get(at + 1)?.split(',');
    let (_, crt, key) = (parts.next()?, parts.next()?, parts.next()?);
    let source = |path: &str| -> Option<(String, String)> {
        let (dir, file) = path.rsplit_once('/')?;
        let mount = container
            .volume_mounts
            .iter()
            .flatten()
            .find(|m| m.mount_path.trim_end_matches('/') == dir)?;
        let volume = pod
            .volumes
            .iter()
            .flatten()
            .find(|v| v.name == mount.name)?;
        let secret = volume.secret.as_ref()?;
        let key = match &secret.items {
            Some(items) => items.iter().find(|i| i.path == file)?.key.clone(),
            None => file.to_string(),
        };
        Some((secret.secret_name.clone()?, key))
    };
    Some((source(crt)?, source(key)?))
}

/// The server configuration for a PEM chain and key; `None` when they are not a pair (the
/// pods would not start: the stand-in refuses the handshake instead).
pub fn server_config(chain: &[u8], key: &[u8]) -> Option<Arc<rustls::ServerConfig>> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(chain)
        .collect::<Result<_, _>>()
        .ok()?;
    let key = PrivateKeyDer::from_pem_slice(key).ok()?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .ok()?;
    Some(Arc::new(config))
}

/// Follows the Deployments: what each one's pods serve with, TLS or not.
async fn follow_deployments(client: Client, served: Served) {
    let deployments: Api<Deployment> = Api::all(client.clone());
    let mut events = watcher(deployments, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .boxed();
    while let Some(Ok(deployment)) = events.next().await {
        let namespace = deployment.namespace().unwrap_or_default();
        let key = (namespace.clone(), deployment.name_any());
        let config = match https_sources(&deployment) {
            None => None,
            Some(((crt_secret, crt_key), (key_secret, key_key))) => {
                let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
                let read = |secret: String, field: String| {
                    let secrets = secrets.clone();
                    async move {
                        let secret = secrets.get_opt(&secret).await.ok().flatten()?;
                        Some(secret.data?.get(&field)?.0.clone())
                    }
                };
                match (
                    read(crt_secret, crt_key).await,
                    read(key_secret, key_key).await,
                ) {
                    (Some(chain), Some(key)) => server_config(&chain, &key),
                    _ => None,
                }
            }
        };
        let mut served = served.lock().unwrap_or_else(|p| p.into_inner());
        match config {
            Some(config) => served.insert(key, config),
            None => served.remove(&key),
        };
    }
}

impl BarbicanApi {
    /// Watches Services through `client` and stands in for each one exposing port 9311.
    pub fn start(client: Client, services: ServiceRegistry) -> Self {
        let endpoints: Endpoints = Arc::default();
        let served: Served = Arc::default();
        let deployments = tokio::spawn(follow_deployments(client.clone(), served.clone()));
        let task = {
            let endpoints = endpoints.clone();
            tokio::spawn(async move {
                let api: Api<Service> = Api::all(client);
                let mut events = watcher(api, watcher::Config::default())
                    .default_backoff()
                    .applied_objects()
                    .boxed();
                while let Some(Ok(service)) = events.next().await {
                    if !exposes_barbican(&service) {
                        continue;
                    }
                    let key = (service.namespace().unwrap_or_default(), service.name_any());
                    let known = endpoints
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .contains_key(&key);
                    if known {
                        continue;
                    }
                    let health = Arc::new(Mutex::new(Health::Healthy));
                    if let Ok(endpoint) = listen(health, key.clone(), served.clone()).await {
                        services.register(&key.0, &key.1, PORT, endpoint.addr);
                        endpoints
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .insert(key, endpoint);
                    }
                }
            })
        };
        Self {
            endpoints,
            task,
            deployments,
        }
    }

    /// Sets how the stand-in for a Service answers; false when there is none (yet).
    pub fn set_health(&self, namespace: &str, name: &str, health: Health) -> bool {
        let endpoints = self.endpoints.lock().unwrap_or_else(|p| p.into_inner());
        let Some(endpoint) = endpoints.get(&(namespace.to_string(), name.to_string())) else {
            return false;
        };
        *endpoint.health.lock().unwrap_or_else(|p| p.into_inner()) = health;
        endpoint.down.send_replace(health == Health::Refusing);
        true
    }

    /// The loopback address standing in for a Service, once it exists.
    pub fn addr(&self, namespace: &str, name: &str) -> Option<SocketAddr> {
        self.endpoints
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(namespace.to_string(), name.to_string()))
            .map(|e| e.addr)
    }
}
