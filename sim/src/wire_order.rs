//! The order of keys in the JSON kube-apiserver writes.
//!
//! kube-apiserver encodes a built-in kind from its Go struct, so its keys come in the struct's
//! field order: `kind`, `apiVersion`, `metadata`, `spec`, …, `status`; a Status is `kind`,
//! `apiVersion`, `metadata`, `status`, `message`, `reason`, `details`, `code`; a watch event
//! is `type`, then `object`. A custom resource is a map, which Go's encoder writes in sorted
//! key order (as `serde_json`'s map does). A client that compares answer text (kube-rs's
//! `fetch_fails` compares a Status) sees the difference, so the sim writes built-in kinds in
//! their struct order: the first levels that every kind shares (the object, its metadata, a
//! Status's details); what lies deeper keeps the sorted order.

use std::{collections::BTreeSet, sync::LazyLock};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// `metav1.TypeMeta` then the object's own fields, in the order most kinds declare them.
const OBJECT: &[&str] = &["kind", "apiVersion", "metadata", "spec", "items"];
/// Fields a kind declares after all others (`status` ends every object with one).
const LAST: &[&str] = &["status"];
/// `metav1.Status`.
const STATUS: &[&str] = &[
    "kind",
    "apiVersion",
    "metadata",
    "status",
    "message",
    "reason",
    "details",
    "code",
];
/// `metav1.StatusDetails`.
const DETAILS: &[&str] = &[
    "name",
    "group",
    "kind",
    "uid",
    "causes",
    "retryAfterSeconds",
];
/// `metav1.ObjectMeta` (and `metav1.ListMeta`'s fields, which come after).
const META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
    "continue",
    "remainingItemCount",
];

/// The API groups of the built-in kinds (the core group is empty).
static BUILT_IN_GROUPS: LazyLock<BTreeSet<String>> = LazyLock::new(|| {
    let mut groups: BTreeSet<String> = crate::resources::builtins()
        .into_iter()
        .map(|t| t.group)
        .collect();
    groups.insert("meta.k8s.io".into());
    groups
});

/// Whether `object` is of a built-in kind, judged by the group of its `apiVersion`.
fn built_in(object: &Map<String, Value>) -> bool {
    let Some(api_version) = object.get("apiVersion").and_then(Value::as_str) else {
        return false;
    };
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    BUILT_IN_GROUPS.contains(group)
}

/// `value` as kube-apiserver writes it.
pub fn to_string(value: &Value) -> String {
    serde_json::to_string(&Ordered::object(value)).unwrap_or_else(|_| value.to_string())
}

/// `value` as a kube-apiserver answer's body: [`to_string`] and the newline Go's JSON encoder
/// ends every value with (a client that prints an error's body shows it).
pub fn body(value: &Value) -> String {
    let mut text = to_string(value);
    text.push('\n');
    text
}

/// A watch event of `kind` (`ADDED`, …) carrying `object`, as kube-apiserver writes it:
/// `type`, then `object` in its own order.
pub fn event(kind: &str, object: &Value) -> String {
    format!(
        "{{\"type\":{},\"object\":{}}}",
        Value::from(kind),
        to_string(object)
    )
}

/// A value serialised with `order`'s keys first (in that order), the other keys sorted, then
/// `last`'s keys; without an `order`, as serde_json writes it (sorted).
struct Ordered<'a> {
    value: &'a Value,
    order: Option<&'static [&'static str]>,
    last: &'static [&'static str],
    /// An object at the top of an answer or in a list's items (its metadata, a Status's
    /// details and a list's items take their own order; nothing deeper does).
    top: bool,
}

impl<'a> Ordered<'a> {
    /// An object at the top of an answer.
    fn object(value: &'a Value) -> Self {
        let (order, last) = match value.as_object() {
            Some(map) if built_in(map) => {
                if map.get("kind").and_then(Value::as_str) == Some("Status") {
                    (Some(STATUS), &[][..])
                } else {
                    (Some(OBJECT), LAST)
                }
            }
            _ => (None, &[][..]),
        };
        Ordered {
            value,
            order,
            last,
            top: true,
        }
    }

    /// How the value at `key` of this one is ordered.
    fn child(&self, key: &str, value: &'a Value) -> Ordered<'a> {
        let order = match (self.top, self.order, key) {
            (true, Some(_), "metadata") => Some(META),
            (true, Some(STATUS), "details") => Some(DETAILS),
            _ => None,
        };
        Ordered {
            value,
            order,
            last: &[],
            top: false,
        }
    }
}

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let items_of_list = self.top && self.order.is_some();
        match self.value {
            Value::Object(map) if self.order.is_some() => {
                let order = self.order.unwrap_or(&[]);
                let mut out = serializer.serialize_map(Some(map.len()))?;
                let first = order.iter().filter_map(|k| map.get_key_value(*k));
                let middle = map.iter().filter(|(k, _)| {
                    !order.contains(&k.as_str()) && !self.last.contains(&k.as_str())
                });
                let last = self.last.iter().filter_map(|k| map.get_key_value(*k));
                for (key, value) in first.chain(middle).chain(last) {
                    if key == "items" && items_of_list && value.is_array() {
                        let items: Vec<Ordered<'_>> = value
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(Ordered::object)
                            .collect();
                        out.serialize_entry(key, &items)?;
                    } else {
                        out.serialize_entry(key, &self.child(key, value))?;
                    }
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}
