//! What the operator's HTTP clients of its peers (OpenBao, Keystone) share: a client built
//! for a URL a tenant wrote, through the [`Resolve`] seam, and answers read with a bound.
//!
//! Every peer is hostile input: its URL comes from a CR and its answers from a server anybody
//! may run. A URL carrying credentials is refused before any request, an answer is never read
//! past [`MAX_ANSWER_BYTES`], and no error quotes a value that could carry a credential.

use std::time::Duration;

use reqwest::{StatusCode, header::HeaderMap, header::HeaderValue};
use serde_json::Value;

use crate::resolve::Resolve;

/// The largest answer read from a peer: larger ones are refused without being read further.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// A client for one peer and the base URL its paths are appended to.
#[derive(Clone, Debug)]
pub struct Peer {
    /// The client: TLS through rustls, bounded by the timeout, routed by the resolver.
    pub http: reqwest::Client,
    /// The URL without a trailing `/` (and without its port when the resolver substitutes
    /// the address).
    pub base: String,
}

/// Why a peer's client could not be built or its answer read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    /// The client could not be built from what the CR says (the text says why).
    #[error("{0}")]
    Client(String),
    /// No answer: refused, timed out, TLS failed.
    #[error("{0}")]
    Unreachable(String),
    /// An answer larger than [`MAX_ANSWER_BYTES`].
    #[error("the answer is larger than {MAX_ANSWER_BYTES} bytes")]
    TooLarge,
}

/// What a peer answered: the status, its headers and the body as JSON (`Null` when empty or
/// not JSON).
#[derive(Clone, Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The body.
    pub json: Value,
}

/// An error with its causes: the chain says why (refused, certificate, timeout), the top level
/// alone says little.
pub fn chain(error: &dyn std::error::Error) -> String {
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

/// `value` as a sensitive header value, or an error naming `what` (never the value: a token).
pub fn sensitive_header(value: &str, what: &str) -> Result<HeaderValue, String> {
    let mut value = HeaderValue::from_str(value)
        .map_err(|_| format!("{what} holds characters a header cannot carry"))?;
    value.set_sensitive(true);
    Ok(value)
}

impl Peer {
    /// A client for `url`: `https://` only when `https_only`; TLS verified against `ca_pem`
    /// alone when given, else the platform's trust store; each request bounded by `timeout`;
    /// the host resolved through `resolver`, which may change where a connection goes, never
    /// the name the certificate must be valid for. `what` names the URL in errors.
    pub fn connect(
        url: &str,
        what: &str,
        https_only: bool,
        ca_pem: Option<&[u8]>,
        resolver: &dyn Resolve,
        timeout: Duration,
    ) -> Result<Self, PeerError> {
        // The process installs ring at start; tests and embedders may not have.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut url = reqwest::Url::parse(url)
            .map_err(|e| PeerError::Client(format!("{what} is not a URL: {e}")))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(PeerError::Client(format!(
                "{what} carries credentials (user:password@)"
            )));
        }
        match url.scheme() {
            "https" => {}
            "http" if !https_only => {}
            _ => {
                let allowed = if https_only {
                    "https://"
                } else {
                    "http:// or https://"
                };
                return Err(PeerError::Client(format!(
                    "{} is not an {allowed} URL",
                    url.as_str()
                )));
            }
        }
        let host = url
            .host_str()
            .ok_or_else(|| PeerError::Client(format!("{} names no host", url.as_str())))?
            .to_string();
        let port = url.port_or_known_default().unwrap_or(443);
        let mut builder = reqwest::Client::builder()
            .tls_backend_rustls()
            .timeout(timeout)
            .connect_timeout(timeout);
        if let Some(pem) = ca_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| PeerError::Client(format!("the CA bundle is not PEM: {e}")))?;
            if certs.is_empty() {
                return Err(PeerError::Client(
                    "the CA bundle holds no certificate".into(),
                ));
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
        let http = builder
            .build()
            .map_err(|e| PeerError::Client(e.to_string()))?;
        Ok(Self {
            http,
            base: url.as_str().trim_end_matches('/').to_string(),
        })
    }
}

/// Sends `request` and reads the answer, at most [`MAX_ANSWER_BYTES`] of it.
pub async fn exchange(request: reqwest::RequestBuilder) -> Result<Answer, PeerError> {
    let unreachable = |e: reqwest::Error| PeerError::Unreachable(chain(&e));
    let mut response = request.send().await.map_err(unreachable)?;
    let (status, headers) = (response.status(), response.headers().clone());
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
        if bytes.len().saturating_add(chunk.len()) > MAX_ANSWER_BYTES {
            return Err(PeerError::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Ok(Answer {
        status,
        headers,
        json,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::SystemResolver;

    fn connect(url: &str, https_only: bool) -> Result<Peer, PeerError> {
        Peer::connect(
            url,
            "the URL",
            https_only,
            None,
            &SystemResolver,
            Duration::from_secs(1),
        )
    }

    #[test]
    fn a_url_with_credentials_is_refused_without_quoting_them() {
        let refused = connect("https://admin:hunter2@keystone:5000/v3", false);
        let Err(PeerError::Client(message)) = refused else {
            panic!("{refused:?}");
        };
        assert!(message.contains("credentials"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }

    #[test]
    fn the_scheme_is_checked_against_what_the_peer_allows() {
        assert!(connect("http://keystone:5000/v3", false).is_ok());
        assert!(matches!(
            connect("http://vault:8200", true),
            Err(PeerError::Client(m)) if m.contains("https://")
        ));
        assert!(matches!(
            connect("ftp://keystone", false),
            Err(PeerError::Client(m)) if m.contains("http:// or https://")
        ));
    }

    #[test]
    fn the_base_drops_a_trailing_slash() {
        let peer = connect("http://keystone:5000/v3/", false).expect("a client");
        assert_eq!(peer.base, "http://keystone:5000/v3");
    }

    #[test]
    fn a_sensitive_header_refuses_control_characters_without_quoting() {
        let refused = sensitive_header("tok\nen", "the token").expect_err("a newline");
        assert!(refused.contains("the token") && !refused.contains("tok\nen"));
        assert!(sensitive_header("abc", "the token").is_ok_and(|v| v.is_sensitive()));
    }
}
