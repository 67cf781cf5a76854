//! The fault rules applied to a request before it is served.

use super::*;

impl Cluster {
    /// Applies the fault rules to a request: `Some` answer when a rule answers in its place
    /// (after any latency a rule adds).
    pub(super) async fn inject_fault(
        &self,
        target: &Target,
        method: &Method,
        q: &BTreeMap<String, String>,
        agent: &str,
    ) -> Option<Response> {
        let name = target.name.as_deref().unwrap_or("");
        let verb = match (method.as_str(), name.is_empty()) {
            ("GET", true) if flag(q, "watch") => "watch",
            ("GET", true) => "list",
            ("GET", false) => "get",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", true) => "deletecollection",
            ("DELETE", false) => "delete",
            _ => return None,
        };
        let resource = match &target.subresource {
            Some(sub) => format!("{}/{sub}", target.t.plural),
            None => target.t.plural.clone(),
        };
        let request = crate::faults::Request {
            verb,
            resource: &resource,
            namespace: &target.namespace,
            name,
            agent,
        };
        let effect = self.lock().faults.decide(&request)?;
        let plural = resource_name(&target.t);
        let error = match effect {
            Effect::Latency(wait) => {
                tokio::time::sleep(wait).await;
                return None;
            }
            Effect::Timeout(wait) => {
                tokio::time::sleep(wait).await;
                ApiError::new(
                    504,
                    "Timeout",
                    "Timeout: request did not complete within the allotted timeout",
                )
            }
            Effect::Status { code, retry_after } => {
                let (reason, message) = match code {
                    409 => (
                        "Conflict",
                        format!(
                            "Operation cannot be fulfilled on {plural} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
                        ),
                    ),
                    429 => (
                        "TooManyRequests",
                        "Too many requests, please try again later.".to_string(),
                    ),
                    503 => (
                        "ServiceUnavailable",
                        "the server is currently unable to handle the request".to_string(),
                    ),
                    504 => (
                        "Timeout",
                        "Timeout: request did not complete within the allotted timeout".to_string(),
                    ),
                    404 => ("NotFound", format!("{plural} \"{name}\" not found")),
                    403 => (
                        "Forbidden",
                        format!("{plural} \"{name}\" is forbidden: injected by the sim"),
                    ),
                    401 => ("Unauthorized", "Unauthorized".to_string()),
                    _ => (
                        "InternalError",
                        format!("Internal error occurred: injected by the sim ({verb} {plural})"),
                    ),
                };
                let mut error = ApiError::new(code, reason, message);
                if let Some(seconds) = retry_after {
                    error.details =
                        Some(json!({"name": name, "kind": plural, "retryAfterSeconds": seconds}));
                    let mut response = error_response(&error);
                    if let Ok(value) = seconds.to_string().parse() {
                        response.headers_mut().insert(header::RETRY_AFTER, value);
                    }
                    return Some(response);
                }
                error
            }
        };
        Some(error_response(&error))
    }
}
