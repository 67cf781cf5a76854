//! API errors, answered as `metav1.Status` objects exactly as kube-apiserver shapes them.

use serde_json::{Value, json};

/// An API error: HTTP code, `Status.reason`, and message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `Status.reason` (`NotFound`, `AlreadyExists`, `Conflict`, ...).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
}

impl ApiError {
    /// 404 for `resource/name`.
    pub fn not_found(resource: &str, name: &str) -> Self {
        Self {
            code: 404,
            reason: "NotFound",
            message: format!("{resource} \"{name}\" not found"),
        }
    }
    /// 409 on create of an existing name.
    pub fn already_exists(resource: &str, name: &str) -> Self {
        Self {
            code: 409,
            reason: "AlreadyExists",
            message: format!("{resource} \"{name}\" already exists"),
        }
    }
    /// 409 on a stale resourceVersion.
    pub fn conflict(resource: &str, name: &str) -> Self {
        Self {
            code: 409,
            reason: "Conflict",
            message: format!(
                "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
            ),
        }
    }
    /// 422 for an invalid object.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            code: 422,
            reason: "Invalid",
            message: message.into(),
        }
    }
    /// 400 for a malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self {
            code: 400,
            reason: "BadRequest",
            message: message.into(),
        }
    }
    /// 410 for a watch or list from a resourceVersion past the kept history.
    pub fn gone(message: impl Into<String>) -> Self {
        Self {
            code: 410,
            reason: "Expired",
            message: message.into(),
        }
    }
    /// 405 for a verb the resource does not serve.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self {
            code: 405,
            reason: "MethodNotAllowed",
            message: message.into(),
        }
    }
    /// 415 for a patch type the sim does not implement.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self {
            code: 415,
            reason: "UnsupportedMediaType",
            message: message.into(),
        }
    }
    /// 401 without valid credentials.
    pub fn unauthorized() -> Self {
        Self {
            code: 401,
            reason: "Unauthorized",
            message: "Unauthorized".into(),
        }
    }

    /// The `Status` object.
    pub fn status(&self) -> Value {
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        })
    }
}
