//! Structural OpenAPI v3 validation of custom resources, as kube-apiserver applies it.
//!
//! Checks types (with `nullable`, `x-kubernetes-int-or-string` and
//! `x-kubernetes-preserve-unknown-fields`), `required`, `enum`, `pattern`, string, number, list
//! and map bounds, and `x-kubernetes-list-type` uniqueness. Unknown fields are reported as the
//! API server reports them under strict field validation (what kubectl asks for). CEL rules are
//! not evaluated here; they run after this, on the defaulted object.
//!
//! Error paths and messages follow the API server's `field.Error` wording, so a test written
//! against the sim reads the same as the message a user sees from a real cluster.

use std::fmt;

use regex::Regex;
use serde_json::{Map, Value};

/// One structural violation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// Dotted field path (`spec.database.port`, `spec.plugins[1]`).
    pub path: String,
    /// What is wrong, in the API server's words.
    pub message: String,
    /// The `Status` cause's reason (`FieldValueRequired`, `FieldValueTypeInvalid`, …).
    pub reason: &'static str,
}

impl SchemaError {
    /// Whether kube-apiserver skips a CRD's CEL rules for this error (its `hasBlockingErr`):
    /// a missing, unsupported, too long, too many or mistyped value; a pattern or bound
    /// violation lets the rules run.
    pub fn blocks_rules(&self) -> bool {
        matches!(
            self.reason,
            "FieldValueNotSupported"
                | "FieldValueRequired"
                | "FieldValueTooLong"
                | "FieldValueTooMany"
                | "FieldValueTypeInvalid"
        )
    }
}

/// The reason of a `field.Error` from its message's leading type (`Required value: …`).
fn reason_of(message: &str) -> &'static str {
    const REASONS: [(&str, &str); 6] = [
        ("Required value", "FieldValueRequired"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Too long", "FieldValueTooLong"),
        ("Too many", "FieldValueTooMany"),
        ("Duplicate value", "FieldValueDuplicate"),
        ("Internal error", "InternalError"),
    ];
    REASONS
        .iter()
        .find(|(prefix, _)| message.starts_with(prefix))
        .map_or("FieldValueInvalid", |(_, reason)| reason)
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Validates `value` against the OpenAPI v3 `schema` (an `openAPIV3Schema` node), returning every
/// violation found. `root` names the value in error paths (empty for a whole object).
pub fn validate(schema: &Value, value: &Value, root: &str) -> Vec<SchemaError> {
    let mut errors = Vec::new();
    walk(schema, value, root, &mut errors, true);
    errors
}

/// Applies the schema's `default`s to `value` the way the API server does on write and on read:
/// a missing property with a default gets it; defaults are applied inside every object, list
/// item and map value that is present, never inside one that is absent.
pub fn apply_defaults(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (key, prop) in properties {
                    if !map.contains_key(key)
                        && let Some(default) = prop.get("default")
                    {
                        map.insert(key.clone(), default.clone());
                    }
                    if let Some(field) = map.get_mut(key) {
                        apply_defaults(prop, field);
                    }
                }
            }
            if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                let known = schema.get("properties").and_then(Value::as_object);
                for (key, field) in map.iter_mut() {
                    if known.is_none_or(|k| !k.contains_key(key)) {
                        apply_defaults(additional, field);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                items
                    .iter_mut()
                    .for_each(|item| apply_defaults(item_schema, item));
            }
        }
        _ => {}
    }
}

/// Removes every field the schema does not declare, as the API server prunes custom
/// resources: except under `x-kubernetes-preserve-unknown-fields`, inside
/// `additionalProperties` maps, and `apiVersion`/`kind`/`metadata` at the root.
pub fn prune(schema: &Value, value: &mut Value) {
    remove_undeclared(schema, value, true);
}

/// The dotted paths (`spec.deployment.replicaz`, `spec.plugins[0].namee`) of the fields
/// [`prune`] would remove: what server-side field validation reports.
pub fn unknown_fields(schema: &Value, value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for_undeclared(schema, value, true, "", &mut |path| found.push(path));
    found
}

/// Whether `schema` keeps an undeclared field of an object: preserved unknown fields, or
/// `additionalProperties: true`.
fn keeps_undeclared(schema: &Value) -> bool {
    flag(schema, "x-kubernetes-preserve-unknown-fields")
        || schema.get("additionalProperties") == Some(&Value::Bool(true))
}

/// The schema of the field `key` of an object described by `schema`, when it declares one.
fn field_schema<'a>(schema: &'a Value, key: &str) -> Option<&'a Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| p.get(key))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
}

fn is_root_meta(is_root: bool, key: &str) -> bool {
    is_root && matches!(key, "apiVersion" | "kind" | "metadata")
}

