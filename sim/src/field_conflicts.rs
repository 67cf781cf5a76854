//! Server-side apply's conflicts: a field another manager owns with a different value, and
//! the 409 kube-apiserver answers with them (`NewConflictError`), its paths printed as
//! structured-merge-diff prints them and its managers as `printManager` names them.

use serde_json::{Map, Value, json};

use crate::errors::ApiError;

/// A field another manager owns with a different value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The other manager's name.
    pub manager: String,
    /// The other manager as kube-apiserver names it in a conflict: `"name"`, with
    /// `with subresource "status"` and, for an `Update` entry, `using <apiVersion> at <time>`.
    pub described: String,
    /// The field as structured-merge-diff prints a path: `.data.k`, `.spec.ports[port=80]`.
    pub field: String,
}

/// A server-side apply refused for fields other managers own (kube-apiserver's
/// `NewConflictError`): one `FieldManagerConflict` cause per field; the message names one
/// conflict inline and several grouped by manager, managers sorted.
pub fn conflict_error(conflicts: &[Conflict]) -> ApiError {
    let causes: Vec<serde_json::Value> = conflicts
        .iter()
        .map(|c| {
            json!({"reason": "FieldManagerConflict", "message": format!("conflict with {}", c.described), "field": c.field})
        })
        .collect();
    let message = match conflicts {
        [one] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.described, one.field
        ),
        _ => {
            let mut managers: Vec<&str> = conflicts.iter().map(|c| c.described.as_str()).collect();
            managers.sort();
            managers.dedup();
            let mut lines = Vec::new();
            for manager in managers {
                lines.push(format!("conflicts with {manager}:"));
                for c in conflicts.iter().filter(|c| c.described == manager) {
                    lines.push(format!("- {}", c.field));
                }
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    let mut error = ApiError::new(409, "Conflict", message);
    error.details = Some(json!({ "causes": causes }));
    error
}

/// A path as structured-merge-diff prints it: `.field`, `[key="value",…]` for a list-map item,
/// `[=value]` for a set item.
pub(crate) fn smd_path(path: &[String]) -> String {
    let mut out = String::new();
    for element in path.iter().filter(|p| *p != ".") {
        if let Some(field) = element.strip_prefix("f:") {
            out.push('.');
            out.push_str(field);
        } else if let Some(key) = element.strip_prefix("k:") {
            let key: Map<String, Value> = serde_json::from_str(key).unwrap_or_default();
            let parts: Vec<String> = key.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(value) = element.strip_prefix("v:") {
            out.push_str(&format!("[={value}]"));
        }
    }
    out
}
