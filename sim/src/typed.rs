//! The k8s-openapi type of each built-in kind the sim serves, for what needs the type itself:
//! field validation reads a body into it, the OpenAPI documents describe it.

use serde::{Serialize, de::DeserializeOwned};

use crate::resources::ResourceType;

/// What a built-in kind's k8s-openapi type offers.
pub trait Typed: DeserializeOwned + Serialize + schemars::JsonSchema {}

impl<K: DeserializeOwned + Serialize + schemars::JsonSchema> Typed for K {}

/// Work done with a kind's type, chosen at run time by [`with_type`].
pub trait WithType {
    /// What the work gives.
    type Out;
    /// Does the work with `K`.
    fn with<K: Typed>(self) -> Self::Out;
}

/// Runs `f` with the k8s-openapi type of `t`; `None` for a kind without one here (custom
/// resources, and the few built-ins the sim serves without a type).
pub fn with_type<F: WithType>(t: &ResourceType, f: F) -> Option<F::Out> {
    use k8s_openapi::api::{
        admissionregistration::v1 as admission, apps::v1 as apps, autoscaling::v2 as autoscaling,
        batch::v1 as batch, certificates::v1 as certificates, coordination::v1 as coordination,
        core::v1 as core, discovery::v1 as discovery, networking::v1 as networking,
        policy::v1 as policy, rbac::v1 as rbac, scheduling::v1 as scheduling,
    };
    if t.schema.is_some() {
        return None;
    }
    Some(match (t.group.as_str(), t.kind.as_str()) {
        ("", "Namespace") => f.with::<core::Namespace>(),
        ("", "Secret") => f.with::<core::Secret>(),
        ("", "ConfigMap") => f.with::<core::ConfigMap>(),
        ("", "PersistentVolumeClaim") => f.with::<core::PersistentVolumeClaim>(),
        ("", "Service") => f.with::<core::Service>(),
        ("", "ServiceAccount") => f.with::<core::ServiceAccount>(),
        ("", "Event") => f.with::<core::Event>(),
        ("", "Pod") => f.with::<core::Pod>(),
        ("", "ResourceQuota") => f.with::<core::ResourceQuota>(),
        ("", "Node") => f.with::<core::Node>(),
        ("", "ComponentStatus") => f.with::<core::ComponentStatus>(),
        ("apiregistration.k8s.io", "APIService") => {
            f.with::<k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService>()
        }
        ("discovery.k8s.io", "EndpointSlice") => f.with::<discovery::EndpointSlice>(),
        ("", "ReplicationController") => f.with::<core::ReplicationController>(),
        ("apps", "Deployment") => f.with::<apps::Deployment>(),
        ("apps", "ReplicaSet") => f.with::<apps::ReplicaSet>(),
        ("apps", "StatefulSet") => f.with::<apps::StatefulSet>(),
        ("apps", "DaemonSet") => f.with::<apps::DaemonSet>(),
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            f.with::<certificates::CertificateSigningRequest>()
        }
        ("batch", "Job") => f.with::<batch::Job>(),
        ("batch", "CronJob") => f.with::<batch::CronJob>(),
        ("policy", "PodDisruptionBudget") => f.with::<policy::PodDisruptionBudget>(),
        ("autoscaling", "HorizontalPodAutoscaler") if t.version == "v1" => {
            f.with::<k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler>()
        }
        ("autoscaling", "HorizontalPodAutoscaler") => {
            f.with::<autoscaling::HorizontalPodAutoscaler>()
        }
        ("networking.k8s.io", "Ingress") => f.with::<networking::Ingress>(),
        ("networking.k8s.io", "NetworkPolicy") => f.with::<networking::NetworkPolicy>(),
        ("events.k8s.io", "Event") => f.with::<k8s_openapi::api::events::v1::Event>(),
        ("coordination.k8s.io", "Lease") => f.with::<coordination::Lease>(),
        ("scheduling.k8s.io", "PriorityClass") => f.with::<scheduling::PriorityClass>(),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            f.with::<admission::MutatingWebhookConfiguration>()
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            f.with::<admission::ValidatingWebhookConfiguration>()
        }
        ("rbac.authorization.k8s.io", "ClusterRole") => f.with::<rbac::ClusterRole>(),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => f.with::<rbac::ClusterRoleBinding>(),
        ("rbac.authorization.k8s.io", "Role") => f.with::<rbac::Role>(),
        ("rbac.authorization.k8s.io", "RoleBinding") => f.with::<rbac::RoleBinding>(),
        _ => return None,
    })
}
