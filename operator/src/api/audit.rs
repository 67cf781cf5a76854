//! Auditing of the API: keystonemiddleware's audit filter on `/v1`, which records every request
//! as a pair of CADF events (the request, then its outcome) naming who did what to which
//! resource.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the CADF events go.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuditDriver {
    /// Each event is written to barbican's log as JSON (oslo.messaging's `log` notification
    /// driver, logger `oslo.messaging.notification.audit.http.*`), for the cluster's log
    /// shipping to collect. The default.
    #[default]
    Log,
}

impl AuditDriver {
    /// The oslo.messaging driver name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Log => "log",
        }
    }
}

/// API auditing. Present: `/v1` is served through the audit pipeline; absent (the default):
/// no audit, as the shipped paste file routes it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditSpec {
    /// Where the CADF events go: `log` (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<AuditDriver>,
}

impl AuditSpec {
    /// The driver in effect.
    pub fn effective_driver(&self) -> AuditDriver {
        self.driver.unwrap_or_default()
    }
}
