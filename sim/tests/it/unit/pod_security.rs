//! Tests of `barbican_sim::pod_security`.

use barbican_sim::pod_security::{Level, refusal, violations};
use serde_json::{Value, json};

/// A pod that meets `restricted`: non-root, no escalation, every capability dropped,
/// RuntimeDefault seccomp, secret and emptyDir volumes only.
fn hardened() -> Value {
    json!({"metadata": {"name": "p"}, "spec": {
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "volumes": [{"name": "conf", "secret": {"secretName": "s"}}, {"name": "tmp", "emptyDir": {}}],
        "containers": [{"name": "api", "image": "i", "securityContext": {
            "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}})
}

#[test]
fn a_hardened_pod_meets_every_level() {
    for level in [Level::Privileged, Level::Baseline, Level::Restricted] {
        assert!(violations(level, &hardened()).is_empty(), "{level:?}");
    }
}

/// What issue 61 started (`capabilities.add: [ALL]`, `seccompProfile: Unconfined`) and the
/// host's namespaces, paths and ports are refused at `baseline`, the sim's default.
#[test]
fn baseline_refuses_what_reaches_the_host() {
    let mut pod = hardened();
    pod["spec"]["containers"][0]["securityContext"] = json!({
        "capabilities": {"add": ["ALL", "NET_BIND_SERVICE"]},
        "seccompProfile": {"type": "Unconfined"}, "privileged": true});
    pod["spec"]["hostNetwork"] = json!(true);
    pod["spec"]["volumes"] = json!([{"name": "root", "hostPath": {"path": "/"}}]);
    pod["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80, "hostPort": 80}]);
    let found = violations(Level::Baseline, &pod).join("; ");
    for expected in [
        "host namespaces (hostNetwork=true)",
        "privileged (container \"api\" must not set securityContext.privileged=true)",
        "non-default capabilities (containers must not include \"ALL\" in securityContext.capabilities.add)",
        "hostPath volumes (volumes \"root\")",
        "hostPort (hostPorts 80)",
        "seccompProfile (container \"api\" must not set securityContext.seccompProfile.type to \"Unconfined\")",
    ] {
        assert!(found.contains(expected), "{expected} in {found}");
    }
    assert!(violations(Level::Privileged, &pod).is_empty());
}

/// `restricted` adds non-root, no escalation, dropped capabilities, a seccomp profile and
/// volume types, each naming the containers that fail it.
#[test]
fn restricted_names_each_check_a_plain_pod_fails() {
    let pod = json!({"metadata": {"name": "p"}, "spec": {
        "volumes": [{"name": "data", "nfs": {"server": "x", "path": "/"}}],
        "containers": [{"name": "a"}, {"name": "b", "securityContext": {"runAsUser": 0}}]}});
    assert!(
        violations(Level::Baseline, &pod).is_empty(),
        "a plain pod is baseline"
    );
    let found = violations(Level::Restricted, &pod);
    let text = found.join("; ");
    for expected in [
        "restricted volume types (volume \"data\" uses restricted volume type \"nfs\")",
        "allowPrivilegeEscalation != false (containers \"a\", \"b\" must set securityContext.allowPrivilegeEscalation=false)",
        "unrestricted capabilities (containers \"a\", \"b\" must set securityContext.capabilities.drop=[\"ALL\"])",
        "runAsNonRoot != true (pod or containers \"a\", \"b\" must set securityContext.runAsNonRoot=true)",
        "runAsUser=0",
        "seccompProfile (pod or containers \"a\", \"b\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")",
    ] {
        assert!(text.contains(expected), "{expected} in {text}");
    }
    assert_eq!(
        refusal("p", Level::Restricted, &found[..1]),
        "pods \"p\" is forbidden: violates PodSecurity \"restricted:latest\": restricted volume types (volume \"data\" uses restricted volume type \"nfs\")"
    );
}

#[test]
fn a_namespace_names_its_level_and_the_default_is_baseline() {
    assert_eq!(Level::of_namespace("a", &json!(null)), Level::Baseline);
    assert_eq!(
        Level::of_namespace(
            "a",
            &json!({"pod-security.kubernetes.io/enforce": "restricted"})
        ),
        Level::Restricted
    );
    assert_eq!(
        Level::of_namespace(
            "a",
            &json!({"pod-security.kubernetes.io/enforce": "privileged"})
        ),
        Level::Privileged
    );
    assert_eq!(
        Level::of_namespace("a", &json!({"pod-security.kubernetes.io/enforce": "bogus"})),
        Level::Restricted
    );
    assert_eq!(
        Level::of_namespace("kube-system", &json!(null)),
        Level::Privileged
    );
}
