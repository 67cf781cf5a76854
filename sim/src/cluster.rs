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
    /// True while the cluster is down: the listener refuses connections.
    outage: watch::Sender<bool>,
    /// Bumped to end every open watch stream.
    watch_drops: watch::Sender<u64>,
    /// In-cluster Service names to loopback listeners.
    services: ServiceRegistry,
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
    /// `kube-public`).
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
                outage: watch::Sender::new(false),
                watch_drops: watch::Sender::new(0),
                services: ServiceRegistry::default(),
                audit: crate::audit::Audit::default(),
                watch_endings: WatchEndings::new(),
            })),
        };
        let namespaces = cluster
            .lock()
            .registry
            .get("", "v1", "namespaces")
            .cloned()
            .unwrap();
        for name in ["default", "kube-system", "kube-public"] {
            cluster
                .lock()
                .store
                .create(&namespaces, "", json!({"metadata": {"name": name}}), false)
                .unwrap();
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
        let mut state = self.lock();
        state.store.track_changes(controllers.any());
        state.control.settings = controllers;
        let mut timers = Timers::new();
        let State_ {
            store,
            registry,
            control,
            ..
        } = &mut *state;
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
                };
                control.react(store, registry, &event, &mut timers);
            }
        }
        self.settle(&mut state, timers);
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
                    let mut guard = cluster.lock();
                    let mut timers = Timers::new();
                    {
                        let State_ {
                            store,
                            registry,
                            control,
                            ..
                        } = &mut *guard;
                        control.run(store, registry, task, &mut timers);
                    }
                    cluster.settle(&mut guard, timers);
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

    /// Applies the fault rules to a request: `Some` answer when a rule answers in its place
    /// (after any latency a rule adds).
    async fn inject_fault(
        &self,
        target: &Target,
        method: &Method,
        q: &BTreeMap<String, String>,
        agent: &str,
    ) -> Option<Response> {
        let name = target.name.as_deref().unwrap_or("");
        let verb = match (method.as_str(), name.is_empty()) {
            ("GET", true) if q.get("watch").is_some_and(|w| w == "true" || w == "1") => "watch",
            ("GET", true) => "list",
            ("GET", false) => "get",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", true) => "deletecollection",
            ("DELETE", false) => "delete",
            _ => return None,
        };
        let resource = match &target.subresource {
            Some(sub) => format!("{}/{sub}", target.t.plural),
            None => target.t.plural.clone(),
        };
        let request = crate::faults::Request {
            verb,
            resource: &resource,
            namespace: &target.namespace,
            name,
            agent,
        };
        let effect = self.lock().faults.decide(&request)?;
        let plural = resource_name(&target.t);
        let error = match effect {
            Effect::Latency(wait) => {
                tokio::time::sleep(wait).await;
                return None;
            }
            Effect::Timeout(wait) => {
                tokio::time::sleep(wait).await;
                ApiError::new(
                    504,
                    "Timeout",
                    "Timeout: request did not complete within the allotted timeout",
                )
            }
            Effect::Status { code, retry_after } => {
                let (reason, message) = match code {
                    409 => (
                        "Conflict",
                        format!(
                            "Operation cannot be fulfilled on {plural} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
                        ),
                    ),
                    429 => (
                        "TooManyRequests",
                        "Too many requests, please try again later.".to_string(),
                    ),
                    503 => (
                        "ServiceUnavailable",
                        "the server is currently unable to handle the request".to_string(),
                    ),
                    504 => (
                        "Timeout",
                        "Timeout: request did not complete within the allotted timeout".to_string(),
                    ),
                    404 => ("NotFound", format!("{plural} \"{name}\" not found")),
                    403 => (
                        "Forbidden",
                        format!("{plural} \"{name}\" is forbidden: injected by the sim"),
                    ),
                    401 => ("Unauthorized", "Unauthorized".to_string()),
                    _ => (
                        "InternalError",
                        format!("Internal error occurred: injected by the sim ({verb} {plural})"),
                    ),
                };
                let mut error = ApiError::new(code, reason, message);
                if let Some(seconds) = retry_after {
                    error.details =
                        Some(json!({"name": name, "kind": plural, "retryAfterSeconds": seconds}));
                    let mut response = error_response(&error);
                    if let Ok(value) = seconds.to_string().parse() {
                        response.headers_mut().insert(header::RETRY_AFTER, value);
                    }
                    return Some(response);
                }
                error
            }
        };
        Some(error_response(&error))
    }

    /// The service registry: in-cluster names of the listeners that stand in for Services
    /// (webhook calls resolve through it; hand it to in-process components as their resolver).
    pub fn services(&self) -> ServiceRegistry {
        self.lock().services.clone()
    }

    /// The stored webhook configurations (mutating, validating), the labels of the target's
    /// namespace, and the registry to reach the webhooks through.
    fn webhook_context(
        &self,
        target: &Target,
    ) -> ((Vec<Value>, Vec<Value>), Value, ServiceRegistry) {
        let state = self.lock();
        let list = |plural: &str| {
            state
                .registry
                .get("admissionregistration.k8s.io", "v1", plural)
                .map(|t| state.store.list(t, None))
                .unwrap_or_default()
        };
        let configurations = (
            list("mutatingwebhookconfigurations"),
            list("validatingwebhookconfigurations"),
        );
        let labels = state
            .registry
            .get("", "v1", "namespaces")
            .and_then(|t| state.store.get(t, "", &target.namespace).ok())
            .map(|n| n["metadata"]["labels"].clone())
            .unwrap_or(Value::Null);
        (configurations, labels, state.services.clone())
    }

    /// Runs the validating webhooks that apply to deleting `current`.
    async fn admit_delete(
        &self,
        target: &Target,
        current: &Value,
        status_write: bool,
        dry_run: bool,
    ) -> Result<(), Refused> {
        let ((_, validating), namespace_labels, services) = self.webhook_context(target);
        if validating.is_empty() {
            return Ok(());
        }
        let facts = WebhookFacts {
            operation: "DELETE",
            name: current["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            namespace_labels,
            object: None,
            old: Some(current.clone()),
            subresource: status_write.then_some("status"),
            dry_run,
        };
        let request = facts.request(target);
        let mut warnings = Vec::new();
        for hook in crate::webhooks::matching(&validating, false, &request) {
            consult(&hook, &request, &services, &mut warnings).await?;
        }
        Ok(())
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
            .unwrap();
        let created = self.lock().store.create(&t, "", crd, false)?;
        self.after_write(&t, &created);
        Ok(created)
    }

    /// Requires every request to carry one of `tokens` as a bearer token (or a service-account
    /// token this cluster minted); anything else is answered 401, as a cluster that rejects the
    /// credentials would.
    pub fn require_bearer_tokens(&self, tokens: Vec<String>) {
        self.lock().accepted_tokens = Some(tokens);
    }

    /// Accepts any request again.
    pub fn allow_anonymous(&self) {
        self.lock().accepted_tokens = None;
    }

    /// From now on, a request carrying a service-account token this cluster minted is allowed
    /// only when the stored ClusterRoles, Roles and their bindings grant it to that account
    /// (see [`crate::rbac`]); it is answered 403 `Forbidden` otherwise. Requests without such a
    /// token keep acting as the cluster's administrator, as the tests' own clients do.
    pub fn enforce_rbac(&self) {
        self.lock().rbac_enforced = true;
    }

    /// The service account a request's bearer token belongs to, when RBAC is enforced and the
    /// token is one this cluster minted.
    fn service_account(&self, headers: &HeaderMap) -> Option<crate::rbac::ServiceAccount> {
        let state = self.lock();
        if !state.rbac_enforced {
            return None;
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))?;
        let claims =
            crate::tokens::verify(&state.signing_key, token, &[], self.clock.now().as_second())
                .ok()?;
        let account = &claims["kubernetes.io"];
        Some(crate::rbac::ServiceAccount {
            namespace: account["namespace"].as_str()?.to_string(),
            name: account["serviceaccount"]["name"].as_str()?.to_string(),
        })
    }

    /// Refuses, with kube-apiserver's 403, a request RBAC does not allow its service account.
    fn authorize(&self, method: &Method, uri: &Uri, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(account) = self.service_account(headers) else {
            return Ok(());
        };
        let target = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
        let Some(request) = crate::rbac::attributes(method.as_str(), target) else {
            return Ok(());
        };
        let policy = {
            let state = self.lock();
            let list = |plural: &str| {
                state
                    .registry
                    .get("rbac.authorization.k8s.io", "v1", plural)
                    .map(|t| state.store.list(t, None))
                    .unwrap_or_default()
            };
            crate::rbac::Policy {
                cluster_roles: list("clusterroles"),
                cluster_role_bindings: list("clusterrolebindings"),
                roles: list("roles"),
                role_bindings: list("rolebindings"),
            }
        };
        let mut allowed = policy.authorizes(&account, &request);
        // An apply patch that creates its object also needs `create`, as kube-apiserver
        // authorizes it (the PATCH handler's create validation).
        let applies = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/apply-patch"));
        if allowed && applies && !self.stores(&request) {
            let create = crate::rbac::Attributes {
                verb: "create".into(),
                ..request.clone()
            };
            allowed = policy.authorizes(&account, &create);
            self.lock()
                .rbac_checks
                .insert(crate::rbac::Check::of(&account, &create, allowed));
            if !allowed {
                return Err(forbidden(&account, &create));
            }
        }
        self.lock()
            .rbac_checks
            .insert(crate::rbac::Check::of(&account, &request, allowed));
        if allowed {
            Ok(())
        } else {
            Err(forbidden(&account, &request))
        }
    }

    /// Whether the object a request names is stored.
    fn stores(&self, request: &crate::rbac::Attributes) -> bool {
        let state = self.lock();
        state
            .registry
            .get(&request.group, &request.version, &request.resource)
            .is_some_and(|t| {
                state
                    .store
                    .get(t, &request.namespace, &request.name)
                    .is_ok()
            })
    }

    /// Every distinct authorization decision RBAC made since it was enforced: which account
    /// asked for which verb on which resource, and whether it was allowed. Tests compare it
    /// with the roles granted, to find both a missing and an unused grant.
    pub fn rbac_checks(&self) -> Vec<crate::rbac::Check> {
        self.lock().rbac_checks.iter().cloned().collect()
    }

    fn authenticated(&self, headers: &HeaderMap) -> bool {
        let state = self.lock();
        if state.rejecting_credentials {
            return false;
        }
        let Some(accepted) = &state.accepted_tokens else {
            return true;
        };
        let Some(token) = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        else {
            return false;
        };
        accepted.iter().any(|t| t == token)
            || crate::tokens::verify(&state.signing_key, token, &[], self.clock.now().as_second())
                .is_ok()
    }

    /// `serviceaccounts/<name>/token`: a signed token for the audiences and lifetime asked for
    /// (one hour by default, at least ten minutes, as kube-apiserver enforces).
    fn token_request(
        &self,
        namespace: &str,
        name: &str,
        request: Value,
    ) -> Result<Value, ApiError> {
        let state = self.lock();
        let account = state.core_object("serviceaccounts", namespace, name)?;
        let audiences: Vec<String> = request["spec"]["audiences"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(String::from))
            .collect();
        let lifetime = request["spec"]["expirationSeconds"]
            .as_i64()
            .unwrap_or(3600);
        if lifetime < 600 {
            return Err(ApiError::invalid(format!(
                "spec.expirationSeconds: Invalid value: {lifetime}: may not specify a duration less than 10 minutes"
            )));
        }
        let now = self.clock.now().as_second();
        let uid = account["metadata"]["uid"].as_str().unwrap_or_default();
        let token = crate::tokens::mint(
            &state.signing_key,
            namespace,
            name,
            uid,
            &audiences,
            now,
            lifetime,
        );
        let expires = jiff::Timestamp::from_second(now + lifetime)
            .map(|t| t.to_string())
            .unwrap_or_default();
        Ok(json!({
            "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": null},
            "spec": {"audiences": audiences, "expirationSeconds": lifetime},
            "status": {"token": token, "expirationTimestamp": expires},
        }))
    }

    /// `tokenreviews`: whether a token this cluster minted is valid for the audiences asked
    /// about, and its service account still exists with the same uid.
    fn token_review(&self, review: Value) -> Value {
        let state = self.lock();
        let token = review["spec"]["token"].as_str().unwrap_or_default();
        let audiences: Vec<String> = review["spec"]["audiences"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(String::from))
            .collect();
        let checked = crate::tokens::verify(
            &state.signing_key,
            token,
            &audiences,
            self.clock.now().as_second(),
        )
        .and_then(|claims| {
            let account = &claims["kubernetes.io"];
            let (ns, name) = (
                account["namespace"].as_str().unwrap_or(""),
                account["serviceaccount"]["name"].as_str().unwrap_or(""),
            );
            match state.core_object("serviceaccounts", ns, name) {
                Ok(live) if live["metadata"]["uid"] == account["serviceaccount"]["uid"] => {
                    Ok(claims)
                }
                _ => Err(format!("service account {ns}/{name} has been deleted")),
            }
        });
        let status = match checked {
            Ok(claims) => {
                let ns = claims["kubernetes.io"]["namespace"].as_str().unwrap_or("");
                json!({
                    "authenticated": true,
                    "user": {"username": claims["sub"], "uid": claims["kubernetes.io"]["serviceaccount"]["uid"],
                        "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{ns}"), "system:authenticated"]},
                    "audiences": if audiences.is_empty() { claims["aud"].clone() } else { json!(audiences) },
                })
            }
            Err(error) => json!({"authenticated": false, "error": error}),
        };
        json!({"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1", "metadata": {"creationTimestamp": null}, "spec": review["spec"], "status": status})
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
        if !established {
            let mut current = state.store.get(t, "", &name).unwrap();
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

/// What a request addresses.
struct Target {
    t: ResourceType,
    namespace: String,
    name: Option<String>,
    subresource: Option<String>,
}

fn json_response(code: u16, body: &Value) -> Response {
    (
        StatusCode::from_u16(code).unwrap_or(StatusCode::OK),
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn error_response(error: &ApiError) -> Response {
    json_response(error.code, &error.status())
}

fn query(uri: &Uri) -> BTreeMap<String, String> {
    uri.query()
        .map(|q| {
            q.split('&')
                .filter_map(|pair| {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    Some((decode(k)?, decode(v)?))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                out.push(
                    u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?, 16).ok()?,
                );
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

async fn handle(
    State(cluster): State<Cluster>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !cluster.authenticated(&headers) {
        return error_response(&ApiError::unauthorized());
    }
    // The audit log keeps the start of a write's body (kube-apiserver's Request level).
    let request_body = if method == Method::GET {
        String::new()
    } else {
        String::from_utf8_lossy(&body[..body.len().min(crate::audit::BODY_LIMIT)]).into_owned()
    };
    let routed = match cluster.authorize(&method, &uri, &headers) {
        Ok(()) => route(&cluster, &method, &uri, &headers, body).await,
        Err(refused) => Err(refused),
    };
    let response = match routed {
        Ok(response) => response,
        Err(error) => error_response(&error),
    };
    if method != Method::GET {
        cluster.after_request();
    }
    audit(&cluster, &method, &uri, &headers, &response, request_body);
    response
}

/// `pods/<name>/portforward` over WebSocket (see [`crate::portforward`]). The Pod must exist;
/// a client that cannot upgrade (an in-process one) gets kube-apiserver's 400.
async fn portforward(
    State(cluster): State<Cluster>,
    axum::extract::Path((namespace, name)): axum::extract::Path<(String, String)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    upgrade: Result<
        axum::extract::ws::WebSocketUpgrade,
        axum::extract::ws::rejection::WebSocketUpgradeRejection,
    >,
) -> Response {
    if !cluster.authenticated(&headers) {
        return error_response(&ApiError::unauthorized());
    }
    let session = (|| {
        cluster.authorize(&method, &uri, &headers)?;
        let ports = crate::portforward::ports(uri.query())?;
        let state = cluster.lock();
        state.core_object("pods", &namespace, &name)?;
        let backends: Vec<_> = ports
            .iter()
            .map(|p| state.services.pod(&namespace, &name, *p))
            .collect();
        Ok::<_, ApiError>((ports, backends))
    })();
    let response = match (session, upgrade) {
        (Err(error), _) => error_response(&error),
        (Ok(_), Err(_)) => error_response(&ApiError::bad_request(
            "Upgrade request required: port-forwarding speaks WebSocket",
        )),
        (Ok((ports, backends)), Ok(upgrade)) => {
            let pod = format!("{namespace}/{name}");
            upgrade
                .protocols(crate::portforward::PROTOCOLS)
                .on_upgrade(move |socket| crate::portforward::serve(socket, pod, ports, backends))
        }
    };
    audit(&cluster, &method, &uri, &headers, &response, String::new());
    response
}

/// kube-apiserver's 403 for a request RBAC refuses.
fn forbidden(account: &crate::rbac::ServiceAccount, request: &crate::rbac::Attributes) -> ApiError {
    let mut error = ApiError::new(
        403,
        "Forbidden",
        crate::rbac::forbidden_message(account, request),
    );
    error.details = Some(json!({
        "name": request.name, "group": request.group, "kind": request.resource
    }));
    error
}

/// Records a request in the audit log.
fn audit(
    cluster: &Cluster,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    response: &Response,
    body: String,
) {
    let user_agent = headers
        .get(axum::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    cluster.lock().audit.record(crate::audit::Entry {
        user_agent,
        method: method.to_string(),
        path: uri
            .path_and_query()
            .map_or_else(|| uri.path().to_string(), |p| p.to_string()),
        code: response.status().as_u16(),
        body,
    });
}

async fn route(
    cluster: &Cluster,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let path = uri.path().trim_end_matches('/');
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let discovery = |v: Value| Ok(json_response(200, &v));
    match segments.as_slice() {
        ["version"] => discovery(json!({
            "major": "1", "minor": KUBERNETES_MINOR, "gitVersion": format!("v1.{KUBERNETES_MINOR}.0-barbican-sim"),
            "gitCommit": "sim", "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
            "goVersion": "none", "compiler": "none", "platform": "linux/amd64"
        })),
        ["api"] => discovery(
            json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]}),
        ),
        ["apis"] => discovery(cluster.group_list()),
        ["api", "v1"] => discovery(cluster.resource_list("", "v1")),
        ["apis", group, version] => discovery(cluster.resource_list(group, version)),
        ["openapi", "v3"] => discovery(cluster.openapi_index()),
        ["openapi", "v3", "api", "v1"] => discovery(cluster.openapi_group_version("", "v1")),
        ["openapi", "v3", "apis", group, version] => {
            discovery(cluster.openapi_group_version(group, version))
        }
        [
            "api",
            "v1",
            "namespaces",
            namespace,
            "services",
            service,
            "proxy",
            rest @ ..,
        ] => {
            cluster
                .service_proxy(namespace, service, rest, method, uri, headers, body)
                .await
        }
        ["api", "v1", rest @ ..] => {
            serve_resource(cluster, "", "v1", rest, method, uri, headers, body).await
        }
        ["apis", group, version, rest @ ..] => {
            serve_resource(cluster, group, version, rest, method, uri, headers, body).await
        }
        _ => Err(ApiError::not_found("path", path)),
    }
}

impl Cluster {
    /// `services/<[scheme:]name[:port]>/proxy/<path>` (see [`crate::proxy`]).
    #[allow(clippy::too_many_arguments)]
    async fn service_proxy(
        &self,
        namespace: &str,
        service: &str,
        rest: &[&str],
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Response, ApiError> {
        let spec = crate::proxy::parse(service);
        let (object, services) = {
            let state = self.lock();
            (
                state.core_object("services", namespace, &spec.name)?,
                state.services.clone(),
            )
        };
        if spec.scheme != "http" {
            return Err(ApiError::new(
                400,
                "BadRequest",
                format!(
                    "the simulated API server proxies http only, not {:?}",
                    spec.scheme
                ),
            ));
        }
        let no_endpoints = || {
            ApiError::new(
                503,
                "ServiceUnavailable",
                format!("no endpoints available for service \"{}\"", spec.name),
            )
        };
        let port = crate::proxy::port_of(&object, &spec.port).ok_or_else(no_endpoints)?;
        let host = format!("{}.{namespace}.svc", spec.name);
        let addr = services.resolve(&host, port).ok_or_else(no_endpoints)?;
        let path = crate::proxy::backend_path(rest, uri, uri.path().ends_with('/'));
        crate::proxy::forward(
            addr,
            &format!("{host}:{port}"),
            method,
            &path,
            headers,
            body,
        )
        .await
    }

    fn group_list(&self) -> Value {
        let state = self.lock();
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in state.registry.all().filter(|t| !t.group.is_empty()) {
            let versions = groups.entry(t.group.clone()).or_default();
            if !versions.contains(&t.version) {
                versions.push(t.version.clone());
            }
        }
        json!({
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": groups.into_iter().map(|(name, versions)| json!({
                "name": name,
                "versions": versions.iter().map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v})).collect::<Vec<_>>(),
                "preferredVersion": {"groupVersion": format!("{name}/{}", versions[0]), "version": versions[0]},
            })).collect::<Vec<_>>(),
        })
    }

    /// `/openapi/v3`: one document per served group-version.
    fn openapi_index(&self) -> Value {
        let state = self.lock();
        let mut paths = serde_json::Map::new();
        for t in state.registry.all() {
            let gv = if t.group.is_empty() {
                "api/v1".to_string()
            } else {
                format!("apis/{}/{}", t.group, t.version)
            };
            paths.insert(gv.clone(), json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={}", state.store.revision())}));
        }
        json!({"paths": paths})
    }

    /// A group-version's OpenAPI document: the paths kubectl consults (every write operation
    /// accepts `fieldValidation`, which tells kubectl to let the server validate) and, for
    /// custom resources, the CRD's schema.
    fn openapi_group_version(&self, group: &str, version: &str) -> Value {
        let state = self.lock();
        let mut paths = serde_json::Map::new();
        let mut schemas = serde_json::Map::new();
        let crds = state
            .registry
            .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .cloned();
        for t in state
            .registry
            .all()
            .filter(|t| t.group == group && t.version == version)
        {
            let gvk = json!({"group": t.group, "version": t.version, "kind": t.kind});
            let params = json!([
                {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
                {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
                {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}}
            ]);
            let op = |verb: &str| {
                json!({"operationId": format!("{verb}{}", t.kind), "parameters": params,
                "x-kubernetes-action": verb, "x-kubernetes-group-version-kind": gvk, "responses": {"200": {"description": "OK"}}})
            };
            let prefix = if t.group.is_empty() {
                "/api/v1".to_string()
            } else {
                format!("/apis/{}/{}", t.group, t.version)
            };
            let collection = if t.namespaced {
                format!("{prefix}/namespaces/{{namespace}}/{}", t.plural)
            } else {
                format!("{prefix}/{}", t.plural)
            };
            paths.insert(
                collection.clone(),
                json!({"post": op("post"), "get": op("list")}),
            );
            paths.insert(format!("{collection}/{{name}}"), json!({"put": op("put"), "patch": op("patch"), "get": op("get"), "delete": op("delete")}));
            let schema_name = format!(
                "{}.{}.{}",
                t.group.split('.').rev().collect::<Vec<_>>().join("."),
                t.version,
                t.kind
            );
            let mut schema = json!({"type": "object", "x-kubernetes-group-version-kind": [gvk]});
            if let Some(crds) = &crds {
                let crd_name = format!("{}.{}", t.plural, t.group);
                if let Ok(crd) = state.store.get(crds, "", &crd_name)
                    && let Some(v) = crd["spec"]["versions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|v| v["name"] == t.version)
                {
                    schema = v["schema"]["openAPIV3Schema"].clone();
                    schema["x-kubernetes-group-version-kind"] = json!([gvk]);
                }
            }
            schemas.insert(schema_name, schema);
        }
        json!({
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": format!("v1.{KUBERNETES_MINOR}.0")},
            "paths": paths,
            "components": {"schemas": schemas},
        })
    }

    fn resource_list(&self, group: &str, version: &str) -> Value {
        let state = self.lock();
        let group_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        let mut resources = Vec::new();
        for t in state
            .registry
            .all()
            .filter(|t| t.group == group && t.version == version)
        {
            resources.push(json!({
                "name": t.plural, "singularName": t.singular, "namespaced": t.namespaced, "kind": t.kind,
                "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                "shortNames": t.short_names,
            }));
            if t.status_subresource {
                resources.push(json!({"name": format!("{}/status", t.plural), "singularName": "", "namespaced": t.namespaced, "kind": t.kind, "verbs": ["get", "patch", "update"]}));
            }
        }
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
    }

    fn target(&self, group: &str, version: &str, rest: &[&str]) -> Result<Target, ApiError> {
        let (namespace, rest) = match rest {
            ["namespaces", ns, plural, more @ ..]
                if !(group.is_empty() && matches!(*plural, "status" | "finalize")) =>
            {
                (ns.to_string(), [&[*plural][..], more].concat())
            }
            other => (String::new(), other.to_vec()),
        };
        let plural = rest
            .first()
            .ok_or_else(|| ApiError::not_found("path", ""))?;
        let state = self.lock();
        let t = state
            .registry
            .get(group, version, plural)
            .cloned()
            .ok_or_else(|| {
                ApiError::not_found("resource", &format!("{group}/{version}/{plural}"))
            })?;
        Ok(Target {
            t,
            namespace,
            name: rest.get(1).map(|s| s.to_string()),
            subresource: rest.get(2).map(|s| s.to_string()),
        })
    }
}

#[allow(clippy::too_many_arguments)]
async fn serve_resource(
    cluster: &Cluster,
    group: &str,
    version: &str,
    rest: &[&str],
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let target = cluster.target(group, version, rest)?;
    let q = query(uri);
    let agent = headers
        .get(axum::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if let Some(answer) = cluster.inject_fault(&target, method, &q, agent).await {
        return Ok(answer);
    }
    let dry_run = q.get("dryRun").is_some_and(|v| v == "All");
    let t = &target.t;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if content_type.contains("protobuf") || content_type.contains("cbor") {
        return Err(ApiError::unsupported_media_type(format!(
            "the sim speaks JSON; {content_type} bodies are not supported (kubectl apply and kube-rs send JSON)"
        )));
    }
    let parse = |body: &Bytes| -> Result<Value, ApiError> {
        let mut object: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))?;
        conform(t, &mut object);
        Ok(object)
    };
    if t.plural == "tokenreviews" && method == Method::POST {
        return Ok(json_response(201, &cluster.token_review(parse(&body)?)));
    }
    if let (Some("token"), Some(name), "serviceaccounts", &Method::POST) = (
        target.subresource.as_deref(),
        &target.name,
        t.plural.as_str(),
        method,
    ) {
        return Ok(json_response(
            201,
            &cluster.token_request(&target.namespace, name, parse(&body)?)?,
        ));
    }
    let status_write = match target.subresource.as_deref() {
        None => false,
        Some("status") if t.status_subresource => true,
        Some(other) => return Err(ApiError::not_found("subresource", other)),
    };
    let response = match (method.as_str(), &target.name) {
        ("GET", None) if q.get("watch").is_some_and(|w| w == "true" || w == "1") => {
            return watch(cluster, &target, &q, wants_table(headers));
        }
        ("GET", None) => {
            let list = list(cluster, &target, &q)?;
            if wants_table(headers) {
                let items = list["items"].as_array().cloned().unwrap_or_default();
                json_response(
                    200,
                    &crate::table::table(t, &items, &list["metadata"], cluster.clock.now()),
                )
            } else {
                json_response(200, &list)
            }
        }
        ("GET", Some(name)) => {
            let object = cluster.lock().store.get(t, &target.namespace, name)?;
            if wants_table(headers) {
                json_response(
                    200,
                    &crate::table::table(
                        t,
                        std::slice::from_ref(&object),
                        &json!({}),
                        cluster.clock.now(),
                    ),
                )
            } else {
                json_response(200, &object)
            }
        }
        ("POST", None) => {
            let mut object = parse(&body)?;
            if t.status_subresource
                && let Some(map) = object.as_object_mut()
            {
                map.remove("status");
            }
            crate::apply::record_update(
                None,
                &mut object,
                &manager_of(&q, headers),
                None,
                t.schema.as_ref(),
                &cluster.clock.rfc3339(),
            );
            let written = commit(cluster, &target, None, object, status_write, dry_run).await;
            return Ok(answer(cluster, t, 201, written));
        }
        ("PUT", Some(name)) => {
            let mut object = parse(&body)?;
            let current = cluster.lock().store.get(t, &target.namespace, name)?;
            track(
                t,
                &current,
                &mut object,
                &manager_of(&q, headers),
                status_write,
                &cluster.clock.rfc3339(),
            );
            let written = commit(
                cluster,
                &target,
                Some(current),
                object,
                status_write,
                dry_run,
            )
            .await;
            return Ok(answer(cluster, t, 200, written));
        }
        ("PATCH", Some(name)) => {
            let content_type = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let apply = content_type.starts_with("application/apply-patch");
            let precondition = serde_json::from_slice::<Value>(&body)
                .is_ok_and(|patch| names_resource_version(&patch));
            // As kube-apiserver's GuaranteedUpdate: a patch is applied to the object as it is
            // read, and applied again when a concurrent write got there first, unless the
            // patch itself names the resourceVersion it expects.
            let mut attempts = 0;
            loop {
                let (current, next) = if apply {
                    server_side_apply(cluster, &target, name, &body, &q, status_write)?
                } else {
                    // The patch is merged as sent; the merged object is pruned and defaulted
                    // (a patch body defaulted on its own would reset every field it leaves
                    // out that has a schema default).
                    let patch_body: Value = serde_json::from_slice(&body)
                        .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))?;
                    patch(
                        cluster,
                        &target,
                        name,
                        content_type,
                        &patch_body,
                        status_write,
                        &manager_of(&q, headers),
                    )?
                };
                let code = if current.is_some() { 200 } else { 201 };
                let written = commit(cluster, &target, current, next, status_write, dry_run).await;
                if let Err(refused) = &written
                    && refused.error.reason == "Conflict"
                    && !precondition
                    && attempts < PATCH_RETRIES
                {
                    attempts += 1;
                    continue;
                }
                return Ok(answer(cluster, t, code, written));
            }
        }
        ("DELETE", Some(name)) => {
            let options: Value = if body.is_empty() {
                json!({})
            } else {
                parse(&body)?
            };
            let policy = q
                .get("propagationPolicy")
                .cloned()
                .or_else(|| options["propagationPolicy"].as_str().map(String::from));
            let propagation = match policy.as_deref() {
                Some("Orphan") => crate::store::Propagation::Orphan,
                Some("Foreground") => crate::store::Propagation::Foreground,
                _ => crate::store::Propagation::Background,
            };
            let current = cluster.lock().store.get(t, &target.namespace, name)?;
            if let Err(refused) = cluster
                .admit_delete(&target, &current, status_write, dry_run)
                .await
            {
                return Ok(refusal(&refused));
            }
            let deleted =
                cluster
                    .lock()
                    .store
                    .delete(t, &target.namespace, name, propagation, dry_run)?;
            if t.plural == "customresourcedefinitions" {
                cluster.after_write(t, &deleted);
            }
            json_response(200, &deleted)
        }
        (verb, _) => {
            return Err(ApiError::method_not_allowed(format!(
                "{verb} is not supported on {}",
                resource_name(t)
            )));
        }
    };
    Ok(response)
}

