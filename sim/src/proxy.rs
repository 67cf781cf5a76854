//! `services/<[scheme:]name[:port]>/proxy/<path>`, as kube-apiserver serves it: the request is
//! forwarded to the Service's backend and the backend's answer comes back as it is. The Service
//! must exist (404 otherwise); the port is a number or one of its named ports (its first port
//! when none is given); the backend is whatever the service registry holds for it, and without
//! one the answer is kube-apiserver's 503 `no endpoints available for service "<name>"`. The
//! `https` scheme speaks TLS to the backend without verifying its certificate, as
//! kube-apiserver does.

use std::net::SocketAddr;

use axum::{
    body::Body,
    http::{HeaderMap, Method, Request, Response, Uri},
};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::Value;

use crate::errors::ApiError;

/// `[scheme:]name[:port]` of a proxy path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceSpec {
    /// `http` unless given.
    pub scheme: String,
    /// The Service's name.
    pub name: String,
    /// The port, as given (a number or a port name); empty for the first port.
    pub port: String,
}

/// Parses the service segment of a proxy path.
pub fn parse(segment: &str) -> ServiceSpec {
    let parts: Vec<&str> = segment.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [scheme @ ("http" | "https"), name] => (*scheme, *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port, ..] => (*scheme, *name, *port),
        [] => ("", "", ""),
    };
    ServiceSpec {
        scheme: if scheme.is_empty() { "http" } else { scheme }.to_string(),
        name: name.to_string(),
        port: port.to_string(),
    }
}

/// The port number `spec.port` names on `service` (a number, a port name, or the first port).
pub fn port_of(service: &Value, port: &str) -> Option<u16> {
    let ports = service["spec"]["ports"].as_array()?;
    let chosen = if port.is_empty() {
        ports.first()?
    } else if let Ok(number) = port.parse::<u16>() {
        return ports
            .iter()
            .any(|p| p["port"].as_u64() == Some(u64::from(number)))
            .then_some(number);
    } else {
        ports.iter().find(|p| p["name"].as_str() == Some(port))?
    };
    chosen["port"].as_u64().and_then(|p| u16::try_from(p).ok())
}

fn unavailable(e: String) -> ApiError {
    ApiError::new(503, "ServiceUnavailable", e)
}

/// Forwards one request to `addr` (over TLS when `tls`, the certificate not verified) and
/// hands back the answer.
pub async fn forward(
    addr: SocketAddr,
    tls: bool,
    host: &str,
    method: &Method,
    path_and_query: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response<Body>, ApiError> {
    let reach = |e: std::io::Error| unavailable(format!("error trying to reach service: {e}"));
    if tls {
        let stream = crate::tls::connect_unverified(addr).await.map_err(reach)?;
        exchange(stream, host, method, path_and_query, headers, body).await
    } else {
        let stream = tokio::net::TcpStream::connect(addr).await.map_err(reach)?;
        exchange(stream, host, method, path_and_query, headers, body).await
    }
}

/// One HTTP/1 exchange on `stream`.
async fn exchange<S>(
    stream: S,
    host: &str,
    method: &Method,
    path_and_query: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response<Body>, ApiError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| unavailable(format!("error trying to reach service: {e}")))?;
    tokio::spawn(connection);
    let mut request = Request::builder()
        .method(method.clone())
        .uri(path_and_query)
        .header("host", host);
    for (name, value) in headers {
        // The caller's credentials are for the API server, not for the backend.
        if name != "authorization" && name != "host" {
            request = request.header(name, value);
        }
    }
    let request = request
        .body(Full::new(body))
        .map_err(|e| ApiError::new(400, "BadRequest", e.to_string()))?;
    let answer = sender
        .send_request(request)
        .await
        .map_err(|e| unavailable(format!("error trying to reach service: {e}")))?;
    let (parts, body) = answer.into_parts();
    let bytes = body
        .collect()
        .await
        .map_err(|e| unavailable(format!("error reading from service: {e}")))?
        .to_bytes();
    Ok(Response::from_parts(parts, Body::from(bytes)))
}

/// The path and query the backend sees: `/` + the rest of the proxy path, the query kept.
pub fn backend_path(rest: &[&str], uri: &Uri, trailing_slash: bool) -> String {
    let mut path = format!("/{}", rest.join("/"));
    if trailing_slash && !rest.is_empty() {
        path.push('/');
    }
    match uri.query() {
        Some(query) => format!("{path}?{query}"),
        None => path,
    }
}
