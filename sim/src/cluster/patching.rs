//! Who owns what a write sets, and the writes that are patches: field managers and
//! managedFields tracking, server-side apply, and merge, strategic merge and JSON patches
//! re-applied as kube-apiserver re-applies them after losing a race.

use super::*;

/// The field manager of a write: the `fieldManager` parameter, else the client's user agent
/// (up to the first `/`), as kube-apiserver derives it.
pub(super) fn manager_of(q: &BTreeMap<String, String>, headers: &HeaderMap) -> String {
    q.get("fieldManager")
        .cloned()
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| {
            headers
                .get(header::USER_AGENT)
                .and_then(|v| v.to_str().ok())
                .and_then(|ua| ua.split('/').next())
                .filter(|m| !m.is_empty())
                .unwrap_or("unknown")
                .to_string()
        })
}

/// Records the ownership of an ordinary write in `next`'s managedFields, judged on what the
/// store will keep of it (the status split applied).
pub(super) fn track(
    t: &ResourceType,
    current: &Value,
    next: &mut Value,
    manager: &str,
    status_write: bool,
    now: &str,
) {
    let mut effective = if t.status_subresource && status_write {
        let mut e = current.clone();
        e["status"] = next.get("status").cloned().unwrap_or(Value::Null);
        e
    } else {
        let mut e = next.clone();
        if t.status_subresource {
            match current.get("status") {
                Some(status) => e["status"] = status.clone(),
                None => {
                    if let Some(map) = e.as_object_mut() {
                        map.remove("status");
                    }
                }
            }
        }
        e
    };
    let subresource = (t.status_subresource && status_write).then_some("status");
    crate::apply::record_update(
        Some(current),
        &mut effective,
        manager,
        subresource,
        t.schema.as_deref(),
        now,
    );
    if !next["metadata"].is_object() {
        next["metadata"] = json!({});
    }
    match effective["metadata"].get("managedFields") {
        Some(fields) => next["metadata"]["managedFields"] = fields.clone(),
        None => {
            if let Some(metadata) = next["metadata"].as_object_mut() {
                metadata.remove("managedFields");
            }
        }
    }
}

