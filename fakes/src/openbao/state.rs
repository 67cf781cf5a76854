//! The fake OpenBao's state and its answers, as plain functions over plain data: the HTTP
//! shell (`super::server`) only turns requests into [`Call`]s and [`Reply`]s into responses.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::policy::{Policy, capabilities};

/// A request as the fake sees it.
#[derive(Clone, Debug)]
pub struct Call {
    /// GET, PUT, POST, DELETE or LIST.
    pub method: String,
    /// The path below `/v1/`, without a trailing slash.
    pub path: String,
    /// `X-Vault-Token` or the bearer token.
    pub token: Option<String>,
    /// `X-Vault-Namespace` (empty: the root namespace).
    pub namespace: String,
    /// The JSON body (`null` when empty).
    pub body: Value,
}

/// An answer: status and JSON body (`None` for 204).
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The body.
    pub body: Option<Value>,
}

impl Reply {
    fn ok(body: Value) -> Self {
        Self {
            status: 200,
            body: Some(body),
        }
    }

    fn data(data: Value) -> Self {
        Self::ok(
            json!({"request_id": "00000000-0000-0000-0000-000000000000", "lease_id": "",
            "renewable": false, "lease_duration": 0, "data": data, "wrap_info": null,
            "warnings": null, "auth": null, "mount_type": ""}),
        )
    }

    /// The envelope with `data`, and `data`'s fields repeated at the top level, as OpenBao
    /// answers the `sys/` endpoints that predate the envelope.
    fn data_and_top(data: serde_json::Map<String, Value>) -> Self {
        let mut reply = Self::data(Value::Object(data.clone()));
        if let Some(Value::Object(body)) = &mut reply.body {
            for (key, value) in data {
                body.insert(key, value);
            }
        }
        reply
    }

    fn empty() -> Self {
        Self {
            status: 204,
            body: None,
        }
    }

    /// `{"errors": [message]}` with `status`.
    pub fn error(status: u16, message: &str) -> Self {
        let errors: Vec<&str> = if message.is_empty() {
            vec![]
        } else {
            vec![message]
        };
        Self {
            status,
            body: Some(json!({ "errors": errors })),
        }
    }

    fn denied() -> Self {
        Self::error(403, "permission denied")
    }
}

/// A secret ID of an AppRole.
#[derive(Clone, Debug)]
pub struct SecretId {
    /// Its accessor.
    pub accessor: String,
    /// When it stops working (`None`: never).
    pub expires: Option<Timestamp>,
    /// Revoked by a test.
    pub revoked: bool,
}

/// An AppRole.
#[derive(Clone, Debug, Default)]
pub struct AppRole {
    /// Its role ID.
    pub role_id: String,
    /// Policies its tokens carry.
    pub token_policies: Vec<String>,
    /// Seconds a new secret ID lives unless the request asks for less (0: forever).
    pub secret_id_ttl: i64,
    /// Seconds its tokens live.
    pub token_ttl: i64,
    /// Secret IDs by value.
    pub secret_ids: BTreeMap<String, SecretId>,
}

/// A Kubernetes auth role.
#[derive(Clone, Debug, Default)]
pub struct KubernetesRole {
    /// Service account names allowed to log in.
    pub service_accounts: Vec<String>,
    /// Their namespaces.
    pub namespaces: Vec<String>,
    /// The audience the token must carry (none: any).
    pub audience: Option<String>,
    /// Policies its tokens carry.
    pub token_policies: Vec<String>,
}

/// An issued token.
#[derive(Clone, Debug)]
pub struct Token {
    /// Its accessor.
    pub accessor: String,
    /// Its policies.
    pub policies: Vec<String>,
    /// The namespace it was issued in.
    pub namespace: String,
    /// When it expires.
    pub expires: Option<Timestamp>,
    /// Metadata (`role_name`, `service_account_name`, ...).
    pub metadata: BTreeMap<String, String>,
}

/// One version of a KV v2 secret.
#[derive(Clone, Debug)]
pub struct Version {
    /// The data, `None` once deleted.
    pub data: Option<Value>,
    /// When written.
    pub created: Timestamp,
    /// When deleted.
    pub deleted: Option<Timestamp>,
}