/// What the API server does to a custom resource on every write: prune the fields the
/// schema does not declare, then fill its defaults.
fn conform(t: &ResourceType, object: &mut Value) {
    if let Some(schema) = &t.schema
        && object.is_object()
    {
        crate::schema::prune(schema, object);
        crate::schema::apply_defaults(schema, object);
    }
}

/// Whether the client asked for a `meta.k8s.io` Table (what `kubectl get` asks for).
fn wants_table(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("as=Table"))
}

fn selectors(q: &BTreeMap<String, String>) -> Result<(LabelSelector, FieldSelector), ApiError> {
    Ok((
        LabelSelector::parse(q.get("labelSelector").map(String::as_str).unwrap_or(""))?,
        FieldSelector::parse(q.get("fieldSelector").map(String::as_str).unwrap_or(""))?,
    ))
}

fn list(
    cluster: &Cluster,
    target: &Target,
    q: &BTreeMap<String, String>,
) -> Result<Value, ApiError> {
    let (labels, fields) = selectors(q)?;
    let state = cluster.lock();
    // resourceVersion semantics: "0"/unset is any version (the current one here);
    // NotOlderThan waits for a newer version than exists (504 after the wait, as the API server
    // answers "Too large resource version"); Exact can only be the current version, since the
    // sim keeps no list snapshots (an older one answers 410, on which clients relist).
    let current = state.store.revision();
    let requested = match q.get("resourceVersion").map(String::as_str) {
        None | Some("") | Some("0") => None,
        Some(rv) => Some(
            rv.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?,
        ),
    };
    match (q.get("resourceVersionMatch").map(String::as_str), requested) {
        (_, Some(rv)) if rv > current => {
            return Err(ApiError {
                code: 504,
                reason: "Timeout",
                message: format!("Timeout: Too large resource version: {rv}, current: {current}"),
                details: None,
            });
        }
        (Some("Exact"), Some(rv)) if rv != current => {
            return Err(ApiError::gone(format!(
                "resourceVersion {rv} can no longer be listed exactly (current {current}); list again"
            )));
        }
        (Some("Exact") | Some("NotOlderThan"), None) if q.get("resourceVersion").is_none() => {
            return Err(ApiError::bad_request(
                "resourceVersionMatch requires resourceVersion",
            ));
        }
        (Some(other), _) if !matches!(other, "Exact" | "NotOlderThan") => {
            return Err(ApiError::bad_request(format!(
                "unsupported resourceVersionMatch {other:?}"
            )));
        }
        _ => {}
    }
    let namespace = (!target.namespace.is_empty()).then_some(target.namespace.as_str());
    let mut items: Vec<Value> = state
        .store
        .list(&target.t, namespace)
        .into_iter()
        .filter(|o| labels.matches(o) && fields.matches(o))
        .collect();
    let key = |o: &Value| {
        format!(
            "{}/{}",
            o["metadata"]["namespace"].as_str().unwrap_or(""),
            o["metadata"]["name"].as_str().unwrap_or("")
        )
    };
    if let Some(token) = q.get("continue").filter(|c| !c.is_empty()) {
        items.retain(|o| key(o).as_str() > token.as_str());
    }
    let mut metadata = json!({"resourceVersion": state.store.revision().to_string()});
    if let Some(limit) = q
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0)
        && items.len() > limit
    {
        let remaining = items.len() - limit;
        items.truncate(limit);
        metadata["continue"] = json!(key(items.last().unwrap()));
        metadata["remainingItemCount"] = json!(remaining);
    }
    Ok(
        json!({"kind": format!("{}List", target.t.kind), "apiVersion": target.t.api_version(), "metadata": metadata, "items": items}),
    )
}

