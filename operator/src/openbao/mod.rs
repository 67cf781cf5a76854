//! The operator's OpenBao (or Vault) client: the handful of calls a store needs, over plain
//! HTTP with OpenBao's JSON shapes.
//!
//! - TLS is always verified: against the given CA bundle alone when there is one (a managed
//!   instance's `<instance>-tls-ca`, a brownfield `caBundleSecretRef`), else against the
//!   platform's trust store.
//! - Requests are bounded by [`TIMEOUT`], answers by [`MAX_ANSWER_BYTES`].
//! - They carry `X-Vault-Namespace` when a namespace is set.
//! - Names go through the [`Resolve`] seam. It may change where a connection goes, never the name
//!   the certificate must be valid for.
//!
//! Every input is hostile: the URL, namespace and mount come from a tenant's CR and the token
//! from the server's answer. Each is checked before it reaches a header or a path, and an
//! error never quotes a value that could carry a credential (a URL's userinfo, a token).
//! vaultrs is not used here for that reason: it builds headers with `unwrap` (a namespace or
//! token holding a control character panicked the pass) and reads answers without a bound.

use std::time::Duration;

use reqwest::{Method, StatusCode, header::HeaderValue};
use serde_json::{Value, json};

use crate::{
    peer_http::{Answer, Peer, PeerError, exchange, sensitive_header},
    resolve::Resolve,
};

/// How long any one request may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest answer read from a server (a brownfield one is anybody's): larger ones are
/// refused as [`Error::Malformed`] without being read further.
pub const MAX_ANSWER_BYTES: usize = crate::peer_http::MAX_ANSWER_BYTES;
/// Where AppRole auth is mounted (fixed by the self-init contract).
pub const APPROLE_MOUNT: &str = "approle";
/// Where Kubernetes auth is mounted (fixed by the self-init contract).
pub const KUBERNETES_MOUNT: &str = "kubernetes";
/// The AppRole barbican authenticates with.
pub const BARBICAN_ROLE: &str = "barbican";
/// The Kubernetes auth role the operator logs in with on a managed instance.
pub const PROVISIONER_ROLE: &str = "provisioner";
/// The largest secret-ID TTL kept as the server gave it (`i64::MAX` seconds); a larger one is
/// clamped to it.
pub const MAX_TTL_SECONDS: u64 = i64::MAX.unsigned_abs();
/// The capabilities barbican needs on its mount's data path.
pub const REQUIRED_CAPABILITIES: [&str; 5] = ["create", "read", "update", "delete", "list"];

/// Why a call failed. The server's own error texts are kept; no secret ever is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The client could not be built (a CA bundle that is not PEM, a URL that is not one).
    #[error("the OpenBao client could not be built: {0}")]
    Client(String),
    /// No answer: refused, timed out, TLS failed.
    #[error("OpenBao did not answer: {0}")]
    Unreachable(String),
    /// The server answered with an error status.
    #[error("OpenBao answered {code}: {message}")]
    Status {
        /// The HTTP status.
        code: u16,
        /// The server's `errors`, joined.
        message: String,
    },
    /// The server answered 2xx with something we cannot read.
    #[error("OpenBao answered something unreadable: {0}")]
    Malformed(String),
}

impl Error {
    /// The HTTP status, when the server answered.
    pub fn code(&self) -> Option<u16> {
        match self {
            Error::Status { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// A 403: the token or credential lacks permission.
    pub fn is_denied(&self) -> bool {
        self.code() == Some(403)
    }

    /// A 400 or 403 answer to a login: the credentials are invalid.
    pub fn rejects_credentials(&self) -> bool {
        matches!(self.code(), Some(400 | 403))
    }

    /// A 404 (or the 400 OpenBao gives for a mount that does not exist).
    pub fn is_missing(&self) -> bool {
        matches!(self.code(), Some(400 | 404))
    }
}

/// Where and how to reach a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The API base URL, `https://…`.
    pub url: String,
    /// The PEM bundle to trust instead of the platform's store.
    pub ca_pem: Option<Vec<u8>>,
    /// The `X-Vault-Namespace` for every request (empty or `None`: the root namespace).
    pub namespace: Option<String>,
}

/// A token the server issued at login.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A token obtained elsewhere (an administrator's, a test's).
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

/// A newly minted secret ID and its lifetime in seconds (0: it does not expire).
#[derive(Clone, PartialEq, Eq)]
pub struct SecretId {
    /// The secret ID itself.
    pub value: String,
    /// Its TTL as the server reported it.
    pub ttl_seconds: u64,
}

impl std::fmt::Debug for SecretId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretId")
            .field("ttl_seconds", &self.ttl_seconds)
            .finish_non_exhaustive()
    }
}

