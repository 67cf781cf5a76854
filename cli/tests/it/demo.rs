//! `barbican-sim demo`, the README's first command: it converges the minimal example and shows
//! that a pass over the converged Barbican writes nothing.

use std::process::Command;

#[test]
fn the_demo_converges_the_minimal_example_and_its_idle_pass_writes_nothing() {
    let output = Command::new(env!("CARGO_BIN_EXE_barbican-sim"))
        .arg("demo")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "DeploymentReady     True  DeploymentReady",
        "BarbicanSecretStore/openbao-primary CredentialsReady    True  CredentialsAvailable",
        "BarbicanSecretStore/openbao-primary ConfigProjected     True  ConfigProjected",
        "BarbicanAPIReady    True  APIHealthy",
        "Deployment/barbican",
        "endpoint: http://barbican.openstack.svc.cluster.local:9311",
        "Ready: True AllReady",
        "DatabaseReady       True  DatabaseSynced",
        "sent 0 write(s) to the API server",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
}

#[test]
fn the_serving_demo_shows_the_printer_columns_to_kubectl_and_stops_on_ctrl_c() {
    use crate::common::{Sim, ok};
    use std::{process::Stdio, time::Duration};

    let dir = std::env::temp_dir().join(format!("barbican-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let _ = std::fs::remove_file(&kubeconfig);
    let child = Command::new(env!("CARGO_BIN_EXE_barbican-sim"))
        .arg("demo")
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut sim = Sim { child, kubeconfig };
    // The demo writes the kubeconfig once its Barbican has converged.
    for _ in 0..1200 {
        if sim.kubeconfig.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        sim.kubeconfig.exists(),
        "the demo never wrote its kubeconfig"
    );
    let table = ok(
        &sim,
        &["get", "barbicans,barbicansecretstores", "-n", "openstack"],
    );
    for column in ["NAME", "READY", "barbican", "openbao-primary"] {
        assert!(table.contains(column), "missing {column:?} in:\n{table}");
    }
    let ready_row = table
        .lines()
        .find(|l| l.starts_with("barbican.barbican.openstack.c5c3.io/barbican "))
        .unwrap_or_else(|| panic!("no Barbican row in:\n{table}"));
    assert!(ready_row.contains("True"), "{ready_row}");
    // Ctrl-C: the demo stops cleanly.
    let killed = Command::new("kill")
        .args(["-INT", &sim.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = sim.child.wait().unwrap();
    assert!(status.success(), "the demo exited with {status}");
    let mut out = String::new();
    std::io::Read::read_to_string(sim.child.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert!(out.contains("serving the cluster on http://"), "{out}");
    assert!(out.trim_end().ends_with("stopped"), "{out}");
}
