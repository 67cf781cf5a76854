//! One HTTP/1.1 exchange, as the steps that speak to barbican, Keystone, the operator's
//! Services and a served sim's control API make it.

use std::{net::SocketAddr, time::Duration};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use rustls::pki_types::pem::PemObject;

/// An HTTP answer: status, the headers asked for, body.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) subject_token: Option<String>,
    pub(crate) body: String,
}

/// One HTTP/1.1 request to `addr` (as `host`), with `headers` and a JSON or text `body`.
pub(crate) async fn request(
    addr: SocketAddr,
    host: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> Result<Answer, String> {
    request_over(addr, host, None, method, path, headers, body).await
}

/// [`request`] over TLS when `ca` is given: the server's certificate must be valid for `host`
/// and chain to `ca` (PEM), as a client of barbican's API checks it.
pub(crate) async fn request_over(
    addr: SocketAddr,
    host: &str,
    ca: Option<&[u8]>,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> Result<Answer, String> {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connecting to {host} ({addr}): {e}"))?;
    let Some(ca) = ca else {
        return exchange(tcp, host, method, path, headers, body).await;
    };
    let mut roots = rustls::RootCertStore::empty();
    for certificate in rustls::pki_types::CertificateDer::pem_slice_iter(ca) {
        let certificate = certificate.map_err(|e| format!("the CA is not PEM: {e}"))?;
        roots
            .add(certificate)
            .map_err(|e| format!("the CA is not usable: {e}"))?;
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|e| format!("{host}: {e}"))?;
    let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS with {host} ({addr}): {e}"))?;
    exchange(tls, host, method, path, headers, body).await
}

/// One exchange on a connected stream.
async fn exchange<S>(
    stream: S,
    host: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> Result<Answer, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| format!("{host}: {e}"))?;
    tokio::spawn(connection);
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", host);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let request = builder
        .body(Full::new(Bytes::from(body.unwrap_or_default())))
        .map_err(|e| e.to_string())?;
    let answer = tokio::time::timeout(Duration::from_secs(30), sender.send_request(request))
        .await
        .map_err(|_| format!("{method} {host}{path}: no answer within 30 s"))?
        .map_err(|e| format!("{method} {host}{path}: {e}"))?;
    let status = answer.status().as_u16();
    let subject_token = answer
        .headers()
        .get("x-subject-token")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let bytes = answer
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok(Answer {
        status,
        subject_token,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    })
}