/// A connection to one server, optionally logged in.
#[derive(Clone)]
pub struct OpenBao {
    http: reqwest::Client,
    base: String,
    namespace: Option<String>,
    token: Option<Token>,
}

impl std::fmt::Debug for OpenBao {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenBao")
            .field("base", &self.base)
            .field("namespace", &self.namespace)
            .field("logged_in", &self.token.is_some())
            .finish()
    }
}

impl OpenBao {
    /// A client for `target`, resolving names through `resolver`, each request bounded by
    /// `timeout`.
    pub fn connect(
        target: &Target,
        resolver: &dyn Resolve,
        timeout: Duration,
    ) -> Result<Self, Error> {
        let namespace = target.namespace.clone().filter(|n| !n.is_empty());
        if let Some(namespace) = &namespace {
            crate::api::secret_store::check_path(namespace)
                .map_err(|why| Error::Client(format!("the namespace {why}")))?;
        }
        let peer = Peer::connect(
            &target.url,
            "the server URL",
            true,
            target.ca_pem.as_deref(),
            resolver,
            timeout,
        )
        .map_err(|e| match e {
            PeerError::Client(m) if m.contains("credentials") => Error::Client(
                "the server URL carries credentials (user:password@); the AppRole credentials come from credentialsSecretRef".into(),
            ),
            other => Error::Client(other.to_string()),
        })?;
        Ok(Self {
            http: peer.http,
            base: peer.base,
            namespace,
            token: None,
        })
    }

    /// The same connection acting with `token`.
    pub fn with_token(&self, token: Token) -> Self {
        Self {
            token: Some(token),
            ..self.clone()
        }
    }

    /// Logs in through Kubernetes auth as `role` with a service-account `jwt`.
    pub async fn kubernetes_login(&self, role: &str, jwt: &str) -> Result<Token, Error> {
        self.login(KUBERNETES_MOUNT, json!({"role": role, "jwt": jwt}))
            .await
    }

    /// Logs in through AppRole auth.
    pub async fn approle_login(&self, role_id: &str, secret_id: &str) -> Result<Token, Error> {
        self.login(
            APPROLE_MOUNT,
            json!({"role_id": role_id, "secret_id": secret_id}),
        )
        .await
    }

    /// Logs in through the auth method mounted at `mount` with `credentials`.
    async fn login(&self, mount: &str, credentials: Value) -> Result<Token, Error> {
        let answer = self
            .raw(
                Method::POST,
                &format!("auth/{mount}/login"),
                Some(credentials),
            )
            .await?;
        issued_token(&answer)
    }

