//! A fake OpenBao: stateful, speaking OpenBao's JSON and status codes, behind TLS.
//!
//! The HTTP side is a wiremock server with one custom responder over the shared [`State`]
//! (`state.rs` holds every answer as plain functions); [`crate::tls::Front`] terminates TLS in
//! front of it with a certificate for whatever name the client asks for, signed by a CA a test
//! publishes as the `<instance>-tls-ca` Secret or a brownfield caBundle. Time (secret-ID and
//! token lifetimes) is read from the sim's clock, so TTLs follow virtual time.
//!
//! Endpoints: AppRole login, role-id and secret-id; Kubernetes login (the JWT is checked with
//! the sim's TokenReview, then against the role's bound service accounts, namespaces and
//! audience); `sys/mounts`, `sys/mounts/<path>`, `sys/capabilities-self`; KV v2 data and
//! metadata (write, read, delete, list); `auth/token/lookup-self` and `revoke-self`;
//! `X-Vault-Namespace` namespaces. Controls: revoke or expire a secret ID, reject logins, deny
//! a capability, outage (refused connections or 503), latency; every request is logged.

pub mod policy;
pub mod state;

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use barbican_sim::clock::Clock;
use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate, matchers::any};

pub use state::{Call, Reply, ReviewedAccount, State};

use crate::tls::{Authority, Front};
use policy::Policy;
use state::{AppRole, KubernetesRole, Review};

/// Which parts of the managed "self-init" configuration exist (the OpenBaoCluster's one-shot
/// requests: `barbican_kv`, `barbican_secretstore_policy`, `approle_auth`,
/// `barbican_approle_role`, `kubernetes_auth`, `provisioner_policy`, `provisioner_k8s_role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelfInit {
    /// The `barbican/` KV v2 mount.
    pub kv_mount: bool,
    /// AppRole auth at `auth/approle`.
    pub approle_auth: bool,
    /// The `barbican` AppRole (with the `barbican-secretstore` policy).
    pub barbican_role: bool,
    /// Kubernetes auth at `auth/kubernetes`.
    pub kubernetes_auth: bool,
    /// The `provisioner` Kubernetes role (with the `provisioner` policy).
    pub provisioner_role: bool,
}

impl SelfInit {
    /// Everything in place.
    pub const COMPLETE: Self = Self {
        kv_mount: true,
        approle_auth: true,
        barbican_role: true,
        kubernetes_auth: true,
        provisioner_role: true,
    };

    /// Nothing in place.
    pub const NONE: Self = Self {
        kv_mount: false,
        approle_auth: false,
        barbican_role: false,
        kubernetes_auth: false,
        provisioner_role: false,
    };
}

/// How an outage shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outage {
    /// Serving.
    None,
    /// The listener is closed: connections are refused.
    Refused,
    /// Every request is answered 503.
    Unavailable,
}

/// One request the fake received.
#[derive(Clone, Debug, PartialEq)]
pub struct Logged {
    /// The method.
    pub method: String,
    /// The path below `/v1/`.
    pub path: String,
    /// `X-Vault-Namespace`.
    pub namespace: String,
    /// Whether a token was sent.
    pub with_token: bool,
    /// The JSON body.
    pub body: Value,
    /// The status answered.
    pub status: u16,
}

/// Checks a Kubernetes service-account JWT, as OpenBao's kubernetes auth asks the API server.
pub trait TokenReviewer: Send + Sync + 'static {
    /// The service account the token belongs to, if valid for `audiences`.
    fn review(&self, jwt: &str, audiences: &[String]) -> Review;
}

/// Reviews tokens with the TokenReview API of a (simulated) cluster.
pub struct KubeTokenReviewer(pub kube::Client);

impl TokenReviewer for KubeTokenReviewer {
    fn review(&self, jwt: &str, audiences: &[String]) -> Review {
        // wiremock responders are synchronous and run on the mock server's own runtime: ask on
        // a thread of our own.
        let client = self.0.clone();
        let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": jwt, "audiences": audiences}});
        std::thread::spawn(move || -> Review {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(async move {
                let api: kube::Api<k8s_openapi::api::authentication::v1::TokenReview> =
                    kube::Api::all(client);
                let review = serde_json::from_value(body).map_err(|e| e.to_string())?;
                let answer = api
                    .create(&Default::default(), &review)
                    .await
                    .map_err(|e| e.to_string())?;
                let status = answer.status.ok_or("no status")?;
                if status.authenticated != Some(true) {
                    return Err(status.error.unwrap_or_else(|| "not authenticated".into()));
                }
                let username = status.user.and_then(|u| u.username).unwrap_or_default();
                let mut parts = username.split(':');
                match (parts.next(), parts.next(), parts.next(), parts.next()) {
                    (Some("system"), Some("serviceaccount"), Some(namespace), Some(name)) => {
                        Ok(ReviewedAccount {
                            namespace: namespace.into(),
                            name: name.into(),
                            audiences: status.audiences.unwrap_or_default(),
                        })
                    }
                    _ => Err(format!("{username} is not a service account")),
                }
            })
        })
        .join()
        .unwrap_or_else(|_| Err("the review thread panicked".into()))
    }
}

