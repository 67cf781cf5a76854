//! A write's options (`CreateOptions`, `UpdateOptions`, `PatchOptions`, `DeleteOptions`),
//! validated as kube-apiserver validates them (`apimachinery/pkg/apis/meta/v1/validation`)
//! before it reads the body: an option it does not allow is a 422 naming the options kind and
//! the field, never silently taken as its default.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::errors::{ApiError, go_is_print, go_quote};

/// kube-apiserver's longest field manager name.
const FIELD_MANAGER_MAX: usize = 128;

/// A write's options kind, by its method.
fn options_kind(method: &str) -> Option<&'static str> {
    match method {
        "POST" => Some("CreateOptions"),
        "PUT" => Some("UpdateOptions"),
        "PATCH" => Some("PatchOptions"),
        "DELETE" => Some("DeleteOptions"),
        _ => None,
    }
}

/// `Unsupported value: <value>: supported values: "a", "b"` (`field.NotSupported`).
fn not_supported(field: &str, value: &str, supported: &[&str]) -> (String, String, String) {
    let listed: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
    (
        field.to_string(),
        format!(
            "Unsupported value: {value}: supported values: {}",
            listed.join(", ")
        ),
        "FieldValueNotSupported".to_string(),
    )
}

/// Checks the options of a write sent with `method` and query `q` (and, for a delete, its body's
/// `DeleteOptions`); `apply` is whether it is a server-side apply patch.
pub fn validate(
    method: &str,
    q: &BTreeMap<String, String>,
    body: Option<&Value>,
    apply: bool,
) -> Result<(), ApiError> {
    let Some(kind) = options_kind(method) else {
        return Ok(());
    };
    let mut causes = Vec::new();
    let manager = q
        .get("fieldManager")
        .map(String::as_str)
        .unwrap_or_default();
    if method == "PATCH" {
        if apply && manager.is_empty() {
            causes.push((
                "fieldManager".to_string(),
                "Required value: is required for apply patch".to_string(),
                "FieldValueRequired".to_string(),
            ));
        }
        if !apply && q.contains_key("force") {
            causes.push((
                "force".to_string(),
                "Forbidden: may not be specified for non-apply patch".to_string(),
                "FieldValueForbidden".to_string(),
            ));
        }
    }
    if method == "DELETE" {
        let policy = q
            .get("propagationPolicy")
            .map(String::as_str)
            .or_else(|| body.and_then(|b| b["propagationPolicy"].as_str()));
        if let Some(policy) =
            policy.filter(|p| !matches!(*p, "Foreground" | "Background" | "Orphan"))
        {
            causes.push(not_supported(
                "propagationPolicy",
                &go_quote(policy),
                &["Foreground", "Background", "Orphan", "nil"],
            ));
        }
    } else {
        if manager.len() > FIELD_MANAGER_MAX {
            causes.push((
                "fieldManager".to_string(),
                format!("Too long: may not be more than {FIELD_MANAGER_MAX} bytes"),
                "FieldValueTooLong".to_string(),
            ));
        }
        for (at, c) in manager.char_indices().filter(|(_, c)| !go_is_print(*c)) {
            causes.push((
                "fieldManager".to_string(),
                format!(
                    "Invalid value: {}: invalid character U+{:04X} (at position {at})",
                    go_quote(manager),
                    c as u32
                ),
                "FieldValueInvalid".to_string(),
            ));
        }
    }
    let mut dry_run: Vec<&str> = q.get("dryRun").map(String::as_str).into_iter().collect();
    if let Some(listed) = body.and_then(|b| b["dryRun"].as_array()) {
        dry_run.extend(listed.iter().filter_map(Value::as_str));
    }
    if dry_run.iter().any(|d| *d != "All") {
        let values: Vec<String> = dry_run.iter().map(|d| go_quote(d)).collect();
        causes.push(not_supported(
            "dryRun",
            &format!("[{}]", values.join(", ")),
            &["All"],
        ));
    }
    if method != "DELETE"
        && let Some(level) = q
            .get("fieldValidation")
            .filter(|l| !matches!(l.as_str(), "" | "Ignore" | "Warn" | "Strict"))
    {
        causes.push(not_supported(
            "fieldValidation",
            &go_quote(level),
            &["", "Ignore", "Strict", "Warn"],
        ));
    }
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid_object(kind, "meta.k8s.io", "", &causes))
}
