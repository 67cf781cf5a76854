//! A pod's way to the API, as a cluster gives it: the `kubernetes` Service (the cluster's API
//! over TLS, for service-account tokens only, see [`crate::cluster::Cluster::pod_router`]),
//! the `kube-api-access-<suffix>` projected volume kube-apiserver's ServiceAccount admission
//! adds to a pod (its token, the cluster's CA from the `kube-root-ca.crt` ConfigMap
//! kube-controller-manager publishes in every namespace, its namespace) and the
//! `KUBERNETES_SERVICE_*` variables the kubelet sets. Pure; the kubelet serves and writes.

use serde_json::{Value, json};

/// The name pods reach the API at (`/etc/hosts` names it; a cluster's kubelet gives the
/// Service's cluster IP instead, which the sim does not route).
pub const SERVICE_HOST: &str = "kubernetes.default.svc";

/// The `kubernetes` Service's port.
pub const SERVICE_PORT: u16 = 443;

/// Where the volume is mounted in every container.
pub const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The ConfigMap holding the cluster's CA in every namespace.
pub const ROOT_CA_CONFIG_MAP: &str = "kube-root-ca.crt";

/// The token's lifetime: kube-apiserver's 3607 seconds for the admission-added volume.
pub const TOKEN_SECONDS: u64 = 3607;

/// The variables the kubelet gives every container for the `kubernetes` Service.
pub fn env() -> Vec<(String, String)> {
    let port = SERVICE_PORT.to_string();
    let url = format!("tcp://{SERVICE_HOST}:{port}");
    vec![
        ("KUBERNETES_SERVICE_HOST".into(), SERVICE_HOST.into()),
        ("KUBERNETES_SERVICE_PORT".into(), port.clone()),
        ("KUBERNETES_SERVICE_PORT_HTTPS".into(), port.clone()),
        ("KUBERNETES_PORT".into(), url.clone()),
        (format!("KUBERNETES_PORT_{port}_TCP"), url),
        (format!("KUBERNETES_PORT_{port}_TCP_PROTO"), "tcp".into()),
        (
            format!("KUBERNETES_PORT_{port}_TCP_ADDR"),
            SERVICE_HOST.into(),
        ),
        (format!("KUBERNETES_PORT_{port}_TCP_PORT"), port),
    ]
}

/// What the ServiceAccount admission plugin does to a new pod's `spec`: `serviceAccountName`
/// defaults to `default`, and unless `automountServiceAccountToken` is false the
/// `kube-api-access-<suffix>` volume is added and mounted read-only in every container (and
/// init container) that has nothing at [`MOUNT_PATH`] already.
pub fn admit(spec: &mut Value, suffix: &str) {
    if spec["serviceAccountName"]
        .as_str()
        .is_none_or(str::is_empty)
    {
        spec["serviceAccountName"] = json!("default");
    }
    if spec["automountServiceAccountToken"] == false {
        return;
    }
    let name = format!("kube-api-access-{suffix}");
    let volume = json!({"name": name, "projected": {"defaultMode": 0o644, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_SECONDS, "path": "token"}},
        {"configMap": {"name": ROOT_CA_CONFIG_MAP, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}});
    let mut mounted = false;
    for list in ["initContainers", "containers"] {
        for container in spec[list].as_array_mut().into_iter().flatten() {
            let taken = container["volumeMounts"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|m| m["mountPath"] == MOUNT_PATH);
            if taken {
                continue;
            }
            let mount = json!({"name": name, "mountPath": MOUNT_PATH, "readOnly": true});
            match container["volumeMounts"].as_array_mut() {
                Some(mounts) => mounts.push(mount),
                None => container["volumeMounts"] = json!([mount]),
            }
            mounted = true;
        }
    }
    if mounted {
        match spec["volumes"].as_array_mut() {
            Some(volumes) => volumes.push(volume),
            None => spec["volumes"] = json!([volume]),
        }
    }
}

/// The `kube-root-ca.crt` ConfigMap of `namespace`, holding `ca_pem`.
pub fn root_ca(namespace: &str, ca_pem: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": ROOT_CA_CONFIG_MAP, "namespace": namespace,
            "annotations": {"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}},
        "data": {"ca.crt": ca_pem}})
}
