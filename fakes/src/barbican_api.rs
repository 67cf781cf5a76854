//! A stand-in for barbican's API: for every Service that exposes port 9311, a loopback listener
//! registered as `<svc>.<ns>.svc:9311` in the sim's service registry answers `GET /healthcheck`
//! healthy (200 `OK`), unhealthy (503), slowly, endlessly (a 500 whose body streams on, as a
//! hostile endpoint would), or not at all (connection refused), per scenario.

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Router, extract::State, http::StatusCode, routing::get};
use barbican_sim::{listener::serve_router_with_outages, services::ServiceRegistry};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Service;
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
}

impl Drop for BarbicanApi {
    fn drop(&mut self) {
        self.task.abort();
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

async fn listen(health: Arc<Mutex<Health>>) -> std::io::Result<Endpoint> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = Router::new()
        .route("/healthcheck", get(healthcheck))
        .with_state(health.clone());
    let (down, watching) = watch::channel(false);
    let task = tokio::spawn(async move {
        let _ = serve_router_with_outages(listener, watching, app).await;
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

impl BarbicanApi {
    /// Watches Services through `client` and stands in for each one exposing port 9311.
    pub fn start(client: Client, services: ServiceRegistry) -> Self {
        let endpoints: Endpoints = Arc::default();
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
                    if let Ok(endpoint) = listen(Arc::new(Mutex::new(Health::Healthy))).await {
                        services.register(&key.0, &key.1, PORT, endpoint.addr);
                        endpoints
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .insert(key, endpoint);
                    }
                }
            })
        };
        Self { endpoints, task }
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
