//! Server-side apply: field ownership in `metadata.managedFields` (FieldsV1), merging an applied
//! configuration into the live object, removing what a manager stops applying, and conflicts
//! between managers.
//!
//! List semantics come from the CRD schema (`x-kubernetes-list-type`, `-map-keys`) or, for
//! built-in kinds, from the strategic merge keys; any other list is atomic.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::field_conflicts::smd_path;
pub use crate::field_conflicts::{Conflict, conflict_error};

/// How a list merges.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ListKind {
    Map(Vec<String>),
    Set,
    Atomic,
}

fn list_kind(schema: Option<&Value>, field: &str, items: &[Value]) -> ListKind {
    if let Some(schema) = schema {
        return match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("map") => ListKind::Map(
                schema["x-kubernetes-list-map-keys"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|k| k.as_str().map(String::from))
                    .collect(),
            ),
            Some("set") => ListKind::Set,
            _ => ListKind::Atomic,
        };
    }
    match crate::strategic::merge_key(field, items) {
        Some(key) => ListKind::Map(vec![key.to_string()]),
        None if field == "finalizers" => ListKind::Set,
        None => ListKind::Atomic,
    }
}

fn child_schema<'a>(schema: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    let schema = schema?;
    schema
        .get("properties")
        .and_then(|p| p.get(key))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
}

fn item_key(item: &Value, keys: &[String]) -> String {
    let mut map = Map::new();
    for k in keys {
        if let Some(v) = item.get(k) {
            map.insert(k.clone(), v.clone());
        }
    }
    format!("k:{}", Value::Object(map))
}

/// Fields the server owns or that never take part in apply.
fn ignored(path: &[String]) -> bool {
    // metadata itself is always there; the field manager strips its own membership.
    path == ["f:metadata", "."]
        || matches!(
            path.first().map(String::as_str),
            Some("f:apiVersion" | "f:kind")
        )
        || (path.first().map(String::as_str) == Some("f:metadata")
            && matches!(
                path.get(1).map(String::as_str),
                Some(
                    "f:managedFields"
                        | "f:resourceVersion"
                        | "f:uid"
                        | "f:creationTimestamp"
                        | "f:generation"
                        | "f:name"
                        | "f:namespace"
                        | "f:deletionTimestamp"
                        | "f:deletionGracePeriodSeconds"
                        | "f:selfLink"
                )
            ))
}

/// Every leaf field path of `value` (FieldsV1 path elements: `f:`, `k:`, `v:`, `.`).
pub fn leaves(value: &Value, schema: Option<&Value>) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    walk(value, schema, "", &mut Vec::new(), &mut out, false);
    out.retain(|p| !ignored(p));
    out
}

/// The leaves of `value` and, as `<path>/.`, every map, struct and associative list under the
/// root that holds something: what an ordinary write can own (see [`crate::zero_values`]).
fn members(value: &Value, schema: Option<&Value>) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    walk(value, schema, "", &mut Vec::new(), &mut out, true);
    out.retain(|p| !ignored(p));
    out
}

fn walk(
    value: &Value,
    schema: Option<&Value>,
    field: &str,
    path: &mut Vec<String>,
    out: &mut BTreeSet<Vec<String>>,
    maps: bool,
) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            if maps && !path.is_empty() {
                path.push(".".into());
                out.insert(path.clone());
                path.pop();
            }
            for (k, v) in map {
                path.push(format!("f:{k}"));
                walk(v, child_schema(schema, k), k, path, out, maps);
                path.pop();
            }
        }
        Value::Array(items) if !items.is_empty() => match list_kind(schema, field, items) {
            ListKind::Map(keys) => {
                if maps {
                    path.push(".".into());
                    out.insert(path.clone());
                    path.pop();
                }
                let item_schema = schema.and_then(|s| s.get("items"));
                for item in items {
                    path.push(item_key(item, &keys));
                    path.push(".".into());
                    out.insert(path.clone());
                    path.pop();
                    if let Value::Object(fields) = item {
                        for (k, v) in fields {
                            path.push(format!("f:{k}"));
                            walk(v, child_schema(item_schema, k), k, path, out, maps);
                            path.pop();
                        }
                    }
                    path.pop();
                }
            }
            ListKind::Set => {
                if maps {
                    path.push(".".into());
                    out.insert(path.clone());
                    path.pop();
                }
                for item in items {
                    path.push(format!("v:{item}"));
                    out.insert(path.clone());
                    path.pop();
                }
            }
            ListKind::Atomic => {
                out.insert(path.clone());
            }
        },
        _ => {
            out.insert(path.clone());
        }
    }
}

