//! One pass over one BarbicanSecretStore: its deletion, or the step table ([`super::pipeline`])
//! and the status write (skipped when nothing changed).

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, ResourceExt};

use super::{
    approle::RETRY,
    handoffs::Placed,
    parent::read_parent,
    pipeline,
    state::StoreState,
    status::{Findings, conclude, new_failures},
    verified::Verified,
};
use crate::{
    api::conditions::EventReason,
    api::{
        barbican::Barbican,
        conditions::{Reason, StoreConditionType as T},
        names::{CHILDREN_CLUSTER_ANNOTATION, REMOTE_CHILDREN_FINALIZER, approle_secret_name},
        secret_store::BarbicanSecretStore,
    },
    clusters::UNRESOLVED_REQUEUE,
    controller::{
        events::{Severity, reference},
        pass::{Error, FINALIZER_BOUND, Next, api_failed, failure_kind, past_finalizer_bound},
        runtime::cache::current,
        runtime::env::Env,
        runtime::writes::{write_finalizers, write_status},
        status::Report,
    },
};

/// Drops what the operator keeps about a store whose deletion it observed: its re-mint series
/// and its verdict (garbage collection reclaims a local `<store>-approle`).
pub fn forget(env: &Env, verified: &Verified, store: &BarbicanSecretStore) {
    env.metrics
        .forget_store(&store.name_any(), &store.namespace().unwrap_or_default());
    verified.forget(&super::verified::key(store));
}

/// The target clusters a store's credentials may live on: the one it recorded, and its
/// parent's.
fn remote_clusters(store: &BarbicanSecretStore, parent: Option<&Barbican>) -> BTreeSet<String> {
    let recorded = store
        .annotations()
        .get(CHILDREN_CLUSTER_ANNOTATION)
        .cloned();
    let parents = parent
        .and_then(|p| p.spec.target_cluster_ref.as_ref())
        .map(|t| t.name.clone());
    recorded.into_iter().chain(parents).collect()
}

/// The deletion of a store carrying the remote-children finalizer: `<store>-approle` is
/// deleted on each of its clusters (only when it carries this store's ownership labels), then
/// the finalizer goes. A cluster that does not resolve holds it (15 s requeues) until both
/// windows have run out; then it goes without cleanup and RemoteChildrenAbandoned says so.
async fn finalize(
    env: &Env,
    verified: &Verified,
    api: &Api<BarbicanSecretStore>,
    store: &BarbicanSecretStore,
    parent: Option<&Barbican>,
) -> Result<Next, Error> {
    let namespace = store.namespace().unwrap_or_default();
    let secret_name = approle_secret_name(&store.name_any());
    let now = env.clock.now();
    let mut unresolved = Vec::new();
    let mut failed = Vec::new();
    for cluster in remote_clusters(store, parent) {
        match env.place(store, Some(&cluster)) {
            // Only a Secret carrying this store's ownership is deleted (the ownership rule
            // of every child delete).
            Ok(children) => match children.namespace_refusal() {
                Some(refusal) => failed.push((cluster, refusal)),
                None => {
                    if let Err(e) = children.delete::<Secret>(&secret_name).await {
                        failed.push((cluster, format!("deleting it failed: {}", failure_kind(&e))));
                    }
                }
            },
            Err(why) => unresolved.push((cluster, why)),
        }
    }
    // A cluster that resolves but fails the delete (refused, forbidden, outside its
    // namespaces) is retried every 15 s until the finalizer bound; then the finalizer goes
    // with a Warning naming what stays, as for a cluster that does not resolve.
    let deleted_at = store.metadata.deletion_timestamp.as_ref().map(|t| t.0);
    let waiting = unresolved
        .iter()
        .find(|(cluster, _)| !env.clusters.gives_up_on(cluster, &store.metadata, now))
        .map(|(cluster, why)| (cluster, why.to_string()))
        .or_else(|| {
            failed
                .first()
                .filter(|_| !past_finalizer_bound(deleted_at, now))
                .map(|(cluster, why)| (cluster, why.clone()))
        });
    if let Some((cluster, why)) = waiting {
        let findings = Findings {
            credentials: Some(Report::not_ready(
                T::CredentialsReady,
                Reason::TargetClusterUnavailable,
                format!("waiting for target cluster {cluster:?} to delete {secret_name:?}: {why}"),
            )),
            provisioning: None,
            managed: false,
            requeue: UNRESOLVED_REQUEUE,
        };
        let before = store.status.clone().unwrap_or_default();
        let projected = before
            .conditions
            .iter()
            .find(|c| c.type_ == T::ConfigProjected.as_str())
            .map(|c| {
                Report::not_ready(
                    T::ConfigProjected,
                    Reason::WaitingForProjection,
                    c.message.clone(),
                )
            })
            .unwrap_or_else(|| {
                Report::not_ready(T::ConfigProjected, Reason::WaitingForProjection, "")
            });
        if let Some(status) = conclude(
            &before,
            &findings,
            &projected,
            store.metadata.generation,
            now,
        ) {
            write_status(&env.writes, api, &store.name_any(), &before, &status)
                .await
                .map_err(api_failed("writing the store's status"))?;
        }
        return Ok(Next::After(UNRESOLVED_REQUEUE));
    }
    let remaining: Vec<String> = store
        .finalizers()
        .iter()
        .filter(|f| *f != REMOTE_CHILDREN_FINALIZER)
        .cloned()
        .collect();
    if !write_finalizers(
        &env.writes,
        api,
        &store.name_any(),
        store.resource_version(),
        remaining,
    )
    .await
    .map_err(api_failed("releasing the finalizer"))?
    {
        return Ok(Next::AwaitChange);
    }
    forget(env, verified, store);
    let notes = [
        (!failed.is_empty()).then(|| {
            format!(
                "cleanup on target cluster {} kept failing for {} minutes after the deletion; the finalizer is released without it",
                listed(&failed),
                FINALIZER_BOUND.as_secs() / 60
            )
        }),
        (!unresolved.is_empty()).then(|| {
            format!(
                "target cluster {} stayed unresolvable past both 5-minute windows; the finalizer is released without cleanup",
                listed(&unresolved)
            )
        }),
    ];
    for note in notes.into_iter().flatten() {
        env.events
            .publish(
                &reference(store),
                Severity::Warning,
                EventReason::RemoteChildrenAbandoned,
                &format!(
                    "{note}. Left behind there in namespace {namespace:?}: the Secret {secret_name:?}"
                ),
            )
            .await;
    }
    Ok(Next::AwaitChange)
}