/// A namespace's engines, auth methods and policies.
#[derive(Clone, Debug, Default)]
pub struct Space {
    /// Secret engine mounts: path (without slash) → (type, options).
    pub mounts: BTreeMap<String, (String, BTreeMap<String, String>)>,
    /// Whether approle auth is enabled at `auth/approle`.
    pub approle_enabled: bool,
    /// AppRoles by name.
    pub approles: BTreeMap<String, AppRole>,
    /// Whether kubernetes auth is enabled at `auth/kubernetes`.
    pub kubernetes_enabled: bool,
    /// Kubernetes roles by name.
    pub kubernetes_roles: BTreeMap<String, KubernetesRole>,
    /// ACL policies by name.
    pub policies: BTreeMap<String, Policy>,
    /// KV v2 secrets: (mount, path) → versions, oldest first.
    pub kv: BTreeMap<(String, String), Vec<Version>>,
}

/// What a Kubernetes TokenReview said of a JWT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReviewedAccount {
    /// The service account's namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The audiences the token was valid for.
    pub audiences: Vec<String>,
}

/// Failures a test switches on.
#[derive(Clone, Debug, Default)]
pub struct Controls {
    /// Every login fails as with wrong credentials.
    pub reject_logins: bool,
    /// Capabilities withheld from every token on a path, whatever its policies say.
    pub denied: BTreeMap<String, BTreeSet<String>>,
    /// Answer everything 503, as a sealed or unavailable server does.
    pub unavailable: bool,
    /// Issue tokens holding a control character, as a hostile server might: no HTTP header
    /// can carry them.
    pub hostile_tokens: bool,
}

/// The whole fake: namespaces, tokens, controls, and a counter for identifiers.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// Namespaces by path (`""` is the root).
    pub spaces: BTreeMap<String, Space>,
    /// Tokens by value.
    pub tokens: BTreeMap<String, Token>,
    /// What tests switched on.
    pub controls: Controls,
}

/// The answer to a Kubernetes login's TokenReview.
pub type Review = Result<ReviewedAccount, String>;

impl State {
    /// A fresh identifier shaped like OpenBao's (a UUID, or a token with `prefix`).
    pub fn mint(&mut self, prefix: &str) -> String {
        // Unique across every fake in the process, as real identifiers are across servers: two
        // instances must never hand out the same secret ID.
        static ISSUED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = ISSUED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        match prefix {
            "" => format!(
                "{:08x}-fa6e-4b0a-8000-{n:012x}",
                n.wrapping_mul(2_654_435_761)
            ),
            prefix => format!("{prefix}{n:024x}"),
        }
    }

    /// The namespace `name`, created empty if need be.
    pub fn space(&mut self, name: &str) -> &mut Space {
        self.spaces.entry(name.to_string()).or_default()
    }

    /// A token with `policies`, living `ttl` seconds (0: forever).
    pub fn issue_token(
        &mut self,
        namespace: &str,
        policies: Vec<String>,
        ttl: i64,
        now: Timestamp,
        metadata: BTreeMap<String, String>,
    ) -> (String, Token) {
        let value = if self.controls.hostile_tokens {
            self.mint("s.\u{1}")
        } else {
            self.mint("s.")
        };
        let token = Token {
            accessor: self.mint(""),
            policies,
            namespace: namespace.to_string(),
            expires: (ttl > 0).then(|| now + SignedDuration::from_secs(ttl)),
            metadata,
        };
        self.tokens.insert(value.clone(), token.clone());
        (value, token)
    }

