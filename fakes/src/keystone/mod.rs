//! A fake Keystone (identity v3), good enough for keystonemiddleware's `authtoken` and for a
//! test user's client: version discovery, password authentication of configured users
//! (unscoped or scoped to their project), and token validation with the project, the roles
//! and a catalog whose identity endpoint is the fake itself.
//!
//! Endpoints: `GET /` (300, the versions), `GET /v3` (the v3 version document), `POST
//! /v3/auth/tokens` (201 with `X-Subject-Token`), `GET` and `HEAD /v3/auth/tokens` (the
//! `X-Subject-Token` validated for the caller in `X-Auth-Token`), `DELETE /v3/auth/tokens`
//! (revocation), and the service catalog ([`catalog`]). Validation is allowed to a
//! caller with the `admin` or `service` role, or to the token's own user, as Keystone's default
//! policy allows it. Tokens expire after [`FakeKeystone::set_token_lifetime`] on the fake's
//! clock. Answers never echo a password or a token; errors have Keystone's `{"error": …}` shape.

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Json, Router,
    extract::State,
    http::{HeaderMap, HeaderValue, Method, StatusCode},
    response::{IntoResponse, Response},
    routing::get,
};
use barbican_sim::clock::Clock;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::{net::TcpListener, sync::watch};

pub mod catalog;
pub use catalog::{Endpoint, Service};

/// The one domain the fake knows, as Keystone's bootstrap creates it.
pub const DEFAULT_DOMAIN: (&str, &str) = ("default", "Default");

/// A user the fake authenticates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// The user's name in the default domain.
    pub name: String,
    /// The password a client must send.
    pub password: String,
    /// The project the user has roles on.
    pub project: String,
    /// The roles on that project (`admin`, `service`, `creator`, …).
    pub roles: Vec<String>,
}

/// What the fake holds: its users and the tokens it issued.
struct Keystone {
    users: Vec<User>,
    tokens: BTreeMap<String, Issued>,
    lifetime: Duration,
    minted: u64,
    validations: u64,
    seed: String,
    catalog: catalog::Catalog,
}

/// A token the fake issued.
#[derive(Clone)]
struct Issued {
    /// The user's name: a user replaced by name keeps its tokens.
    user: String,
    scoped: bool,
    issued_at: jiff::Timestamp,
    expires_at: jiff::Timestamp,
    audit_id: String,
}

/// What a token request's `auth.scope` asks for.
enum Scope {
    /// No scope: an unscoped token.
    Unscoped,
    /// The user's project.
    Project,
    /// A project the user has no roles on.
    Refused,
    /// A domain or system scope, which the fake does not issue.
    Unsupported,
}

/// A stable id for a name: what Keystone's ids look like (32 hex digits), derived so that a
/// test can predict it.
pub fn id_of(kind: &str, name: &str) -> String {
    let digest = Sha256::digest(format!("{kind}/{name}"));
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// A Keystone error body.
fn error(status: StatusCode, message: &str) -> Response {
    let title = status.canonical_reason().unwrap_or("Error");
    let body = json!({"error": {"code": status.as_u16(), "message": message, "title": title}});
    (status, Json(body)).into_response()
}

fn poisoned() -> Response {
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "the fake's state is poisoned",
    )
}

fn unauthorized() -> Response {
    error(
        StatusCode::UNAUTHORIZED,
        "The request you have made requires authentication.",
    )
}

impl Keystone {
    /// The user named by a password-method identity, if the password matches.
    fn authenticate(&self, identity: &Value) -> Option<String> {
        let methods = identity["methods"].as_array()?;
        if !methods.iter().any(|m| m == "password") {
            return None;
        }
        let user = &identity["password"]["user"];
        let password = user["password"].as_str()?;
        let found = self.users.iter().find(|u| {
            let named = match (user["id"].as_str(), user["name"].as_str()) {
                (Some(id), _) => id == id_of("user", &u.name),
                (None, Some(name)) => name == u.name && in_default_domain(&user["domain"]),
                (None, None) => false,
            };
            named && u.password == password
        })?;
        Some(found.name.clone())
    }

    fn user(&self, name: &str) -> Option<&User> {
        self.users.iter().find(|u| u.name == name)
    }

    /// What `scope` asks for the user: nothing, its project (by id, or by name in the default
    /// domain), or something the fake refuses.
    fn scope(&self, user: &str, scope: &Value) -> Scope {
        if scope.is_null() {
            return Scope::Unscoped;
        }
        let Some(user) = self.user(user) else {
            return Scope::Refused;
        };
        let project = &scope["project"];
        let named = match (project["id"].as_str(), project["name"].as_str()) {
            (Some(id), _) => id == id_of("project", &user.project),
            (None, Some(name)) => name == user.project && in_default_domain(&project["domain"]),
            (None, None) => return Scope::Unsupported,
        };
        if named {
            Scope::Project
        } else {
            Scope::Refused
        }
    }

