//! Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`), as kube-apiserver
//! does it: a field the type does not declare is refused (`Strict`, kubectl's default: 400
//! `strict decoding error: unknown field "…"`), reported in a `Warning` header (`Warn`, the
//! server's default for clients that do not ask), or dropped silently (`Ignore`).
//!
//! A custom resource's fields are those of its CRD's schema (what pruning would drop). A
//! built-in kind's are those its k8s-openapi type declares: the body is read into that type
//! and written back, and a field that does not come back was not declared.

use serde_json::Value;

use crate::{errors::ApiError, resources::ResourceType};

/// What a request asks to happen to unknown fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Drop them silently.
    Ignore,
    /// Drop them with a `Warning` header each (the server's default).
    Warn,
    /// Refuse the request.
    Strict,
}

impl Level {
    /// The level the `fieldValidation` query parameter names; `Warn` when it names none.
    pub fn of(value: Option<&str>) -> Result<Self, ApiError> {
        match value {
            None | Some("") | Some("Warn") => Ok(Self::Warn),
            Some("Ignore") => Ok(Self::Ignore),
            Some("Strict") => Ok(Self::Strict),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of Ignore, Warn or Strict, not {other:?}"
            ))),
        }
    }
}

/// The warnings for the unknown and duplicated fields of `raw`, the body as sent (`body` is it
/// parsed, the last of each duplicated key kept), at `level`, or the Strict refusal.
pub fn check(
    t: &ResourceType,
    raw: &[u8],
    body: &Value,
    level: Level,
) -> Result<Vec<String>, ApiError> {
    if level == Level::Ignore {
        return Ok(Vec::new());
    }
    let unknown: Vec<String> = duplicate_fields(raw)
        .into_iter()
        .map(|path| format!("duplicate field \"{path}\""))
        .chain(
            unknown_fields(t, body)
                .into_iter()
                .map(|path| format!("unknown field \"{path}\"")),
        )
        .collect();
    if unknown.is_empty() || level == Level::Warn {
        return Ok(unknown);
    }
    let strict = format!("strict decoding error: {}", unknown.join(", "));
    // A built-in kind's decoder names the type it could not read, as kube-apiserver's does.
    Err(ApiError::bad_request(if t.schema.is_some() {
        strict
    } else {
        format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {strict}",
            kind = t.kind,
            version = t.version
        )
    }))
}

/// The dotted paths (`spec.template.spec.containers[0].imagee`) of `body`'s fields its type
/// does not declare.
pub fn unknown_fields(t: &ResourceType, body: &Value) -> Vec<String> {
    if let Some(schema) = &t.schema {
        return crate::schema::unknown_fields(schema, body);
    }
    match declared(t, body) {
        Some(declared) => {
            let mut found = Vec::new();
            missing_from(body, &declared, "", &mut found);
            found
        }
        None => Vec::new(),
    }
}

/// Removes from a built-in kind's `object` the fields its type does not declare, as
/// kube-apiserver's typed decoding drops them (custom resources are pruned by their schema
/// instead).
pub fn drop_undeclared(t: &ResourceType, object: &mut Value) {
    if t.schema.is_some() {
        return;
    }
    if let Some(declared) = declared(t, object) {
        remove_missing(object, &declared, true);
    }
}

fn remove_missing(body: &mut Value, declared: &Value, is_root: bool) {
    match (body, declared) {
        (Value::Object(fields), Value::Object(kept)) => {
            fields.retain(|key, value| {
                (is_root && matches!(key.as_str(), "apiVersion" | "kind"))
                    || kept.contains_key(key)
                    || is_empty(value)
            });
            for (key, value) in fields.iter_mut() {
                if let Some(back) = kept.get(key) {
                    remove_missing(value, back, false);
                }
            }
        }
        (Value::Array(items), Value::Array(kept)) => {
            for (item, back) in items.iter_mut().zip(kept) {
                remove_missing(item, back, false);
            }
        }
        _ => {}
    }
}

/// `body` read into the k8s-openapi type of `t` and written back; `None` for a kind without
/// a type here or a body the type cannot read (the store's own validation answers that).
fn declared(t: &ResourceType, body: &Value) -> Option<Value> {
    struct Through<'a>(&'a Value);
    impl crate::typed::WithType for Through<'_> {
        type Out = Option<Value>;
        fn with<K: crate::typed::Typed>(self) -> Option<Value> {
            let mut typed = self.0.clone();
            // The type checks apiVersion and kind itself; the route already decided them.
            if let Some(map) = typed.as_object_mut() {
                map.remove("apiVersion");
                map.remove("kind");
            }
            let typed: K = serde_json::from_value(typed).ok()?;
            serde_json::to_value(typed).ok()
        }
    }
    crate::typed::with_type(t, Through(body)).flatten()
}

/// Whether `value` says nothing: a type may leave such a field out when it writes itself
/// back, so its absence there does not make it unknown.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// Collects the paths of `body` that `declared` (the same object written back by its type)
/// lacks.
fn missing_from(body: &Value, declared: &Value, path: &str, found: &mut Vec<String>) {
    match (body, declared) {
        (Value::Object(fields), Value::Object(kept)) => {
            for (key, value) in fields {
                if path.is_empty() && matches!(key.as_str(), "apiVersion" | "kind") {
                    continue;
                }
                let here = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match kept.get(key) {
                    Some(back) => missing_from(value, back, &here, found),
                    None if !is_empty(value) => found.push(here),
                    None => {}
                }
            }
        }
        (Value::Array(items), Value::Array(kept)) => {
            for (i, (item, back)) in items.iter().zip(kept).enumerate() {
                missing_from(item, back, &format!("{path}[{i}]"), found);
            }
        }
        _ => {}
    }
}

/// The dotted paths of the keys a JSON document repeats within one object (`metadata.name`,
/// `spec.containers[0].image`), in document order; none for a body that is not JSON.
pub fn duplicate_fields(raw: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut reader = serde_json::Deserializer::from_slice(raw);
    let seed = Duplicates {
        path: String::new(),
        found: &mut found,
    };
    match serde::de::DeserializeSeed::deserialize(seed, &mut reader) {
        Ok(()) => found,
        Err(_) => Vec::new(),
    }
}

/// A walk over one JSON value that records the keys an object repeats, with their paths.
struct Duplicates<'a> {
    path: String,
    found: &'a mut Vec<String>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Duplicates<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Duplicates<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let seed = Duplicates {
                path: format!("{}[{i}]", self.path),
                found: &mut *self.found,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
            i = i.saturating_add(1);
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::BTreeSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let here = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if !seen.insert(key) {
                self.found.push(here.clone());
            }
            map.next_value_seed(Duplicates {
                path: here,
                found: &mut *self.found,
            })?;
        }
        Ok(())
    }
}