/// The value at a path, if present.
pub fn value_at<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(value);
    };
    if first == "." {
        return Some(value);
    }
    let next = if let Some(field) = first.strip_prefix("f:") {
        value.get(field)?
    } else if let Some(key) = first.strip_prefix("k:") {
        let key: Map<String, Value> = serde_json::from_str(key).ok()?;
        value
            .as_array()?
            .iter()
            .find(|item| key.iter().all(|(k, v)| item.get(k) == Some(v)))?
    } else if let Some(v) = first.strip_prefix("v:") {
        let v: Value = serde_json::from_str(v).ok()?;
        value.as_array()?.iter().find(|item| **item == v)?
    } else {
        return None;
    };
    value_at(next, rest)
}

/// Removes the field at a path (a list item for `k:`/`v:` paths).
pub fn remove_at(value: &mut Value, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let is_item_end = rest.is_empty() || rest == ["."];
    if let Some(field) = first.strip_prefix("f:") {
        if rest.is_empty() {
            if let Some(map) = value.as_object_mut() {
                map.remove(field);
            }
        } else if let Some(child) = value.get_mut(field) {
            remove_at(child, rest);
        }
        return;
    }
    let Some(items) = value.as_array_mut() else {
        return;
    };
    let position = if let Some(key) = first.strip_prefix("k:") {
        let Ok(key) = serde_json::from_str::<Map<String, Value>>(key) else {
            return;
        };
        items
            .iter()
            .position(|item| key.iter().all(|(k, v)| item.get(k) == Some(v)))
    } else if let Some(v) = first.strip_prefix("v:") {
        let Ok(v) = serde_json::from_str::<Value>(v) else {
            return;
        };
        items.iter().position(|item| *item == v)
    } else {
        None
    };
    if let Some(i) = position {
        if is_item_end {
            items.remove(i);
        } else {
            remove_at(&mut items[i], rest);
        }
    }
}

/// After a removal, a map or list left empty goes too, unless somebody owns it as a value
/// of its own (an explicitly applied `{}`).
fn prune_emptied_parents(
    object: &mut Value,
    path: &[String],
    others: &BTreeSet<Vec<String>>,
    applied: &BTreeSet<Vec<String>>,
) {
    for depth in (1..path.len()).rev() {
        let parent = &path[..depth];
        if parent
            .last()
            .is_some_and(|p| p.starts_with("k:") || p.starts_with("v:"))
        {
            continue;
        }
        let empty = value_at(object, parent).is_some_and(|v| {
            v.as_object().is_some_and(|m| m.is_empty())
                || v.as_array().is_some_and(|a| a.is_empty())
        });
        let owned = others.contains(parent) || applied.contains(parent);
        if !empty || owned {
            return;
        }
        remove_at(object, parent);
    }
}

