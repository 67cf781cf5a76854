//! The operator's Keystone (identity v3) client: password authentication and the handful of
//! catalog calls a registration needs (services, endpoints, regions), with Keystone's JSON
//! shapes.
//!
//! The auth URL is `spec.keystoneEndpoint`, a tenant's string, and Keystone's answers are a
//! peer's: both go through [`crate::peer_http`] (credentials in a URL refused, answers
//! bounded), ids from answers are checked before they reach a path, and no error quotes the
//! password or a token.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    peer_http::{Answer, Peer, PeerError, exchange, sensitive_header},
    resolve::Resolve,
};

/// How long any one request may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Why a call failed. Keystone's own error texts are kept; no secret ever is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The client could not be built (the auth URL is not one).
    #[error("the Keystone client could not be built: {0}")]
    Client(String),
    /// No answer: refused, timed out, TLS failed.
    #[error("Keystone did not answer: {0}")]
    Unreachable(String),
    /// Keystone answered with an error status.
    #[error("Keystone answered {code}: {message}")]
    Status {
        /// The HTTP status.
        code: u16,
        /// Keystone's `error.message`.
        message: String,
    },
    /// Keystone answered 2xx with something we cannot read.
    #[error("Keystone answered something unreadable: {0}")]
    Malformed(String),
}

impl Error {
    /// The HTTP status, when Keystone answered.
    pub fn code(&self) -> Option<u16> {
        match self {
            Error::Status { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// The identity a client authenticates as: a password user scoped to a project.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user's name.
    pub username: String,
    /// The user's domain (by name).
    pub user_domain_name: String,
    /// The project the token is scoped to.
    pub project_name: String,
    /// The project's domain (by name).
    pub project_domain_name: String,
    /// The password.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("project_name", &self.project_name)
            .finish_non_exhaustive()
    }
}

/// A catalog service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Service {
    /// Its id.
    pub id: String,
    /// Its type (`key-manager`).
    pub type_: String,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
}

/// A catalog endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Its id.
    pub id: String,
    /// The service it belongs to.
    pub service_id: String,
    /// `public`, `internal` or `admin`.
    pub interface: String,
    /// Its region's id.
    pub region: String,
    /// Its URL.
    pub url: String,
}

/// A client logged in to one Keystone.
#[derive(Clone)]
pub struct Keystone {
    peer: Peer,
    token: String,
}

impl std::fmt::Debug for Keystone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keystone")
            .field("base", &self.peer.base)
            .finish_non_exhaustive()
    }
}

/// An id from an answer, checked to be one a path can carry: Keystone's ids are hex digits
/// or names (`RegionOne`), never `/`, `?`, `#`, `%` or whitespace.
fn path_id(id: &str) -> Result<&str, Error> {
    if crate::api::keystone::is_region_id(id) {
        Ok(id)
    } else {
        Err(Error::Malformed(
            "an id holds characters a path cannot carry".into(),
        ))
    }
}

fn keystone_message(answer: &Answer) -> String {
    answer.json["error"]["message"]
        .as_str()
        .map(|m| m.chars().take(256).collect())
        .unwrap_or_else(|| {
            answer
                .status
                .canonical_reason()
                .unwrap_or("no error text")
                .to_string()
        })
}

fn field(value: &Value, name: &str) -> String {
    value[name].as_str().unwrap_or_default().to_string()
}

fn service_of(value: &Value) -> Result<Service, Error> {
    let service = Service {
        id: field(value, "id"),
        type_: field(value, "type"),
        name: field(value, "name"),
        description: field(value, "description"),
    };
    path_id(&service.id)?;
    Ok(service)
}

fn endpoint_of(value: &Value) -> Result<Endpoint, Error> {
    let region = match value["region_id"].as_str() {
        Some(region) => region.to_string(),
        None => field(value, "region"),
    };
    let endpoint = Endpoint {
        id: field(value, "id"),
        service_id: field(value, "service_id"),
        interface: field(value, "interface"),
        region,
        url: field(value, "url"),
    };
    path_id(&endpoint.id)?;
    Ok(endpoint)
}

/// The v3 base of an auth URL: `…/v3` as given, or with `/v3` appended to a bare base.
pub fn v3_base(auth_url: &str) -> String {
    let trimmed = auth_url.trim_end_matches('/');
    if trimmed.ends_with("/v3") {
        trimmed.to_string()
    } else {
        format!("{trimmed}/v3")
    }
}