    /// Answers one call at `now`. A Kubernetes login asks `review` about its JWT.
    pub fn handle(
        &mut self,
        call: &Call,
        now: Timestamp,
        review: &mut dyn FnMut(&str, &[String]) -> Review,
    ) -> Reply {
        if self.controls.unavailable {
            return Reply::error(503, "Vault is sealed");
        }
        let path = call.path.trim_matches('/');
        let method = call.method.as_str();
        if !self.spaces.contains_key(&call.namespace) {
            return Reply::error(400, &format!("namespace not found: {:?}", call.namespace));
        }
        match (method, path) {
            ("PUT" | "POST", "auth/approle/login") => return self.approle_login(call, now),
            ("PUT" | "POST", "auth/kubernetes/login") => {
                return self.kubernetes_login(call, now, review);
            }
            _ => {}
        }
        let Some(token) = self.token(call, now) else {
            return Reply::denied();
        };
        match (method, path) {
            ("PUT" | "POST", "auth/token/revoke-self") => {
                if let Some(value) = &call.token {
                    self.tokens.remove(value);
                }
                Reply::empty()
            }
            ("GET", "auth/token/lookup-self") => Reply::data(json!({
                "accessor": token.accessor, "policies": token.policies,
                "namespace_path": token.namespace, "meta": token.metadata,
                "expire_time": token.expires.map(|e| e.to_string()),
            })),
            ("PUT" | "POST", "sys/capabilities-self") => self.capabilities_self(call, &token),
            ("GET", "sys/mounts") => self.guarded(&token, "sys/mounts", "read", |s| {
                s.list_mounts(&call.namespace)
            }),
            ("GET", p) if p.starts_with("sys/mounts/") => {
                let mount = p.trim_start_matches("sys/mounts/").to_string();
                self.guarded(&token, p, "read", |s| s.read_mount(&call.namespace, &mount))
            }
            (_, p) if p.starts_with("auth/approle/role/") => {
                self.approle_admin(call, &token, p, now)
            }
            (_, p) => self.kv(call, &token, p, now),
        }
    }

    /// The live token of a call, if any.
    fn token(&mut self, call: &Call, now: Timestamp) -> Option<Token> {
        let value = call.token.as_ref()?;
        let token = self.tokens.get(value)?.clone();
        if token.expires.is_some_and(|e| e <= now) {
            self.tokens.remove(value);
            return None;
        }
        // A token works in its own namespace and the ones below it.
        let inside = token.namespace.is_empty()
            || call.namespace == token.namespace
            || call.namespace.starts_with(&format!("{}/", token.namespace));
        inside.then_some(token)
    }

    /// The capabilities `token` has on `path`, after the controls.
    pub fn capabilities_of(&self, token: &Token, path: &str) -> Vec<String> {
        let empty = BTreeMap::new();
        let known = self
            .spaces
            .get(&token.namespace)
            .map(|s| &s.policies)
            .unwrap_or(&empty);
        let granted = capabilities(known, &token.policies, path);
        match self.controls.denied.get(path) {
            Some(denied) if granted != ["root"] => {
                let left: Vec<String> = granted
                    .into_iter()
                    .filter(|c| !denied.contains(c))
                    .collect();
                if left.is_empty() || left == ["deny"] {
                    vec!["deny".into()]
                } else {
                    left
                }
            }
            Some(denied) => [
                "create", "read", "update", "patch", "delete", "list", "sudo",
            ]
            .iter()
            .filter(|c| !denied.contains(**c))
            .map(|c| c.to_string())
            .collect(),
            None => granted,
        }
    }

    fn allowed(&self, token: &Token, path: &str, capability: &str) -> bool {
        let caps = self.capabilities_of(token, path);
        caps.iter().any(|c| c == "root" || c == capability)
    }

    fn guarded(
        &mut self,
        token: &Token,
        path: &str,
        capability: &str,
        answer: impl FnOnce(&mut Self) -> Reply,
    ) -> Reply {
        if self.allowed(token, path, capability) {
            answer(self)
        } else {
            Reply::denied()
        }
    }

    fn approle_login(&mut self, call: &Call, now: Timestamp) -> Reply {
        let invalid = Reply::error(400, "invalid role or secret ID");
        let space = self.space(&call.namespace);
        if !space.approle_enabled {
            return Reply::error(
                404,
                "no handler for route \"auth/approle/login\". route entry not found.",
            );
        }
        let role_id = call.body["role_id"].as_str().unwrap_or("");
        let secret_id = call.body["secret_id"].as_str().unwrap_or("");
        let Some((name, role)) = space
            .approles
            .iter()
            .find(|(_, r)| r.role_id == role_id)
            .map(|(n, r)| (n.clone(), r.clone()))
        else {
            return invalid;
        };
        let valid = role
            .secret_ids
            .get(secret_id)
            .is_some_and(|s| !s.revoked && s.expires.is_none_or(|e| now < e));
        if !valid || self.controls.reject_logins {
            return invalid;
        }
        let metadata = BTreeMap::from([("role_name".to_string(), name)]);
        self.login_reply(call, role.token_policies, role.token_ttl, now, metadata)
    }