    fn mint(&mut self, user: String, scoped: bool, now: jiff::Timestamp) -> Option<String> {
        self.minted = self.minted.checked_add(1)?;
        let token = format!(
            "gAAAAA{}",
            id_of("token", &format!("{}/{}", self.seed, self.minted))
        );
        let lifetime = jiff::SignedDuration::try_from(self.lifetime).ok()?;
        let issued = Issued {
            user,
            scoped,
            issued_at: now,
            expires_at: now.checked_add(lifetime).ok()?,
            audit_id: id_of("audit", &token),
        };
        self.tokens.insert(token.clone(), issued);
        Some(token)
    }

    /// The token, if the fake issued it and it has not expired.
    fn live(&self, token: &str, now: jiff::Timestamp) -> Option<&Issued> {
        self.tokens.get(token).filter(|t| t.expires_at > now)
    }

    /// The token document Keystone returns for `issued`.
    fn document(&self, issued: &Issued, base: &str, catalog: bool) -> Value {
        let Some(user) = self.user(&issued.user) else {
            return Value::Null;
        };
        let domain = json!({"id": DEFAULT_DOMAIN.0, "name": DEFAULT_DOMAIN.1});
        let mut token = json!({
            "methods": ["password"],
            "user": {"id": id_of("user", &user.name), "name": user.name, "domain": domain,
                     "password_expires_at": null},
            "audit_ids": [issued.audit_id],
            "issued_at": keystone_time(issued.issued_at),
            "expires_at": keystone_time(issued.expires_at),
        });
        if issued.scoped {
            token["project"] = json!({"id": id_of("project", &user.project),
                "name": user.project, "domain": domain});
            token["is_domain"] = json!(false);
            token["roles"] = user
                .roles
                .iter()
                .map(|r| json!({"id": id_of("role", r), "name": r}))
                .collect();
            if catalog {
                let endpoints: Vec<Value> = ["public", "internal", "admin"]
                    .iter()
                    .map(|interface| {
                        json!({"id": id_of("endpoint", interface), "interface": interface,
                            "region": "RegionOne", "region_id": "RegionOne",
                            "url": format!("{base}/v3")})
                    })
                    .collect();
                let identity = json!({"id": id_of("service", "keystone"),
                    "type": "identity", "name": "keystone", "endpoints": endpoints});
                token["catalog"] = self.catalog.token_catalog(identity);
            }
        }
        json!({ "token": token })
    }
}

/// `domain` (of a user or project named by name) is the default domain, or not given.
fn in_default_domain(domain: &Value) -> bool {
    match (domain["id"].as_str(), domain["name"].as_str()) {
        (Some(id), _) => id == DEFAULT_DOMAIN.0,
        (None, Some(name)) => name == DEFAULT_DOMAIN.1,
        (None, None) => domain.is_null(),
    }
}

/// Keystone's timestamps: microseconds, `Z`.
fn keystone_time(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string()
}

#[derive(Clone)]
struct Shared {
    state: Arc<Mutex<Keystone>>,
    clock: Clock,
    base: Arc<Mutex<String>>,
}

impl Shared {
    /// The state, unless a panic while it was held left it poisoned.
    fn keystone(&self) -> Option<std::sync::MutexGuard<'_, Keystone>> {
        self.state.lock().ok()
    }

    fn base(&self) -> String {
        self.base.lock().map(|b| b.clone()).unwrap_or_default()
    }
}

fn v3_version(base: &str) -> Value {
    json!({"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
        "links": [{"rel": "self", "href": format!("{base}/v3/")}],
        "media-types": [{"base": "application/json",
            "type": "application/vnd.openstack.identity-v3+json"}]})
}

async fn versions(State(shared): State<Shared>) -> Response {
    let body = json!({"versions": {"values": [v3_version(&shared.base())]}});
    (StatusCode::MULTIPLE_CHOICES, Json(body)).into_response()
}

async fn version(State(shared): State<Shared>) -> Response {
    Json(json!({"version": v3_version(&shared.base())})).into_response()
}

