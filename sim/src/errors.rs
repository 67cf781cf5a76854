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
    /// 404 for a path no resource is served at: kube-apiserver's router answers it, with the
    /// generic message and empty details.
    pub fn no_route() -> Self {
        let mut error = Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
        error.details = Some(json!({}));
        error
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

    /// 409 for a delete whose precondition does not hold (kube-apiserver's `BeforeDelete`):
    /// about the kind (not the resource), `what` is `UID` or `ResourceVersion`.
    pub fn precondition_failed(
        kind: &str,
        group: &str,
        name: &str,
        what: &str,
        expected: &str,
        actual: &str,
    ) -> Self {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let consequence = if what == "UID" {
            "The object might have been deleted and then recreated"
        } else {
            "The object might have been modified"
        };
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {qualified} \"{name}\": the {what} in the precondition ({expected}) does not match the {what} in record ({actual}). {consequence}"
            ),
        )
        .about(&qualified, name)
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
    /// 415 for a patch of a type the resource does not take. A built-in kind's route refuses
    /// it before any handler (go-restful: the code's text, empty details); a custom resource's
    /// handler names the types it takes (apiextensions-apiserver's `supportedTypes`).
    pub fn unsupported_patch_type(builtin: bool) -> Self {
        if builtin {
            let mut error = Self::new(415, "UnsupportedMediaType", "415: Unsupported Media Type");
            error.details = Some(json!({}));
            return error;
        }
        Self::new(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        )
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
        let mut details = json!({
            "name": name,
            "kind": kind,
            "causes": causes
                .iter()
                .map(|(field, detail, reason)| json!({"reason": reason, "message": detail, "field": field}))
                .collect::<Vec<_>>(),
        });
        // kube-apiserver leaves the core group and an options kind's empty name out
        // (`omitempty`).
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        if name.is_empty()
            && let Some(map) = details.as_object_mut()
        {
            map.remove("name");
        }
        Self {
            code: 422,
            reason: "Invalid",
            message: format!("{qualified} \"{name}\" is invalid: {summary}"),
            details: Some(details),
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

/// Whether Go's `unicode.IsPrint` holds for `c`: a graphic character or the ASCII space. Without
/// Unicode's category tables this leaves out what Rust calls control or white space and the
/// format characters (U+00AD, U+200B–U+200F, U+202A–U+202E, U+2060–U+2064, U+FEFF); an unassigned
/// code point counts as printable here, where Go says it is not.
pub fn go_is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    let format = matches!(c, '\u{AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}');
    !(c.is_control() || c.is_whitespace() || format)
}

/// `text` quoted as Go's `strconv.Quote` (and so `%q`) quotes it, as kube-apiserver writes a
/// bad value into a message: `\a \b \f \n \r \t \v`, `\xNN` below U+0080, `\uNNNN` and
/// `\UNNNNNNNN` above, printable characters as they are.
pub fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if go_is_print(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}