/// Calls `found` with the path of every undeclared field of `value`.
fn for_undeclared(
    schema: &Value,
    value: &Value,
    is_root: bool,
    path: &str,
    found: &mut dyn FnMut(String),
) {
    match value {
        Value::Object(map) => {
            for (key, field) in map {
                if is_root_meta(is_root, key) {
                    continue;
                }
                let here = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match field_schema(schema, key) {
                    Some(declared) => for_undeclared(declared, field, false, &here, found),
                    None if !keeps_undeclared(schema) => found(here),
                    None => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    for_undeclared(item_schema, item, false, &format!("{path}[{i}]"), found);
                }
            }
        }
        _ => {}
    }
}

fn remove_undeclared(schema: &Value, value: &mut Value, is_root: bool) {
    match value {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                if is_root_meta(is_root, &key) {
                    continue;
                }
                match (field_schema(schema, &key), map.get_mut(&key)) {
                    (Some(declared), Some(field)) => remove_undeclared(declared, field, false),
                    (None, _) if !keeps_undeclared(schema) => {
                        map.remove(&key);
                    }
                    _ => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                items
                    .iter_mut()
                    .for_each(|item| remove_undeclared(item_schema, item, false));
            }
        }
        _ => {}
    }
}

fn push(errors: &mut Vec<SchemaError>, path: &str, message: String) {
    let reason = reason_of(&message);
    errors.push(SchemaError {
        path: if path.is_empty() {
            "<root>".into()
        } else {
            path.into()
        },
        message,
        reason,
    });
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn quoted(value: &Value) -> String {
    match value {
        Value::String(s) => crate::errors::go_quote(s),
        other => other.to_string(),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_matches(expected: &str, value: &Value) -> bool {
    match (expected, value) {
        ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("string", Value::String(_)) => true,
        ("boolean", Value::Bool(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        ("number", Value::Number(_)) => true,
        _ => false,
    }
}

fn walk(schema: &Value, value: &Value, path: &str, errors: &mut Vec<SchemaError>, is_root: bool) {
    if value.is_null() {
        if !flag(schema, "nullable") && !is_root {
            push(
                errors,
                path,
                "Invalid value: \"null\": must not be null".into(),
            );
        }
        return;
    }
    let int_or_string = flag(schema, "x-kubernetes-int-or-string");
    if int_or_string {
        if !(type_matches("integer", value) || type_matches("string", value)) {
            push(
                errors,
                path,
                format!(
                    "Invalid value: {}: must be an integer or a string",
                    quoted(value)
                ),
            );
            return;
        }
    } else if let Some(expected) = schema.get("type").and_then(Value::as_str)
        && !type_matches(expected, value)
    {
        push(
            errors,
            path,
            format!(
                "Invalid value: \"{}\": {path} in body must be of type {expected}: \"{}\"",
                json_type(value),
                json_type(value)
            ),
        );
        // A type error reads "Invalid value" but is its own type (`field.TypeInvalid`).
        if let Some(last) = errors.last_mut() {
            last.reason = "FieldValueTypeInvalid";
        }
        return;
    }

    check_enum(schema, value, path, errors);
    match value {
        Value::String(s) => check_string(schema, s, path, errors),
        Value::Number(_) => check_number(schema, value, path, errors),
        Value::Array(items) => check_array(schema, items, path, errors),
        Value::Object(map) => check_object(schema, map, path, errors),
        _ => {}
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let passing = branches
                .iter()
                .filter(|b| validate(b, value, path).is_empty())
                .count();
            let ok = match key {
                "allOf" => passing == branches.len(),
                "anyOf" => passing > 0,
                _ => passing == 1,
            };
            if !ok {
                push(
                    errors,
                    path,
                    format!(
                        "Invalid value: {}: must validate {key} of the schema",
                        quoted(value)
                    ),
                );
            }
        }
    }
}

fn check_enum(schema: &Value, value: &Value, path: &str, errors: &mut Vec<SchemaError>) {
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list = allowed.iter().map(quoted).collect::<Vec<_>>().join(", ");
        push(
            errors,
            path,
            format!(
                "Unsupported value: {}: supported values: {list}",
                quoted(value)
            ),
        );
    }
}

fn check_string(schema: &Value, s: &str, path: &str, errors: &mut Vec<SchemaError>) {
    let len = s.chars().count() as u64;
    if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
        && len > max
    {
        push(
            errors,
            path,
            format!("Too long: may not be more than {max} bytes"),
        );
    }
    if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
        && len < min
    {
        push(
            errors,
            path,
            format!(
                "Invalid value: {}: {path} in body should be at least {min} chars long",
                crate::errors::go_quote(s)
            ),
        );
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        thread_local! {
            static PATTERNS: std::cell::RefCell<crate::memo::Memo<Result<Regex, regex::Error>>> =
                std::cell::RefCell::default();
        }
        let compiled =
            PATTERNS.with_borrow_mut(|memo| memo.with(pattern, Regex::new, Clone::clone));
        match compiled {
            Ok(re) if !re.is_match(s) => {
                push(
                    errors,
                    path,
                    format!(
                        "Invalid value: {}: {path} in body should match '{pattern}'",
                        crate::errors::go_quote(s)
                    ),
                );
            }
            Ok(_) => {}
            Err(e) => push(
                errors,
                path,
                format!("Internal error: pattern '{pattern}' does not compile: {e}"),
            ),
        }
    }
}

fn check_number(schema: &Value, value: &Value, path: &str, errors: &mut Vec<SchemaError>) {
    let Some(n) = value.as_f64() else { return };
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
        let exclusive = flag(schema, "exclusiveMinimum");
        if n < min || (exclusive && n == min) {
            let op = if exclusive {
                "greater than"
            } else {
                "greater than or equal to"
            };
            push(
                errors,
                path,
                format!("Invalid value: {value}: {path} in body should be {op} {min}"),
            );
        }
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
        let exclusive = flag(schema, "exclusiveMaximum");
        if n > max || (exclusive && n == max) {
            let op = if exclusive {
                "less than"
            } else {
                "less than or equal to"
            };
            push(
                errors,
                path,
                format!("Invalid value: {value}: {path} in body should be {op} {max}"),
            );
        }
    }
}

fn check_array(schema: &Value, items: &[Value], path: &str, errors: &mut Vec<SchemaError>) {
    if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
        && items.len() as u64 > max
    {
        push(
            errors,
            path,
            format!("Too many: {}: must have at most {max} items", items.len()),
        );
    }
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
        && (items.len() as u64) < min
    {
        push(
            errors,
            path,
            format!(
                "Invalid value: {} items: {path} in body should have at least {min} items",
                items.len()
            ),
        );
    }
    if let Some(item_schema) = schema.get("items") {
        for (i, item) in items.iter().enumerate() {
            walk(item_schema, item, &format!("{path}[{i}]"), errors, false);
        }
    }
    match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("set") => {
            for (i, item) in items.iter().enumerate() {
                if items[..i].contains(item) {
                    push(
                        errors,
                        &format!("{path}[{i}]"),
                        format!("Duplicate value: {}", quoted(item)),
                    );
                }
            }
        }
        Some("map") => {
            let keys: Vec<&str> = schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|k| k.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let key_of = |item: &Value| {
                keys.iter()
                    .map(|k| item.get(*k).cloned().unwrap_or(Value::Null))
                    .collect::<Vec<_>>()
            };
            for (i, item) in items.iter().enumerate() {
                let key = key_of(item);
                if items[..i].iter().any(|earlier| key_of(earlier) == key) {
                    let shown = keys
                        .iter()
                        .zip(&key)
                        .map(|(k, v)| format!("\"{k}\":{v}"))
                        .collect::<Vec<_>>()
                        .join(",");
                    push(
                        errors,
                        &format!("{path}[{i}]"),
                        format!("Duplicate value: map[string]interface {{}}{{{shown}}}"),
                    );
                }
            }
        }
        _ => {}
    }
}

fn check_object(
    schema: &Value,
    map: &Map<String, Value>,
    path: &str,
    errors: &mut Vec<SchemaError>,
) {
    if let Some(max) = schema.get("maxProperties").and_then(Value::as_u64)
        && map.len() as u64 > max
    {
        push(
            errors,
            path,
            format!("Too many: {}: must have at most {max} items", map.len()),
        );
    }
    if let Some(min) = schema.get("minProperties").and_then(Value::as_u64)
        && (map.len() as u64) < min
    {
        push(
            errors,
            path,
            format!(
                "Invalid value: {}: {path} in body should have at least {min} properties",
                map.len()
            ),
        );
    }
    // kube-openapi's object validator: the fields that are not declared properties first
    // (against additionalProperties), then the declared ones, then `required`.
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
    let declared = |key: &str| properties.is_some_and(|p| p.contains_key(key));
    for (key, field) in map.iter().filter(|(key, _)| !declared(key)) {
        let field_path = child(path, key);
        // At the root the API server itself owns apiVersion, kind and metadata (ObjectMeta is
        // validated by its own rules), whatever the CRD schema says of them.
        if path.is_empty() && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if let Some(add) = additional.filter(|a| a.is_object()) {
            walk(add, field, &field_path, errors, false);
        } else if !(preserve || additional == Some(&Value::Bool(true))) {
            push(
                errors,
                &field_path,
                format!("unknown field \"{field_path}\""),
            );
        }
    }
    for (key, field) in map.iter().filter(|(key, _)| declared(key)) {
        if path.is_empty() && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        if let Some(prop) = properties.and_then(|p| p.get(key)) {
            walk(prop, field, &child(path, key), errors, false);
        }
    }
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(name) {
                push(errors, &child(path, name), "Required value".into());
            }
        }
    }
}
