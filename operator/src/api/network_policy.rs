//! Network isolation of the API pods.

use k8s_openapi::{
    api::networking::v1::NetworkPolicyEgressRule, apimachinery::pkg::apis::meta::v1::LabelSelector,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A NetworkPolicy on the API pods: ingress only on TCP 9311 from the listed sources; egress
/// derived from what Barbican talks to (DNS, the database, Keystone, the cache, the OpenBao
/// servers of the projected stores) with `additionalEgress` appended.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicySpec {
    /// Who may reach port 9311. At least one source is required: an empty list is refused
    /// rather than read as "nobody" or "everybody" (fail-closed).
    pub ingress: Vec<NetworkPolicyIngressSource>,
    /// Extra egress rules, in Kubernetes' own `NetworkPolicyEgressRule` shape, appended after
    /// the derived ones (brownfield backends, external APIs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_egress: Option<Vec<NetworkPolicyEgressRule>>,
}

/// One ingress peer: the pods of the selected namespaces, optionally narrowed by a pod
/// selector (both must match).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicyIngressSource {
    /// Selects the namespaces traffic may come from.
    pub namespace_selector: LabelSelector,
    /// Narrows the sources to matching pods inside those namespaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_selector: Option<LabelSelector>,
}
