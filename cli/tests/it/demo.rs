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
