//! Tests of `barbican_sim::kubelet::api_access` and the projected sources it adds.

use serde_json::{Value, json};

use barbican_sim::kubelet::{api_access::*, volumes};

fn spec() -> Value {
    json!({"containers": [
        {"name": "a", "volumeMounts": [{"name": "config", "mountPath": "/etc/a"}]},
        {"name": "b", "volumeMounts": [{"name": "own", "mountPath": MOUNT_PATH}]},
    ], "initContainers": [{"name": "init"}], "volumes": [{"name": "config", "emptyDir": {}}]})
}

#[test]
fn admission_adds_the_api_access_volume_where_nothing_is_mounted_there() {
    let mut spec = spec();
    admit(&mut spec, "x7k2p");
    assert_eq!(spec["serviceAccountName"], "default");
    let volume = &spec["volumes"][1];
    assert_eq!(volume["name"], "kube-api-access-x7k2p");
    let sources = volume["projected"]["sources"].as_array().unwrap();
    assert_eq!(sources[0]["serviceAccountToken"]["expirationSeconds"], 3607);
    assert_eq!(sources[1]["configMap"]["name"], ROOT_CA_CONFIG_MAP);
    assert_eq!(
        sources[2]["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"],
        "metadata.namespace"
    );
    let mount = json!({"name": "kube-api-access-x7k2p", "mountPath": MOUNT_PATH, "readOnly": true});
    assert_eq!(spec["containers"][0]["volumeMounts"][1], mount);
    assert_eq!(spec["initContainers"][0]["volumeMounts"][0], mount);
    // A container that mounts something of its own there keeps it.
    assert_eq!(
        spec["containers"][1]["volumeMounts"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_pod_that_opts_out_gets_no_token_but_keeps_its_service_account() {
    let mut spec = spec();
    spec["automountServiceAccountToken"] = json!(false);
    spec["serviceAccountName"] = json!("barbican-operator");
    admit(&mut spec, "x7k2p");
    assert_eq!(spec["serviceAccountName"], "barbican-operator");
    assert_eq!(spec["volumes"].as_array().unwrap().len(), 1);
    assert_eq!(
        spec["containers"][0]["volumeMounts"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn the_projected_volume_holds_the_token_the_ca_and_the_namespace() {
    let mut spec = spec();
    admit(&mut spec, "x7k2p");
    let pod = json!({"metadata": {"name": "p", "namespace": "tenant-b", "uid": "u-1"}});
    let lookup = |kind: &str, name: &str| -> Option<Value> {
        match (kind, name) {
            ("ServiceAccountToken", "") => Some(json!({"token": "eyJ.minted"})),
            ("ConfigMap", ROOT_CA_CONFIG_MAP) => Some(json!({"data": {"ca.crt": "PEM"}})),
            ("Pod", "") => Some(pod.clone()),
            _ => None,
        }
    };
    let volumes::Contents::Files(files) = volumes::contents(&spec["volumes"][1], &lookup).unwrap()
    else {
        panic!("files expected");
    };
    let got: Vec<(String, String, u32)> = files
        .into_iter()
        .map(|f| {
            (
                f.path.display().to_string(),
                String::from_utf8(f.data).unwrap(),
                f.mode,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("token".into(), "eyJ.minted".into(), 0o644),
            ("ca.crt".into(), "PEM".into(), 0o644),
            ("namespace".into(), "tenant-b".into(), 0o644),
        ]
    );
    // No token (the service account is gone): the pod waits, as on FailedMount.
    let tokenless = |kind: &str, name: &str| {
        if kind == "ServiceAccountToken" {
            None
        } else {
            lookup(kind, name)
        }
    };
    let error = volumes::contents(&spec["volumes"][1], &tokenless).unwrap_err();
    assert!(error.contains("no token"), "{error}");
    let downward = json!({"name": "d", "projected": {"sources": [{"downwardAPI": {"items": [
        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]}});
    assert!(
        volumes::contents(&downward, &lookup)
            .unwrap_err()
            .contains("metadata.labels")
    );
}

#[test]
fn every_container_learns_where_the_api_is() {
    let env = env();
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("KUBERNETES_SERVICE_HOST"), Some(SERVICE_HOST));
    assert_eq!(get("KUBERNETES_SERVICE_PORT"), Some("443"));
    assert_eq!(
        get("KUBERNETES_PORT"),
        Some("tcp://kubernetes.default.svc:443")
    );
    let ca = root_ca("tenant-b", "PEM");
    assert_eq!(ca["metadata"]["namespace"], "tenant-b");
    assert_eq!(ca["data"]["ca.crt"], "PEM");
}
