//! Probes as the kubelet runs them: `httpGet` (any status from 200 to 399 passes) and
//! `tcpSocket` against the pod's address, `exec` inside the container (run by the pod's
//! runtime, see `pod.rs`), with kube-apiserver's defaults for the timings.

use std::{net::SocketAddr, time::Duration};

use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// What a probe checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// `GET path` on the port.
    Http {
        /// The port.
        port: u16,
        /// The path (with its query).
        path: String,
        /// Over TLS (`scheme: HTTPS`), the certificate not verified, as the kubelet does.
        tls: bool,
    },
    /// A connection to the port.
    Tcp {
        /// The port.
        port: u16,
    },
    /// A command run in the container; exit status 0 passes.
    Exec {
        /// Its words.
        command: Vec<String>,
    },
}

/// A probe of a container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// What it checks.
    pub check: Check,
    /// Before the first check.
    pub initial_delay: Duration,
    /// Between checks.
    pub period: Duration,
    /// How long a check may take.
    pub timeout: Duration,
    /// Failures in a row that fail the probe.
    pub failure_threshold: u32,
}

impl Probe {
    /// The probe `field` (`readinessProbe`, `livenessProbe`, `startupProbe`) of `container`,
    /// if it has one the sim can run; an `exec` or `grpc` probe is an error naming it.
    pub fn of(container: &Value, field: &str) -> Result<Option<Self>, String> {
        let probe = &container[field];
        if probe.is_null() {
            return Ok(None);
        }
        let port = |handler: &Value| -> Result<u16, String> {
            match &handler["port"] {
                Value::Number(n) => n
                    .as_u64()
                    .and_then(|p| u16::try_from(p).ok())
                    .ok_or_else(|| format!("{field}: port {n} is not a port")),
                Value::String(name) => named_port(container, name)
                    .ok_or_else(|| format!("{field}: the container has no port named {name:?}")),
                _ => Err(format!("{field}: the probe has no port")),
            }
        };
        let check = if probe["httpGet"].is_object() {
            let tls = match probe["httpGet"]["scheme"].as_str().unwrap_or("HTTP") {
                "HTTP" => false,
                "HTTPS" => true,
                other => {
                    return Err(format!(
                        "{field}: httpGet.scheme {other:?} is neither HTTP nor HTTPS"
                    ));
                }
            };
            Check::Http {
                port: port(&probe["httpGet"])?,
                path: probe["httpGet"]["path"].as_str().unwrap_or("/").to_string(),
                tls,
            }
        } else if probe["tcpSocket"].is_object() {
            Check::Tcp {
                port: port(&probe["tcpSocket"])?,
            }
        } else if probe["exec"].is_object() {
            let command: Vec<String> = probe["exec"]["command"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|w| w.as_str().map(str::to_string))
                .collect();
            if command.is_empty() {
                return Err(format!("{field}: exec.command is empty"));
            }
            Check::Exec { command }
        } else {
            return Err(format!(
                "{field}: the sim's kubelet runs httpGet, tcpSocket and exec probes only"
            ));
        };
        let seconds =
            |key: &str, default: u64| Duration::from_secs(probe[key].as_u64().unwrap_or(default));
        Ok(Some(Self {
            check,
            initial_delay: seconds("initialDelaySeconds", 0),
            period: seconds("periodSeconds", 10).max(Duration::from_secs(1)),
            timeout: seconds("timeoutSeconds", 1).max(Duration::from_secs(1)),
            failure_threshold: probe["failureThreshold"]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(3)
                .max(1),
        }))
    }

    /// Runs the check once against the pod at `ip` (an `exec` check is the runtime's and
    /// does not pass here).
    pub async fn passes(&self, ip: std::net::Ipv4Addr) -> bool {
        let run = async {
            match &self.check {
                Check::Exec { .. } => false,
                Check::Tcp { port } => TcpStream::connect(SocketAddr::from((ip, *port)))
                    .await
                    .is_ok(),
                Check::Http { port, path, tls } => {
                    http_ok(SocketAddr::from((ip, *port)), path, *tls).await
                }
            }
        };
        tokio::time::timeout(self.timeout, run)
            .await
            .unwrap_or(false)
    }
}

/// The instant `span` after `from`, or one far off when that cannot be represented: a pod
/// spec's `terminationGracePeriodSeconds` or a probe's `initialDelaySeconds` and
/// `periodSeconds` are any int64 kube-apiserver admits, and `Instant + Duration` panics past
/// the clock's range (which ended the pod task and leaked its network namespace).
pub fn after(from: tokio::time::Instant, span: Duration) -> tokio::time::Instant {
    /// Thirty years: later than any pod lives.
    const FAR: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);
    from.checked_add(span)
        .or_else(|| from.checked_add(FAR))
        .unwrap_or(from)
}

/// The number of the container port called `name`.
fn named_port(container: &Value, name: &str) -> Option<u16> {
    container["ports"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name)?["containerPort"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok())
}

/// Whether `GET path` answers a status from 200 to 399 (the kubelet's rule), over TLS when
/// `tls` (any certificate taken, as the kubelet takes it).
async fn http_ok(addr: SocketAddr, path: &str, tls: bool) -> bool {
    if tls {
        match crate::tls::connect_unverified(addr).await {
            Ok(stream) => status_of(stream, addr, path).await,
            Err(_) => false,
        }
    } else {
        match TcpStream::connect(addr).await {
            Ok(stream) => status_of(stream, addr, path).await,
            Err(_) => false,
        }
    }
}

/// Sends `GET path` on `stream` and reads whether the status passes.
async fn status_of<S>(mut stream: S, addr: SocketAddr, path: &str) -> bool
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: kube-probe/1.37\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).await.is_err() {
        return false;
    }
    // The status line is all that is read.
    let mut head = [0u8; 64];
    let mut read = 0;
    while read < 12 {
        match stream.read(&mut head[read..]).await {
            Ok(0) | Err(_) => break,
            Ok(n) => read += n,
        }
    }
    status_passes(&head[..read])
}

/// Whether an HTTP status line says 200–399.
pub fn status_passes(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    text.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse::<u16>().ok())
        .is_some_and(|code| (200..400).contains(&code))
}
