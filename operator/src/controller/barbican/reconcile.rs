//! One pass over one Barbican: the finalizer, the pipeline, and the status write on every exit
//! path (skipped when the pass changed nothing).

use std::{sync::Arc, time::Duration};

use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams},
};
use serde_json::{Value, json};

use super::{
    health::cache_key,
    pipeline,
    state::{Env, State},
};
use crate::{
    api::conditions::{BarbicanConditionType, Reason},
    api::{barbican::Barbican, names::BARBICAN_FINALIZER},
    clusters::{UNRESOLVED_REQUEUE, placement_refusal},
    controller::{
        children::Children,
        events::Severity,
        status::{Report, conclude, set},
    },
};

/// Why a pass failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A step failed; its condition and the status were written first.
    #[error("step {step} failed: {message}")]
    Step {
        /// The step's name.
        step: &'static str,
        /// What went wrong.
        message: String,
    },
    /// Talking to the API server failed.
    #[error("{what}: {source}")]
    Api {
        /// What the operator was doing.
        what: &'static str,
        /// The client's error.
        source: kube::Error,
    },
}

/// What a pass asks of the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Come back after this long.
    After(Duration),
    /// Wait for a change.
    AwaitChange,
}

fn api_failed(what: &'static str) -> impl FnOnce(kube::Error) -> Error {
    move |source| Error::Api { what, source }
}

/// The merge patch that makes the stored status read `status`: absent fields are nulled so a
/// cleared field is cleared on the server too.
pub fn status_patch<S: serde::Serialize>(before: &S, status: &S) -> Value {
    let mut after = serde_json::to_value(status).expect("status serializes");
    let before = serde_json::to_value(before).expect("status serializes");
    if let (Some(after), Some(before)) = (after.as_object_mut(), before.as_object()) {
        for key in before.keys() {
            after.entry(key.clone()).or_insert(Value::Null);
        }
    }
    json!({ "status": after })
}

/// Writes `status` on the status subresource of `name`, nulling what `before` had and it lacks.
pub async fn write_status<K, S>(
    api: &Api<K>,
    name: &str,
    before: &S,
    status: &S,
) -> Result<(), kube::Error>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    S: serde::Serialize,
{
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(&status_patch(before, status)),
    )
    .await
    .map(|_| ())
}

/// How long the finalizer holds while the MariaDB CRs tear down.
pub const FINALIZER_HOLD: Duration = Duration::from_secs(30);

async fn release(env: &Arc<Env>, barbican: Arc<Barbican>) -> Result<Next, Error> {
    let (name, namespace) = (
        barbican.name_any(),
        barbican.namespace().unwrap_or_default(),
    );
    let children = Children::local(env.client.clone(), &namespace);
    let state = State::new(env.clone(), barbican.clone(), children);
    // Whether cleanup remains is judged before the Delete is issued.
    let live = super::database::tear_down(&state)
        .await
        .map_err(|e| Error::Step {
            step: "Finalizer",
            message: e.0,
        })?;
    if live {
        state
            .event(
                Severity::Normal,
                "FinalizingDatabase",
                "deleting the MariaDB Database, User and Grant before releasing the finalizer",
            )
            .await;
        return Ok(Next::After(FINALIZER_HOLD));
    }
    env.probes.evict(&cache_key(&namespace, &name));
    env.metrics.forget_barbican(&name, &namespace);
    let remaining: Vec<String> = barbican
        .finalizers()
        .iter()
        .filter(|f| *f != BARBICAN_FINALIZER)
        .cloned()
        .collect();
    let api: Api<Barbican> = Api::namespaced(env.client.clone(), &namespace);
    let patch = json!({"metadata": {"finalizers": remaining, "resourceVersion": barbican.resource_version()}});
    match api
        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Next::AwaitChange),
        Err(e) => return Err(api_failed("releasing the finalizer")(e)),
    }
    state
        .event(
            Severity::Normal,
            "DatabaseFinalized",
            "nothing left to clean up; the finalizer is released",
        )
        .await;
    Ok(Next::AwaitChange)
}