struct Shared {
    state: Mutex<State>,
    log: Mutex<Vec<Logged>>,
    latency: Mutex<Duration>,
    reviewer: Mutex<Option<Arc<dyn TokenReviewer>>>,
    clock: Clock,
}

struct Responder(Arc<Shared>);

impl Respond for Responder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let shared = &self.0;
        let header = |name: &str| {
            request
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(String::from)
        };
        let token = header("x-vault-token").or_else(|| {
            header("authorization").and_then(|a| a.strip_prefix("Bearer ").map(String::from))
        });
        let path = request.url.path();
        let Some(path) = path.strip_prefix("/v1/") else {
            return ResponseTemplate::new(404).set_body_json(json!({"errors": []}));
        };
        let list = request
            .url
            .query_pairs()
            .any(|(k, v)| k == "list" && v == "true");
        let method = if list {
            "LIST".to_string()
        } else {
            request.method.to_string()
        };
        let call = Call {
            method,
            path: path.trim_end_matches('/').to_string(),
            token,
            namespace: header("x-vault-namespace")
                .unwrap_or_default()
                .trim_matches('/')
                .to_string(),
            body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
        };
        let reviewer = shared
            .reviewer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut review = |jwt: &str, audiences: &[String]| match &reviewer {
            Some(r) => r.review(jwt, audiences),
            None => Err("no TokenReview source configured".to_string()),
        };
        let now = shared.clock.now();
        let reply = shared
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .handle(&call, now, &mut review);
        shared
            .log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Logged {
                method: call.method,
                path: call.path,
                namespace: call.namespace,
                with_token: call.token.is_some(),
                body: call.body,
                status: reply.status,
            });
        let mut response = ResponseTemplate::new(reply.status)
            .set_delay(*shared.latency.lock().unwrap_or_else(|p| p.into_inner()));
        if let Some(body) = reply.body {
            response = response.set_body_json(body);
        }
        response
    }
}

/// A running fake OpenBao.
pub struct FakeOpenBao {
    shared: Arc<Shared>,
    authority: Arc<Authority>,
    front: Front,
    _mock: DetachedDrop,
    root_token: String,
}

/// The wiremock server behind the front, dropped on a thread of its own. `MockServer`'s drop
/// runs `futures::executor::block_on` over a tokio `RwLock`; inside a tokio task whose
/// cooperative budget is spent, that lock answers `Pending` for ever (the budget refills only
/// when the task yields, which `block_on` never lets it do), and the thread spins. The edit
/// soak hit this after hours: a batch's fake dropped at the end of a busy pass never returned.
/// A plain thread has no budget, so the drop there always completes.
struct DetachedDrop(Option<MockServer>);

impl Drop for DetachedDrop {
    fn drop(&mut self) {
        if let Some(mock) = self.0.take() {
            // A panic in wiremock's verification belongs to that thread; the join only waits.
            let _ = std::thread::spawn(move || drop(mock)).join();
        }
    }
}

impl std::fmt::Debug for FakeOpenBao {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeOpenBao")
            .field("addr", &self.front.addr())
            .finish_non_exhaustive()
    }
}

impl FakeOpenBao {
    /// Starts an empty server (a root namespace, no mounts, no auth) reading `clock`.
    pub async fn start(clock: Clock) -> std::io::Result<Self> {
        let mut state = State::default();
        state.space("");
        let (root_token, _) =
            state.issue_token("", vec!["root".into()], 0, clock.now(), BTreeMap::new());
        let shared = Arc::new(Shared {
            state: Mutex::new(state),
            log: Mutex::new(Vec::new()),
            latency: Mutex::new(Duration::ZERO),
            reviewer: Mutex::new(None),
            clock,
        });
        let mock = MockServer::start().await;
        Mock::given(any())
            .respond_with(Responder(shared.clone()))
            .mount(&mock)
            .await;
        let authority = Arc::new(Authority::new());
        let front = Front::start(authority.clone(), *mock.address()).await?;
        Ok(Self {
            shared,
            authority,
            front,
            _mock: DetachedDrop(Some(mock)),
            root_token,
        })
    }

    /// Where the TLS front listens (register it in the sim's service registry under the
    /// instance's name).
    pub fn addr(&self) -> SocketAddr {
        self.front.addr()
    }

    /// The CA that signs every serving certificate, PEM.
    pub fn ca_pem(&self) -> String {
        self.authority.ca_pem()
    }

    /// A root token, for tests that set things up through the API.
    pub fn root_token(&self) -> &str {
        &self.root_token
    }

