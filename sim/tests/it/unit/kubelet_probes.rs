//! Tests of `barbican_sim::kubelet::probes`.

use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;

use barbican_sim::kubelet::probes::*;

#[test]
fn probes_read_their_handler_and_timings_with_kubernetes_defaults() {
    let container = json!({"ports": [{"name": "barbican-api", "containerPort": 9311}],
        "readinessProbe": {"httpGet": {"path": "/healthcheck", "port": "barbican-api"},
            "initialDelaySeconds": 10, "periodSeconds": 15, "timeoutSeconds": 10},
        "livenessProbe": {"tcpSocket": {"port": 9311}},
        "startupProbe": {"exec": {"command": ["true"]}},
        "grpcProbe": {"grpc": {"port": 9311}},
        "emptyProbe": {"exec": {"command": []}}});
    let readiness = Probe::of(&container, "readinessProbe").unwrap().unwrap();
    assert_eq!(
        readiness,
        Probe {
            check: Check::Http {
                port: 9311,
                path: "/healthcheck".into(),
                tls: false,
            },
            initial_delay: Duration::from_secs(10),
            period: Duration::from_secs(15),
            timeout: Duration::from_secs(10),
            failure_threshold: 3,
        }
    );
    let liveness = Probe::of(&container, "livenessProbe").unwrap().unwrap();
    assert_eq!(liveness.check, Check::Tcp { port: 9311 });
    assert_eq!(liveness.period, Duration::from_secs(10));
    let startup = Probe::of(&container, "startupProbe").unwrap().unwrap();
    assert_eq!(
        startup.check,
        Check::Exec {
            command: vec!["true".into()]
        }
    );
    assert!(
        Probe::of(&container, "grpcProbe")
            .unwrap_err()
            .contains("httpGet, tcpSocket and exec")
    );
    assert!(
        Probe::of(&container, "emptyProbe")
            .unwrap_err()
            .contains("exec.command is empty")
    );
    assert_eq!(Probe::of(&container, "absentProbe").unwrap(), None);
}

#[test]
fn statuses_from_200_to_399_pass() {
    assert!(status_passes(b"HTTP/1.1 200 OK\r\n"));
    assert!(status_passes(b"HTTP/1.0 302 Found"));
    assert!(!status_passes(b"HTTP/1.1 503 Service Unavailable"));
    assert!(!status_passes(b"garbage"));
    assert!(!status_passes(b""));
}

#[tokio::test]
async fn an_http_probe_reads_the_status_of_a_live_endpoint() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        for answer in ["200 OK", "503 Service Unavailable"] {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 512];
            let _ = socket.read(&mut buf).await;
            let _ = socket
                .write_all(format!("HTTP/1.1 {answer}\r\nContent-Length: 0\r\n\r\n").as_bytes())
                .await;
        }
    });
    let probe = Probe {
        check: Check::Http {
            port,
            path: "/healthcheck".into(),
            tls: false,
        },
        initial_delay: Duration::ZERO,
        period: Duration::from_secs(1),
        timeout: Duration::from_secs(5),
        failure_threshold: 1,
    };
    let ip = std::net::Ipv4Addr::LOCALHOST;
    assert!(probe.passes(ip).await);
    assert!(!probe.passes(ip).await);
}

#[test]
fn an_https_probe_says_so_and_another_scheme_is_refused_by_name() {
    let container = json!({
        "readinessProbe": {"httpGet": {"path": "/healthcheck", "port": 9311, "scheme": "HTTPS"}},
        "livenessProbe": {"httpGet": {"path": "/healthcheck", "port": 9311, "scheme": "FTP"}}});
    let readiness = Probe::of(&container, "readinessProbe").unwrap().unwrap();
    assert_eq!(
        readiness.check,
        Check::Http {
            port: 9311,
            path: "/healthcheck".into(),
            tls: true
        }
    );
    let refused = Probe::of(&container, "livenessProbe").unwrap_err();
    assert!(refused.contains("\"FTP\""), "{refused}");
}

/// The kubelet's HTTPS probe takes the pod's certificate whatever it is (here one of a CA the
/// prober never saw), and still reads the status; a plain-HTTP probe of a TLS port fails.
#[tokio::test]
async fn an_https_probe_takes_any_certificate_and_reads_the_status() {
    let authority = std::sync::Arc::new(barbican_sim::tls::Authority::new());
    let config = std::sync::Arc::new(authority.server_config("127.0.0.1").unwrap());
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            let Ok(mut tls) = acceptor.accept(socket).await else {
                continue;
            };
            let mut buf = [0u8; 512];
            let _ = tls.read(&mut buf).await;
            let _ = tls
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                .await;
            let _ = tls.shutdown().await;
        }
    });
    let probe = |tls| Probe {
        check: Check::Http {
            port,
            path: "/healthcheck".into(),
            tls,
        },
        initial_delay: Duration::ZERO,
        period: Duration::from_secs(1),
        timeout: Duration::from_secs(5),
        failure_threshold: 1,
    };
    let ip = std::net::Ipv4Addr::LOCALHOST;
    assert!(probe(true).passes(ip).await);
    assert!(!probe(false).passes(ip).await);
}

/// A pod spec's grace period and probe delays are any int64 kube-apiserver admits: an instant
/// past the clock's range is far off, never a panic of the pod task.
#[test]
fn an_instant_past_the_clocks_range_is_far_off_not_a_panic() {
    use barbican_sim::kubelet::probes::after;
    let now = tokio::time::Instant::now();
    let second = std::time::Duration::from_secs(1);
    assert_eq!(after(now, second), now + second);
    let huge = std::time::Duration::from_secs(i64::MAX as u64);
    let far = after(now, huge);
    assert!(far > now + std::time::Duration::from_secs(10 * 365 * 24 * 60 * 60));
    assert_eq!(after(now, std::time::Duration::MAX), far);
}