/// Runs one pass over `barbican`.
pub async fn reconcile(env: Arc<Env>, cached: Arc<Barbican>) -> Result<Next, Error> {
    let (name, namespace) = (cached.name_any(), cached.namespace().unwrap_or_default());
    let api: Api<Barbican> = Api::namespaced(env.client.clone(), &namespace);
    // The pass starts from the stored object, not the watch cache: a status computed from a
    // cached copy that has not yet seen the last status write would undo it (and move every
    // lastTransitionTime) on a busy cluster.
    let Some(barbican) = api
        .get_opt(&name)
        .await
        .map_err(api_failed("reading the Barbican"))?
    else {
        return Ok(Next::AwaitChange);
    };
    if barbican.uid() != cached.uid() {
        return Ok(Next::AwaitChange);
    }
    let barbican = Arc::new(barbican);
    if barbican.metadata.deletion_timestamp.is_some() {
        if barbican
            .finalizers()
            .iter()
            .any(|f| f == BARBICAN_FINALIZER)
        {
            return release(&env, barbican).await;
        }
        return Ok(Next::AwaitChange);
    }
    let target = barbican
        .spec
        .target_cluster_ref
        .as_ref()
        .map(|t| t.name.as_str());
    if let Some(message) = placement_refusal(&env.clusters, target) {
        // Ahead of every step and of the finalizer: nothing is created on any cluster.
        let before = barbican.status.clone().unwrap_or_default();
        let mut after = before.clone();
        let (generation, now) = (barbican.metadata.generation, env.clock.now());
        set(
            &mut after.conditions,
            &Report::not_ready(
                BarbicanConditionType::SecretsReady,
                Reason::TargetClusterUnavailable,
                message,
            ),
            generation,
            now,
        );
        if let Some(status) = conclude(&before, after, generation, now) {
            write_status(&api, &name, &before, &status)
                .await
                .map_err(api_failed("writing the status"))?;
        }
        return Ok(Next::After(UNRESOLVED_REQUEUE));
    }
    if !barbican
        .finalizers()
        .iter()
        .any(|f| f == BARBICAN_FINALIZER)
    {
        // Before the first child write, so nothing is created that deletion would not see.
        let mut finalizers = barbican.finalizers().to_vec();
        finalizers.push(BARBICAN_FINALIZER.to_string());
        let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": barbican.resource_version()}});
        api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(api_failed("adding the finalizer"))?;
        return Ok(Next::After(Duration::ZERO));
    }

    let children = Children::local(env.client.clone(), &namespace);
    let mut state = State::new(env.clone(), barbican.clone(), children);
    let pass = pipeline().run(&mut state, env.metrics.as_ref()).await;
    let before = barbican.status.clone().unwrap_or_default();
    if let Some(status) = conclude(
        &before,
        state.status.clone(),
        barbican.metadata.generation,
        env.clock.now(),
    ) {
        write_status(&api, &name, &before, &status)
            .await
            .map_err(api_failed("writing the status"))?;
    }
    if let Some((step, error)) = pass.errors.into_iter().next() {
        return Err(Error::Step {
            step,
            message: error.0,
        });
    }
    Ok(pass.requeue.map_or(Next::AwaitChange, Next::After))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::barbican::BarbicanStatus;

    #[test]
    fn a_cleared_status_field_is_nulled_in_the_patch() {
        let before = BarbicanStatus {
            endpoint: Some("http://x".into()),
            observed_generation: Some(1),
            ..BarbicanStatus::default()
        };
        let after = BarbicanStatus {
            observed_generation: Some(2),
            ..BarbicanStatus::default()
        };
        let patch = status_patch(&before, &after);
        assert_eq!(patch["status"]["endpoint"], Value::Null);
        assert!(
            patch["status"]
                .as_object()
                .unwrap()
                .contains_key("endpoint")
        );
        assert_eq!(patch["status"]["observedGeneration"], 2);
    }
}
