//! The `scale` subresource (`autoscaling/v1` Scale) of Deployments and of custom resources
//! that declare one: what `kubectl scale`, `kubectl autoscale` and kube-rs's
//! `get_scale`/`patch_scale`/`replace_scale` use. A write sets the parent's desired replicas
//! through the parent's own update (admission, field management, generation), as
//! kube-apiserver's scale storage does.

use super::*;
use crate::resources::ScalePaths;

/// The value at a JSON path of a scale subresource (`.spec.replicas`).
fn at<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    object.pointer(&path.replace('.', "/"))
}

/// A structured LabelSelector as the selector string a Scale carries (`app=x,tier in (a)`).
pub fn selector_string(selector: &Value) -> String {
    match selector.as_str() {
        Some(text) => text.to_string(),
        None => crate::selectors::label_selector_string(selector),
    }
}

/// The Scale of `object`.
fn scale_of(paths: &ScalePaths, object: &Value) -> Value {
    let replicas = |path: &str| at(object, path).and_then(Value::as_i64).unwrap_or(0);
    let meta = &object["metadata"];
    let mut status = json!({"replicas": replicas(&paths.status_replicas)});
    if let Some(selector) = paths
        .label_selector
        .as_deref()
        .and_then(|p| at(object, p))
        .filter(|s| !s.is_null())
    {
        status["selector"] = json!(selector_string(selector));
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"], "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": replicas(&paths.spec_replicas)},
        "status": status,
    })
}

/// Serves `<resource>/<name>/scale`: GET, PUT (a Scale) and PATCH (merge or JSON patch of
/// the Scale).
#[allow(clippy::too_many_arguments)]
pub(super) async fn serve_scale(
    cluster: &Cluster,
    target: &Target,
    name: &str,
    method: &Method,
    q: &BTreeMap<String, String>,
    headers: &HeaderMap,
    body: &Bytes,
    dry_run: bool,
) -> Result<Response, ApiError> {
    let t = &target.t;
    let Some(paths) = t.scale.clone() else {
        return Err(ApiError::not_found("subresource", "scale"));
    };
    let current = cluster.lock().store.get(t, &target.namespace, name)?;
    let scale = scale_of(&paths, &current);
    let wanted = match method.as_str() {
        "GET" => return Ok(json_response(200, &scale)),
        "PUT" => serde_json::from_slice::<Value>(body)
            .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))?,
        "PATCH" => {
            let content_type = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let patch: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))?;
            let mut patched = scale.clone();
            if content_type.starts_with("application/json-patch") {
                let ops: json_patch::Patch = serde_json::from_value(patch)
                    .map_err(|e| ApiError::bad_request(format!("not a JSON patch: {e}")))?;
                json_patch::patch(&mut patched, &ops)
                    .map_err(|e| ApiError::invalid(format!("the JSON patch failed: {e}")))?;
            } else {
                // A merge patch; a strategic merge patch of a Scale (kubectl scale's) merges
                // the same way, as a Scale has no lists.
                json_patch::merge(&mut patched, &patch);
            }
            patched
        }
        other => {
            return Err(ApiError::method_not_allowed(format!(
                "{other} is not supported on the scale subresource"
            )));
        }
    };
    if let Some(rv) = wanted["metadata"]["resourceVersion"]
        .as_str()
        .filter(|rv| !rv.is_empty())
        && Some(rv) != current["metadata"]["resourceVersion"].as_str()
    {
        return Err(ApiError::conflict(&resource_name(t), name));
    }
    let Some(replicas) = wanted["spec"]["replicas"].as_i64().filter(|r| *r >= 0) else {
        return Err(ApiError::invalid(format!(
            "Scale.autoscaling \"{name}\" is invalid: spec.replicas: Invalid value: {}: must be greater than or equal to 0",
            wanted["spec"]["replicas"]
        )));
    };
    let mut next = current.clone();
    let pointer = paths.spec_replicas.replace('.', "/");
    set_pointer(&mut next, &pointer, json!(replicas));
    track(
        t,
        &current,
        &mut next,
        &manager_of(q, headers),
        false,
        &cluster.clock.rfc3339(),
    );
    let parent = Target {
        t: t.clone(),
        namespace: target.namespace.clone(),
        name: Some(name.to_string()),
        subresource: None,
    };
    let author = Author {
        manager: manager_of(q, headers),
        operation: "Update",
    };
    match commit(
        cluster,
        &parent,
        Some(current),
        next,
        author,
        false,
        dry_run,
    )
    .await
    {
        Ok((object, warnings)) => {
            cluster.after_write(t, &object);
            Ok(with_warnings(
                json_response(200, &scale_of(&paths, &object)),
                &warnings,
            ))
        }
        Err(refused) => Ok(refusal(&refused)),
    }
}

/// Sets the value at a JSON pointer, creating the objects on the way.
pub fn set_pointer(object: &mut Value, pointer: &str, value: Value) {
    let mut at = object;
    let parts: Vec<&str> = pointer.split('/').filter(|p| !p.is_empty()).collect();
    let Some((last, path)) = parts.split_last() else {
        return;
    };
    for part in path {
        if !at[*part].is_object() {
            at[*part] = json!({});
        }
        at = &mut at[*part];
    }
    at[*last] = value;
}