    fn kubernetes_login(
        &mut self,
        call: &Call,
        now: Timestamp,
        review: &mut dyn FnMut(&str, &[String]) -> Review,
    ) -> Reply {
        let space = self.space(&call.namespace);
        if !space.kubernetes_enabled {
            return Reply::error(
                404,
                "no handler for route \"auth/kubernetes/login\". route entry not found.",
            );
        }
        let name = call.body["role"].as_str().unwrap_or("");
        let Some(role) = space.kubernetes_roles.get(name).cloned() else {
            return Reply::error(400, &format!("invalid role name \"{name}\""));
        };
        if self.controls.reject_logins {
            return Reply::denied();
        }
        let audiences: Vec<String> = role.audience.iter().cloned().collect();
        let Ok(account) = review(call.body["jwt"].as_str().unwrap_or(""), &audiences) else {
            return Reply::denied();
        };
        let bound =
            |allowed: &[String], value: &str| allowed.iter().any(|a| a == "*" || a == value);
        if !bound(&role.service_accounts, &account.name)
            || !bound(&role.namespaces, &account.namespace)
        {
            return Reply::denied();
        }
        let metadata = BTreeMap::from([
            ("role".to_string(), name.to_string()),
            ("service_account_name".to_string(), account.name),
            ("service_account_namespace".to_string(), account.namespace),
        ]);
        self.login_reply(call, role.token_policies, 3600, now, metadata)
    }

    fn login_reply(
        &mut self,
        call: &Call,
        policies: Vec<String>,
        ttl: i64,
        now: Timestamp,
        metadata: BTreeMap<String, String>,
    ) -> Reply {
        let mut all = vec!["default".to_string()];
        all.extend(policies.iter().cloned());
        let (value, token) = self.issue_token(&call.namespace, all.clone(), ttl, now, metadata);
        Reply::ok(json!({
            "request_id": self.mint(""), "lease_id": "", "renewable": false, "lease_duration": 0,
            "data": null, "wrap_info": null, "warnings": null, "mount_type": "",
            "auth": {
                "client_token": value, "accessor": token.accessor, "policies": all,
                "token_policies": all, "identity_policies": null, "metadata": token.metadata,
                "lease_duration": ttl, "renewable": true, "entity_id": self.mint(""),
                "token_type": "service", "orphan": true, "mfa_requirement": null, "num_uses": 0,
            },
        }))
    }

    fn capabilities_self(&self, call: &Call, token: &Token) -> Reply {
        let paths: Vec<String> = match (&call.body["paths"], &call.body["path"]) {
            (Value::Array(paths), _) => paths
                .iter()
                .filter_map(|p| p.as_str().map(String::from))
                .collect(),
            (_, Value::String(path)) => vec![path.clone()],
            _ => return Reply::error(400, "missing required 'paths' parameter"),
        };
        let mut answer = serde_json::Map::new();
        for path in &paths {
            answer.insert(
                path.clone(),
                json!(self.capabilities_of(token, path.trim_matches('/'))),
            );
        }
        if let Some(first) = paths.first() {
            answer.insert("capabilities".into(), answer[first].clone());
        }
        Reply::data_and_top(answer)
    }

