//! Tests of `barbican_sim::validation`.

use serde_json::{Value, json};

use barbican_sim::validation::*;

use super::builtin_type as builtin;

/// Asserts that `admit` refuses the creation of `object` with 422 and a message containing
/// `expected`.
fn assert_refused(t: &barbican_sim::resources::ResourceType, object: &Value, expected: &str) {
    let refused = admit(t, object, None).unwrap_err();
    assert_eq!(refused.code, 422, "{}", refused.message);
    assert!(
        refused.message.contains(expected),
        "{expected}\n{}",
        refused.message
    );
}

/// kube-apiserver refuses invalid label keys and values and invalid data keys with 422.
#[test]
fn labels_and_data_keys_are_validated_as_kube_apiserver_validates_them() {
    let configmaps = builtin("configmaps");
    let good = json!({"metadata": {"name": "x",
        "labels": {"app.kubernetes.io/name": "barbican", "empty": ""},
        "annotations": {"barbican.c5c3.io/applied-hash": "a"}},
        "data": {"barbican.conf": "x", "KEY_NAME": "y"}});
    assert!(admit(&configmaps, &good, None).is_ok());
    let bad_label = json!({"metadata": {"name": "x", "labels": {"bad key!": "v"}}});
    let refused = admit(&configmaps, &bad_label, None).unwrap_err();
    assert_eq!(refused.code, 422);
    assert!(
        refused.message.starts_with(
            "ConfigMap \"x\" is invalid: metadata.labels: Invalid value: \"bad key!\": name part must consist of"
        ),
        "{}",
        refused.message
    );
    let bad_value = json!({"metadata": {"name": "x", "labels": {"a": "-v-"}}});
    assert!(
        admit(&configmaps, &bad_value, None)
            .unwrap_err()
            .message
            .contains("a valid label must be an empty string")
    );
    let bad_prefix = json!({"metadata": {"name": "x", "labels": {"Bad_Prefix/a": "v"}}});
    assert!(admit(&configmaps, &bad_prefix, None).is_err());
    let bad_key = json!({"metadata": {"name": "x"}, "data": {"bad key": "v"}});
    let refused = admit(&configmaps, &bad_key, None).unwrap_err();
    assert!(
        refused.message.contains(
            "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of"
        ),
        "{}",
        refused.message
    );
    let secret = json!({"metadata": {"name": "s"}, "stringData": {"..": "v"}});
    assert!(admit(&builtin("secrets"), &secret, None).is_err());
    // Data keys mean nothing to other kinds.
    let service = json!({"metadata": {"name": "s"}, "data": {"bad key": "v"}});
    assert!(admit(&builtin("services"), &service, None).is_ok());
}

/// An events.k8s.io Event's note is bounded in bytes of UTF-8, not characters: 1024 'é' are
/// 2048 bytes and refused, as kube-apiserver refuses them.
#[test]
fn an_event_note_past_one_kib_of_utf8_is_refused() {
    let events = barbican_sim::resources::builtins()
        .into_iter()
        .find(|t| t.group == "events.k8s.io" && t.kind == "Event")
        .unwrap();
    let event = |note: String| json!({"metadata": {"name": "e"}, "note": note});
    assert!(admit(&events, &event("a".repeat(1024)), None).is_ok());
    assert_refused(
        &events,
        &event("é".repeat(1024)),
        "note: Too long: may not be more than 1024 bytes",
    );
    assert!(admit(&events, &event("é".repeat(512)), None).is_ok());
}

/// Container and volume names in a pod template are DNS-1123 labels, as kube-apiserver
/// validates them: a container named like a path is refused before any kubelet sees it.
#[test]
fn pod_template_names_are_dns1123_labels() {
    let jobs = builtin("jobs");
    let job = |container: &str, volume: &str| {
        json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {
            "containers": [{"name": container, "image": "x"}],
            "volumes": [{"name": volume, "emptyDir": {}}]}}}})
    };
    assert!(admit(&jobs, &job("api", "config"), None).is_ok());
    assert_refused(
        &jobs,
        &job("../../../../../../var/log/dpkg", "config"),
        "spec.template.spec.containers[0].name: Invalid value: \"../../../../../../var/log/dpkg\": a lowercase RFC 1123 label",
    );
    assert!(
        admit(&jobs, &job("api", "Config_Volume"), None)
            .unwrap_err()
            .message
            .contains("spec.template.spec.volumes[0].name")
    );
    assert!(admit(&jobs, &job(&"a".repeat(64), "config"), None).is_err());
    assert!(is_dns1123_label("db-sync"));
    assert!(!is_dns1123_label("-a") && !is_dns1123_label("A") && !is_dns1123_label(""));
}