async fn issue(State(shared): State<Shared>, body: axum::body::Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            "The request body is not JSON: auth.identity is required.",
        );
    };
    let auth = &request["auth"];
    let now = shared.clock.now();
    let base = shared.base();
    let Some(mut state) = shared.keystone() else {
        return poisoned();
    };
    let Some(user) = state.authenticate(&auth["identity"]) else {
        return unauthorized();
    };
    let scoped = match state.scope(&user, &auth["scope"]) {
        Scope::Unscoped => false,
        Scope::Project => true,
        Scope::Refused => return unauthorized(),
        Scope::Unsupported => {
            return error(
                StatusCode::BAD_REQUEST,
                "The fake Keystone scopes tokens to projects only: auth.scope.project needs an id or a name.",
            );
        }
    };
    let Some(token) = state.mint(user, scoped, now) else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the fake cannot mint more tokens",
        );
    };
    let Some(document) = state
        .live(&token, now)
        .map(|t| state.document(t, &base, true))
    else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "a minted token is not live",
        );
    };
    let mut response = (StatusCode::CREATED, Json(document)).into_response();
    if let Ok(value) = HeaderValue::from_str(&token) {
        response.headers_mut().insert("x-subject-token", value);
    }
    response
}

async fn validate(
    State(shared): State<Shared>,
    method: Method,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let now = shared.clock.now();
    let base = shared.base();
    let Some(mut state) = shared.keystone() else {
        return poisoned();
    };
    let Some(caller) = header("x-auth-token")
        .and_then(|t| state.live(t, now))
        .cloned()
    else {
        return unauthorized();
    };
    let Some(subject) = header("x-subject-token") else {
        return error(StatusCode::BAD_REQUEST, "X-Subject-Token is required.");
    };
    let Some(issued) = state.live(subject, now).cloned() else {
        return error(StatusCode::NOT_FOUND, "Could not find token.");
    };
    let privileged = caller.scoped
        && state
            .user(&caller.user)
            .is_some_and(|u| u.roles.iter().any(|r| r == "admin" || r == "service"));
    if !privileged && caller.user != issued.user {
        return error(
            StatusCode::FORBIDDEN,
            "You are not authorized to perform the requested action: identity:validate_token.",
        );
    }
    state.validations = state.validations.saturating_add(1);
    if method == Method::HEAD {
        return StatusCode::OK.into_response();
    }
    let catalog = !uri.query().unwrap_or_default().contains("nocatalog");
    let mut response = Json(state.document(&issued, &base, catalog)).into_response();
    if let Ok(value) = HeaderValue::from_str(subject) {
        response.headers_mut().insert("x-subject-token", value);
    }
    response
}

/// `DELETE /v3/auth/tokens`: revokes the `X-Subject-Token`, allowed to its own user and to
/// an `admin`.
async fn revoke(State(shared): State<Shared>, headers: HeaderMap) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let now = shared.clock.now();
    let Some(mut state) = shared.keystone() else {
        return poisoned();
    };
    let Some(caller) = header("x-auth-token")
        .and_then(|t| state.live(t, now))
        .cloned()
    else {
        return unauthorized();
    };
    let Some(subject) = header("x-subject-token").map(str::to_string) else {
        return error(StatusCode::BAD_REQUEST, "X-Subject-Token is required.");
    };
    let Some(issued) = state.live(&subject, now).cloned() else {
        return error(StatusCode::NOT_FOUND, "Could not find token.");
    };
    let admin = state
        .user(&caller.user)
        .is_some_and(|u| u.roles.iter().any(|r| r == "admin"));
    if caller.user != issued.user && !admin {
        return error(
            StatusCode::FORBIDDEN,
            "You are not authorized to perform the requested action: identity:revoke_token.",
        );
    }
    state.tokens.remove(&subject);
    StatusCode::NO_CONTENT.into_response()
}

