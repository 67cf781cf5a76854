//! Subresources through which a write changes one field of the object and nothing else:
//! a CertificateSigningRequest's `approval` (its `status.conditions`; `kubectl certificate
//! approve|deny`) and a Pod's `ephemeralcontainers` (its `spec.ephemeralContainers`; `kubectl
//! debug`). kube-apiserver's strategies for both copy the rest of the object from what is
//! stored (`PrepareForUpdate`), so a body that changes anything else changes only that field.

use super::*;

/// A subresource that writes one field.
pub struct Narrow {
    /// The subresource's name in the path.
    name: &'static str,
    /// The JSON pointer of the field it writes.
    pointer: &'static str,
    /// Whether the field is under `status` (the write is a status write).
    status: bool,
}

/// The narrow subresources, by resource.
pub const NARROW: [(&str, &str, Narrow); 2] = [
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        Narrow {
            name: "approval",
            pointer: "/status/conditions",
            status: true,
        },
    ),
    (
        "",
        "pods",
        Narrow {
            name: "ephemeralcontainers",
            pointer: "/spec/ephemeralContainers",
            status: false,
        },
    ),
];

/// Whether `subresource` of `t` is one of the narrow subresources.
pub(super) fn is_narrow(t: &ResourceType, subresource: &str) -> bool {
    narrow_of(t, subresource).is_some()
}

/// The narrow subresources of `t`, for discovery.
pub(super) fn subresources_of(t: &ResourceType) -> impl Iterator<Item = &'static str> + '_ {
    NARROW
        .iter()
        .filter(|(group, plural, _)| *group == t.group && *plural == t.plural)
        .map(|(_, _, n)| n.name)
}

fn narrow_of(t: &ResourceType, subresource: &str) -> Option<&'static Narrow> {
    NARROW
        .iter()
        .find(|(group, plural, n)| {
            *group == t.group && *plural == t.plural && n.name == subresource
        })
        .map(|(_, _, n)| n)
}

/// `current` with the narrow field taken from `sent` (removed when `sent` has none).
pub fn narrowed(narrow: &Narrow, current: &Value, sent: &Value) -> Value {
    let mut next = current.clone();
    match sent.pointer(narrow.pointer) {
        Some(value) => super::scale::set_pointer(&mut next, narrow.pointer, value.clone()),
        None => {
            let (parent, field) = narrow.pointer.rsplit_once('/').unwrap_or(("", ""));
            if let Some(map) = next.pointer_mut(parent).and_then(Value::as_object_mut) {
                map.remove(field);
            }
        }
    }
    // The body's resourceVersion is its precondition.
    next["metadata"]["resourceVersion"] = sent["metadata"]["resourceVersion"].clone();
    next
}

/// Serves `<resource>/<name>/<narrow subresource>`: GET (the object), PUT (the object, of
/// which the one field is taken) and PATCH (merge, JSON or strategic merge patch of the
/// object, likewise).
#[allow(clippy::too_many_arguments)]
pub(super) async fn serve_narrow(
    cluster: &Cluster,
    target: &Target,
    name: &str,
    subresource: &str,
    method: &Method,
    q: &BTreeMap<String, String>,
    headers: &HeaderMap,
    body: &Bytes,
    dry_run: bool,
) -> Result<Response, ApiError> {
    let t = &target.t;
    let Some(narrow) = narrow_of(t, subresource) else {
        return Err(ApiError::not_found("subresource", subresource));
    };
    let parent = Target {
        t: t.clone(),
        namespace: target.namespace.clone(),
        name: Some(name.to_string()),
        subresource: None,
    };
    let manager = manager_of(q, headers);
    let (current, sent) = match method.as_str() {
        "GET" => {
            let object = cluster.lock().store.get(t, &target.namespace, name)?;
            return Ok(json_response(200, &object));
        }
        "PUT" => {
            let mut sent: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))?;
            decodable(&sent)?;
            conform(t, &mut sent);
            let current = cluster.lock().store.get(t, &target.namespace, name)?;
            (current, sent)
        }
        "PATCH" => {
            let content_type = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let patch_body: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))?;
            let (current, sent) = patch(
                cluster,
                &parent,
                name,
                content_type,
                &patch_body,
                narrow.status,
                &manager,
            )?;
            let current = current.ok_or_else(|| ApiError::not_found(&resource_name(t), name))?;
            (current, sent)
        }
        other => {
            return Err(ApiError::method_not_allowed(format!(
                "{other} is not supported on the {subresource} subresource"
            )));
        }
    };
    let mut next = narrowed(narrow, &current, &sent);
    track(
        t,
        &current,
        &mut next,
        &manager,
        narrow.status,
        &cluster.clock.rfc3339(),
    );
    let author = Author {
        manager,
        operation: "Update",
    };
    let written = commit(
        cluster,
        &parent,
        Some(current),
        next,
        author,
        narrow.status,
        dry_run,
    )
    .await;
    Ok(answer(cluster, t, 200, written, &[], headers))
}
