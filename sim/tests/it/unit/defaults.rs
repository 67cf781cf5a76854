//! Tests of `barbican_sim::defaults`.

use serde_json::json;

use barbican_sim::defaults::*;

use super::builtin_type as builtin;

#[test]
fn a_deployment_gets_kube_apiservers_defaults_and_keeps_what_it_says() {
    let mut object = json!({"spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"spec": {"terminationGracePeriodSeconds": 5, "containers": [
            {"name": "c", "image": "ghcr.io/c5c3/barbican:2025.2",
             "ports": [{"containerPort": 9311}],
             "readinessProbe": {"httpGet": {"path": "/", "port": 9311}}},
            {"name": "d", "image": "busybox"}]}},
    }});
    apply(&builtin("deployments"), &mut object);
    let spec = &object["spec"];
    assert_eq!(spec["replicas"], 3);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(spec["strategy"]["rollingUpdate"]["maxSurge"], "25%");
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["terminationGracePeriodSeconds"], 5);
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["containers"][0]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(pod["containers"][1]["imagePullPolicy"], "Always");
    assert_eq!(pod["containers"][0]["ports"][0]["protocol"], "TCP");
    assert_eq!(
        pod["containers"][0]["readinessProbe"]["httpGet"]["scheme"],
        "HTTP"
    );
    assert_eq!(pod["containers"][0]["readinessProbe"]["periodSeconds"], 10);
}

#[test]
fn secrets_and_services_get_theirs() {
    let mut secret = json!({"data": {}});
    apply(&builtin("secrets"), &mut secret);
    assert_eq!(secret["type"], "Opaque");
    let mut service = json!({"spec": {"ports": [{"port": 9311}]}});
    apply(&builtin("services"), &mut service);
    assert_eq!(service["spec"]["sessionAffinity"], "None");
    assert_eq!(service["spec"]["ports"][0]["protocol"], "TCP");
    assert_eq!(service["spec"]["ports"][0]["targetPort"], 9311);
}

/// kube-apiserver starts a pod `Pending` with its QoS class, under the `default`
/// service account; a spec-less object gets no `spec: null`.
#[test]
fn a_new_pod_is_pending_with_its_qos_class() {
    let pods = builtin("pods");
    let mut pod = json!({"spec": {"containers": [{"name": "c", "image": "x:1",
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}});
    apply(&pods, &mut pod);
    let status = initial_status(&pods, &pod).unwrap();
    assert_eq!(status["phase"], "Pending");
    assert_eq!(status["qosClass"], "Guaranteed");
    assert_eq!(pod["spec"]["serviceAccountName"], "default");
    let burstable = json!({"spec": {"containers": [{"name": "c", "image": "x:1",
        "resources": {"requests": {"cpu": "1"}}}]}});
    assert_eq!(
        initial_status(&pods, &burstable).unwrap()["qosClass"],
        "Burstable"
    );
    let plain = json!({"spec": {"containers": [{"name": "c", "image": "x:1"}]}});
    assert_eq!(
        initial_status(&pods, &plain).unwrap()["qosClass"],
        "BestEffort"
    );
    assert_eq!(initial_status(&builtin("services"), &plain), None);
    let mut bare = json!({"metadata": {"name": "j"}});
    apply(&builtin("jobs"), &mut bare);
    assert_eq!(bare, json!({"metadata": {"name": "j"}}));
}
