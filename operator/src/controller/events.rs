//! Kubernetes Events about the CRs, stamped by the operator's [`Clock`] so a scenario on
//! virtual time reads them in its own time line.

use std::sync::Arc;

use k8s_openapi::{
    api::{core::v1::ObjectReference, events::v1::Event},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
};
use kube::{Api, Client, Resource, ResourceExt, api::PostParams};

use crate::clock::Clock;

/// The reporting controller named on every event.
pub const REPORTING_CONTROLLER: &str = "barbican-operator";

/// Normal or Warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Something expected happened.
    Normal,
    /// Something a human should look at.
    Warning,
}

impl Severity {
    fn as_str(self) -> &'static str {
        match self {
            Severity::Normal => "Normal",
            Severity::Warning => "Warning",
        }
    }
}

/// Publishes events through one client.
#[derive(Clone)]
pub struct Events {
    client: Client,
    clock: Arc<dyn Clock>,
    instance: String,
}

/// The reference to an object events are about.
pub fn reference<K: Resource<DynamicType = ()>>(object: &K) -> ObjectReference {
    object.object_ref(&())
}

impl Events {
    /// Events written through `client`, stamped by `clock`, reported by `instance` (the pod).
    pub fn new(client: Client, clock: Arc<dyn Clock>, instance: &str) -> Self {
        Self {
            client,
            clock,
            instance: instance.to_string(),
        }
    }

    /// Publishes one event about `regarding`; a failure is logged, never fatal: an event is a
    /// courtesy, the conditions carry the state.
    pub async fn publish(
        &self,
        regarding: &ObjectReference,
        severity: Severity,
        reason: &str,
        note: &str,
    ) {
        let namespace = regarding.namespace.clone().unwrap_or_default();
        let now = self.clock.now();
        let event = Event {
            metadata: ObjectMeta {
                generate_name: Some(format!("{}.", regarding.name.clone().unwrap_or_default())),
                namespace: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            type_: Some(severity.as_str().to_string()),
            reason: Some(reason.to_string()),
            note: Some(note.chars().take(1024).collect()),
            action: Some("Reconcile".to_string()),
            regarding: Some(regarding.clone()),
            reporting_controller: Some(REPORTING_CONTROLLER.to_string()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        };
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        if let Err(error) = api.create(&PostParams::default(), &event).await {
            tracing::warn!(%error, reason, object = regarding.name.as_deref().unwrap_or(""), "publishing an event failed");
        }
    }
}

/// The name an event's object goes by in logs.
pub fn describe<K: Resource>(object: &K) -> String {
    format!(
        "{}/{}",
        object.namespace().unwrap_or_default(),
        object.name_any()
    )
}
