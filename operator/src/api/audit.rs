//! Auditing of the API: keystonemiddleware's audit filter on `/v1`, which records every request
//! as a pair of CADF events (the request, then its outcome) naming who did what to which
//! resource.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use super::refs::SecretRefSpec;

/// Rule: the messaging driver names the Secret of its transport URL, and no other driver
/// names one.
pub const AUDIT_TRANSPORT_RULE: &str =
    "(has(self.driver) && self.driver == 'messaging') == has(self.transportUrlSecretRef)";
/// Message of [`AUDIT_TRANSPORT_RULE`].
pub const AUDIT_TRANSPORT_MESSAGE: &str =
    "audit.transportUrlSecretRef is required with driver messaging, and read by no other driver";
/// The key of the transport URL Secret read when `transportUrlSecretRef.key` is left out.
pub const DEFAULT_TRANSPORT_URL_KEY: &str = "transport_url";

/// Where the CADF events go.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AuditDriver {
    /// Each event is written to barbican's log as JSON (oslo.messaging's `log` notification
    /// driver, logger `oslo.messaging.notification.audit.http.*`), for the cluster's log
    /// shipping to collect. The default.
    #[default]
    Log,
    /// Each event is sent as a notification (oslo.messaging's `messagingv2` driver, topic
    /// `notifications`) over the transport URL of `transportUrlSecretRef` (RabbitMQ,
    /// `rabbit://user:password@host:5672/`), for a collector such as Panko or a SIEM bridge.
    Messaging,
}

impl AuditDriver {
    /// The oslo.messaging driver name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Log => "log",
            Self::Messaging => "messagingv2",
        }
    }
}

/// API auditing. Present: `/v1` is served through the audit pipeline; absent (the default):
/// no audit, as the shipped paste file routes it.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = (AUDIT_TRANSPORT_RULE, AUDIT_TRANSPORT_MESSAGE))]
pub struct AuditSpec {
    /// Where the CADF events go: `log` (the default) or `messaging`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<AuditDriver>,
    /// The Secret (and key, `transport_url` by default) holding the oslo.messaging transport
    /// URL the `messaging` driver sends over. It carries the broker's password, so it reaches
    /// the pods as an environment variable, never the rendered config; a changed value rolls
    /// the pods. Required with `messaging`, refused with `log`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_url_secret_ref: Option<SecretRefSpec>,
}

impl AuditSpec {
    /// The driver in effect.
    pub fn effective_driver(&self) -> AuditDriver {
        self.driver.unwrap_or_default()
    }

    /// The transport URL's Secret and key, when the messaging driver reads one.
    pub fn transport_url_source(&self) -> Option<(String, String)> {
        let reference = self.transport_url_secret_ref.as_ref()?;
        (self.effective_driver() == AuditDriver::Messaging).then(|| {
            (
                reference.name.clone(),
                reference
                    .key
                    .clone()
                    .unwrap_or_else(|| DEFAULT_TRANSPORT_URL_KEY.to_string()),
            )
        })
    }
}