/// The field manager of a write: the `fieldManager` parameter, else the client's user agent
/// (up to the first `/`), as kube-apiserver derives it.
fn manager_of(q: &BTreeMap<String, String>, headers: &HeaderMap) -> String {
    q.get("fieldManager")
        .cloned()
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| {
            headers
                .get(header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .and_then(|ua| ua.split('/').next())
                .filter(|m| !m.is_empty())
                .unwrap_or("unknown")
                .to_string()
        })
}

/// Records the ownership of an ordinary write in `next`'s managedFields, judged on what the
/// store will keep of it (the status split applied).
fn track(
    t: &ResourceType,
    current: &Value,
    next: &mut Value,
    manager: &str,
    status_write: bool,
    now: &str,
) {
    let mut effective = if t.status_subresource && status_write {
        let mut e = current.clone();
        e["status"] = next.get("status").cloned().unwrap_or(Value::Null);
        e
    } else {
        let mut e = next.clone();
        if t.status_subresource {
            match current.get("status") {
                Some(status) => e["status"] = status.clone(),
                None => {
                    if let Some(map) = e.as_object_mut() {
                        map.remove("status");
                    }
                }
            }
        }
        e
    };
    let subresource = (t.status_subresource && status_write).then_some("status");
    crate::apply::record_update(
        Some(current),
        &mut effective,
        manager,
        subresource,
        t.schema.as_ref(),
        now,
    );
    if !next["metadata"].is_object() {
        next["metadata"] = json!({});
    }
    match effective["metadata"].get("managedFields") {
        Some(fields) => next["metadata"]["managedFields"] = fields.clone(),
        None => {
            next["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("managedFields");
        }
    }
}

/// `application/apply-patch+yaml`: server-side apply for the `fieldManager`, creating the
/// object when it does not exist. Returns the stored object (if any) and the one to write.
fn server_side_apply(
    cluster: &Cluster,
    target: &Target,
    name: &str,
    body: &Bytes,
    q: &BTreeMap<String, String>,
    status_write: bool,
) -> Result<(Option<Value>, Value), ApiError> {
    let t = &target.t;
    let manager = q
        .get("fieldManager")
        .filter(|m| !m.is_empty())
        .ok_or_else(|| {
            ApiError::bad_request("PATCH requests with the apply content type require fieldManager")
        })?;
    let force = q.get("force").is_some_and(|f| f == "true");
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("the applied configuration is not UTF-8"))?;
    let applied: Value = serde_json::from_str(text)
        .or_else(|_| serde_saphyr::from_str(text))
        .map_err(|e| {
            ApiError::bad_request(format!(
                "the applied configuration is neither JSON nor YAML: {e}"
            ))
        })?;
    if applied["metadata"]["name"]
        .as_str()
        .is_some_and(|n| n != name)
    {
        return Err(ApiError::bad_request(
            "the name in the applied configuration does not match the URL",
        ));
    }
    let current = cluster.lock().store.get(t, &target.namespace, name).ok();
    let subresource = status_write.then_some("status");
    let mut result = crate::apply::apply(
        current.as_ref(),
        &applied,
        manager,
        subresource,
        force,
        t.schema.as_ref(),
        &cluster.clock.rfc3339(),
    )
    .map_err(|conflicts| {
        let list: Vec<String> = conflicts
            .iter()
            .map(|c| format!("conflict with \"{}\": .{}", c.manager, c.field))
            .collect();
        ApiError {
            code: 409,
            reason: "Conflict",
            message: format!(
                "Apply failed with {} conflict{}: {}",
                conflicts.len(),
                if conflicts.len() == 1 { "" } else { "s" },
                list.join(", ")
            ),
            details: None,
        }
    })?;
    conform(t, &mut result);
    match current {
        Some(current) => {
            result["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
            Ok((Some(current), result))
        }
        None if status_write => Err(ApiError::not_found(&crate::store::resource_name(t), name)),
        None => {
            result["metadata"]["name"] = json!(name);
            Ok((None, result))
        }
    }
}

/// A merge, strategic merge or JSON patch. Returns the stored object and the one to write.
/// How often a patch is re-applied after losing a race to a concurrent write.
const PATCH_RETRIES: usize = 5;

/// Whether a merge or JSON patch names the resourceVersion it expects (a precondition).
fn names_resource_version(patch: &Value) -> bool {
    match patch {
        Value::Array(ops) => ops
            .iter()
            .any(|op| op["path"] == "/metadata/resourceVersion" && op["op"] != "remove"),
        other => other.pointer("/metadata/resourceVersion").is_some(),
    }
}

fn patch(
    cluster: &Cluster,
    target: &Target,
    name: &str,
    content_type: &str,
    patch: &Value,
    status_write: bool,
    manager: &str,
) -> Result<(Option<Value>, Value), ApiError> {
    let current = cluster
        .lock()
        .store
        .get(&target.t, &target.namespace, name)?;
    let mut next = current.clone();
    let media = content_type.split(';').next().unwrap_or("").trim();
    match media {
        "application/merge-patch+json" => json_patch::merge(&mut next, patch),
        "application/strategic-merge-patch+json" if target.t.schema.is_none() => {
            crate::strategic::apply(&mut next, patch)
        }
        "application/strategic-merge-patch+json" => {
            // As kube-apiserver: custom resources have no strategic merge metadata.
            return Err(ApiError::unsupported_media_type(
                "strategic merge patch is not supported for custom resources; use a merge or JSON patch",
            ));
        }
        "application/json-patch+json" => {
            let ops: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            json_patch::patch(&mut next, &ops)
                .map_err(|e| ApiError::invalid(format!("the JSON patch does not apply: {e}")))?;
        }
        other => {
            return Err(ApiError::unsupported_media_type(format!(
                "the sim does not implement {other} patches yet (merge, JSON and strategic merge patches are supported)"
            )));
        }
    }
    conform(&target.t, &mut next);
    track(
        &target.t,
        &current,
        &mut next,
        manager,
        status_write,
        &cluster.clock.rfc3339(),
    );
    // A patch carries no precondition unless it names a resourceVersion itself.
    if patch.pointer("/metadata/resourceVersion").is_none() {
        next["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
    }
    Ok((Some(current), next))
}

/// The answer to a write: the object with the webhooks' warnings, or the refusal.
fn answer(
    cluster: &Cluster,
    t: &ResourceType,
    code: u16,
    written: Result<(Value, Vec<String>), Refused>,
) -> Response {
    match written {
        Ok((object, warnings)) => {
            cluster.after_write(t, &object);
            with_warnings(json_response(code, &object), &warnings)
        }
        Err(refused) => refusal(&refused),
    }
}

fn refusal(refused: &Refused) -> Response {
    with_warnings(error_response(&refused.error), &refused.warnings)
}

/// Adds `Warning: 299 - "<text>"` headers, as kube-apiserver relays admission warnings.
fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    for warning in warnings {
        let text = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = format!("299 - \"{text}\"").parse() {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

/// Writes `object` through the admission chain, in kube-apiserver's order: mutating webhooks
/// (each patch followed by pruning and defaulting again), the schema and CEL validation the
/// store runs, the validating webhooks, then the write itself. Without a matching webhook it
/// is one store call. `current` is the stored object for an update, none for a create.
async fn commit(
    cluster: &Cluster,
    target: &Target,
    current: Option<Value>,
    object: Value,
    status_write: bool,
    dry_run: bool,
) -> Result<(Value, Vec<String>), Refused> {
    let t = &target.t;
    let write = |object: Value, dry_run: bool| -> Result<Value, ApiError> {
        let mut state = cluster.lock();
        match &current {
            Some(current) => {
                let name = current["metadata"]["name"].as_str().unwrap_or("");
                state
                    .store
                    .replace(t, &target.namespace, name, object, status_write, dry_run)
            }
            None => state.store.create(t, &target.namespace, object, dry_run),
        }
    };
    let operation = if current.is_some() {
        "UPDATE"
    } else {
        "CREATE"
    };
    let (configurations, namespace_labels, services) = cluster.webhook_context(target);
    if configurations.0.is_empty() && configurations.1.is_empty() {
        return Ok((write(object, dry_run)?, vec![]));
    }
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    // One set of facts for the whole chain; only the object changes between the phases.
    let mut facts = WebhookFacts {
        operation,
        name,
        namespace_labels,
        object: Some(object),
        old: current.clone(),
        subresource: status_write.then_some("status"),
        dry_run,
    };
    let mut warnings = Vec::new();
    let mutating = crate::webhooks::matching(&configurations.0, true, &facts.request(target));
    for hook in &mutating {
        let answer = consult(hook, &facts.request(target), &services, &mut warnings).await?;
        if let Some(mut patched) = answer {
            conform(t, &mut patched);
            facts.object = Some(patched);
        }
    }
    let mut object = facts.object.take().unwrap_or_default();
    let validated = write(object.clone(), true).map_err(|error| Refused {
        error,
        warnings: warnings.clone(),
    })?;
    facts.object = Some(validated);
    let validating = crate::webhooks::matching(&configurations.1, false, &facts.request(target));
    for hook in &validating {
        consult(hook, &facts.request(target), &services, &mut warnings).await?;
    }
    // A generated name was drawn by the validation pass; the write keeps it.
    if current.is_none()
        && let Some(validated) = &facts.object
    {
        object["metadata"]["name"] = validated["metadata"]["name"].clone();
    }
    let written = write(object, dry_run).map_err(|error| Refused {
        error,
        warnings: warnings.clone(),
    })?;
    Ok((written, warnings))
}

/// Calls one webhook, collecting its warnings; a refusal carries every warning given so far.
/// Returns the patched object of a mutating webhook that patched.
async fn consult(
    hook: &crate::webhooks::Hook,
    request: &crate::webhooks::Request<'_>,
    services: &ServiceRegistry,
    warnings: &mut Vec<String>,
) -> Result<Option<Value>, Refused> {
    match crate::webhooks::call(hook, request, services).await {
        Ok(answer) => {
            warnings.extend(answer.warnings);
            Ok(answer.patched)
        }
        Err(mut refused) => {
            refused.warnings.splice(0..0, warnings.drain(..));
            Err(refused)
        }
    }
}

/// The owned facts of a request the webhooks are asked about.
struct WebhookFacts {
    operation: &'static str,
    name: String,
    namespace_labels: Value,
    object: Option<Value>,
    old: Option<Value>,
    subresource: Option<&'static str>,
    dry_run: bool,
}

impl WebhookFacts {
    fn request<'a>(&'a self, target: &'a Target) -> crate::webhooks::Request<'a> {
        let t = &target.t;
        crate::webhooks::Request {
            group: &t.group,
            version: &t.version,
            kind: &t.kind,
            resource: &t.plural,
            subresource: self.subresource,
            operation: self.operation,
            namespaced: t.namespaced,
            namespace: &target.namespace,
            name: &self.name,
            namespace_labels: &self.namespace_labels,
            object: self.object.as_ref(),
            old: self.old.as_ref(),
            dry_run: self.dry_run,
        }
    }
}

fn watch(
    cluster: &Cluster,
    target: &Target,
    q: &BTreeMap<String, String>,
    table: bool,
) -> Result<Response, ApiError> {
    let (labels, fields) = selectors(q)?;
    let storage_key = target.t.storage_key();
    let namespace = target.namespace.clone();
    let t = target.t.clone();
    let matches = move |e: &Event| {
        e.storage_key == storage_key
            && (namespace.is_empty()
                || e.object["metadata"]["namespace"].as_str() == Some(namespace.as_str()))
            && labels.matches(&e.object)
            && fields.matches(&e.object)
    };
    let bookmarks = q.get("allowWatchBookmarks").is_some_and(|v| v == "true");
    let initial_events = q.get("sendInitialEvents").is_some_and(|v| v == "true");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs);
    let requested: Option<u64> = q
        .get("resourceVersion")
        .filter(|v| !v.is_empty())
        .and_then(|v| v.parse().ok());

    let (tx, rx) = mpsc::channel::<Bytes>(256);
    // `kubectl get -w` asks for Tables: each event then carries a one-row Table.
    let clock = cluster.clock.clone();
    let render = {
        let t = target.t.clone();
        move |kind: &str, object: &Value| {
            let object = if table && matches!(kind, "ADDED" | "MODIFIED" | "DELETED") {
                crate::table::table(&t, std::slice::from_ref(object), &json!({}), clock.now())
            } else {
                object.clone()
            };
            Bytes::from(format!("{}\n", json!({"type": kind, "object": object})))
        }
    };
    let line = |kind: &str, object: &Value| render(kind, object);
    let resource = format!("{}/{}", t.group, t.plural);
    let (backlog, mut live, mut last) = {
        let state = cluster.lock();
        let live = state.store.subscribe();
        let current = state.store.revision();
        let mut backlog = Vec::new();
        let start = match requested {
            Some(rv) if rv < state.store.oldest_resumable() => {
                let gone = ApiError::gone(format!(
                    "too old resource version: {rv} ({})",
                    state.store.oldest_resumable()
                ));
                backlog.push(line("ERROR", &gone.status()));
                None
            }
            Some(rv) if !initial_events && rv != 0 => Some(rv),
            _ => {
                // No (or 0) resourceVersion, or sendInitialEvents: start with the current state.
                let namespace = (!target.namespace.is_empty()).then_some(target.namespace.as_str());
                for object in state.store.list(&t, namespace) {
                    let event = Event {
                        revision: 0,
                        storage_key: t.storage_key(),
                        kind: EventType::Added,
                        object: object.into(),
                    };
                    if matches(&event) {
                        backlog.push(line("ADDED", &event.object));
                    }
                }
                if initial_events {
                    backlog.push(line("BOOKMARK", &json!({"apiVersion": t.api_version(), "kind": t.kind,
                        "metadata": {"resourceVersion": current.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}})));
                }
                Some(current)
            }
        };
        let mut last = start.unwrap_or(u64::MAX);
        if let Some(rv) = start {
            for event in state.store.history_after(rv) {
                if matches(&event) {
                    backlog.push(line(event.kind.as_str(), &event.object));
                }
                last = last.max(event.revision);
            }
        }
        (backlog, live, last)
    };
    if last == u64::MAX {
        cluster.watch_ended(&resource, "expired");
    }
    let api_version = t.api_version();
    let kind = t.kind.clone();
    let mut drops = cluster.lock().watch_drops.subscribe();
    drops.mark_unchanged();
    let cluster = cluster.clone();
    tokio::spawn(async move {
        for bytes in backlog {
            if tx.send(bytes).await.is_err() {
                return;
            }
        }
        if last == u64::MAX {
            return;
        }
        let ended = |reason| cluster.watch_ended(&resource, reason);
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        // A bookmark comes a period after the watch starts, never at once: a plain interval's
        // first tick is immediate, which raced the first change.
        let period = Duration::from_secs(1);
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        loop {
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                received = live.recv() => match received {
                    Ok(event) => {
                        if event.revision <= last {
                            continue;
                        }
                        last = event.revision;
                        if matches(&event) && tx.send(render(event.kind.as_str(), &event.object)).await.is_err() {
                            return;
                        }
                    }
                    // The client read too slowly for the events to wait for it. kube-apiserver
                    // closes such a watcher's stream without an error; the client watches
                    // again from the last resourceVersion it saw, which the history still
                    // holds unless it too has moved on (then 410, and the client lists).
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        ended("unresponsive");
                        return;
                    }
                    Err(_) => return,
                },
                _ = ticker.tick(), if bookmarks => {
                    let bookmark = json!({"type": "BOOKMARK", "object": {"apiVersion": api_version, "kind": kind, "metadata": {"resourceVersion": last.to_string()}}});
                    if tx.send(Bytes::from(format!("{bookmark}\n"))).await.is_err() {
                        return;
                    }
                }
                () = sleep => {
                    ended("timeout");
                    return;
                }
                () = tx.closed() => return,
                _ = drops.changed() => {
                    ended("dropped");
                    return;
                }
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(stream),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_decoded() {
        assert_eq!(
            decode("tier%20in%20(api%2Cdb)").as_deref(),
            Some("tier in (api,db)")
        );
        assert_eq!(decode("a+b").as_deref(), Some("a b"));
        assert_eq!(decode("100%").as_deref(), Some("100%"));
        let uri: Uri = "/api/v1/configmaps?labelSelector=app%3Dbarbican&limit=2"
            .parse()
            .unwrap();
        let q = query(&uri);
        assert_eq!(q["labelSelector"], "app=barbican");
        assert_eq!(q["limit"], "2");
    }
}