impl Keystone {
    /// Authenticates at `auth_url` (`spec.keystoneEndpoint`) as `credentials`, the token
    /// scoped to their project; names resolve through `resolver`.
    pub async fn login(
        auth_url: &str,
        credentials: &Credentials,
        resolver: &dyn Resolve,
        timeout: Duration,
    ) -> Result<Self, Error> {
        let peer = Peer::connect(
            &v3_base(auth_url),
            "spec.keystoneEndpoint",
            false,
            None,
            resolver,
            timeout,
        )
        .map_err(|e| Error::Client(e.to_string()))?;
        let body = json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": credentials.username,
                "domain": {"name": credentials.user_domain_name},
                "password": credentials.password,
            }}},
            "scope": {"project": {
                "name": credentials.project_name,
                "domain": {"name": credentials.project_domain_name},
            }},
        }});
        let request = peer
            .http
            .post(format!("{}/auth/tokens?nocatalog", peer.base))
            .header("Content-Type", "application/json")
            .body(body.to_string());
        let answer = send(request).await?;
        if !answer.status.is_success() {
            return Err(Error::Status {
                code: answer.status.as_u16(),
                message: keystone_message(&answer),
            });
        }
        let token = answer
            .headers
            .get("x-subject-token")
            .and_then(|v| v.to_str().ok())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| Error::Malformed("the token answer carries no X-Subject-Token".into()))?
            .to_string();
        sensitive_header(&token, "the issued token").map_err(Error::Malformed)?;
        Ok(Self { peer, token })
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Result<Value, Error> {
        self.call_about(method, path, body, None).await
    }

    /// A call, with `X-Subject-Token: subject` when given (the token a call is about).
    async fn call_about(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        subject: Option<reqwest::header::HeaderValue>,
    ) -> Result<Value, Error> {
        let token = sensitive_header(&self.token, "the token").map_err(Error::Malformed)?;
        let mut request = self
            .peer
            .http
            .request(method, format!("{}/{path}", self.peer.base))
            .header("X-Auth-Token", token);
        if let Some(subject) = subject {
            request = request.header("X-Subject-Token", subject);
        }
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        let answer = send(request).await?;
        if answer.status.is_success() {
            return Ok(answer.json);
        }
        Err(Error::Status {
            code: answer.status.as_u16(),
            message: keystone_message(&answer),
        })
    }

    /// The services of `type_`.
    pub async fn services(&self, type_: &str) -> Result<Vec<Service>, Error> {
        let query = reqwest::Url::parse_with_params("http://q/", [("type", type_)])
            .map(|u| u.query().unwrap_or_default().to_string())
            .unwrap_or_default();
        let answer = self
            .call(Method::GET, &format!("services?{query}"), None)
            .await?;
        let list = answer["services"]
            .as_array()
            .ok_or_else(|| Error::Malformed("the services answer lists none".into()))?;
        // Filtered here as well: a Keystone (or a proxy) that ignores the query lists them all.
        list.iter()
            .map(service_of)
            .filter(|s| s.as_ref().map_or(true, |s| s.type_ == type_))
            .collect()
    }

    /// Creates a service.
    pub async fn create_service(
        &self,
        type_: &str,
        name: &str,
        description: &str,
    ) -> Result<Service, Error> {
        let body = json!({"service": {"type": type_, "name": name,
            "description": description, "enabled": true}});
        let answer = self.call(Method::POST, "services", Some(body)).await?;
        service_of(&answer["service"])
    }

    /// Deletes a service (and, in Keystone, its endpoints).
    pub async fn delete_service(&self, id: &str) -> Result<(), Error> {
        self.call(Method::DELETE, &format!("services/{}", path_id(id)?), None)
            .await
            .map(drop)
    }

    /// The endpoints of the service `service_id`.
    pub async fn endpoints(&self, service_id: &str) -> Result<Vec<Endpoint>, Error> {
        let service_id = path_id(service_id)?;
        let answer = self
            .call(
                Method::GET,
                &format!("endpoints?service_id={service_id}"),
                None,
            )
            .await?;
        let list = answer["endpoints"]
            .as_array()
            .ok_or_else(|| Error::Malformed("the endpoints answer lists none".into()))?;
        list.iter()
            .map(endpoint_of)
            .filter(|e| e.as_ref().map_or(true, |e| e.service_id == service_id))
            .collect()
    }

    /// Creates an endpoint.
    pub async fn create_endpoint(
        &self,
        service_id: &str,
        interface: &str,
        region: &str,
        url: &str,
    ) -> Result<Endpoint, Error> {
        let body = json!({"endpoint": {"service_id": service_id, "interface": interface,
            "region_id": region, "url": url, "enabled": true}});
        let answer = self.call(Method::POST, "endpoints", Some(body)).await?;
        endpoint_of(&answer["endpoint"])
    }

    /// Points an endpoint at `url`.
    pub async fn update_endpoint(&self, id: &str, url: &str) -> Result<Endpoint, Error> {
        let body = json!({"endpoint": {"url": url}});
        let answer = self
            .call(
                Method::PATCH,
                &format!("endpoints/{}", path_id(id)?),
                Some(body),
            )
            .await?;
        endpoint_of(&answer["endpoint"])
    }

    /// Deletes an endpoint; one already gone is no error.
    pub async fn delete_endpoint(&self, id: &str) -> Result<(), Error> {
        match self
            .call(Method::DELETE, &format!("endpoints/{}", path_id(id)?), None)
            .await
        {
            Err(e) if e.code() == Some(404) => Ok(()),
            other => other.map(drop),
        }
    }

    /// Whether the region `id` exists.
    pub async fn region_exists(&self, id: &str) -> Result<bool, Error> {
        let Ok(id) = path_id(id) else {
            return Ok(false);
        };
        match self.call(Method::GET, &format!("regions/{id}"), None).await {
            Ok(_) => Ok(true),
            Err(e) if e.code() == Some(404) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Revokes the client's own token. Failures are logged only: the token expires anyway.
    pub async fn revoke(&self) {
        let Ok(subject) = sensitive_header(&self.token, "the token") else {
            return;
        };
        let outcome = self
            .call_about(Method::DELETE, "auth/tokens", None, Some(subject))
            .await;
        if let Err(error) = outcome {
            tracing::debug!(%error, keystone = %self.peer.base, "revoking the operator's Keystone token failed");
        }
    }
}

async fn send(request: reqwest::RequestBuilder) -> Result<Answer, Error> {
    exchange(request).await.map_err(|e| match e {
        PeerError::TooLarge => Error::Malformed(e.to_string()),
        other => Error::Unreachable(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_v3_base_is_the_auth_url_with_v3_once() {
        assert_eq!(v3_base("http://ks:5000/v3"), "http://ks:5000/v3");
        assert_eq!(v3_base("http://ks:5000/v3/"), "http://ks:5000/v3");
        assert_eq!(v3_base("http://ks:5000"), "http://ks:5000/v3");
        assert_eq!(v3_base("https://ks/identity/"), "https://ks/identity/v3");
    }

    #[test]
    fn ids_that_could_bend_a_path_are_refused() {
        for bad in ["", "../users", "a/b", "a?b", "a#b", "a%2f", "a b", "a\nb"] {
            assert!(path_id(bad).is_err(), "{bad:?}");
        }
        for good in ["RegionOne", "0f3c2a", "region-two_3.x"] {
            assert_eq!(path_id(good), Ok(good));
        }
    }

    #[test]
    fn credentials_never_print_the_password() {
        let credentials = Credentials {
            username: "barbican".into(),
            user_domain_name: "Default".into(),
            project_name: "service".into(),
            project_domain_name: "Default".into(),
            password: "hunter2".into(),
        };
        assert!(!format!("{credentials:?}").contains("hunter2"));
    }

    #[test]
    fn an_endpoint_reads_its_region_from_region_id_or_region() {
        let endpoint = endpoint_of(&json!({"id": "e1", "service_id": "s1",
            "interface": "public", "region": "RegionOne", "url": "http://x"}))
        .expect("an endpoint");
        assert_eq!(endpoint.region, "RegionOne");
        let bad = endpoint_of(&json!({"id": "e/1"}));
        assert!(matches!(bad, Err(Error::Malformed(_))));
    }
}
