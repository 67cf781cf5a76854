//! The API Service: port 9311, and a selector that starts wide (name and instance) and narrows
//! to the API component once the Deployment's rollout has converged, never widening again, so
//! a Service created before the pods carried the component label never loses its endpoints.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::{
        apps::v1::Deployment,
        core::v1::{Service, ServicePort, ServiceSpec},
    },
    apimachinery::pkg::util::intstr::IntOrString,
};

use super::labels;
use crate::api::names::API_PORT;

/// Whether a Deployment's rollout has converged: the status has seen the current generation,
/// it wants pods, and every one of them is updated.
pub fn converged(deployment: &Deployment) -> bool {
    let generation = deployment.metadata.generation.unwrap_or(0);
    let Some(status) = &deployment.status else {
        return false;
    };
    let replicas = status.replicas.unwrap_or(0);
    status.observed_generation.unwrap_or(0) >= generation
        && replicas > 0
        && status.updated_replicas.unwrap_or(0) == replicas
}

/// The selector to write: narrow once converged or once the live Service is already narrow.
pub fn selector(
    instance: &str,
    live_is_narrow: bool,
    rollout_converged: bool,
) -> BTreeMap<String, String> {
    if live_is_narrow || rollout_converged {
        let mut narrow = labels::selector(instance);
        narrow.insert(
            "app.kubernetes.io/component".into(),
            labels::API_COMPONENT.into(),
        );
        narrow
    } else {
        labels::selector(instance)
    }
}

/// The Service of the Barbican `name`: one unnamed TCP port 9311 → 9311.
pub fn service(name: &str, namespace: &str, selector: BTreeMap<String, String>) -> Service {
    Service {
        metadata: labels::child_metadata(name, namespace),
        spec: Some(ServiceSpec {
            selector: Some(selector),
            ports: Some(vec![ServicePort {
                port: API_PORT,
                target_port: Some(IntOrString::Int(API_PORT)),
                protocol: Some("TCP".into()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::{
        api::apps::v1::DeploymentStatus, apimachinery::pkg::apis::meta::v1::ObjectMeta,
    };

    fn deployment(generation: i64, observed: i64, replicas: i32, updated: i32) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                generation: Some(generation),
                ..ObjectMeta::default()
            },
            status: Some(DeploymentStatus {
                observed_generation: Some(observed),
                replicas: Some(replicas),
                updated_replicas: Some(updated),
                ..DeploymentStatus::default()
            }),
            ..Deployment::default()
        }
    }

    #[test]
    fn a_rollout_converges_when_every_pod_of_the_current_generation_is_updated() {
        assert!(converged(&deployment(2, 2, 3, 3)));
        assert!(
            !converged(&deployment(2, 1, 3, 3)),
            "the status lags a generation"
        );
        assert!(!converged(&deployment(2, 2, 3, 2)), "a pod is still old");
        assert!(!converged(&deployment(2, 2, 0, 0)), "no pods");
        assert!(!converged(&Deployment::default()));
    }

    #[test]
    fn the_selector_narrows_once_and_never_widens() {
        let wide = selector("barbican", false, false);
        assert!(!wide.contains_key("app.kubernetes.io/component"));
        let narrow = selector("barbican", false, true);
        assert_eq!(narrow["app.kubernetes.io/component"], "api");
        assert_eq!(
            selector("barbican", true, false),
            narrow,
            "an already narrow Service stays narrow while a new rollout runs"
        );
    }

    #[test]
    fn the_service_exposes_9311_unnamed() {
        let svc = service("barbican", "openstack", selector("barbican", false, false));
        assert_eq!(svc.metadata.labels.unwrap(), labels::common("barbican"));
        let port = &svc.spec.unwrap().ports.unwrap()[0];
        assert_eq!((port.port, port.name.as_deref()), (9311, None));
        assert_eq!(port.target_port, Some(IntOrString::Int(9311)));
    }
}
