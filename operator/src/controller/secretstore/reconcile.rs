//! One pass over one BarbicanSecretStore: the parent, the mode's flow, ConfigProjected, and the
//! status write (skipped when nothing changed).

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use k8s_openapi::api::{apps::v1::Deployment, core::v1::Secret};
use kube::{Api, ResourceExt};
use serde_json::json;

use super::{
    approle::RETRY,
    brownfield, managed,
    status::{Findings, StoreReport, conclude, new_failures, projects},
    verified::Verified,
};
use crate::{
    api::conditions::EventReason,
    api::{
        barbican::Barbican,
        conditions::{Reason, StoreConditionType as T},
        names::{
            CHILDREN_CLUSTER_ANNOTATION, REMOTE_CHILDREN_FINALIZER, approle_secret_name,
            mounted_config,
        },
        secret_store::BarbicanSecretStore,
    },
    clusters::UNRESOLVED_REQUEUE,
    controller::{
        events::{Severity, reference},
        pass::{Error, FINALIZER_BOUND, Next, api_failed, failure_kind, past_finalizer_bound},
        runtime::cache::current,
        runtime::children::Children,
        runtime::env::Env,
        runtime::writes::{patch_metadata, write_finalizers, write_status},
        status::Report,
    },
};

/// How long a store without a parent waits before looking again.
pub const WAITING_FOR_PARENT: Duration = Duration::from_secs(15);

/// ConfigProjected, observed by reading the barbican.conf the parent's Deployment mounts.
async fn config_projected(
    children: &Children,
    parent: &str,
    store: &str,
) -> Result<StoreReport, kube::Error> {
    let waiting = |message: String| {
        Report::not_ready(T::ConfigProjected, Reason::WaitingForProjection, message)
    };
    let Some(deployment) = children.get::<Deployment>(parent).await? else {
        return Ok(waiting(format!("Deployment {parent:?} does not exist yet")));
    };
    let Some(config) = mounted_config(&deployment) else {
        return Ok(waiting(format!(
            "Deployment {parent:?} mounts no config Secret"
        )));
    };
    let secret = children.get::<Secret>(&config).await?;
    let conf = managed::text(secret.as_ref(), "barbican.conf").unwrap_or_default();
    Ok(if projects(&conf, store) {
        Report::ready(
            T::ConfigProjected,
            Reason::ConfigProjected,
            format!("Deployment {parent:?} mounts {config:?}, which carries [secretstore:{store}]"),
        )
    } else {
        waiting(format!(
            "the mounted {config:?} does not carry [secretstore:{store}] yet"
        ))
    })
}

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

/// Records the target cluster on the store (the annotation and the remote-children finalizer)
/// before its first credentials write there; `true` when a write was needed.
async fn record_cluster(
    env: &Env,
    api: &Api<BarbicanSecretStore>,
    store: &BarbicanSecretStore,
    cluster: &str,
) -> Result<bool, Error> {
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
    patch_metadata(&env.writes, api, &store.name_any(), &patch)
        .await
        .map_err(api_failed("recording the target cluster on the store"))?;
    Ok(true)
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
    let parent_name = store.spec.barbican_ref.name.clone();
    let barbicans = Api::<Barbican>::namespaced(env.client.clone(), &namespace);
    let parent = current(
        &barbicans,
        &env.barbicans,
        &env.writes,
        &namespace,
        &parent_name,
    )
    .await
    .map_err(api_failed("reading the parent Barbican"))?;
    if store.metadata.deletion_timestamp.is_some() {
        if store
            .finalizers()
            .iter()
            .any(|f| f == REMOTE_CHILDREN_FINALIZER)
        {
            return finalize(&env, verified, &api, &store, parent.as_ref()).await;
        }
        forget(&env, verified, &store);
        return Ok(Next::AwaitChange);
    }
    let open_bao = store.spec.open_bao.as_ref();
    let instance = open_bao
        .and_then(|o| o.instance_ref.as_ref())
        .map(|i| i.name.clone());
    let target = parent
        .as_ref()
        .and_then(|p| p.spec.target_cluster_ref.as_ref())
        .map(|t| t.name.as_str());
    let placed = env
        .place(&store, target)
        .map_err(|e| e.to_string())
        .and_then(|children| match children.namespace_refusal() {
            // Nothing is read or written outside the registered namespaces.
            Some(refusal) => Err(refusal),
            None => Ok(children),
        });
    if let Ok(children) = &placed
        && let Some(cluster) = children.cluster()
        && record_cluster(&env, &api, &store, cluster).await?
    {
        return Ok(Next::After(Duration::ZERO));
    }
    let (findings, projected) = match (&parent, open_bao, placed) {
        (None, _, _) => (
            // Which cluster the credentials belong on is unknown: nothing is minted.
            Findings {
                credentials: Some(Report::not_ready(
                    T::CredentialsReady,
                    Reason::WaitingForParent,
                    format!("no Barbican {parent_name:?} in namespace {namespace:?}"),
                )),
                provisioning: None,
                managed: instance.is_some(),
                requeue: WAITING_FOR_PARENT,
            },
            Report::not_ready(
                T::ConfigProjected,
                Reason::WaitingForProjection,
                format!("no Barbican {parent_name:?} to project into"),
            ),
        ),
        // The parent's target cluster decides where the credentials belong: nothing is minted
        // while it does not resolve.
        (Some(_), _, Err(unresolved)) => (
            Findings {
                credentials: Some(Report::not_ready(
                    T::CredentialsReady,
                    Reason::TargetClusterUnavailable,
                    unresolved,
                )),
                provisioning: None,
                managed: instance.is_some(),
                requeue: UNRESOLVED_REQUEUE,
            },
            Report::not_ready(
                T::ConfigProjected,
                Reason::WaitingForProjection,
                format!(
                    "the parent's target cluster {:?} is unavailable",
                    target.unwrap_or_default()
                ),
            ),
        ),
        (Some(_), Some(spec), Ok(children)) => {
            let findings = match &instance {
                Some(instance) => managed::pass(&env, verified, &store, &children, instance).await,
                None => brownfield::pass(&env, verified, &store, &children, spec).await,
            }
            .map_err(api_failed("working on the store's Secrets"))?;
            let projected = config_projected(&children, &parent_name, &name)
                .await
                .map_err(api_failed("reading the parent's mounted config"))?;
            (findings, projected)
        }
        (Some(_), None, Ok(_)) => (
            Findings::credentials_failed(
                false,
                Reason::WaitingForCredentials,
                "spec.openBao is missing",
                RETRY,
            ),
            Report::not_ready(T::ConfigProjected, Reason::WaitingForProjection, ""),
        ),
    };
    let unresolved = findings
        .credentials
        .as_ref()
        .is_some_and(|c| c.reason == Reason::TargetClusterUnavailable);
    let mut requeue = findings.requeue;
    if !projected.ready && parent.is_some() && !unresolved {
        requeue = requeue.min(RETRY);
    }
    let before = store.status.clone().unwrap_or_default();
    let concluded = conclude(
        &before,
        &findings,
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
                .publish(&reference(&store), Severity::Warning, reason, &message)
                .await;
        }
    }
    let conditions = &concluded.as_ref().unwrap_or(&before).conditions;
    env.metrics
        .conditions("BarbicanSecretStore", &name, &namespace, conditions);
    Ok(Next::After(requeue))
}
