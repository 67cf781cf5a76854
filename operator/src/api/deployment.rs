//! Pod-level knobs shared by the API Deployment.

use k8s_openapi::api::{
    apps::v1::DeploymentStrategy,
    core::v1::{ResourceRequirements, TopologySpreadConstraint},
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// API pod count when `replicas` is unset.
pub const DEFAULT_REPLICAS: i32 = 3;
/// Grace period between SIGTERM and SIGKILL when `terminationGracePeriodSeconds` is unset.
pub const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
/// Length of the preStop sleep when `preStopSleepSeconds` is unset.
pub const DEFAULT_PRE_STOP_SLEEP_SECONDS: i64 = 5;
/// Memory request written by the defaulting webhook.
pub const DEFAULT_MEMORY_REQUEST: &str = "256Mi";
/// Memory limit written by the defaulting webhook.
pub const DEFAULT_MEMORY_LIMIT: &str = "512Mi";
/// CPU request written by the defaulting webhook.
pub const DEFAULT_CPU_REQUEST: &str = "100m";
/// CPU limit written by the defaulting webhook.
pub const DEFAULT_CPU_LIMIT: &str = "500m";

/// Most API pods a Barbican runs (its replicas, its HPA's bounds, the shared database and
/// cache shapes): each pod's workers hold connections on servers other tenants share.
pub const MAX_REPLICAS: i32 = 100;

/// Pod-level settings of the Barbican API Deployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentSpec {
    /// Desired API pod count; the defaulting webhook writes 3. Left to the HPA when
    /// `spec.autoscaling` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_REPLICAS))]
    pub replicas: Option<i32>,
    /// CPU and memory of the API container; the defaulting webhook writes 100m/500m CPU and
    /// 256Mi/512Mi memory (request/limit). Requests may not exceed limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Seconds between SIGTERM and SIGKILL; 30 when unset. Must exceed `preStopSleepSeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = super::api_server::MAX_SECONDS))]
    pub termination_grace_period_seconds: Option<i64>,
    /// Seconds the preStop hook sleeps so endpoints drain before SIGTERM; 5 when unset, 0
    /// disables it. Must be strictly less than the grace period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = super::api_server::MAX_SECONDS))]
    pub pre_stop_sleep_seconds: Option<i64>,
    /// Rollout strategy; RollingUpdate with maxUnavailable 0 and maxSurge 1 when unset.
    /// `Recreate` may not carry a `rollingUpdate` block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<DeploymentStrategy>,
    /// Pod spread. Unset: zone and hostname spread, maxSkew 1, ScheduleAnyway. Set (even to an
    /// empty list): used verbatim. Selectors must match the barbican and instance labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_spread_constraints: Option<Vec<TopologySpreadConstraint>>,
    /// PriorityClass of the API pods; it must exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub priority_class_name: Option<String>,
}

impl DeploymentSpec {
    /// The replica count with the default applied.
    pub fn effective_replicas(&self) -> i32 {
        self.replicas.unwrap_or(DEFAULT_REPLICAS)
    }

    /// The grace period with the default applied.
    pub fn effective_termination_grace_period_seconds(&self) -> i64 {
        self.termination_grace_period_seconds
            .unwrap_or(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS)
    }

    /// The preStop sleep with the default applied.
    pub fn effective_pre_stop_sleep_seconds(&self) -> i64 {
        self.pre_stop_sleep_seconds
            .unwrap_or(DEFAULT_PRE_STOP_SLEEP_SECONDS)
    }
}