    /// Whether a secrets engine is mounted at `path`.
    pub async fn mount_exists(&self, path: &str) -> Result<bool, Error> {
        crate::api::secret_store::check_path(path)
            .map_err(|why| Error::Client(format!("the mount {why}")))?;
        match self
            .raw(Method::GET, &format!("sys/mounts/{path}"), None)
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if e.is_missing() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The role ID of the AppRole `role`; `None` when the role does not exist.
    pub async fn role_id(&self, role: &str) -> Result<Option<String>, Error> {
        match self
            .raw(
                Method::GET,
                &format!("auth/{APPROLE_MOUNT}/role/{role}/role-id"),
                None,
            )
            .await
        {
            Ok(answer) => answer["data"]["role_id"]
                .as_str()
                .filter(|r| !r.is_empty())
                .map(|r| Some(r.to_string()))
                .ok_or_else(|| Error::Malformed("the role-id answer carries no role_id".into())),
            Err(e) if e.code() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Mints a secret ID for the AppRole `role`. No TTL is requested: the role's own applies,
    /// and a missing or non-numeric `secret_id_ttl` in the answer reads as 0 (no expiry).
    pub async fn mint_secret_id(&self, role: &str) -> Result<SecretId, Error> {
        let answer = self
            .raw(
                Method::PUT,
                &format!("auth/{APPROLE_MOUNT}/role/{role}/secret-id"),
                None,
            )
            .await?;
        let value = answer["data"]["secret_id"]
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::Malformed("the secret-id answer carries no secret_id".into()))?
            .to_string();
        Ok(SecretId {
            value,
            // Clamped so the TTL annotation reads back (it is parsed as a signed number): a
            // TTL that large is, for every purpose, one that never lapses.
            ttl_seconds: answer["data"]["secret_id_ttl"]
                .as_u64()
                .unwrap_or(0)
                .min(MAX_TTL_SECONDS),
        })
    }

    /// The capabilities the current token holds on `path`.
    pub async fn capabilities_self(&self, path: &str) -> Result<Vec<String>, Error> {
        let answer = self
            .raw(
                Method::POST,
                "sys/capabilities-self",
                Some(json!({"paths": [path]})),
            )
            .await?;
        // Vault answers with the path as a key and, for a single path, `capabilities` too;
        // both at the top level and under `data`.
        let list = [&answer["data"], &answer]
            .into_iter()
            .flat_map(|v| [&v[path], &v["capabilities"]])
            .find_map(Value::as_array)
            .ok_or_else(|| Error::Malformed("the capabilities answer lists none".into()))?;
        Ok(list
            .iter()
            .filter_map(|c| c.as_str().map(String::from))
            .collect())
    }

    /// Revokes the current token. Failures are logged only: the token expires on its own.
    pub async fn revoke_self(&self) {
        if self.token.is_none() {
            return;
        }
        let outcome = self.raw(Method::PUT, "auth/token/revoke-self", None).await;
        if let Err(error) = outcome {
            tracing::debug!(%error, server = %self.base, "revoking the operator's token failed");
        }
    }

    async fn raw(&self, method: Method, path: &str, body: Option<Value>) -> Result<Value, Error> {
        let mut request = self
            .http
            .request(method, format!("{}/v1/{path}", self.base));
        if let Some(token) = &self.token {
            request = request.header("X-Vault-Token", header(&token.0, "the token")?);
        }
        if let Some(namespace) = &self.namespace {
            request = request.header("X-Vault-Namespace", header(namespace, "the namespace")?);
        }
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        let Answer { status, json, .. } = exchange(request).await.map_err(|e| match e {
            PeerError::TooLarge => Error::Malformed(e.to_string()),
            other => Error::Unreachable(other.to_string()),
        })?;
        if status.is_success() {
            return Ok(json);
        }
        Err(Error::Status {
            code: status.as_u16(),
            message: server_errors(&json, status),
        })
    }
}

/// `value` as a header value, or an error naming `what` (never the value: a token).
fn header(value: &str, what: &str) -> Result<HeaderValue, Error> {
    sensitive_header(value, what).map_err(Error::Malformed)
}

/// The token a login answer issued (`auth.client_token`), checked to be one the next request
/// can carry.
fn issued_token(answer: &Value) -> Result<Token, Error> {
    let token = answer["auth"]["client_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| Error::Malformed("the login answer carries no auth.client_token".into()))?;
    header(token, "the issued token")?;
    Ok(Token(token.to_string()))
}

fn server_errors(json: &Value, status: StatusCode) -> String {
    let errors: Vec<&str> = json["errors"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if errors.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("no error text")
            .to_string()
    } else {
        errors.join("; ")
    }
}

/// The capabilities of [`REQUIRED_CAPABILITIES`] that `held` lacks; `root` grants all.
pub fn missing_capabilities(held: &[String]) -> Vec<&'static str> {
    if held.iter().any(|c| c == "root") {
        return Vec::new();
    }
    REQUIRED_CAPABILITIES
        .into_iter()
        .filter(|needed| !held.iter().any(|c| c == needed))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_grants_every_capability_and_gaps_are_named() {
        let held = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(missing_capabilities(&held(&["root"])).is_empty());
        assert!(
            missing_capabilities(&held(&["create", "read", "update", "delete", "list"])).is_empty()
        );
        assert_eq!(
            missing_capabilities(&held(&["read", "list"])),
            ["create", "update", "delete"]
        );
        assert_eq!(missing_capabilities(&[]), REQUIRED_CAPABILITIES);
    }

    #[test]
    fn errors_are_classified_by_status() {
        let status = |code| Error::Status {
            code,
            message: String::new(),
        };
        assert!(status(403).is_denied() && status(403).rejects_credentials());
        assert!(status(400).rejects_credentials() && !status(400).is_denied());
        assert!(status(404).is_missing() && status(400).is_missing());
        assert!(!status(503).rejects_credentials());
        assert!(!Error::Unreachable("refused".into()).rejects_credentials());
    }

    #[test]
    fn a_plain_http_url_and_a_bad_bundle_are_refused_before_any_request() {
        let target = |url: &str, ca: Option<&str>| Target {
            url: url.into(),
            ca_pem: ca.map(|c| c.as_bytes().to_vec()),
            namespace: None,
        };
        let resolver = crate::resolve::SystemResolver;
        let plain = OpenBao::connect(&target("http://vault:8200", None), &resolver, TIMEOUT);
        assert!(matches!(plain, Err(Error::Client(m)) if m.contains("https")));
        let bad = OpenBao::connect(
            &target("https://vault:8200", Some("not pem")),
            &resolver,
            TIMEOUT,
        );
        assert!(matches!(bad, Err(Error::Client(_))), "{bad:?}");
    }
}