/// Merges an applied configuration into the live object with the schema's list semantics.
pub fn merge(live: &mut Value, applied: &Value, schema: Option<&Value>, field: &str) {
    match (live, applied) {
        (Value::Object(live), Value::Object(applied)) => {
            for (k, v) in applied {
                match live.get_mut(k) {
                    Some(existing) if !v.is_null() => {
                        merge(existing, v, child_schema(schema, k), k)
                    }
                    _ => {
                        live.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (Value::Array(live), Value::Array(applied)) => match list_kind(schema, field, applied) {
            ListKind::Map(keys) => {
                let item_schema = schema.and_then(|s| s.get("items"));
                let key = |item: &Value| item_key(item, &keys);
                *live = merge_in_order(std::mem::take(live), applied, key, |l, a| {
                    merge(l, a, item_schema, "")
                });
            }
            ListKind::Set => {
                *live = merge_in_order(std::mem::take(live), applied, Value::to_string, |_, _| {});
            }
            ListKind::Atomic => *live = applied.clone(),
        },
        (live, applied) => *live = applied.clone(),
    }
}

/// Merges the items of an associative list (a list-map, by `key`; a set, by value) as
/// structured-merge-diff does since Kubernetes 1.24: the applied request's order wins. Walking
/// both lists, an item in both is merged where the request has it; an item only live stays
/// where it is relative to its neighbours; an item only applied comes in the request's order.
/// (Before, new items were appended and live order kept; kube-apiserver changed that so an
/// apply of `[a, b, c]` yields `[a, b, c]` whatever the live list's history.)
fn merge_in_order<K: PartialEq>(
    live: Vec<Value>,
    applied: &[Value],
    key: impl Fn(&Value) -> K,
    merge_item: impl Fn(&mut Value, &Value),
) -> Vec<Value> {
    let live_keys: Vec<K> = live.iter().map(&key).collect();
    let applied_keys: Vec<K> = applied.iter().map(&key).collect();
    let in_applied = |k: &K| applied_keys.contains(k);
    // The items in both, in the request's order: the next one expected from the live list.
    let shared: Vec<&K> = applied_keys
        .iter()
        .filter(|k| live_keys.contains(k))
        .collect();
    let mut next_shared = 0;
    let mut merged: Vec<usize> = Vec::new();
    let mut live: Vec<Option<Value>> = live.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(applied.len().max(live.len()));
    let take_merged = |live_item: Option<Value>, applied_item: &Value| match live_item {
        Some(mut item) => {
            merge_item(&mut item, applied_item);
            item
        }
        None => applied_item.clone(),
    };
    let (mut l, mut r) = (0, 0);
    while l < live_keys.len() || r < applied_keys.len() {
        if l < live_keys.len() && r < applied_keys.len() {
            if live_keys[l] == applied_keys[r] {
                out.push(take_merged(live[l].take(), &applied[r]));
                merged.push(r);
                l += 1;
                r += 1;
                next_shared += 1;
                continue;
            }
            // A shared item that comes later in the request: it is placed there.
            if in_applied(&live_keys[l])
                && shared.get(next_shared).is_some_and(|k| **k != live_keys[l])
            {
                l += 1;
                continue;
            }
        }
        if l < live_keys.len() {
            if !in_applied(&live_keys[l]) {
                if let Some(item) = live[l].take() {
                    out.push(item);
                }
                l += 1;
                continue;
            }
            if merged.iter().any(|&m| applied_keys[m] == live_keys[l]) {
                l += 1;
                continue;
            }
        }
        if r < applied_keys.len() {
            let at = live_keys.iter().position(|k| *k == applied_keys[r]);
            let live_item = at.and_then(|i| live[i].take());
            out.push(take_merged(live_item, &applied[r]));
            merged.push(r);
            if shared
                .get(next_shared)
                .is_some_and(|k| **k == applied_keys[r])
            {
                next_shared += 1;
            }
            r += 1;
        }
    }
    out
}

/// FieldsV1 JSON for a set of leaf paths.
pub fn to_fields_v1(paths: &BTreeSet<Vec<String>>) -> Value {
    let mut root = serde_json::Map::new();
    for path in paths {
        let mut node = &mut root;
        for element in path {
            // Every node this function inserts is an object, so the walk always finds one.
            let Value::Object(child) = node.entry(element.clone()).or_insert_with(|| json!({}))
            else {
                break;
            };
            node = child;
        }
    }
    Value::Object(root)
}

/// The leaf paths of FieldsV1 JSON.
pub fn from_fields_v1(fields: &Value) -> BTreeSet<Vec<String>> {
    fn walk(node: &Value, path: &mut Vec<String>, out: &mut BTreeSet<Vec<String>>) {
        match node.as_object() {
            Some(map) if !map.is_empty() => {
                for (k, v) in map {
                    path.push(k.clone());
                    walk(v, path, out);
                    path.pop();
                }
            }
            _ => {
                if !path.is_empty() {
                    out.insert(path.clone());
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(fields, &mut Vec::new(), &mut out);
    out
}

/// One manager's entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Managed {
    /// Field manager name.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// `status` for status-subresource writes.
    pub subresource: Option<String>,
    /// The owned leaf paths.
    pub fields: BTreeSet<Vec<String>>,
    /// When the entry last changed; `None` stamps the current time on write.
    pub time: Option<String>,
}

/// Reads `metadata.managedFields`.
pub fn managed(object: &Value) -> Vec<Managed> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| Managed {
            manager: e["manager"].as_str().unwrap_or_default().to_string(),
            operation: e["operation"].as_str().unwrap_or("Update").to_string(),
            subresource: e["subresource"].as_str().map(String::from),
            fields: from_fields_v1(&e["fieldsV1"]),
            time: e["time"].as_str().map(String::from),
        })
        .collect()
}

/// Writes `metadata.managedFields`, dropping managers that own nothing, in kube-apiserver's
/// order (`sortEncodedManagedFields`): `Apply` entries before `Update` ones, then by time, by
/// manager and by subresource.
pub fn set_managed(object: &mut Value, entries: &[Managed], api_version: &str, now: &str) {
    let mut sorted: Vec<&Managed> = entries.iter().collect();
    sorted.sort_by(|a, b| {
        let time = |e: &Managed| e.time.clone().unwrap_or_else(|| now.to_string());
        (
            a.operation.as_str(),
            time(a),
            a.manager.as_str(),
            &a.subresource,
        )
            .cmp(&(
                b.operation.as_str(),
                time(b),
                b.manager.as_str(),
                &b.subresource,
            ))
    });
    let list: Vec<Value> = sorted
        .into_iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let time = e.time.as_deref().unwrap_or(now);
            let mut entry = json!({"manager": e.manager, "operation": e.operation, "apiVersion": api_version, "time": time,
                "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(&e.fields)});
            if let Some(sub) = &e.subresource {
                entry["subresource"] = json!(sub);
            }
            entry
        })
        .collect();
    if list.is_empty() {
        if let Some(m) = object["metadata"].as_object_mut() {
            m.remove("managedFields");
        }
    } else {
        object["metadata"]["managedFields"] = json!(list);
    }
}

/// A manager's entry as kube-apiserver's conflict message names it (`printManager`).
fn described(entry: &Managed, api_version: &str, now: &str) -> String {
    let mut text = format!("{:?}", entry.manager);
    if let Some(sub) = &entry.subresource {
        text.push_str(&format!(" with subresource {sub:?}"));
    }
    if entry.operation == "Update" {
        let time = entry.time.as_deref().unwrap_or(now);
        text.push_str(&format!(" using {api_version} at {time}"));
    }
    text
}

/// Applies `applied` for `manager` to `live` (None: the object does not exist yet).
/// Returns the new object, or the conflicts when another manager owns a field with a
/// different value and `force` is off.
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    subresource: Option<&str>,
    force: bool,
    schema: Option<&Value>,
    now: &str,
) -> Result<Value, Vec<Conflict>> {
    let applied_fields: BTreeSet<Vec<String>> = leaves(applied, schema)
        .into_iter()
        .filter(|p| {
            let is_status = p.first().map(String::as_str) == Some("f:status");
            subresource == Some("status") || !is_status || schema.is_none()
        })
        .collect();
    let mut entries = live.map(managed).unwrap_or_default();
    let mut result = live.cloned().unwrap_or_else(|| json!({}));
    let mine = |e: &Managed| {
        e.manager == manager && e.operation == "Apply" && e.subresource.as_deref() == subresource
    };

    let mut conflicts = Vec::new();
    for entry in entries.iter_mut().filter(|e| !mine(e)) {
        let contested: Vec<Vec<String>> = entry
            .fields
            .intersection(&applied_fields)
            .cloned()
            .collect();
        for path in contested {
            // An element's own entry (`k:{…}` with `.`) says the element exists; both
            // managers then own it, and only its fields' values can conflict, as
            // structured-merge-diff compares leaves (the element as a whole differs as soon as
            // the server defaulted a field into it).
            if path.last().map(String::as_str) == Some(".") {
                continue;
            }
            let differs = value_at(&result, &path) != value_at(applied, &path);
            if differs && !force {
                let api_version = applied["apiVersion"].as_str().unwrap_or_default();
                conflicts.push(Conflict {
                    manager: entry.manager.clone(),
                    described: described(entry, api_version, now),
                    field: smd_path(&path),
                });
            } else if differs {
                entry.fields.remove(&path);
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(conflicts);
    }
    let previous: BTreeSet<Vec<String>> = entries
        .iter()
        .filter(|e| mine(e))
        .flat_map(|e| e.fields.clone())
        .collect();
    merge(&mut result, applied, schema, "");
    // Fields this manager applied before and no longer does go, unless someone else owns them.
    let others: BTreeSet<Vec<String>> = entries
        .iter()
        .filter(|e| !mine(e))
        .flat_map(|e| e.fields.clone())
        .collect();
    for path in previous.difference(&applied_fields) {
        // An empty map applied before (`deployment: {}`) and filled now is still applied: its
        // own path is no leaf any more, but it is the parent of the fields that are.
        let still_applied = applied_fields.iter().any(|a| a.starts_with(path));
        if !others.contains(path) && !still_applied {
            remove_at(&mut result, path);
            prune_emptied_parents(&mut result, path, &others, &applied_fields);
        }
    }
    entries.retain(|e| !mine(e));
    entries.push(Managed {
        manager: manager.into(),
        operation: "Apply".into(),
        subresource: subresource.map(String::from),
        fields: applied_fields,
        time: None,
    });
    set_managed(
        &mut result,
        &entries,
        applied["apiVersion"].as_str().unwrap_or_default(),
        now,
    );
    Ok(result)
}

/// Records an ordinary write (create, update, patch) by `manager`: the fields it changed become
/// its own, under operation `Update`, and leave every other manager.
pub fn record_update(
    before: Option<&Value>,
    after: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    schema: Option<&Value>,
    now: &str,
) {
    record(before, after, manager, "Update", subresource, schema, now);
}

/// Attributes what a mutating admission webhook changed (`before` → `after`) to the request's
/// `manager` under the request's `operation`, as kube-apiserver computes managedFields after
/// admission: a default a webhook filled into an applied object is owned by the applier's
/// `Apply` entry, so it goes when a later apply leaves its block out.
pub fn record_mutation(
    before: &Value,
    after: &mut Value,
    manager: &str,
    operation: &str,
    subresource: Option<&str>,
    schema: Option<&Value>,
    now: &str,
) {
    record(
        Some(before),
        after,
        manager,
        operation,
        subresource,
        schema,
        now,
    );
}

fn record(
    before: Option<&Value>,
    after: &mut Value,
    manager: &str,
    operation: &str,
    subresource: Option<&str>,
    schema: Option<&Value>,
    now: &str,
) {
    // What the write is compared with: the stored object, or for a create the kind's zero
    // value, in which a map or struct that is there is not "added" (crate::zero_values).
    let zero;
    let baseline = match before {
        Some(before) => before,
        None => {
            zero = match schema {
                Some(_) => json!({}),
                None => crate::zero_values::zero_object(
                    after["apiVersion"].as_str().unwrap_or_default(),
                    after["kind"].as_str().unwrap_or_default(),
                ),
            };
            &zero
        }
    };
    let old_leaves = members(baseline, schema);
    let new_leaves = members(after, schema);
    let changed: BTreeSet<Vec<String>> = new_leaves
        .iter()
        .filter(|p| {
            if p.last().map(String::as_str) == Some(".") {
                // A member of its own is added, never modified: its fields carry the changes.
                return value_at(baseline, &p[..p.len() - 1]).is_none();
            }
            !old_leaves.contains(*p) || value_at(baseline, p) != value_at(after, p)
        })
        .cloned()
        .collect();
    // As kube-apiserver's field manager: managedFields the write carries (non-empty) replace
    // the stored ones before the write's own changes are recorded on top. That is how a client
    // resets ownership (`[{}]` strips it) or moves fields between its own entries; a write
    // that carries none, or the list it read, leaves ownership as stored.
    let provided = after["metadata"]["managedFields"]
        .as_array()
        .is_some_and(|list| !list.is_empty());
    if changed.is_empty() && old_leaves == new_leaves {
        let stored = before.and_then(|b| b["metadata"].get("managedFields"));
        if provided && Some(&after["metadata"]["managedFields"]) != stored {
            let entries = managed(after);
            let api_version = after["apiVersion"].as_str().unwrap_or_default().to_string();
            set_managed(after, &entries, &api_version, now);
            return;
        }
        // Nothing changed: ownership (and its timestamps) stays exactly as stored.
        match stored {
            Some(fields) => after["metadata"]["managedFields"] = fields.clone(),
            None => {
                if let Some(m) = after["metadata"].as_object_mut() {
                    m.remove("managedFields");
                }
            }
        }
        return;
    }
    let mut entries = if provided {
        managed(after)
    } else {
        before.map(managed).unwrap_or_default()
    };
    for entry in &mut entries {
        let kept = entry.fields.len();
        entry
            .fields
            .retain(|p| new_leaves.contains(p) && !changed.contains(p));
        if entry.fields.len() != kept {
            entry.time = None;
        }
    }
    if !changed.is_empty() {
        match entries.iter_mut().find(|e| {
            e.manager == manager
                && e.operation == operation
                && e.subresource.as_deref() == subresource
        }) {
            Some(entry) => {
                entry.fields.extend(changed);
                entry.time = None;
            }
            None => entries.push(Managed {
                manager: manager.into(),
                operation: operation.into(),
                subresource: subresource.map(String::from),
                fields: changed,
                time: None,
            }),
        }
    }
    let api_version = after["apiVersion"].as_str().unwrap_or_default().to_string();
    set_managed(after, &entries, &api_version, now);
}
