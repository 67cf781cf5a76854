//! One pass over one BarbicanSecretStore: the parent, the mode's flow, ConfigProjected, and the
//! status write (skipped when nothing changed).

use std::{sync::Arc, time::Duration};

use k8s_openapi::api::{apps::v1::Deployment, core::v1::Secret};
use kube::{Api, ResourceExt};

use super::{
    brownfield,
    credentials::RETRY,
    managed,
    status::{Findings, StoreReport, conclude, new_failures, projects},
};
use crate::{
    api::{
        barbican::Barbican,
        conditions::{Reason, StoreConditionType as T},
        secret_store::BarbicanSecretStore,
    },
    clusters::{UNRESOLVED_REQUEUE, placement_refusal},
    controller::{
        barbican::{
            config::mounted_config,
            reconcile::{Error, Next, write_status},
            state::Env,
        },
        children::Children,
        events::{Severity, reference},
        status::Report,
    },
};

/// How long a store without a parent waits before looking again.
pub const WAITING_FOR_PARENT: Duration = Duration::from_secs(15);

fn api_failed(what: &'static str) -> impl FnOnce(kube::Error) -> Error {
    move |source| Error::Api { what, source }
}

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
/// and its verdict (garbage collection reclaims `<store>-approle`).
pub fn forget(env: &Env, store: &BarbicanSecretStore) {
    env.metrics
        .forget_store(&store.name_any(), &store.namespace().unwrap_or_default());
    env.verified.forget(&super::verified::key(store));
}

/// Runs one pass over `cached` (re-read first: the watch cache may lag the last status write).
pub async fn reconcile(env: Arc<Env>, cached: Arc<BarbicanSecretStore>) -> Result<Next, Error> {
    let (name, namespace) = (cached.name_any(), cached.namespace().unwrap_or_default());
    let api: Api<BarbicanSecretStore> = Api::namespaced(env.client.clone(), &namespace);
    let store = api
        .get_opt(&name)
        .await
        .map_err(api_failed("reading the BarbicanSecretStore"))?;
    let Some(store) = store.filter(|s| s.uid() == cached.uid()) else {
        forget(&env, &cached);
        return Ok(Next::AwaitChange);
    };
    if store.metadata.deletion_timestamp.is_some() {
        forget(&env, &store);
        return Ok(Next::AwaitChange);
    }
    let children = Children::local(env.client.clone(), &namespace);
    let parent_name = store.spec.barbican_ref.name.clone();
    let parent = Api::<Barbican>::namespaced(env.client.clone(), &namespace)
        .get_opt(&parent_name)
        .await
        .map_err(api_failed("reading the parent Barbican"))?;
    let open_bao = store.spec.open_bao.as_ref();
    let instance = open_bao
        .and_then(|o| o.instance_ref.as_ref())
        .map(|i| i.name.clone());
    let target = parent
        .as_ref()
        .and_then(|p| p.spec.target_cluster_ref.as_ref())
        .map(|t| t.name.as_str());
    let refusal = placement_refusal(&env.clusters, target);
    let (findings, projected) = match (&parent, open_bao) {
        // The parent's target cluster decides where the credentials belong: nothing is minted
        // while it does not resolve.
        (Some(_), _) if refusal.is_some() => (
            Findings {
                credentials: Some(Report::not_ready(
                    T::CredentialsReady,
                    Reason::TargetClusterUnavailable,
                    refusal.clone().unwrap_or_default(),
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
        (None, _) => (
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
        (Some(_), Some(spec)) => {
            let findings = match &instance {
                Some(instance) => managed::pass(&env, &store, instance).await,
                None => brownfield::pass(&env, &store, spec).await,
            }
            .map_err(api_failed("working on the store's Secrets"))?;
            let projected = config_projected(&children, &parent_name, &name)
                .await
                .map_err(api_failed("reading the parent's mounted config"))?;
            (findings, projected)
        }
        (Some(_), None) => (
            Findings::credentials_failed(
                false,
                Reason::WaitingForCredentials,
                "spec.openBao is missing",
                RETRY,
            ),
            Report::not_ready(T::ConfigProjected, Reason::WaitingForProjection, ""),
        ),
    };
    let mut requeue = findings.requeue;
    if !projected.ready && parent.is_some() && refusal.is_none() {
        requeue = requeue.min(RETRY);
    }
    let before = store.status.clone().unwrap_or_default();
    if let Some(status) = conclude(
        &before,
        &findings,
        &projected,
        store.metadata.generation,
        env.clock.now(),
    ) {
        write_status(&api, &name, &before, &status)
            .await
            .map_err(api_failed("writing the store's status"))?;
        for (reason, message) in new_failures(&before.conditions, &status.conditions) {
            env.events
                .publish(&reference(&store), Severity::Warning, &reason, &message)
                .await;
        }
    }
    Ok(Next::After(requeue))
}
