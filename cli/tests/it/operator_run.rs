//! `barbican-operator run --kubeconfig <sim kubeconfig>` against `barbican-sim serve
//! --with-fakes`: the binary a platform team deploys reconciles the examples, serves its
//! metrics and probes, holds the leader Lease, and stops cleanly on SIGTERM. It runs as the
//! chart's ServiceAccount with the chart's RBAC (`serve --operator-kubeconfig-out`), which the
//! served sim enforces, as on an install of the chart.
//!
//! The operator binary is a sibling of this crate's `barbican-sim` in the target directory;
//! `cargo nextest run --workspace` (the test command) builds both.

use std::{
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use crate::common::*;

struct Operator(Child);

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn operator_binary() -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_BIN_EXE_barbican-sim")).with_file_name("barbican-operator");
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p barbican-operator` (the workspace test command does)",
        path.display()
    );
    path
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn http_get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer)
}

/// `method path` on the server of `kubeconfig` with its bearer token; the raw answer.
fn request_as(kubeconfig: &std::path::Path, method: &str, path: &str) -> String {
    let config = std::fs::read_to_string(kubeconfig).unwrap();
    let field = |prefix: &str, end: char| {
        let start = config.find(prefix).unwrap() + prefix.len();
        config[start..].split(end).next().unwrap().to_string()
    };
    let server = field("server: 'http://", '\'');
    let token = field("token: ", '}');
    let mut stream = TcpStream::connect(server.as_str()).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

fn condition(sim: &Sim, type_: &str) -> String {
    kubectl(
        sim,
        &[
            "-n",
            "openstack",
            "get",
            "barbican",
            "barbican",
            "-o",
            &format!("jsonpath={{.status.conditions[?(@.type==\"{type_}\")].status}}/{{.status.conditions[?(@.type==\"{type_}\")].reason}}"),
        ],
    )
    .1
}

#[test]
fn run_reconciles_the_examples_serves_metrics_and_stops_on_sigterm() {
    let identity = std::env::temp_dir().join(format!(
        "barbican-operator-run-{}.kubeconfig",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&identity);
    let sim = start_with(
        "operator-run",
        &[
            "--with-fakes",
            "--operator-kubeconfig-out",
            identity.to_str().unwrap(),
            "--secret-store-grant",
            "openstack=openbao-instance",
        ],
    );
    // The identity's kubeconfig is the chart's ServiceAccount, held to the chart's grants: it
    // may list Barbicans but not delete a namespace. (kubectl sends no credentials to a plain
    // HTTP server, so this asks directly.)
    let as_operator = |method: &str, path: &str| request_as(&identity, method, path);
    let listed = as_operator("GET", "/apis/barbican.openstack.c5c3.io/v1alpha1/barbicans");
    assert!(listed.starts_with("HTTP/1.1 200"), "{listed}");
    let refused = as_operator("DELETE", "/api/v1/namespaces/barbican-system");
    assert!(
        refused.starts_with("HTTP/1.1 403")
            && refused.contains("system:serviceaccount:barbican-system:barbican-operator"),
        "{refused}"
    );
    apply_stdin(&sim, barbican_features::sim_env::MINIMAL_PREREQUISITES);
    ok(
        &sim,
        &[
            "apply",
            "-f",
            "deploy/examples/barbican.yaml",
            "-f",
            "deploy/examples/barbicansecretstore-managed.yaml",
        ],
    );
    let (metrics, health) = (free_port(), free_port());
    let mut operator = Operator(
        Command::new(operator_binary())
            .arg("run")
            .arg("--kubeconfig")
            .arg(&identity)
            .args(["--metrics-bind-address", &format!("127.0.0.1:{metrics}")])
            .args([
                "--health-probe-bind-address",
                &format!("127.0.0.1:{health}"),
            ])
            .args(["--webhook-bind-address", "0", "--log-format", "json"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );

    let deadline = Instant::now() + Duration::from_secs(60);
    // Run from outside the cluster, the in-cluster names do not resolve: the managed store's
    // OpenBao is unreachable, so there is no valid projection, which is what an operator run
    // from a laptop sees. (The converged path is the features' business, on the sim's names.)
    let want = [
        ("SecretsReady", "True/SecretsAvailable"),
        ("SecretStoresReady", "False/NoDefaultSecretStore"),
        ("DatabaseReady", "False/WaitingForSecretStores"),
    ];
    loop {
        let seen: Vec<String> = want.iter().map(|(t, _)| condition(&sim, t)).collect();
        if want.iter().zip(&seen).all(|((_, w), s)| s == w) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "conditions never converged: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    let store = kubectl(
        &sim,
        &[
            "-n",
            "openstack",
            "get",
            "barbicansecretstore",
            "openbao-primary",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"CredentialsReady\")].reason}: {.status.conditions[?(@.type==\"CredentialsReady\")].message}",
        ],
    )
    .1;
    assert!(
        store.starts_with("OpenBaoUnreachable: ")
            && store.contains("openbao-instance.openstack.svc"),
        "{store}"
    );
    let ready = http_get(health, "/readyz").unwrap();
    assert!(
        ready.starts_with("HTTP/1.0 200") || ready.starts_with("HTTP/1.1 200"),
        "{ready}"
    );
    let scraped = http_get(metrics, "/metrics").unwrap();
    for series in [
        "barbican_operator_reconcile_duration_seconds_count{sub_reconciler=\"Secrets\"}",
        "barbican_operator_reconcile_duration_seconds_count{sub_reconciler=\"SecretStores\"}",
        "barbican_operator_reconcile_duration_seconds_count{sub_reconciler=\"Database\"}",
        // Every request the binary sends is counted (its client's layer).
        "barbican_operator_kube_requests_total{code=\"200\",resource=\"barbicans.barbican.openstack.c5c3.io\",verb=\"list\"}",
        "barbican_operator_kube_requests_total{code=\"200\",resource=\"barbicans.barbican.openstack.c5c3.io\",verb=\"watch\"}",
    ] {
        assert!(
            scraped.contains(series),
            "{series} missing from:\n{scraped}"
        );
    }
    let lease = ok(
        &sim,
        &[
            "-n",
            "barbican-system",
            "get",
            "lease",
            "barbican-operator-leader",
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ],
    );
    assert!(lease.starts_with("barbican-operator_"), "{lease}");

    let pid = operator.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = operator.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the operator did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
}

/// `bench --barbicans N` runs the operator binary against a served sim until every Barbican is
/// Ready (followed by a watch), then watches a quiet window: the report says so in its summary
/// and its JSON. The figures themselves are read, not asserted; what is asserted is what holds
/// on any machine.
#[test]
fn the_operator_benchmark_converges_and_reports_a_quiet_steady_state() {
    let dir = std::env::temp_dir().join(format!("bench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("report.json");
    let converging = dir.join("converging.log");
    let output = Command::new(env!("CARGO_BIN_EXE_barbican-sim"))
        .args([
            "bench",
            "--barbicans",
            "3",
            "--steady",
            "2s",
            "--timeout",
            "5m",
        ])
        .arg("--operator")
        .arg(operator_binary())
        .arg("--json")
        .arg(&json)
        .arg("--converging-log")
        .arg(&converging)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let summary = String::from_utf8_lossy(&output.stdout).to_string() + &stderr;
    assert!(
        summary.contains("bench: 3 Barbicans Ready in "),
        "{summary}"
    );
    // Writes only: a store's pass that the last status writes set off may read its parent
    // Barbican once inside the window (the operator's watch not yet showing its own write),
    // which a 2 s window right after a 0.3 s convergence catches; the long windows of the
    // README's runs read nothing. Two writes used to land here under load: a store's
    // `ConfigProjected` (the bench now waits for the stores too) and the last Barbican status
    // write, whose watch event reached the bench before the sim's audit counted its request
    // (the sim now counts a request when it arrives).
    assert!(
        summary.contains("steady state over 2s: 0 writes, "),
        "{summary}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["barbicans"], 3);
    let (writes, minimum) = (
        report["writes_per_barbican"].as_f64().unwrap(),
        report["minimum_writes_per_barbican"].as_f64().unwrap(),
    );
    assert!(
        writes >= minimum,
        "{writes} writes per Barbican, below the minimum {minimum}"
    );
    assert_eq!(report["steady_writes"], 0);
    // The operator's own count of its writes agrees with the API server's (the run fails
    // otherwise); a run that wrote nothing would agree trivially.
    assert!(
        report["operator_counted_writes"].as_u64().unwrap() as f64 >= 3.0 * minimum,
        "{report}"
    );
    // The convergence's requests, each Barbican's status writes with their bodies.
    let log = std::fs::read_to_string(&converging).unwrap();
    for n in 0..3 {
        let status = format!(
            "PATCH /apis/barbican.openstack.c5c3.io/v1alpha1/namespaces/bench/barbicans/b-{n}/status"
        );
        assert!(log.contains(&status), "{status} missing from\n{log}");
    }
    assert!(log.contains("    {\"status\":{\"conditions\""), "{log}");
    assert!(!log.contains("watch=true"), "watches are left out: {log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A text log that is not a terminal (a pod's log, a file) carries no colour escapes, so
/// `kubectl logs` shows plain lines.
#[test]
fn a_text_log_to_a_pipe_has_no_colour_escapes() {
    let kubeconfig = std::env::temp_dir().join(format!(
        "barbican-operator-nowhere-{}.kubeconfig",
        std::process::id()
    ));
    std::fs::write(
        &kubeconfig,
        barbican_features::backend::kubeconfig("http://127.0.0.1:1", Some("x")),
    )
    .unwrap();
    let output = Command::new(operator_binary())
        .arg("run")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["--metrics-bind-address", "127.0.0.1:0"])
        .args(["--health-probe-bind-address", "127.0.0.1:0"])
        .args(["--webhook-bind-address", "0", "--log-format", "text"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&kubeconfig);
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "nothing answers at port 1: {log}");
    assert!(log.contains("INFO") && log.contains("serving"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "colour escapes in a piped log: {log:?}"
    );
}
