//! The admission chain a write passes: the stored webhook configurations, consulted with
//! what the request and the object say.

use super::*;

impl Cluster {
    /// The stored webhook configurations (mutating, validating), the labels of the target's
    /// namespace, and the registry to reach the webhooks through.
    pub(super) fn webhook_context(
        &self,
        target: &Target,
    ) -> ((Vec<Value>, Vec<Value>), Value, ServiceRegistry) {
        let state = self.lock();
        let list = |plural: &str| {
            state
                .registry
                .get("admissionregistration.k8s.io", "v1", plural)
                .map(|t| state.store.list(t, None))
                .unwrap_or_default()
        };
        let configurations = (
            list("mutatingwebhookconfigurations"),
            list("validatingwebhookconfigurations"),
        );
        let labels = state
            .registry
            .get("", "v1", "namespaces")
            .and_then(|t| state.store.get(t, "", &target.namespace).ok())
            .map(|n| n["metadata"]["labels"].clone())
            .unwrap_or(Value::Null);
        (configurations, labels, state.services.clone())
    }

    /// Runs the validating webhooks that apply to deleting `current`.
    pub(super) async fn admit_delete(
        &self,
        target: &Target,
        current: &Value,
        status_write: bool,
        dry_run: bool,
    ) -> Result<(), Refused> {
        let ((_, validating), namespace_labels, services) = self.webhook_context(target);
        if validating.is_empty() {
            return Ok(());
        }
        let facts = WebhookFacts {
            operation: "DELETE",
            name: current["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            namespace_labels,
            object: None,
            old: Some(current.clone()),
            subresource: status_write.then_some("status"),
            dry_run,
        };
        let request = facts.request(target);
        let mut warnings = Vec::new();
        for hook in crate::webhooks::matching(&validating, false, &request) {
            consult(&hook, &request, &services, &mut warnings).await?;
        }
        Ok(())
    }
}

/// Calls one webhook, collecting its warnings; a refusal carries every warning given so far.
/// Returns the patched object of a mutating webhook that patched.
pub(super) async fn consult(
    hook: &crate::webhooks::Hook,
    request: &crate::webhooks::Request<'_>,
    services: &ServiceRegistry,
    warnings: &mut Vec<String>,
) -> Result<Option<Value>, Refused> {
    match crate::webhooks::call(hook, request, services).await {
        Ok(answer) => {
            warnings.extend(answer.warnings);
            Ok(answer.patched)
        }
        Err(mut refused) => {
            refused.warnings.splice(0..0, warnings.drain(..));
            Err(refused)
        }
    }
}

/// The owned facts of a request the webhooks are asked about.
pub(super) struct WebhookFacts {
    pub(super) operation: &'static str,
    pub(super) name: String,
    pub(super) namespace_labels: Value,
    pub(super) object: Option<Value>,
    pub(super) old: Option<Value>,
    pub(super) subresource: Option<&'static str>,
    pub(super) dry_run: bool,
}

impl WebhookFacts {
    pub(super) fn request<'a>(&'a self, target: &'a Target) -> crate::webhooks::Request<'a> {
        let t = &target.t;
        crate::webhooks::Request {
            group: &t.group,
            version: &t.version,
            kind: &t.kind,
            resource: &t.plural,
            subresource: self.subresource,
            operation: self.operation,
            namespaced: t.namespaced,
            namespace: &target.namespace,
            name: &self.name,
            namespace_labels: &self.namespace_labels,
            object: self.object.as_ref(),
            old: self.old.as_ref(),
            dry_run: self.dry_run,
        }
    }
}
