//! The Parent and Placement steps: the parent Barbican the store attaches to, and the cluster
//! its credentials belong on (the parent's target cluster, recorded on the store before the
//! first write there).

use std::time::Duration;

use kube::{Api, ResourceExt};
use serde_json::json;

use super::{
    handoffs::{Parent, Placed},
    state::StoreState,
    status::Findings,
};
use crate::{
    api::{
        barbican::Barbican,
        conditions::{Reason, StoreConditionType as T},
        names::{CHILDREN_CLUSTER_ANNOTATION, REMOTE_CHILDREN_FINALIZER},
    },
    clusters::UNRESOLVED_REQUEUE,
    controller::{
        pipeline::{Outcome, StepFuture},
        runtime::cache::current,
        runtime::env::Env,
        runtime::writes::patch_metadata,
        status::Report,
        step_error::{StepError, api_error},
    },
};

/// How long a store without a parent waits before looking again.
pub const WAITING_FOR_PARENT: Duration = Duration::from_secs(15);

/// The parent Barbican `name` in `namespace`, from a copy that has seen this operator's last
/// write.
pub async fn read_parent(
    env: &Env,
    namespace: &str,
    name: &str,
) -> Result<Option<Barbican>, kube::Error> {
    let barbicans = Api::<Barbican>::namespaced(env.client.clone(), namespace);
    current(&barbicans, &env.barbicans, &env.writes, namespace, name).await
}

/// Ends the pass before anything is minted: CredentialsReady and ConfigProjected say why.
fn stop(state: &mut StoreState, reason: Reason, why: String, projection: String, after: Duration) {
    state.findings = Findings {
        credentials: Some(Report::not_ready(T::CredentialsReady, reason, why)),
        provisioning: None,
        managed: state.findings.managed,
        requeue: after,
    };
    state.projected = Some(Report::not_ready(
        T::ConfigProjected,
        Reason::WaitingForProjection,
        projection,
    ));
}

/// The Parent step: without the parent, which cluster the credentials belong on is unknown,
/// and nothing is minted.
pub fn parent(state: &mut StoreState) -> StepFuture<'_> {
    Box::pin(async move {
        let (parent, namespace) = (state.parent_name(), state.namespace());
        let found = read_parent(&state.env, &namespace, &parent)
            .await
            .map_err(|e| api_error("reading the parent Barbican", e))?;
        let Some(barbican) = found else {
            stop(
                state,
                Reason::WaitingForParent,
                format!("no Barbican {parent:?} in namespace {namespace:?}"),
                format!("no Barbican {parent:?} to project into"),
                WAITING_FOR_PARENT,
            );
            return Ok(Outcome::Requeue(WAITING_FOR_PARENT));
        };
        state.handoffs.give(Parent(barbican));
        Ok(Outcome::Done)
    })
}

/// The Placement step: the parent's target cluster decides where the credentials belong, and
/// nothing is read or written there while it does not resolve or lies outside its registered
/// namespaces. A target cluster is recorded on the store (annotation and the remote-children
/// finalizer) before the first write there.
pub fn placement(state: &mut StoreState) -> StepFuture<'_> {
    Box::pin(async move {
        let Parent(parent) = state.handoffs.need::<Parent>()?;
        let target = parent
            .spec
            .target_cluster_ref
            .as_ref()
            .map(|t| t.name.clone());
        let placed = state
            .env
            .place(state.store.as_ref(), target.as_deref())
            .map_err(|e| e.to_string())
            .and_then(|children| match children.namespace_refusal() {
                Some(refusal) => Err(refusal),
                None => Ok(children),
            });
        let children = match placed {
            Ok(children) => children,
            Err(unresolved) => {
                let projection = format!(
                    "the parent's target cluster {:?} is unavailable",
                    target.unwrap_or_default()
                );
                stop(
                    state,
                    Reason::TargetClusterUnavailable,
                    unresolved,
                    projection,
                    UNRESOLVED_REQUEUE,
                );
                return Ok(Outcome::Requeue(UNRESOLVED_REQUEUE));
            }
        };
        if let Some(cluster) = children.cluster()
            && record_cluster(state, cluster).await?
        {
            state.restart = true;
            return Ok(Outcome::Requeue(Duration::ZERO));
        }
        state.handoffs.give(Placed(children));
        Ok(Outcome::Done)
    })
}

/// Records the target cluster on the store (the annotation and the remote-children finalizer)
/// before its first credentials write there; `true` when a write was needed.
async fn record_cluster(state: &StoreState, cluster: &str) -> Result<bool, StepError> {
    let store = &state.store;
    let annotated = store
        .annotations()
        .get(CHILDREN_CLUSTER_ANNOTATION)
        .map(String::as_str)
        == Some(cluster);
    let finalized = store
        .finalizers()
        .iter()
        .any(|f| f == REMOTE_CHILDREN_FINALIZER);
    if annotated && finalized {
        return Ok(false);
    }
    let mut finalizers = store.finalizers().to_vec();
    if !finalized {
        finalizers.push(REMOTE_CHILDREN_FINALIZER.to_string());
    }
    let patch = json!({"metadata": {
        "finalizers": finalizers,
        "annotations": {CHILDREN_CLUSTER_ANNOTATION: cluster},
        "resourceVersion": store.resource_version(),
    }});
    patch_metadata(&state.env.writes, &state.api, &store.name_any(), &patch)
        .await
        .map_err(|e| api_error("recording the target cluster on the store", e))?;
    Ok(true)
}
