//! The HorizontalPodAutoscaler controller, without metrics: it keeps the target Deployment's
//! replicas within `[minReplicas, maxReplicas]` and writes the status and conditions
//! (AbleToScale, ScalingActive, ScalingLimited) the way the real controller does.

use serde_json::{Value, json};

use super::{Kinds, condition, write_status};
use crate::store::Store;

const TIMES: &[&str] = &["lastTransitionTime"];

/// Recomputes an autoscaler after it changed.
pub(crate) fn react(store: &mut Store, kinds: &Kinds, hpa: &Value) {
    let namespace = hpa["metadata"]["namespace"].as_str().unwrap_or("");
    let target = &hpa["spec"]["scaleTargetRef"];
    let deployment = (target["kind"] == "Deployment")
        .then(|| {
            store
                .get(
                    &kinds.deployments,
                    namespace,
                    target["name"].as_str().unwrap_or(""),
                )
                .ok()
        })
        .flatten();
    let now = store.clock().rfc3339();
    let previous = &hpa["status"];
    let generation = hpa["metadata"]["generation"].clone();
    let Some(deployment) = deployment else {
        let message = format!(
            "the HPA controller was unable to get the target's current scale: {} \"{}\" not found",
            target["kind"].as_str().unwrap_or("").to_ascii_lowercase() + "s.apps",
            target["name"].as_str().unwrap_or("")
        );
        let status = json!({
            "observedGeneration": generation, "currentReplicas": 0, "desiredReplicas": 0,
            "conditions": [condition(previous, "AbleToScale", "False", "FailedGetScale", &message, &now, TIMES)],
        });
        write_status(store, &kinds.hpas, hpa, status);
        return;
    };
    let current = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let min = hpa["spec"]["minReplicas"].as_i64().unwrap_or(1);
    let max = hpa["spec"]["maxReplicas"].as_i64().unwrap_or(min).max(min);
    let desired = current.clamp(min, max);
    let mut status = json!({
        "observedGeneration": generation, "currentReplicas": current, "desiredReplicas": desired,
    });
    if let Some(scaled) = previous.get("lastScaleTime") {
        status["lastScaleTime"] = scaled.clone();
    }
    let limited = match (current < min, current > max) {
        (true, _) => condition(
            previous,
            "ScalingLimited",
            "True",
            "TooFewReplicas",
            "the desired replica count is less than the minimum replica count",
            &now,
            TIMES,
        ),
        (_, true) => condition(
            previous,
            "ScalingLimited",
            "True",
            "TooManyReplicas",
            "the desired replica count is more than the maximum replica count",
            &now,
            TIMES,
        ),
        _ => condition(
            previous,
            "ScalingLimited",
            "False",
            "DesiredWithinRange",
            "the desired count is within the acceptable range",
            &now,
            TIMES,
        ),
    };
    status["conditions"] = json!([
        condition(
            previous,
            "AbleToScale",
            "True",
            "ReadyForNewScale",
            "recommended size matches current size",
            &now,
            TIMES
        ),
        condition(
            previous,
            "ScalingActive",
            "True",
            "ValidMetricFound",
            "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)",
            &now,
            TIMES
        ),
        limited,
    ]);
    if desired != current {
        let mut scaled = deployment.clone();
        scaled["spec"]["replicas"] = json!(desired);
        let name = deployment["metadata"]["name"].as_str().unwrap_or("");
        if store
            .replace(&kinds.deployments, namespace, name, scaled, false, false)
            .is_ok()
        {
            status["lastScaleTime"] = json!(now);
        }
    }
    write_status(store, &kinds.hpas, hpa, status);
}

/// Recomputes the autoscalers that target a Deployment that changed.
pub(crate) fn react_to_target(store: &mut Store, kinds: &Kinds, deployment: &Value) {
    let namespace = deployment["metadata"]["namespace"].as_str().unwrap_or("");
    let name = &deployment["metadata"]["name"];
    // Only the autoscalers of this Deployment are copied out of the store.
    let targeting: Vec<Value> = store
        .presented_in(&kinds.hpas, Some(namespace))
        .filter(|hpa| {
            let target = &hpa["spec"]["scaleTargetRef"];
            target["kind"] == "Deployment" && &target["name"] == name
        })
        .map(std::borrow::Cow::into_owned)
        .collect();
    for hpa in targeting {
        react(store, kinds, &hpa);
    }
}
