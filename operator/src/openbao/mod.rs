//! The operator's OpenBao (or Vault) client: the handful of calls a store needs, over vaultrs
//! where it covers the call and plain HTTP where it does not.
//!
//! - TLS is always verified: against the given CA bundle alone when there is one (a managed
//!   instance's `<instance>-tls-ca`, a brownfield `caBundleSecretRef`), else against the
//!   platform's trust store.
//! - Requests are bounded by [`TIMEOUT`].
//! - They carry `X-Vault-Namespace` when a namespace is set.
//! - Names go through the [`Resolve`] seam. It may change where a connection goes, never the name
//!   the certificate must be valid for.
//!
//! vaultrs builds its own HTTP client from file paths and the process environment. We hand it
//! ours instead, so the CA comes from a Secret and the resolver applies. The secret-id mint
//! and the capability read go over plain HTTP:
//! - vaultrs sends the mint a body and insists on a numeric `secret_id_ttl`, where the
//!   reference sends none and reads a missing TTL as 0;
//! - vaultrs has no `sys/capabilities-self`.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vaultrs::{
    api::EndpointMiddleware,
    client::{VaultClient, VaultClientSettingsBuilder},
    error::ClientError,
};

use crate::resolve::Resolve;

/// How long any one request may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// Where AppRole auth is mounted (fixed by the self-init contract).
pub const APPROLE_MOUNT: &str = "approle";
/// Where Kubernetes auth is mounted (fixed by the self-init contract).
pub const KUBERNETES_MOUNT: &str = "kubernetes";
/// The AppRole barbican authenticates with.
pub const BARBICAN_ROLE: &str = "barbican";
/// The Kubernetes auth role the operator logs in with on a managed instance.
pub const PROVISIONER_ROLE: &str = "provisioner";
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

impl From<ClientError> for Error {
    fn from(error: ClientError) -> Self {
        match error {
            ClientError::APIError { code, errors } => Error::Status {
                code,
                message: errors.join("; "),
            },
            ClientError::RestClientError { source } => Error::Unreachable(chain(&source)),
            ClientError::RestClientBuildError { source } => Error::Client(source.to_string()),
            other => Error::Malformed(other.to_string()),
        }
    }
}

/// An error with its causes: the chain says why (refused, certificate, timeout), the top level
/// alone says little.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let next = cause.to_string();
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = cause.source();
    }
    text
}

fn unreachable(error: reqwest::Error) -> Error {
    Error::Unreachable(chain(&error))
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
        // The process installs ring at start; tests and embedders may not have.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut url = reqwest::Url::parse(&target.url)
            .map_err(|e| Error::Client(format!("{:?} is not a URL: {e}", target.url)))?;
        if url.scheme() != "https" {
            return Err(Error::Client(format!(
                "{:?} is not an https:// URL",
                target.url
            )));
        }
        let host = url
            .host_str()
            .ok_or_else(|| Error::Client(format!("{:?} names no host", target.url)))?
            .to_string();
        let port = url.port_or_known_default().unwrap_or(443);
        let mut builder = reqwest::Client::builder()
            .tls_backend_rustls()
            .timeout(timeout)
            .connect_timeout(timeout);
        if let Some(pem) = &target.ca_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| Error::Client(format!("the CA bundle is not PEM: {e}")))?;
            if certs.is_empty() {
                return Err(Error::Client("the CA bundle holds no certificate".into()));
            }
            builder = builder.tls_certs_only(certs);
        }
        if let Some(addr) = resolver.resolve(&host, port) {
            // A substituted address is a direct route: no proxy in between. reqwest takes the
            // port from the URL when it names one, so the URL drops it and the substituted
            // address's port applies; the name TLS verifies is unchanged.
            builder = builder.resolve(&host, addr).no_proxy();
            let _ = url.set_port(None);
        }
        let http = builder.build().map_err(|e| Error::Client(e.to_string()))?;
        Ok(Self {
            http,
            base: url.as_str().trim_end_matches('/').to_string(),
            namespace: target.namespace.clone().filter(|n| !n.is_empty()),
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

    fn vault(&self) -> Result<VaultClient, Error> {
        let token = self.token.as_ref().map(|t| t.0.clone()).unwrap_or_default();
        // Every field that would otherwise be read from VAULT_* variables is set.
        let settings = VaultClientSettingsBuilder::default()
            .address(&self.base)
            .token(&token)
            .namespace(self.namespace.clone())
            .verify(true)
            .ca_certs(Vec::new())
            .timeout(None)
            .build()
            .map_err(|e| Error::Client(e.to_string()))?;
        Ok(VaultClient {
            http: rustify::clients::reqwest::Client::new(&self.base, self.http.clone()),
            middle: EndpointMiddleware {
                token,
                version: "v1".into(),
                wrap: None,
                namespace: self.namespace.clone(),
            },
            settings,
        })
    }

    /// Logs in through Kubernetes auth as `role` with a service-account `jwt`.
    pub async fn kubernetes_login(&self, role: &str, jwt: &str) -> Result<Token, Error> {
        let auth =
            vaultrs::auth::kubernetes::login(&self.vault()?, KUBERNETES_MOUNT, role, jwt).await?;
        Ok(Token(auth.client_token))
    }

    /// Logs in through AppRole auth.
    pub async fn approle_login(&self, role_id: &str, secret_id: &str) -> Result<Token, Error> {
        let auth = vaultrs::auth::approle::login(&self.vault()?, APPROLE_MOUNT, role_id, secret_id)
            .await?;
        Ok(Token(auth.client_token))
    }

    /// Whether a secrets engine is mounted at `path`.
    pub async fn mount_exists(&self, path: &str) -> Result<bool, Error> {
        match vaultrs::sys::mount::get_configuration_of_a_secret_engine(&self.vault()?, path).await
        {
            Ok(_) => Ok(true),
            Err(e) => match Error::from(e) {
                e if e.is_missing() => Ok(false),
                e => Err(e),
            },
        }
    }

    /// The role ID of the AppRole `role`; `None` when the role does not exist.
    pub async fn role_id(&self, role: &str) -> Result<Option<String>, Error> {
        match vaultrs::auth::approle::role::read_id(&self.vault()?, APPROLE_MOUNT, role).await {
            Ok(read) => Ok(Some(read.role_id)),
            Err(e) => match Error::from(e) {
                e if e.code() == Some(404) => Ok(None),
                e => Err(e),
            },
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
            ttl_seconds: answer["data"]["secret_id_ttl"].as_u64().unwrap_or(0),
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
        let outcome = match self.vault() {
            Ok(vault) => vaultrs::token::revoke_self(&vault)
                .await
                .map_err(Error::from),
            Err(e) => Err(e),
        };
        if let Err(error) = outcome {
            tracing::debug!(%error, server = %self.base, "revoking the operator's token failed");
        }
    }

    async fn raw(&self, method: Method, path: &str, body: Option<Value>) -> Result<Value, Error> {
        let mut request = self
            .http
            .request(method, format!("{}/v1/{path}", self.base));
        if let Some(token) = &self.token {
            request = request.header("X-Vault-Token", &token.0);
        }
        if let Some(namespace) = &self.namespace {
            request = request.header("X-Vault-Namespace", namespace);
        }
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(unreachable)?;
        let json: Value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap_or(Value::Null)
        };
        if status.is_success() {
            return Ok(json);
        }
        Err(Error::Status {
            code: status.as_u16(),
            message: server_errors(&json, status),
        })
    }
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
