//! Tests of `barbican_sim::cluster::narrow`.

use serde_json::json;

use barbican_sim::cluster::narrow::*;

/// kube-apiserver's approval strategy keeps the spec and the issued certificate as
/// stored and takes only the conditions from the body.
#[test]
fn an_approval_takes_the_conditions_alone() {
    let narrow = &NARROW[0].2;
    let current = json!({"metadata": {"name": "c", "resourceVersion": "4"},
        "spec": {"signerName": "example.com/a", "request": "AAA="},
        "status": {"certificate": "QkJC"}});
    let sent = json!({"metadata": {"name": "c", "resourceVersion": "4"},
        "spec": {"signerName": "example.com/other"},
        "status": {"certificate": "", "conditions": [{"type": "Approved", "status": "True"}]}});
    let next = narrowed(narrow, &current, &sent);
    assert_eq!(next["spec"], current["spec"]);
    assert_eq!(next["status"]["certificate"], "QkJC");
    assert_eq!(next["status"]["conditions"][0]["type"], "Approved");
    assert_eq!(next["metadata"]["resourceVersion"], "4");
}

/// The ephemeral containers of a pod are written into a spec that had none, and nothing
/// else of the spec moves.
#[test]
fn ephemeral_containers_are_added_to_the_spec_alone() {
    let narrow = &NARROW[1].2;
    let current = json!({"metadata": {"name": "p"},
        "spec": {"containers": [{"name": "app", "image": "a"}]}});
    let sent = json!({"metadata": {"name": "p"},
        "spec": {"containers": [{"name": "app", "image": "changed"}],
                 "ephemeralContainers": [{"name": "debugger", "image": "busybox"}]}});
    let next = narrowed(narrow, &current, &sent);
    assert_eq!(next["spec"]["containers"][0]["image"], "a");
    assert_eq!(next["spec"]["ephemeralContainers"][0]["name"], "debugger");
    assert!(next["metadata"]["resourceVersion"].is_null());
}
