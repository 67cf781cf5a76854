//! What kube-apiserver's admission says of the pods the controllers ask the kubelet's side
//! to create: Pod Security Admission ([`crate::pod_security`]), and the Warning a controller
//! leaves on its object when a pod is refused.

use serde_json::{Value, json};

use super::text;

/// Pod Security Admission on a pod a controller creates ([`crate::pod_security`]): the refusal
/// kube-apiserver would answer its create with, if any.
pub(super) fn refusal(
    store: &crate::store::Store,
    registry: &crate::resources::Registry,
    namespace: &str,
    pod: &Value,
) -> Option<String> {
    let labels = registry
        .get("", "v1", "namespaces")
        .and_then(|t| store.get(t, "", namespace).ok())
        .map(|n| n["metadata"]["labels"].clone())
        .unwrap_or(Value::Null);
    let level = crate::pod_security::Level::of_namespace(namespace, &labels);
    let violations = crate::pod_security::violations(level, pod);
    (!violations.is_empty())
        .then(|| crate::pod_security::refusal(text(pod, "/metadata/name"), level, &violations))
}

/// The `FailedCreate` Warning a controller records on its object when a pod it creates is
/// refused; one per owner and message (kube-controller-manager's recorder folds repeats into
/// a count).
pub(super) fn refused_event(
    store: &mut crate::store::Store,
    registry: &crate::resources::Registry,
    owner: &Value,
    kind: &str,
    api_version: &str,
    refusal: &str,
) {
    let Some(t) = registry.get("", "v1", "events") else {
        return;
    };
    let namespace = text(owner, "/metadata/namespace");
    let uid = text(owner, "/metadata/uid");
    let digest = crate::tokens::hmac_sha256(uid.as_bytes(), refusal.as_bytes());
    let name = format!(
        "{}.{}",
        text(owner, "/metadata/name"),
        crate::tokens::base64url(&digest[..6])
            .to_lowercase()
            .replace(['-', '_'], "x")
    );
    let event = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"],
            "namespace": namespace, "uid": uid},
        "reason": "FailedCreate", "type": "Warning",
        "message": format!("Error creating: {refusal}"),
        "source": {"component": "replicaset-controller"},
        "count": 1,
    });
    let _ = store.create(t, namespace, event, false);
}
