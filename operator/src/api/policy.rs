//! Custom oslo.policy rules.

use std::collections::BTreeMap;

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use super::refs::ConfigMapRefSpec;

/// Rule: a policy block must say something.
pub const POLICY_RULES_OR_CONFIGMAP_RULE: &str =
    "(has(self.rules) && size(self.rules) > 0) || has(self.configMapRef)";
/// Message of [`POLICY_RULES_OR_CONFIGMAP_RULE`].
pub const POLICY_RULES_OR_CONFIGMAP_MESSAGE: &str =
    "at least one of rules or configMapRef must be set";

/// oslo.policy overrides, rendered as `policy.yaml` into the config Secret with
/// `[oslo_policy] policy_file` pointing at it.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = (POLICY_RULES_OR_CONFIGMAP_RULE, POLICY_RULES_OR_CONFIGMAP_MESSAGE))]
pub struct PolicySpec {
    /// Inline rules: oslo.policy rule name (`secrets:get`) to rule (`role:admin`). They win over
    /// a ConfigMap entry of the same name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<BTreeMap<String, String>>,
    /// A ConfigMap carrying a `policy.yaml` key with further rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<ConfigMapRefSpec>,
}