    fn mount_json(
        path: &str,
        kind: &str,
        options: &BTreeMap<String, String>,
    ) -> serde_json::Map<String, Value> {
        // Stable per path, shaped like OpenBao's (`kv_1a2b3c4d`, a UUID).
        let hash = path.bytes().fold(0x811c_9dc5_u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        });
        let mount = json!({"type": kind, "description": "", "options": options, "config": {
            "default_lease_ttl": 0, "max_lease_ttl": 0, "force_no_cache": false},
            "accessor": format!("{kind}_{hash:08x}"),
            "uuid": format!("{hash:08x}-0000-4000-8000-{hash:012x}"),
            "local": false, "seal_wrap": false, "external_entropy_access": false,
            "plugin_version": "", "running_plugin_version": "", "running_sha256": ""});
        match mount {
            Value::Object(fields) => fields,
            _ => serde_json::Map::new(),
        }
    }

    fn list_mounts(&mut self, namespace: &str) -> Reply {
        let mut mounts = serde_json::Map::new();
        for (path, (kind, options)) in &self.space(namespace).mounts {
            mounts.insert(
                format!("{path}/"),
                Value::Object(Self::mount_json(path, kind, options)),
            );
        }
        Reply::data_and_top(mounts)
    }

    fn read_mount(&mut self, namespace: &str, mount: &str) -> Reply {
        let mount = mount.trim_end_matches('/');
        match self.space(namespace).mounts.get(mount) {
            Some((kind, options)) => Reply::data_and_top(Self::mount_json(mount, kind, options)),
            // OpenBao answers a missing mount 400, not 404.
            None => Reply::error(400, &format!("No secret engine mount at {mount}/")),
        }
    }

    fn approle_admin(&mut self, call: &Call, token: &Token, path: &str, now: Timestamp) -> Reply {
        let rest = path.trim_start_matches("auth/approle/role/");
        let (role, action) = rest.split_once('/').unwrap_or((rest, ""));
        let capability = match (call.method.as_str(), action) {
            ("GET", _) => "read",
            ("PUT" | "POST", _) => "update",
            _ => return Reply::error(405, "unsupported operation"),
        };
        // Minting a secret ID is a write: `create` serves as well as `update`.
        let permitted = self.allowed(token, path, capability)
            || (capability == "update" && self.allowed(token, path, "create"));
        if !permitted {
            return Reply::denied();
        }
        let namespace = call.namespace.clone();
        let minted = (self.mint(""), self.mint(""));
        let space = self.space(&namespace);
        if !space.approle_enabled {
            return Reply::error(
                404,
                &format!("no handler for route \"{path}\". route entry not found."),
            );
        }
        let Some(approle) = space.approles.get_mut(role) else {
            return Reply::error(404, "");
        };
        match (call.method.as_str(), action) {
            ("GET", "role-id") => Reply::data(json!({"role_id": approle.role_id})),
            ("PUT" | "POST", "secret-id") => {
                let requested = match &call.body["ttl"] {
                    Value::Number(n) => n.as_i64(),
                    Value::String(s) => parse_ttl(s),
                    _ => None,
                };
                let ttl = match (requested, approle.secret_id_ttl) {
                    (Some(r), 0) => r,
                    (Some(r), max) if r > 0 => r.min(max),
                    (_, role_ttl) => role_ttl,
                };
                let (secret_id, accessor) = minted;
                approle.secret_ids.insert(
                    secret_id.clone(),
                    SecretId {
                        accessor: accessor.clone(),
                        expires: (ttl > 0).then(|| now + SignedDuration::from_secs(ttl)),
                        revoked: false,
                    },
                );
                Reply::data(
                    json!({"secret_id": secret_id, "secret_id_accessor": accessor,
                    "secret_id_ttl": ttl, "secret_id_num_uses": 0}),
                )
            }
            _ => Reply::error(405, "unsupported operation"),
        }
    }

    fn kv(&mut self, call: &Call, token: &Token, path: &str, now: Timestamp) -> Reply {
        let Some((mount, kind, rest)) = self.split_kv(&call.namespace, path) else {
            return Reply::error(
                404,
                &format!("no handler for route \"{path}\". route entry not found."),
            );
        };
        let key = (mount.clone(), rest.clone());
        let list = call.method == "LIST";
        let capability = match (call.method.as_str(), kind.as_str()) {
            ("GET", _) => "read",
            ("LIST", _) => "list",
            ("DELETE", _) => "delete",
            ("PUT" | "POST", "data") => {
                let exists = self
                    .space(&call.namespace)
                    .kv
                    .get(&key)
                    .is_some_and(|v| v.iter().any(|v| v.data.is_some()));
                if exists { "update" } else { "create" }
            }
            ("PUT" | "POST", _) => "update",
            _ => return Reply::error(405, "unsupported operation"),
        };
        if !self.allowed(token, path, capability) {
            return Reply::denied();
        }
        let space = self.space(&call.namespace);
        match (call.method.as_str(), kind.as_str()) {
            ("PUT" | "POST", "data") => {
                let Some(data) = call.body.get("data").filter(|d| d.is_object()) else {
                    return Reply::error(400, "no data provided");
                };
                let versions = space.kv.entry(key).or_default();
                versions.push(Version {
                    data: Some(data.clone()),
                    created: now,
                    deleted: None,
                });
                Reply::data(
                    json!({"created_time": now.to_string(), "custom_metadata": null,
                    "deletion_time": "", "destroyed": false, "version": versions.len()}),
                )
            }
            ("GET", "data") => match space
                .kv
                .get(&key)
                .and_then(|v| v.last().map(|l| (v.len(), l)))
            {
                Some((
                    n,
                    Version {
                        data: Some(data),
                        created,
                        ..
                    },
                )) => Reply::data(json!({
                    "data": data,
                    "metadata": {"created_time": created.to_string(), "custom_metadata": null,
                        "deletion_time": "", "destroyed": false, "version": n},
                })),
                _ => Reply::error(404, ""),
            },
            ("DELETE", "data") => {
                if let Some(latest) = space.kv.get_mut(&key).and_then(|v| v.last_mut()) {
                    latest.data = None;
                    latest.deleted = Some(now);
                }
                Reply::empty()
            }
            ("GET", "metadata") if !list => match space.kv.get(&key) {
                Some(versions) => {
                    let mut listed = serde_json::Map::new();
                    for (i, v) in versions.iter().enumerate() {
                        listed.insert(
                            (i + 1).to_string(),
                            json!({"created_time": v.created.to_string(), "destroyed": false,
                                "deletion_time": v.deleted.map(|d| d.to_string()).unwrap_or_default()}),
                        );
                    }
                    Reply::data(json!({
                        "versions": listed, "current_version": versions.len(), "oldest_version": 1,
                        "created_time": versions[0].created.to_string(),
                        "updated_time": versions[versions.len() - 1].created.to_string(),
                        "max_versions": 0, "cas_required": false, "delete_version_after": "0s",
                        "custom_metadata": null,
                    }))
                }
                None => Reply::error(404, ""),
            },
            ("LIST", "metadata") | ("GET", "metadata") => {
                let prefix = if rest.is_empty() {
                    String::new()
                } else {
                    format!("{}/", rest.trim_end_matches('/'))
                };
                let keys: BTreeSet<String> = space
                    .kv
                    .keys()
                    .filter(|(m, p)| *m == mount && p.starts_with(&prefix))
                    .map(|(_, p)| {
                        let tail = &p[prefix.len()..];
                        match tail.split_once('/') {
                            Some((dir, _)) => format!("{dir}/"),
                            None => tail.to_string(),
                        }
                    })
                    .collect();
                if keys.is_empty() {
                    Reply::error(404, "")
                } else {
                    Reply::data(json!({ "keys": keys }))
                }
            }
            ("DELETE", "metadata") => {
                space.kv.remove(&key);
                Reply::empty()
            }
            _ => Reply::error(405, "unsupported operation"),
        }
    }

    /// `(mount, data|metadata, rest)` for a path under a KV v2 mount.
    fn split_kv(&mut self, namespace: &str, path: &str) -> Option<(String, String, String)> {
        let space = self.space(namespace);
        let (mount, _) = space
            .mounts
            .iter()
            .filter(|(m, (kind, options))| {
                kind == "kv"
                    && options.get("version").map(String::as_str) == Some("2")
                    && (path == m.as_str() || path.starts_with(&format!("{m}/")))
            })
            .max_by_key(|(m, _)| m.len())?;
        let mount = mount.clone();
        let rest = path[mount.len()..].trim_start_matches('/');
        let (kind, rest) = rest.split_once('/').unwrap_or((rest, ""));
        matches!(kind, "data" | "metadata").then(|| (mount, kind.to_string(), rest.to_string()))
    }
}

/// `"30s"`, `"5m"`, `"720h"` or a bare number of seconds.
fn parse_ttl(text: &str) -> Option<i64> {
    let seconds = match barbican_sim::durations::terms(text.trim())?.as_slice() {
        [(n, "s" | "")] => *n,
        [(n, "m")] => n * 60,
        [(n, "h")] => n * 3600,
        _ => return None,
    };
    i64::try_from(seconds).ok()
}