    /// Checks Kubernetes logins with the TokenReview API behind `client`.
    pub fn review_tokens_with(&self, reviewer: impl TokenReviewer) {
        *self
            .shared
            .reviewer
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(reviewer));
    }

    /// Changes the state directly.
    pub fn with_state<T>(&self, change: impl FnOnce(&mut State) -> T) -> T {
        change(&mut self.shared.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Puts the managed self-init configuration in place, as far as `parts` says, for the
    /// OpenBaoCluster `instance` in `namespace` (the provisioner role binds the service account
    /// `<instance>-provisioner` there, audience `<instance>`).
    pub fn self_init(&self, instance: &str, namespace: &str, parts: SelfInit) {
        self.with_state(|state| {
            let role_id = state.mint("");
            let space = state.space("");
            space.policies.insert(
                "barbican-secretstore".into(),
                Policy::new(&[
                    (
                        "barbican/data/*",
                        &["create", "read", "update", "delete", "list"],
                    ),
                    ("barbican/metadata/*", &["create", "read", "update", "list"]),
                ]),
            );
            space.policies.insert(
                "provisioner".into(),
                Policy::new(&[
                    ("auth/approle/role/barbican/role-id", &["read"]),
                    (
                        "auth/approle/role/barbican/secret-id",
                        &["create", "update"],
                    ),
                    (
                        "barbican/data/*",
                        &["create", "read", "update", "delete", "list"],
                    ),
                    ("barbican/metadata/*", &["create", "read", "update", "list"]),
                    ("sys/mounts/barbican", &["read", "update"]),
                ]),
            );
            if parts.kv_mount {
                space.mounts.insert(
                    "barbican".into(),
                    (
                        "kv".into(),
                        BTreeMap::from([("version".into(), "2".into())]),
                    ),
                );
            }
            space.approle_enabled = parts.approle_auth;
            if parts.barbican_role {
                space.approles.insert(
                    "barbican".into(),
                    AppRole {
                        role_id,
                        token_policies: vec!["barbican-secretstore".into()],
                        secret_id_ttl: 720 * 3600,
                        token_ttl: 3600,
                        secret_ids: BTreeMap::new(),
                    },
                );
            }
            space.kubernetes_enabled = parts.kubernetes_auth;
            if parts.provisioner_role {
                space.kubernetes_roles.insert(
                    "provisioner".into(),
                    KubernetesRole {
                        service_accounts: vec![format!("{instance}-provisioner")],
                        namespaces: vec![namespace.to_string()],
                        audience: Some(instance.to_string()),
                        token_policies: vec!["provisioner".into()],
                    },
                );
            }
        });
    }

    /// Mints a secret ID for the AppRole `role` of the root namespace, as an administrator
    /// would; returns the role ID and the secret ID (`None` when the role does not exist).
    pub fn approle_credentials(&self, role: &str) -> Option<(String, String)> {
        let now = self.shared.clock.now();
        self.with_state(|state| {
            let (secret_id, accessor) = (state.mint(""), state.mint(""));
            let approle = state.space("").approles.get_mut(role)?;
            let ttl = approle.secret_id_ttl;
            approle.secret_ids.insert(
                secret_id.clone(),
                state::SecretId {
                    accessor,
                    expires: (ttl > 0).then(|| now + jiff::SignedDuration::from_secs(ttl)),
                    revoked: false,
                },
            );
            Some((approle.role_id.clone(), secret_id))
        })
    }

    /// Revokes a secret ID: logins with it fail from now on.
    pub fn revoke_secret_id(&self, secret_id: &str) {
        self.for_secret_id(secret_id, |s| s.revoked = true);
    }

    /// Lets a secret ID expire now.
    pub fn expire_secret_id(&self, secret_id: &str) {
        let now = self.shared.clock.now();
        self.for_secret_id(secret_id, |s| s.expires = Some(now));
    }

    fn for_secret_id(&self, secret_id: &str, change: impl Fn(&mut state::SecretId)) {
        self.with_state(|state| {
            for space in state.spaces.values_mut() {
                for role in space.approles.values_mut() {
                    if let Some(s) = role.secret_ids.get_mut(secret_id) {
                        change(s);
                    }
                }
            }
        });
    }

    /// Makes every login fail (AppRole: 400 invalid role or secret ID; Kubernetes: 403).
    pub fn reject_logins(&self, rejecting: bool) {
        self.with_state(|s| s.controls.reject_logins = rejecting);
    }

    /// Makes every token issued from now on hold a control character (see
    /// [`state::Controls::hostile_tokens`]).
    pub fn issue_hostile_tokens(&self, hostile: bool) {
        self.with_state(|s| s.controls.hostile_tokens = hostile);
    }

    /// Withholds `capability` on `path` from every token, whatever its policies grant.
    pub fn deny(&self, path: &str, capability: &str) {
        self.with_state(|s| {
            s.controls
                .denied
                .entry(path.to_string())
                .or_default()
                .insert(capability.to_string());
        });
    }

    /// Starts or ends an outage.
    pub fn set_outage(&self, outage: Outage) {
        self.front.set_down(outage == Outage::Refused);
        self.with_state(|s| s.controls.unavailable = outage == Outage::Unavailable);
    }

    /// Adds `latency` to every answer.
    pub fn set_latency(&self, latency: Duration) {
        *self
            .shared
            .latency
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = latency;
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<Logged> {
        self.shared
            .log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
