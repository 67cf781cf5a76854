//! Horizontal pod autoscaling of the API Deployment.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The highest target utilization, percent of the request (a limit may allow ten times it).
pub const MAX_UTILIZATION: i32 = 1000;

/// Bounds and utilization targets of the HorizontalPodAutoscaler.
///
/// At least one target is required. `maxReplicas` also sizes the database user's
/// `max_user_connections`, since the HPA owns the replica count.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutoscalingSpec {
    /// Lower bound; `spec.deployment.replicas` when unset. May not exceed `maxReplicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = super::deployment::MAX_REPLICAS))]
    pub min_replicas: Option<i32>,
    /// Upper bound.
    #[schemars(range(min = 1, max = super::deployment::MAX_REPLICAS))]
    pub max_replicas: i32,
    /// Target average CPU utilization, percent of the request.
    #[serde(
        default,
        rename = "targetCPUUtilization",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(range(min = 1, max = MAX_UTILIZATION))]
    pub target_cpu_utilization: Option<i32>,
    /// Target average memory utilization, percent of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_UTILIZATION))]
    pub target_memory_utilization: Option<i32>,
}
