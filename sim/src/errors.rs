//! API errors, answered as `metav1.Status` objects exactly as kube-apiserver shapes them.

use serde_json::{Value, json};

/// An API error: HTTP code, `Status.reason`, message, and for `Invalid` the field causes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `Status.reason` (`NotFound`, `AlreadyExists`, `Conflict`, ...).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
    /// `Status.details` (the kind, name and field causes of an `Invalid`).
    pub details: Option<Value>,
}

impl ApiError {
    /// An error without details.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }
    /// 404 for `resource/name`.
    pub fn not_found(resource: &str, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{resource} \"{name}\" not found")).about(resource, name)
    }
    /// 409 on create of an existing name.
    pub fn already_exists(resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{resource} \"{name}\" already exists"),
        )
        .about(resource, name)
    }
    /// 409 on a stale resourceVersion.
    pub fn conflict(resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
            ),
        )
        .about(resource, name)
    }

    /// With kube-apiserver's `details` of an error about one object: its name, and the
    /// resource's group and plural (`kind` holds the plural, as in kube-apiserver's Status).
    /// `resource` is `plural` or `plural.group`.
    fn about(mut self, resource: &str, name: &str) -> Self {
        let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
        let mut details = json!({"name": name, "kind": plural});
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        self.details = Some(details);
        self
    }
    /// 422 for an invalid object.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(422, "Invalid", message)
    }
    /// 400 for a malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }
    /// 410 for a watch or list from a resourceVersion past the kept history.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }
    /// 405 for a verb the resource does not serve.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }
    /// 415 for a body or patch type the sim does not implement.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }
    /// 401 without valid credentials.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 422 `Invalid` for `kind.group "name"`, one cause per `(field, detail, reason)`, worded as
    /// kube-apiserver words it: one cause inline, several in brackets.
    pub fn invalid_object(
        kind: &str,
        group: &str,
        name: &str,
        causes: &[(String, String, String)],
    ) -> Self {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let listed: Vec<String> = causes
            .iter()
            .map(|(field, detail, _)| format!("{field}: {detail}"))
            .collect();
        let summary = if listed.len() == 1 {
            listed[0].clone()
        } else {
            format!("[{}]", listed.join(", "))
        };
        Self {
            code: 422,
            reason: "Invalid",
            message: format!("{qualified} \"{name}\" is invalid: {summary}"),
            details: Some(json!({
                "name": name,
                "group": group,
                "kind": kind,
                "causes": causes
                    .iter()
                    .map(|(field, detail, reason)| json!({"reason": reason, "message": detail, "field": field}))
                    .collect::<Vec<_>>(),
            })),
        }
    }

    /// The `Status` object.
    pub fn status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}
