//! External exposure through a Gateway API HTTPRoute.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Path prefix matched when `path` is unset.
pub const DEFAULT_GATEWAY_PATH: &str = "/";

/// An HTTPRoute forwarding `hostname` to the `{name}` Service on port 9311.
///
/// Setting the block also changes what Barbican advertises: `[DEFAULT] host_href` and
/// `status.endpoint` become `https://{hostname}`. Removing it deletes the HTTPRoute.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySpec {
    /// The pre-existing Gateway the route attaches to.
    pub parent_ref: GatewayParentRefSpec,
    /// Externally reachable host name the route matches. No newline or carriage return: it is
    /// rendered verbatim as `[DEFAULT] host_href`.
    #[schemars(length(min = 1, max = 253))]
    pub hostname: String,
    /// Path prefix the route matches; `/` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub path: Option<String>,
    /// Copied verbatim onto the HTTPRoute's metadata, for implementation-specific settings such
    /// as rate limits or CORS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// The Gateway an HTTPRoute attaches to.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GatewayParentRefSpec {
    /// Name of the Gateway.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Namespace of the Gateway; the Barbican's namespace when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 63))]
    pub namespace: Option<String>,
    /// Listener of the Gateway to attach to; every compatible listener when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253))]
    pub section_name: Option<String>,
}
