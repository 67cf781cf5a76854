//! Tests of `barbican_sim::rbac`.

use serde_json::json;

use barbican_sim::rbac::*;

fn request(method: &str, path: &str) -> Attributes {
    attributes(method, path).expect("a resource request")
}

#[test]
fn attributes_follow_kube_apiservers_request_info() {
    let get = request("GET", "/api/v1/namespaces/a/secrets/s");
    assert_eq!(
        (get.verb.as_str(), get.group.as_str(), get.resource.as_str()),
        ("get", "", "secrets")
    );
    assert_eq!((get.namespace.as_str(), get.name.as_str()), ("a", "s"));
    assert_eq!(request("GET", "/apis/apps/v1/deployments").verb, "list");
    let watch = attributes(
        "GET",
        "/apis/apps/v1/namespaces/a/deployments?watch=true&resourceVersion=1",
    )
    .unwrap();
    assert_eq!(
        (watch.verb.as_str(), watch.namespace.as_str()),
        ("watch", "a")
    );
    let token = request("POST", "/api/v1/namespaces/a/serviceaccounts/sa/token");
    assert_eq!(
        (token.verb.as_str(), token.rule_resource().as_str()),
        ("create", "serviceaccounts/token")
    );
    let proxy = request(
        "GET",
        "/api/v1/namespaces/a/services/api:9311/proxy/healthcheck",
    );
    assert_eq!(
        (proxy.verb.as_str(), proxy.rule_resource().as_str()),
        ("get", "services/proxy")
    );
    let forward = request("GET", "/api/v1/namespaces/a/pods/p-0/portforward");
    assert_eq!(
        (forward.verb.as_str(), forward.rule_resource().as_str()),
        ("create", "pods/portforward")
    );
    let namespace = request("GET", "/api/v1/namespaces/a");
    assert_eq!(
        (namespace.resource.as_str(), namespace.name.as_str()),
        ("namespaces", "a")
    );
    assert_eq!(
        request("DELETE", "/api/v1/namespaces/a/secrets").verb,
        "deletecollection"
    );
    assert_eq!(
        request("PATCH", "/apis/x.io/v1/namespaces/a/things/t/status").rule_resource(),
        "things/status"
    );
    assert_eq!(attributes("GET", "/apis/apps/v1"), None);
    assert_eq!(attributes("GET", "/version"), None);
}

#[test]
fn a_rule_matches_group_resource_verb_and_names() {
    let rule = json!({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]});
    assert!(rule_allows(
        &rule,
        &request("GET", "/api/v1/namespaces/a/secrets/s")
    ));
    assert!(!rule_allows(
        &rule,
        &request("DELETE", "/api/v1/namespaces/a/secrets/s")
    ));
    assert!(!rule_allows(
        &rule,
        &request("GET", "/apis/apps/v1/deployments")
    ));
    // A resource does not grant its subresources.
    let status = request("PATCH", "/api/v1/namespaces/a/secrets/s/status");
    assert!(!rule_allows(
        &json!({"apiGroups": [""], "resources": ["secrets"], "verbs": ["patch"]}),
        &status
    ));
    assert!(rule_allows(
        &json!({"apiGroups": [""], "resources": ["secrets/status"], "verbs": ["patch"]}),
        &status
    ));
    assert!(rule_allows(
        &json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}),
        &status
    ));
    let named = json!({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["s"]});
    assert!(rule_allows(
        &named,
        &request("GET", "/api/v1/namespaces/a/secrets/s")
    ));
    assert!(!rule_allows(
        &named,
        &request("GET", "/api/v1/namespaces/a/secrets/t")
    ));
}

#[test]
fn bindings_grant_cluster_wide_or_in_their_namespace() {
    let account = ServiceAccount {
        namespace: "ops".into(),
        name: "op".into(),
    };
    let subject = json!([{"kind": "ServiceAccount", "name": "op", "namespace": "ops"}]);
    let policy = Policy {
        cluster_roles: vec![
            json!({"metadata": {"name": "read"}, "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}),
        ],
        cluster_role_bindings: vec![
            json!({"metadata": {"name": "read"}, "roleRef": {"kind": "ClusterRole", "name": "read"}, "subjects": subject}),
        ],
        roles: vec![
            json!({"metadata": {"name": "leases", "namespace": "ops"}, "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}]}),
        ],
        role_bindings: vec![
            json!({"metadata": {"name": "leases", "namespace": "ops"}, "roleRef": {"kind": "Role", "name": "leases"}, "subjects": subject}),
        ],
    };
    assert!(policy.authorizes(&account, &request("GET", "/api/v1/namespaces/x/secrets/s")));
    let lease = "/apis/coordination.k8s.io/v1/namespaces/ops/leases/l";
    assert!(policy.authorizes(&account, &request("GET", lease)));
    let elsewhere = request("GET", "/apis/coordination.k8s.io/v1/namespaces/x/leases/l");
    assert!(!policy.authorizes(&account, &elsewhere));
    let other = ServiceAccount {
        namespace: "ops".into(),
        name: "other".into(),
    };
    assert!(!policy.authorizes(&other, &request("GET", "/api/v1/namespaces/x/secrets/s")));
    assert_eq!(
        forbidden_message(&account, &elsewhere),
        "leases \"l\" is forbidden: User \"system:serviceaccount:ops:op\" cannot get resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"x\""
    );
}
