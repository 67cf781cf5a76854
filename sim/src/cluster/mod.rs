//! One simulated cluster: a store, the types it serves, and the HTTP API over both, usable
//! in-process (`Cluster::client`) or on a loopback port (`Cluster::serve`).

use std::{
    collections::BTreeMap,
    convert::Infallible,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use axum::{
    Router,
    body::{Body, Bytes},
    extract::State,
    http::{HeaderMap, Method, StatusCode, Uri, header},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};
use tokio::{
    net::TcpListener,
    sync::{mpsc, watch},
};

use crate::{
    clock::Clock,
    controllers::{ControlPlane, Controllers, Timers},
    errors::ApiError,
    faults::{Effect, Fault, Faults},
    resources::{Registry, ResourceType, from_crd},
    selectors::{FieldSelector, LabelSelector},
    services::ServiceRegistry,
    store::{Event, EventType, Store, resource_name},
    webhooks::Refused,
};

mod admission;
mod auth;
mod deletes;
mod discovery;
mod fault_injection;
pub mod narrow;
pub mod negotiation;
mod patching;
pub mod routing;
pub mod scale;
mod verbs;
pub mod watches;
use self::{
    admission::*, deletes::*, negotiation::*, patching::*, routing::*, scale::*, verbs::*,
    watches::*,
};

/// The Kubernetes version the sim reports.
pub const KUBERNETES_MINOR: &str = "37";

struct State_ {
    store: Store,
    registry: Registry,
    /// Signs the service-account tokens this cluster mints.
    signing_key: Vec<u8>,
    /// When set, every request needs `Authorization: Bearer` with one of these tokens (or a
    /// service-account token this cluster minted); otherwise 401.
    accepted_tokens: Option<Vec<String>>,
    /// The simulated controllers.
    control: ControlPlane,
    /// Fault rules for requests.
    faults: Faults,
    /// Every request is answered 401 while set.
    rejecting_credentials: bool,
    /// When set, requests carrying a service-account token this cluster minted are authorized
    /// by the stored RBAC objects (see [`Cluster::enforce_rbac`]).
    rbac_enforced: bool,
    /// Every distinct authorization decision RBAC made (see [`Cluster::rbac_checks`]).
    rbac_checks: std::collections::BTreeSet<crate::rbac::Check>,
    /// The RBAC objects as last read, with when each of their kinds had last changed then
    /// (see [`Cluster::policy`]): read again only after a change, not on every request.
    rbac_policy: Option<([u64; 4], std::sync::Arc<crate::rbac::Policy>)>,
    /// True while the cluster is down: the listener refuses connections.
    outage: watch::Sender<bool>,
    /// Bumped to end every open watch stream.
    watch_drops: watch::Sender<u64>,
    /// In-cluster Service names to loopback listeners.
    services: ServiceRegistry,
    /// Where a kubelet's containers write (`pods/<name>/log`).
    pod_logs: crate::kubelet::logs::PodLogs,
    /// Who sent which request.
    audit: crate::audit::Audit,
    /// How watch streams ended, by resource and reason (see [`Cluster::watch_endings`]).
    watch_endings: WatchEndings,
}

/// How many watch streams ended, by `group/resource` and reason:
/// - `expired`: asked to resume from a resourceVersion past the kept history (410; the client
///   lists again);
/// - `unresponsive`: the client read too slowly and the stream was closed, as kube-apiserver
///   closes an unresponsive watcher (the client resumes from its last resourceVersion);
/// - `timeout`: the request's `timeoutSeconds` ran out;
/// - `dropped`: [`Cluster::drop_watches`] ended it.
pub type WatchEndings = BTreeMap<(String, &'static str), u64>;

/// A simulated cluster. Cheap to clone; clones share the cluster.
#[derive(Clone)]
pub struct Cluster {
    state: Arc<Mutex<State_>>,
    clock: Clock,
}

impl Default for Cluster {
    fn default() -> Self {
        Self::new()
    }
}

impl State_ {
    /// The stored core (`v1`) object `plural` `namespace/name`; 404 when it does not exist.
    fn core_object(&self, plural: &str, namespace: &str, name: &str) -> Result<Value, ApiError> {
        let t = self
            .registry
            .get("", "v1", plural)
            .ok_or_else(|| ApiError::not_found("resource", plural))?;
        self.store.get(t, namespace, name)
    }
}

impl Cluster {
    /// A cluster with the namespaces kube-apiserver creates (`default`, `kube-system`,
    /// `kube-public`, each with its `default` ServiceAccount) and what [`crate::bootstrap`]
    /// lists (the `default/kubernetes` Service, the bootstrap ClusterRoles).
    pub fn new() -> Self {
        Self::with_history(crate::store::DEFAULT_HISTORY)
    }

    /// A cluster keeping `history` events for watches to resume from (older: 410 Gone).
    pub fn with_history(history: usize) -> Self {
        Self::build(history, Clock::wall())
    }

    /// A cluster reading `clock` for every timestamp, token lifetime and simulated controller.
    /// Clusters sharing a clock share one timeline (a scenario's management and target
    /// clusters).
    pub fn with_clock(clock: Clock) -> Self {
        Self::build(crate::store::DEFAULT_HISTORY, clock)
    }

    fn build(history: usize, clock: Clock) -> Self {
        let cluster = Self {
            clock: clock.clone(),
            state: Arc::new(Mutex::new(State_ {
                store: Store::with_clock(history, clock),
                registry: Registry::with_builtins(),
                signing_key: {
                    let nanos = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap_or_default()
                        .as_nanos();
                    format!("barbican-sim-{nanos}-{:p}", &history).into_bytes()
                },
                accepted_tokens: None,
                control: ControlPlane::default(),
                faults: Faults::seeded(0),
                rejecting_credentials: false,
                rbac_enforced: false,
                rbac_checks: Default::default(),
                rbac_policy: None,
                outage: watch::Sender::new(false),
                watch_drops: watch::Sender::new(0),
                services: ServiceRegistry::default(),
                pod_logs: Default::default(),
                audit: crate::audit::Audit::default(),
                watch_endings: WatchEndings::new(),
            })),
        };
        for (group, plural, namespace, object) in crate::bootstrap::objects() {
            let mut state = cluster.lock();
            let t = state
                .registry
                .all()
                .find(|t| t.group == group && t.plural == plural)
                .cloned();
            if let Some(t) = t {
                let created = state.store.create(&t, namespace, object, false);
                debug_assert!(created.is_ok(), "bootstrap {plural}: {created:?}");
            }
        }
        cluster
    }

    /// The clock this cluster reads.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Runs the simulated controllers `controllers` names (and stops the others). Objects that
    /// already exist are picked up at once.
    pub fn set_controllers(&self, controllers: Controllers) {
        self.control_then_settle(|control, store, registry, timers| {
            store.track_changes(controllers.any());
            control.settings = controllers;
            for plural in [
                "deployments",
                "jobs",
                "cronjobs",
                "horizontalpodautoscalers",
            ] {
                let Some(t) = registry
                    .all()
                    .find(|t| t.plural == plural && !t.group.is_empty())
                    .cloned()
                else {
                    continue;
                };
                for object in store.list(&t, None) {
                    let event = Event {
                        revision: 0,
                        storage_key: t.storage_key(),
                        kind: EventType::Modified,
                        object: object.into(),
                        previous: None,
                    };
                    control.react(store, registry, &event, timers);
                }
            }
        });
    }

    /// The simulated controllers running now.
    pub fn controllers(&self) -> Controllers {
        self.lock().control.settings.clone()
    }

    /// Reads the store (the kubelet's view of what it runs).
    pub(crate) fn kubelet_view<R>(&self, read: impl FnOnce(&Store, &Registry) -> R) -> R {
        let state = self.lock();
        read(&state.store, &state.registry)
    }

    /// Writes the store as a kubelet or controller would, then lets the controllers react.
    pub(crate) fn kubelet_write<R>(&self, write: impl FnOnce(&mut Store, &Registry) -> R) -> R {
        let mut state = self.lock();
        let result = {
            let State_ {
                store, registry, ..
            } = &mut *state;
            write(store, registry)
        };
        self.settle(&mut state, Timers::new());
        result
    }

    /// Hands a kubelet's report on its pods to the controllers.
    pub(crate) fn report_pods(&self, report: crate::controllers::PodsReport) {
        self.control_then_settle(|control, store, registry, timers| {
            control.pods_report(store, registry, report, timers)
        });
    }

    /// Lets the control plane act (`act`), then settles what it changed and sets the timers it
    /// asked for.
    fn control_then_settle(
        &self,
        act: impl FnOnce(&mut ControlPlane, &mut Store, &Registry, &mut Timers),
    ) {
        let mut state = self.lock();
        let mut timers = Timers::new();
        {
            let State_ {
                store,
                registry,
                control,
                ..
            } = &mut *state;
            act(control, store, registry, &mut timers);
        }
        self.settle(&mut state, timers);
    }

    /// Where the containers a kubelet runs write their output (`pods/<name>/log`).
    pub fn pod_logs(&self) -> crate::kubelet::logs::PodLogs {
        self.lock().pod_logs.clone()
    }

    /// Lets the controllers react to every change since they last looked, until nothing more
    /// changes, then sets the timers they asked for.
    fn settle(&self, state: &mut State_, mut timers: Timers) {
        let State_ {
            store,
            registry,
            control,
            ..
        } = state;
        // A controller reacting to its own write changes nothing the second time; the bound
        // only guards against a bug turning that into a livelock.
        for _ in 0..10_000 {
            let changes = store.take_changes();
            if changes.is_empty() {
                break;
            }
            for event in &changes {
                control.react(store, registry, event, &mut timers);
            }
        }
        for (deadline, task) in timers {
            let weak = Arc::downgrade(&self.state);
            let clock = self.clock.clone();
            self.clock.at(deadline, move || {
                if let Some(state) = weak.upgrade() {
                    let cluster = Cluster { state, clock };
                    cluster.control_then_settle(|control, store, registry, timers| {
                        control.run(store, registry, task, timers)
                    });
                }
            });
        }
    }

    /// Settles the controllers after a write made through the API.
    fn after_request(&self) {
        let mut state = self.lock();
        if state.control.settings.any() {
            self.settle(&mut state, Timers::new());
        }
    }

    fn lock(&self) -> MutexGuard<'_, State_> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The HTTP API as a router (a tower `Service`).
    pub fn router(&self) -> Router {
        Router::new()
            .route(
                "/api/v1/namespaces/{namespace}/pods/{name}/portforward",
                axum::routing::any(portforward),
            )
            .route(
                "/api/v1/namespaces/{namespace}/pods/{name}/log",
                axum::routing::get(pod_log),
            )
            .fallback(handle)
            .with_state(self.clone())
    }

    /// A client that talks to this cluster in-process, with `default` as its namespace.
    /// During an outage its requests fail with a connection error, as over TCP.
    pub fn client(&self) -> kube::Client {
        self.client_as("")
    }

    /// Where the audit log stands: pass it to [`Cluster::requests_since`] later.
    pub fn audit_mark(&self) -> u64 {
        self.lock().audit.total()
    }

    /// Every request served so far, by user agent, verb and resource (see
    /// [`crate::audit::Tally`]); subtract two tallies for what happened in between.
    pub fn request_tally(&self) -> crate::audit::Tally {
        self.lock().audit.tally()
    }

    /// The requests recorded after `mark` (see [`Cluster::audit_mark`]), oldest first.
    pub fn requests_since(&self, mark: u64) -> Vec<crate::audit::Entry> {
        self.lock().audit.since(mark)
    }

    /// [`Cluster::client`] sending `user_agent` (when not empty), so the audit log tells its
    /// requests apart.
    pub fn client_as(&self, user_agent: &str) -> kube::Client {
        self.client_with_token(user_agent, "")
    }

    /// [`Cluster::client_as`] presenting `token` (when not empty) as its bearer token, for a
    /// cluster that requires one (see [`Cluster::require_bearer_tokens`]).
    pub fn client_with_token(&self, user_agent: &str, token: &str) -> kube::Client {
        let agent = axum::http::HeaderValue::from_str(user_agent).ok();
        let bearer = (!token.is_empty())
            .then(|| axum::http::HeaderValue::from_str(&format!("Bearer {token}")).ok())
            .flatten();
        let router = self.router();
        let outage = self.lock().outage.subscribe();
        let service = tower::service_fn(move |request: axum::http::Request<kube::client::Body>| {
            let router = router.clone();
            let down = *outage.borrow();
            let agent = agent.clone();
            let bearer = bearer.clone();
            async move {
                if down {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionRefused,
                        "the simulated cluster is down",
                    ));
                }
                let mut request = request.map(Body::new);
                if let Some(agent) = &agent {
                    request
                        .headers_mut()
                        .insert(axum::http::header::USER_AGENT, agent.clone());
                }
                if let Some(bearer) = &bearer {
                    request
                        .headers_mut()
                        .insert(axum::http::header::AUTHORIZATION, bearer.clone());
                }
                Ok(tower::ServiceExt::oneshot(router, request)
                    .await
                    .unwrap_or_else(|never| match never {}))
            }
        });
        kube::Client::new(service, "default")
    }

    /// Serves the API over plain HTTP on `listener` until the task is dropped. During an
    /// outage the listener is closed (connections are refused) and open connections are cut;
    /// when it ends, the same address is bound again.
    pub async fn serve(&self, listener: TcpListener) -> std::io::Result<()> {
        let outage = self.lock().outage.subscribe();
        crate::listener::serve_router_with_outages(listener, outage, self.router()).await
    }

    /// Serves the API on a free loopback port, on a task of its own, and returns the address.
    pub async fn serve_on_loopback(&self) -> std::io::Result<std::net::SocketAddr> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let cluster = self.clone();
        tokio::spawn(async move { cluster.serve(listener).await });
        Ok(addr)
    }

    /// Takes the whole cluster down (`true`) or brings it back: while down, the listener
    /// refuses connections and in-process clients get connection errors.
    pub fn set_outage(&self, down: bool) {
        self.lock().outage.send_replace(down);
    }

    /// Answers every request 401 while `rejecting`, as a cluster that no longer accepts the
    /// client's credentials.
    pub fn reject_credentials(&self, rejecting: bool) {
        self.lock().rejecting_credentials = rejecting;
    }

    /// Adds a fault rule (see [`crate::faults`]).
    pub fn add_fault(&self, fault: Fault) {
        self.lock().faults.add(fault);
    }

    /// The fault rules in force, one per line, in the grammar they are written in.
    pub fn describe_faults(&self) -> String {
        self.lock()
            .faults
            .rules()
            .map(|f| format!("{f}\n"))
            .collect()
    }

    /// Removes every fault rule.
    pub fn clear_faults(&self) {
        self.lock().faults.clear();
    }

    /// Reseeds the generator `rate` rules draw from (0 unless set).
    pub fn seed_faults(&self, seed: u64) {
        let mut state = self.lock();
        let rules: Vec<Fault> = state.faults.rules().cloned().collect();
        state.faults = Faults::seeded(seed);
        for rule in rules {
            state.faults.add(rule);
        }
    }

    /// How watch streams have ended so far (subtract two for what happened in between).
    pub fn watch_endings(&self) -> WatchEndings {
        self.lock().watch_endings.clone()
    }

    /// Counts a watch stream's end.
    fn watch_ended(&self, resource: &str, reason: &'static str) {
        *self
            .lock()
            .watch_endings
            .entry((resource.to_string(), reason))
            .or_default() += 1;
    }

    /// Ends every open watch stream, as an API server restart or a network cut would; clients
    /// watch again from their last resourceVersion.
    pub fn drop_watches(&self) {
        self.lock().watch_drops.send_modify(|n| *n += 1);
    }

    /// The service registry: in-cluster names of the listeners that stand in for Services
    /// (webhook calls resolve through it; hand it to in-process components as their resolver).
    pub fn services(&self) -> ServiceRegistry {
        self.lock().services.clone()
    }

    /// Compacts the event history: watches resuming from an earlier resourceVersion get 410.
    pub fn compact(&self) {
        self.lock().store.compact();
    }

    /// Installs a CustomResourceDefinition given as JSON (as `kubectl apply` would).
    pub fn install_crd(&self, crd: Value) -> Result<Value, ApiError> {
        let t = self
            .lock()
            .registry
            .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .cloned()
            .ok_or_else(|| {
                ApiError::not_found("customresourcedefinitions.apiextensions.k8s.io", "")
            })?;
        let created = self.lock().store.create(&t, "", crd, false)?;
        self.after_write(&t, &created);
        Ok(created)
    }

    /// The current resourceVersion.
    pub fn revision(&self) -> u64 {
        self.lock().store.revision()
    }

    /// Keeps the registry in step with the CRDs, and marks a new CRD Established.
    fn after_write(&self, t: &ResourceType, object: &Value) {
        if t.plural != "customresourcedefinitions" {
            return;
        }
        let mut state = self.lock();
        let group = object["spec"]["group"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let plural = object["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        state.registry.remove(&group, &plural);
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let exists = state.store.get(t, "", &name).is_ok();
        if !exists {
            return;
        }
        for served in from_crd(object) {
            state.registry.add(served);
        }
        let established = object["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Established"));
        if !established && let Ok(mut current) = state.store.get(t, "", &name) {
            let now = self.clock.rfc3339();
            current["status"] = json!({
                "acceptedNames": object["spec"]["names"],
                "storedVersions": object["spec"]["versions"].as_array().into_iter().flatten()
                    .filter(|v| v["storage"] == true).map(|v| v["name"].clone()).collect::<Vec<_>>(),
                "conditions": [
                    {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
                    {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now},
                ],
            });
            let _ = state.store.replace(t, "", &name, current, true, false);
        }
    }
}