/// Clusters with why each was given up on, for a Warning: `"a" (why), "b" (why)`.
fn listed<W: std::fmt::Display>(clusters: &[(String, W)]) -> String {
    clusters
        .iter()
        .map(|(cluster, why)| format!("{cluster:?} ({why})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs one pass over `cached` (from a copy that has seen this operator's last write).
pub async fn reconcile(
    env: Arc<Env>,
    verified: &Verified,
    cached: Arc<BarbicanSecretStore>,
) -> Result<Next, Error> {
    let (name, namespace) = (cached.name_any(), cached.namespace().unwrap_or_default());
    let api: Api<BarbicanSecretStore> = Api::namespaced(env.client.clone(), &namespace);
    let store = current(&api, &env.stores, &env.writes, &namespace, &name)
        .await
        .map_err(api_failed("reading the BarbicanSecretStore"))?;
    let Some(store) = store.filter(|s| s.uid() == cached.uid()) else {
        forget(&env, verified, &cached);
        return Ok(Next::AwaitChange);
    };
    if store.metadata.deletion_timestamp.is_some() {
        if store
            .finalizers()
            .iter()
            .any(|f| f == REMOTE_CHILDREN_FINALIZER)
        {
            let parent = read_parent(&env, &namespace, &store.spec.barbican_ref.name)
                .await
                .map_err(api_failed("reading the parent Barbican"))?;
            return finalize(&env, verified, &api, &store, parent.as_ref()).await;
        }
        forget(&env, verified, &store);
        return Ok(Next::AwaitChange);
    }
    let store = Arc::new(store);
    let mut state = StoreState::new(env.clone(), verified.clone(), api.clone(), store.clone());
    let pass = pipeline().run(&mut state, env.metrics.as_ref()).await;
    if let Some((step, source)) = pass.errors.into_iter().next() {
        return Err(Error::Step { step, source });
    }
    if state.restart {
        return Ok(Next::After(Duration::ZERO));
    }
    let projected = state
        .projected
        .clone()
        .unwrap_or_else(|| Report::not_ready(T::ConfigProjected, Reason::WaitingForProjection, ""));
    // Past Placement, the projection is looked at again soon; before it (no parent, a target
    // that does not resolve) the pass's own requeue stands.
    let mut requeue = state.findings.requeue;
    if !projected.ready && state.handoffs.has::<Placed>() {
        requeue = requeue.min(RETRY);
    }
    let before = store.status.clone().unwrap_or_default();
    let concluded = conclude(
        &before,
        &state.findings,
        &projected,
        store.metadata.generation,
        env.clock.now(),
    );
    if let Some(status) = &concluded {
        write_status(&env.writes, &api, &name, &before, status)
            .await
            .map_err(api_failed("writing the store's status"))?;
        for (reason, message) in new_failures(&before.conditions, &status.conditions) {
            env.events
                .publish(
                    &reference(store.as_ref()),
                    Severity::Warning,
                    reason,
                    &message,
                )
                .await;
        }
    }
    let conditions = &concluded.as_ref().unwrap_or(&before).conditions;
    env.metrics
        .conditions("BarbicanSecretStore", &name, &namespace, conditions);
    Ok(Next::After(requeue))
}
