//! The API's PodDisruptionBudget: it selects the API pods (never a Job's pods that share the
//! labels), and keeps one pod up when there are several, or lets one go when there is one.

use k8s_openapi::{
    api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec},
    apimachinery::pkg::{
        apis::meta::v1::{LabelSelector, LabelSelectorRequirement},
        util::intstr::IntOrString,
    },
};

use super::labels;

/// The PDB of the Barbican `name` running `replicas` API pods.
pub fn pdb(name: &str, namespace: &str, replicas: i32) -> PodDisruptionBudget {
    let (min_available, max_unavailable) = if replicas > 1 {
        (Some(IntOrString::Int(1)), None)
    } else {
        (None, Some(IntOrString::Int(1)))
    };
    PodDisruptionBudget {
        metadata: labels::child_metadata(name, namespace),
        spec: Some(PodDisruptionBudgetSpec {
            selector: Some(LabelSelector {
                match_labels: Some(labels::selector(name)),
                match_expressions: Some(vec![LabelSelectorRequirement {
                    key: "batch.kubernetes.io/job-name".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                }]),
            }),
            min_available,
            max_unavailable,
            ..PodDisruptionBudgetSpec::default()
        }),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_pods_keep_one_up_and_a_single_pod_may_go() {
        let spec = pdb("barbican", "openstack", 3).spec.unwrap();
        assert_eq!(spec.min_available, Some(IntOrString::Int(1)));
        assert_eq!(spec.max_unavailable, None);
        let single = pdb("barbican", "openstack", 1).spec.unwrap();
        assert_eq!(single.min_available, None);
        assert_eq!(single.max_unavailable, Some(IntOrString::Int(1)));
    }

    #[test]
    fn the_selector_leaves_job_pods_out() {
        let budget = pdb("barbican", "openstack", 3);
        assert_eq!(budget.metadata.name.as_deref(), Some("barbican"));
        let selector = budget.spec.unwrap().selector.unwrap();
        assert_eq!(selector.match_labels.unwrap(), labels::selector("barbican"));
        let expression = &selector.match_expressions.unwrap()[0];
        assert_eq!(
            (expression.key.as_str(), expression.operator.as_str()),
            ("batch.kubernetes.io/job-name", "DoesNotExist")
        );
    }
}
