//! A container's environment as the kubelet builds it: `envFrom` first, then `env` in order
//! (a later entry wins), each `value` as written or read from a Secret key, a ConfigMap key
//! or a field of the pod. Pure: the objects come through the caller's lookup.

use serde_json::Value;

use super::volumes::Lookup;

/// The variables of `container` in `pod`, or why the container cannot start yet (a missing
/// Secret or key, as kubelet's `CreateContainerConfigError` says).
pub fn container_env(
    container: &Value,
    pod: &Value,
    lookup: &Lookup<'_>,
) -> Result<Vec<(String, String)>, String> {
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut set = |name: String, value: String| {
        vars.retain(|(n, _)| *n != name);
        vars.push((name, value));
    };
    for source in container["envFrom"].as_array().into_iter().flatten() {
        let prefix = source["prefix"].as_str().unwrap_or("");
        let (kind, reference) = match (source.get("secretRef"), source.get("configMapRef")) {
            (Some(r), _) => ("Secret", r),
            (None, Some(r)) => ("ConfigMap", r),
            _ => continue,
        };
        let name = reference["name"].as_str().unwrap_or("");
        match lookup(kind, name) {
            Some(object) => {
                for (key, value) in values_of(kind, &object) {
                    set(format!("{prefix}{key}"), value);
                }
            }
            None if reference["optional"] == true => {}
            None => return Err(format!("{kind} {name:?} not found")),
        }
    }
    for entry in container["env"].as_array().into_iter().flatten() {
        let Some(name) = entry["name"].as_str() else {
            continue;
        };
        if let Some(value) = entry["value"].as_str() {
            set(name.to_string(), value.to_string());
            continue;
        }
        let from = &entry["valueFrom"];
        let keyed = [
            ("Secret", &from["secretKeyRef"]),
            ("ConfigMap", &from["configMapKeyRef"]),
        ];
        if let Some((kind, reference)) = keyed.into_iter().find(|(_, r)| r.is_object()) {
            let object = reference["name"].as_str().unwrap_or("");
            let key = reference["key"].as_str().unwrap_or("");
            let optional = reference["optional"] == true;
            let value = lookup(kind, object).and_then(|o| {
                values_of(kind, &o)
                    .into_iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v)
            });
            match value {
                Some(value) => set(name.to_string(), value),
                None if optional => {}
                None => {
                    return Err(format!(
                        "env {name:?}: {kind} {object:?} has no key {key:?} (or does not exist)"
                    ));
                }
            }
        } else if let Some(path) = from["fieldRef"]["fieldPath"].as_str() {
            let pointer = match path {
                "metadata.name" => "/metadata/name",
                "metadata.namespace" => "/metadata/namespace",
                "metadata.uid" => "/metadata/uid",
                "spec.nodeName" => "/spec/nodeName",
                "spec.serviceAccountName" => "/spec/serviceAccountName",
                "status.podIP" => "/status/podIP",
                "status.hostIP" => "/status/hostIP",
                other => {
                    return Err(format!(
                        "env {name:?}: fieldPath {other:?} is not supported"
                    ));
                }
            };
            let value = pod.pointer(pointer).and_then(Value::as_str).unwrap_or("");
            set(name.to_string(), value.to_string());
        }
    }
    Ok(vars)
}

/// The values of a Secret or ConfigMap as text (a value that is not UTF-8 cannot be an
/// environment variable's and is left out).
fn values_of(kind: &str, object: &Value) -> Vec<(String, String)> {
    let data = object["data"].as_object().into_iter().flatten();
    if kind == "Secret" {
        return data
            .filter_map(|(k, v)| {
                let bytes: k8s_openapi::ByteString = serde_json::from_value(v.clone()).ok()?;
                Some((k.clone(), String::from_utf8(bytes.0).ok()?))
            })
            .collect();
    }
    data.filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}
