//! The HPA step: a HorizontalPodAutoscaler on the API Deployment while `spec.autoscaling` is
//! set, none otherwise.

use k8s_openapi::api::autoscaling::v2::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec, MetricSpec,
    MetricTarget, ResourceMetricSource,
};

use super::state::{State, owned_metadata};
use crate::{
    api::{
        barbican::BarbicanSpec,
        conditions::{BarbicanConditionType as T, Reason},
    },
    controller::{
        pipeline::{Outcome, StepFuture},
        status::Report,
        step_error::api_error,
    },
};

fn utilization(resource: &str, target: i32) -> MetricSpec {
    MetricSpec {
        type_: "Resource".into(),
        resource: Some(ResourceMetricSource {
            name: resource.into(),
            target: MetricTarget {
                type_: "Utilization".into(),
                average_utilization: Some(target),
                ..MetricTarget::default()
            },
        }),
        ..MetricSpec::default()
    }
}

/// The HPA spec for `name`, `None` without `spec.autoscaling`.
pub fn hpa_spec(spec: &BarbicanSpec, name: &str) -> Option<HorizontalPodAutoscalerSpec> {
    let autoscaling = spec.autoscaling.as_ref()?;
    let replicas = spec
        .deployment
        .as_ref()
        .map_or(3, |d| d.effective_replicas());
    let metrics: Vec<MetricSpec> = [
        ("cpu", autoscaling.target_cpu_utilization),
        ("memory", autoscaling.target_memory_utilization),
    ]
    .into_iter()
    .filter_map(|(resource, target)| target.map(|t| utilization(resource, t)))
    .collect();
    Some(HorizontalPodAutoscalerSpec {
        scale_target_ref: CrossVersionObjectReference {
            api_version: Some("apps/v1".into()),
            kind: "Deployment".into(),
            name: name.into(),
        },
        min_replicas: Some(autoscaling.min_replicas.unwrap_or(replicas)),
        max_replicas: autoscaling.max_replicas,
        metrics: Some(metrics),
        behavior: None,
    })
}

/// The HPA step.
pub fn hpa(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let name = state.name();
        // Unset, the pass sweeps any HPA left from before (see `runtime::sweep`); the
        // Deployment step has removed it already, ahead of applying the replicas.
        let Some(spec) = hpa_spec(&state.barbican.spec, &name) else {
            state.report(Report::ready(
                T::HPAReady,
                Reason::HPANotRequired,
                "spec.autoscaling is not set",
            ));
            return Ok(Outcome::Done);
        };
        let (min, max) = (spec.min_replicas.unwrap_or(1), spec.max_replicas);
        let hpa = HorizontalPodAutoscaler {
            metadata: owned_metadata(state, &name),
            spec,
            status: None,
        };
        state
            .children
            .ensure(&hpa)
            .await
            .map_err(|e| api_error("applying the HorizontalPodAutoscaler", e))?;
        state.report(Report::ready(
            T::HPAReady,
            Reason::HPAReady,
            format!("scaling between {min} and {max} replicas"),
        ));
        Ok(Outcome::Done)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{autoscaling::AutoscalingSpec, fixtures};

    #[test]
    fn min_replicas_defaults_to_the_deployment_and_targets_become_metrics() {
        let mut spec = fixtures::barbican().spec;
        assert!(hpa_spec(&spec, "kms").is_none());
        spec.autoscaling = Some(AutoscalingSpec {
            min_replicas: None,
            max_replicas: 7,
            target_cpu_utilization: Some(70),
            target_memory_utilization: None,
        });
        let built = hpa_spec(&spec, "kms").unwrap();
        assert_eq!(built.min_replicas, Some(3));
        assert_eq!(built.max_replicas, 7);
        assert_eq!(built.scale_target_ref.name, "kms");
        let metrics = built.metrics.unwrap();
        assert_eq!(metrics.len(), 1);
        let resource = metrics[0].resource.as_ref().unwrap();
        assert_eq!(
            (resource.name.as_str(), resource.target.average_utilization),
            ("cpu", Some(70))
        );
    }
}