/// Ports, probe timings and the grace period as kube-apiserver validates them: what it refuses
/// never reaches the sim's kubelet.
#[test]
fn pod_template_ports_probes_and_grace_are_validated() {
    let jobs = builtin("jobs");
    let job = |container: Value, pod: Value| {
        let mut spec = json!({"containers": [container]});
        for (k, v) in pod.as_object().unwrap() {
            spec[k] = v.clone();
        }
        json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": spec}}})
    };
    let good = json!({"name": "api", "image": "x",
        "ports": [{"name": "barbican-api", "containerPort": 9311, "protocol": "TCP"}],
        "readinessProbe": {"httpGet": {"port": 9311}, "periodSeconds": 10, "successThreshold": 2},
        "livenessProbe": {"exec": {"command": ["true"]}, "successThreshold": 1}});
    assert!(
        admit(
            &jobs,
            &job(good.clone(), json!({"terminationGracePeriodSeconds": 0})),
            None
        )
        .is_ok()
    );
    let cases = [
        (
            json!({"name": "api", "image": "x", "ports": [{"containerPort": 0}]}),
            json!({}),
            "spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive",
        ),
        (
            json!({"name": "api", "image": "x", "ports": [{"containerPort": 1, "name": "barbican-api-http"}]}),
            json!({}),
            "ports[0].name: Invalid value: \"barbican-api-http\": must be no more than 15 characters",
        ),
        (
            json!({"name": "api", "image": "x", "ports": [{"containerPort": 1, "name": "a"}, {"containerPort": 2, "name": "a"}]}),
            json!({}),
            "ports[1].name: Duplicate value: \"a\"",
        ),
        (
            json!({"name": "api", "image": "x", "ports": [{"containerPort": 1, "protocol": "ICMP"}]}),
            json!({}),
            "ports[0].protocol: Unsupported value: \"ICMP\"",
        ),
        (
            json!({"name": "api", "image": "x", "livenessProbe": {"tcpSocket": {"port": 1}, "periodSeconds": -1}}),
            json!({}),
            "livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            json!({"name": "api", "image": "x", "startupProbe": {"tcpSocket": {"port": 1}, "successThreshold": 3}}),
            json!({}),
            "startupProbe.successThreshold: Invalid value: 3: must be 1",
        ),
        (
            json!({"name": "api", "image": "x", "readinessProbe": {"tcpSocket": {"port": 1}, "exec": {"command": ["true"]}}}),
            json!({}),
            "readinessProbe: Forbidden: may not specify more than 1 handler type",
        ),
        (
            json!({"name": "api", "image": "x", "readinessProbe": {"periodSeconds": 1}}),
            json!({}),
            "readinessProbe: Required value: must specify a handler type",
        ),
        (
            json!({"name": "api", "image": "x", "livenessProbe": {"tcpSocket": {"port": 1}, "initialDelaySeconds": 9_999_999_999u64}}),
            json!({}),
            "livenessProbe.initialDelaySeconds: Invalid value: 9999999999: must be no more than 2147483647",
        ),
        (
            good.clone(),
            json!({"terminationGracePeriodSeconds": -5}),
            "spec.template.spec.terminationGracePeriodSeconds: Invalid value: -5: must be greater than or equal to 0",
        ),
    ];
    for (container, pod, expected) in cases {
        assert_refused(&jobs, &job(container, pod), expected);
    }
}

/// kube-apiserver refuses a CRD of a group the Kubernetes project owns without the approval
/// annotation (the Gateway API's carry it), and one whose name is not `<plural>.<group>`.
#[test]
fn a_definition_of_a_protected_group_needs_the_approval_annotation() {
    let definitions = builtin("customresourcedefinitions");
    let definition = |group: &str, annotations: Value| {
        json!({"metadata": {"name": format!("widgets.{group}"), "annotations": annotations},
            "spec": {"group": group, "names": {"plural": "widgets", "kind": "Widget"}}})
    };
    for group in ["gateway.networking.k8s.io", "k8s.io", "x.kubernetes.io"] {
        assert_refused(
            &definitions,
            &definition(group, json!({})),
            "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation",
        );
        let approved = definition(
            group,
            json!({API_APPROVED_ANNOTATION: "https://github.com/kubernetes-sigs/gateway-api/pull/3328"}),
        );
        assert!(admit(&definitions, &approved, None).is_ok(), "{group}");
        // An update of a definition stored without it (before this check) may keep lacking it.
        let unapproved = definition(group, json!({}));
        assert!(admit(&definitions, &unapproved, Some(&unapproved)).is_ok());
    }
    for group in [
        "barbican.openstack.c5c3.io",
        "k8s.io.example.com",
        "notk8s.io",
    ] {
        assert!(
            admit(&definitions, &definition(group, json!({})), None).is_ok(),
            "{group}"
        );
    }
    let misnamed = json!({"metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"}}});
    assert_refused(
        &definitions,
        &misnamed,
        "metadata.name: Invalid value: \"gadgets.example.com\": must be spec.names.plural+\".\"+spec.group",
    );
}
