//! Strategic merge patches for built-in kinds: JSON merge patch, except that lists with a
//! patch merge key merge item by item, `metadata.finalizers` merges as a set, and the
//! `$patch`, `$setElementOrder` and `$deleteFromPrimitiveList` directives are honoured.
//!
//! kube-apiserver reads the merge keys from each Go type's struct tags. The sim keys them by
//! field name, which is unambiguous for the types it serves; `ports` picks `containerPort`
//! (containers) or `port` (Services) by what the items carry.

use serde_json::{Map, Value};

/// The merge key of a list field, or `None` for a list that is replaced whole.
pub fn merge_key(field: &str, items: &[Value]) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "topologySpreadConstraints" => "topologyKey",
        "hostAliases" => "ip",
        "ports" if items.iter().any(|i| i.get("containerPort").is_some()) => "containerPort",
        "ports" => "port",
        _ => return None,
    })
}

/// Primitive lists merged as sets.
fn is_merged_set(field: &str) -> bool {
    field == "finalizers"
}

/// Applies a strategic merge patch to `target`.
pub fn apply(target: &mut Value, patch: &Value) {
    match (target.as_object_mut(), patch.as_object()) {
        (Some(target), Some(patch)) => merge_maps(target, patch),
        _ => *target = strip_directives(patch),
    }
}

fn merge_maps(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    if patch.get("$patch").and_then(Value::as_str) == Some("replace") {
        *target = strip_directives(&Value::Object(patch.clone()))
            .as_object()
            .cloned()
            .unwrap_or_default();
        return;
    }
    for (key, value) in patch {
        if key.starts_with('$') {
            if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/")
                && let (Some(list), Some(remove)) = (
                    target.get_mut(field).and_then(Value::as_array_mut),
                    value.as_array(),
                )
            {
                list.retain(|item| !remove.contains(item));
            }
            continue;
        }
        if value.is_null() || value.get("$patch").and_then(Value::as_str) == Some("delete") {
            target.remove(key);
            continue;
        }
        match (target.get_mut(key), value) {
            (Some(Value::Object(existing)), Value::Object(patch)) => merge_maps(existing, patch),
            (Some(Value::Array(existing)), Value::Array(patch)) => {
                merge_lists(key, existing, patch)
            }
            _ => {
                target.insert(key.clone(), strip_directives(value));
            }
        }
    }
}

fn merge_lists(field: &str, existing: &mut Vec<Value>, patch: &[Value]) {
    if is_merged_set(field) {
        for item in patch {
            if !existing.contains(item) {
                existing.push(item.clone());
            }
        }
        return;
    }
    let Some(key) = merge_key(field, existing).or_else(|| merge_key(field, patch)) else {
        *existing = patch.iter().map(strip_directives).collect();
        return;
    };
    for item in patch {
        let id = item.get(key);
        let position = existing
            .iter()
            .position(|e| e.get(key) == id && id.is_some());
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (position, delete) {
            (Some(i), true) => {
                existing.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => apply(&mut existing[i], item),
            (None, false) => existing.push(strip_directives(item)),
        }
    }
}

/// The value without `$`-directives, as it is stored.
fn strip_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}