/// `application/apply-patch+yaml`: server-side apply for the `fieldManager`, creating the
/// object when it does not exist. Returns the stored object (if any) and the one to write.
pub(super) fn server_side_apply(
    cluster: &Cluster,
    target: &Target,
    name: &str,
    body: &Bytes,
    q: &BTreeMap<String, String>,
    status_write: bool,
) -> Result<(Option<Value>, Value), ApiError> {
    let t = &target.t;
    // An apply without one was refused with the request's options (crate::request_options).
    let manager = q
        .get("fieldManager")
        .map(String::as_str)
        .unwrap_or_default();
    let force = flag(q, "force");
    let text = std::str::from_utf8(body)
        .map_err(|_| ApiError::bad_request("the applied configuration is not UTF-8"))?;
    let applied: Value = serde_json::from_str(text)
        .or_else(|_| serde_saphyr::from_str(text))
        .map_err(|e| {
            ApiError::bad_request(format!(
                "the applied configuration is neither JSON nor YAML: {e}"
            ))
        })?;
    decodable(&applied)?;
    if applied["metadata"]["name"]
        .as_str()
        .is_some_and(|n| n != name)
    {
        return Err(ApiError::bad_request(
            "the name in the applied configuration does not match the URL",
        ));
    }
    let current = cluster.lock().store.get(t, &target.namespace, name).ok();
    preconditions(t, name, &applied, current.as_ref())?;
    let subresource = status_write.then_some("status");
    let mut result = crate::apply::apply(
        current.as_ref(),
        &applied,
        manager,
        subresource,
        force,
        t.schema.as_deref(),
        &cluster.clock.rfc3339(),
    )
    .map_err(|conflicts| crate::apply::conflict_error(&conflicts))?;
    conform(t, &mut result);
    match current {
        Some(current) => {
            result["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
            Ok((Some(current), result))
        }
        None if status_write => Err(ApiError::not_found(&crate::store::resource_name(t), name)),
        None => {
            result["metadata"]["name"] = json!(name);
            Ok((None, result))
        }
    }
}

/// The preconditions an applied configuration may name, as kube-apiserver checks them: a
/// `metadata.uid` is the object the apply means (none existing is a conflict, another one's is
/// an immutable-field error), a `metadata.resourceVersion` the version it was computed on.
fn preconditions(
    t: &ResourceType,
    name: &str,
    applied: &Value,
    current: Option<&Value>,
) -> Result<(), ApiError> {
    let resource = crate::store::resource_name(t);
    let named = |field: &str| {
        applied["metadata"][field]
            .as_str()
            .filter(|value| !value.is_empty())
    };
    if let Some(uid) = named("uid") {
        match current.and_then(|c| c["metadata"]["uid"].as_str()) {
            None => {
                return Err(ApiError::new(
                    409,
                    "Conflict",
                    format!(
                        "Operation cannot be fulfilled on {resource} \"{name}\": uid mismatch: the provided object specified uid {uid}, and no existing object was found"
                    ),
                ));
            }
            Some(live) if live != uid => {
                return Err(ApiError::invalid(format!(
                    "{} \"{name}\" is invalid: metadata.uid: Invalid value: \"{uid}\": field is immutable",
                    t.kind
                )));
            }
            Some(_) => {}
        }
    }
    if let (Some(rv), Some(current)) = (named("resourceVersion"), current)
        && current["metadata"]["resourceVersion"].as_str() != Some(rv)
    {
        return Err(ApiError::conflict(&resource, name));
    }
    Ok(())
}

/// How often a patch is re-applied after losing a race to a concurrent write. kube-apiserver's
/// etcd3 `GuaranteedUpdate` re-runs the patch and admission until its compare-and-swap lands,
/// so a patch that names no resourceVersion does not fail on a busy object; the bound is
/// only there so that a sim under a fault that always conflicts cannot spin forever.
pub(super) const PATCH_RETRIES: usize = 100;

/// Whether a merge or JSON patch names the resourceVersion it expects (a precondition).
pub(super) fn names_resource_version(patch: &Value) -> bool {
    match patch {
        Value::Array(ops) => ops
            .iter()
            .any(|op| op["path"] == "/metadata/resourceVersion" && op["op"] != "remove"),
        other => other.pointer("/metadata/resourceVersion").is_some(),
    }
}

/// A merge, strategic merge or JSON patch. Returns the stored object and the one to write.
pub(super) fn patch(
    cluster: &Cluster,
    target: &Target,
    name: &str,
    content_type: &str,
    patch: &Value,
    status_write: bool,
    manager: &str,
) -> Result<(Option<Value>, Value), ApiError> {
    let current = cluster
        .lock()
        .store
        .get(&target.t, &target.namespace, name)?;
    let mut next = current.clone();
    let media = content_type.split(';').next().unwrap_or("").trim();
    match media {
        "application/merge-patch+json" => json_patch::merge(&mut next, patch),
        "application/strategic-merge-patch+json" if target.t.is_builtin() => {
            crate::strategic::apply(&mut next, patch)
        }
        "application/json-patch+json" => {
            let ops: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            // kube-apiserver answers a patch that does not apply (a failed `test`, a missing
            // path) with NewGenericServerResponse(422): a generic message, empty details.
            json_patch::patch(&mut next, &ops).map_err(|_| {
                let mut error = ApiError::invalid(
                    "the server rejected our request due to an error in our request",
                );
                error.details = Some(serde_json::json!({}));
                error
            })?;
        }
        // Refused before the body was read (verbs.rs).
        _ => return Err(ApiError::unsupported_patch_type(target.t.is_builtin())),
    }
    decodable(&next)?;
    conform(&target.t, &mut next);
    track(
        &target.t,
        &current,
        &mut next,
        manager,
        status_write,
        &cluster.clock.rfc3339(),
    );
    // A patch carries no precondition unless it names a resourceVersion itself.
    if patch.pointer("/metadata/resourceVersion").is_none() {
        next["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
    }
    Ok((Some(current), next))
}
