//! Tests of `barbican_features::control_plane` that need no binaries; CI's run on a control
//! plane (ci/test.sh) checks the rest, and fails when one leaves a process, port or file.

use std::os::unix::process::CommandExt;

use barbican_features::control_plane::*;

#[test]
fn a_directory_without_the_binaries_is_named_with_what_is_missing() {
    let dir = std::env::temp_dir().join(format!("barbican-no-binaries-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let error = ControlPlane::start(&dir).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(error.contains("has no kube-apiserver"), "{error}");
    assert!(error.contains(CONTROL_PLANE_VAR), "{error}");
    assert!(error.contains("ci/install-control-plane.sh"), "{error}");
}

#[test]
fn processes_are_found_by_the_directory_their_command_line_names() {
    let dir = std::env::temp_dir().join(format!("barbican-named-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // kwokctl starts each component with paths under its workdir in its command line.
    let mut child = std::process::Command::new("sleep")
        .arg0(dir.join("component"))
        .arg("30")
        .spawn()
        .unwrap();
    // Until the child has exec'd, its command line is this test binary's: look until it shows
    // (a look at once failed under load in a full run).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let found = loop {
        let found = processes_naming(&dir);
        if found.iter().any(|(pid, _)| *pid == child.id()) || std::time::Instant::now() > deadline {
            break found;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(found.iter().any(|(pid, _)| *pid == child.id()), "{found:?}");
    assert!(processes_naming(&dir).is_empty());
}