/// A running fake Keystone on a loopback port.
pub struct FakeKeystone {
    shared: Shared,
    addr: SocketAddr,
    _down: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeKeystone {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeKeystone {
    /// Starts the fake on `127.0.0.1` at an ephemeral port, with no users; tokens live an hour
    /// of `clock`'s time.
    pub async fn start(clock: Clock) -> std::io::Result<Self> {
        Self::start_on(clock, "127.0.0.1:0".parse().map_err(std::io::Error::other)?).await
    }

    /// Starts the fake listening on `addr`.
    pub async fn start_on(clock: Clock, addr: SocketAddr) -> std::io::Result<Self> {
        Self::serve(clock, TcpListener::bind(addr).await?)
    }

    /// Starts the fake on `127.0.0.1` at an ephemeral port without awaiting: for callers
    /// that are not async themselves but run inside a Tokio runtime.
    pub fn start_now(clock: Clock) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        Self::serve(clock, TcpListener::from_std(listener)?)
    }

    fn serve(clock: Clock, listener: TcpListener) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let seed = format!("{addr}/{}", clock.now());
        let shared = Shared {
            state: Arc::new(Mutex::new(Keystone {
                users: Vec::new(),
                tokens: BTreeMap::new(),
                lifetime: Duration::from_secs(3600),
                minted: 0,
                validations: 0,
                seed,
                catalog: catalog::Catalog::default(),
            })),
            clock,
            base: Arc::new(Mutex::new(format!("http://{addr}"))),
        };
        let router = Router::new()
            .route("/", get(versions))
            .route("/v3", get(version))
            .route("/v3/", get(version))
            .route(
                "/v3/auth/tokens",
                get(validate).head(validate).post(issue).delete(revoke),
            )
            .route(
                "/v3/services",
                get(catalog::list_services).post(catalog::create_service),
            )
            .route(
                "/v3/services/{id}",
                get(catalog::get_service).delete(catalog::delete_service),
            )
            .route(
                "/v3/endpoints",
                get(catalog::list_endpoints).post(catalog::create_endpoint),
            )
            .route(
                "/v3/endpoints/{id}",
                get(catalog::get_endpoint)
                    .patch(catalog::update_endpoint)
                    .delete(catalog::delete_endpoint),
            )
            .route("/v3/regions", get(catalog::list_regions))
            .route("/v3/regions/{id}", get(catalog::get_region))
            .with_state(shared.clone());
        let (down, receiver) = watch::channel(false);
        let task = tokio::spawn(async move {
            let _ =
                barbican_sim::listener::serve_router_with_outages(listener, receiver, router).await;
        });
        Ok(Self {
            shared,
            addr,
            _down: down,
            task,
        })
    }

    /// Where the fake listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL the fake puts in its version documents and catalog: `http://<addr>` unless
    /// [`FakeKeystone::set_public_url`] names another (a Service name clients resolve to it).
    pub fn url(&self) -> String {
        self.shared.base()
    }

    /// Names the fake by `url` in its answers (no trailing slash).
    pub fn set_public_url(&self, url: &str) {
        if let Ok(mut base) = self.shared.base.lock() {
            *base = url.trim_end_matches('/').to_string();
        }
    }

    /// Adds (or replaces, by name) a user in the default domain.
    pub fn add_user(&self, user: User) {
        if let Ok(mut state) = self.shared.state.lock() {
            state.users.retain(|u| u.name != user.name);
            state.users.push(user);
        }
    }

    /// How long a token lives from now on.
    pub fn set_token_lifetime(&self, lifetime: Duration) {
        if let Ok(mut state) = self.shared.state.lock() {
            state.lifetime = lifetime;
        }
    }

    /// Adds a region to the catalog (`RegionOne` is there from the start).
    pub fn add_region(&self, id: &str) {
        if let Ok(mut state) = self.shared.state.lock() {
            state.catalog.regions.insert(id.to_string());
        }
    }

    /// The catalog's services.
    pub fn services(&self) -> Vec<Service> {
        self.shared
            .state
            .lock()
            .map(|s| s.catalog.services.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The catalog's endpoints.
    pub fn endpoints(&self) -> Vec<Endpoint> {
        self.shared
            .state
            .lock()
            .map(|s| s.catalog.endpoints.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Registers an endpoint as someone else would (an administrator, another deployment
    /// tool): on the service of `service_type` (created, named after the type, when there is
    /// none), in `region` (created when missing).
    pub fn register(
        &self,
        service_type: &str,
        interface: &str,
        region: &str,
        url: &str,
    ) -> Endpoint {
        let mut state = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        let catalog = &mut state.catalog;
        let service = match catalog.services.values().find(|s| s.type_ == service_type) {
            Some(service) => service.clone(),
            None => catalog.add_service(service_type, service_type, "registered by hand"),
        };
        catalog.regions.insert(region.to_string());
        catalog.add_endpoint(&service.id, interface, region, url)
    }

    /// Deletes an endpoint as an administrator would; whether it was there.
    pub fn remove_endpoint(&self, id: &str) -> bool {
        self.shared
            .state
            .lock()
            .map(|mut s| s.catalog.endpoints.remove(id).is_some())
            .unwrap_or(false)
    }

    /// How many catalog writes the fake has answered.
    pub fn catalog_writes(&self) -> u64 {
        self.shared
            .state
            .lock()
            .map(|s| s.catalog.writes)
            .unwrap_or(0)
    }

    /// How many tokens issued to `user` are still live (not expired, not revoked).
    pub fn live_tokens_of(&self, user: &str) -> usize {
        let now = self.shared.clock.now();
        self.shared
            .state
            .lock()
            .map(|s| {
                s.tokens
                    .values()
                    .filter(|t| t.user == user && t.expires_at > now)
                    .count()
            })
            .unwrap_or(0)
    }

    /// How many validations the fake has answered with a token.
    pub fn validations(&self) -> u64 {
        self.shared.state.lock().map(|s| s.validations).unwrap_or(0)
    }
}
