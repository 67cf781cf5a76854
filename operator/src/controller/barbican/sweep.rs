//! The Barbican's children swept after each pass, kind by kind (see
//! [`crate::controller::runtime::sweep`]), and the one table of the kinds a Barbican projects
//! that both this sweep and the deletion sweep and remote watches read
//! ([`super::projected_kinds`]).

use futures::future::BoxFuture;
use k8s_openapi::api::{
    apps::v1::Deployment,
    autoscaling::v2::HorizontalPodAutoscaler,
    batch::v1::{CronJob, Job},
    core::v1::{ConfigMap, Secret, Service},
    networking::v1::NetworkPolicy,
    policy::v1::PodDisruptionBudget,
};
use kube::api::ApiResource;

use super::{
    backend_tls::backend_tls_policy_resource,
    database::{MARIADB_KINDS, mariadb_resource},
    labels,
    state::State,
};
use crate::controller::{
    discovery::{certificate_resource, http_route_resource},
    runtime::children::{Child, Children, owner_selector},
    step_error::{StepError, api_error},
};

/// A typed kind's sweep: the children's handle and the label selector to list by.
type Sweeper = for<'a> fn(&'a Children, &'a str) -> BoxFuture<'a, Result<Vec<String>, kube::Error>>;

fn typed<K: Child>() -> (ApiResource, Option<Sweeper>) {
    (
        ApiResource::erase::<K>(&()),
        Some(|children, selector| Box::pin(children.sweep::<K>(selector))),
    )
}

/// The built-in kinds a Barbican projects, each with its sweep; `None` for the Jobs, which no
/// pass sweeps (the db-sync Job is replaced by name, the db-clean runs are the CronJob's).
pub fn built_in_kinds() -> Vec<(ApiResource, Option<Sweeper>)> {
    vec![
        typed::<Deployment>(),
        typed::<Service>(),
        typed::<PodDisruptionBudget>(),
        typed::<HorizontalPodAutoscaler>(),
        typed::<NetworkPolicy>(),
        typed::<CronJob>(),
        (ApiResource::erase::<Job>(&()), None),
        typed::<Secret>(),
        typed::<ConfigMap>(),
    ]
}

/// The selectors the sweep lists by: on the management cluster the common labels (and none
/// for the MariaDB CRs, which the reference writes without labels); on a target cluster the
/// owner labels every child carries there.
fn selectors(state: &State) -> (String, String) {
    let name = state.name();
    if state.children.cluster().is_some() {
        let owner = owner_selector("Barbican", &name, &state.namespace());
        return (owner.clone(), owner);
    }
    let common = labels::common(&name)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    (common, String::new())
}

/// The kinds only known at run time the sweep lists, each with whether it is listed by the
/// children's labels (the HTTPRoute, the BackendTLSPolicy, the Certificate) or not (the MariaDB CRs, written without
/// them).
fn dynamic_kinds() -> Vec<(ApiResource, bool)> {
    [
        (http_route_resource(), true),
        (backend_tls_policy_resource(), true),
        (certificate_resource(), true),
    ]
    .into_iter()
    .chain(MARIADB_KINDS.map(|(kind, plural)| (mariadb_resource(kind, plural), false)))
    .collect()
}

/// The kinds the sweep lists, by name: the built-in kinds with a sweep, the HTTPRoute, the
/// BackendTLSPolicy, the Certificate and the MariaDB CRs.
pub fn swept_kinds() -> Vec<String> {
    let built_in = built_in_kinds().into_iter().filter(|(_, s)| s.is_some());
    built_in
        .map(|(kind, _)| kind)
        .chain(dynamic_kinds().into_iter().map(|(kind, _)| kind))
        .map(|kind| kind.kind)
        .collect()
}

/// Deletes the Barbican's children of the kinds in `sweepable` (those the pass's steps that
/// make them all went through) that the pass did not read, write or keep; returns what it
/// deleted ("Kind name").
pub async fn sweep(state: &State, sweepable: &[&str]) -> Result<Vec<String>, StepError> {
    let children = &state.children;
    let (labelled, mariadb) = selectors(state);
    let failed = |e| api_error("sweeping the children the spec no longer asks for", e);
    let due = |kind: &ApiResource| sweepable.contains(&kind.kind.as_str());
    let mut deleted = Vec::new();
    for (kind, sweeper) in built_in_kinds() {
        if let Some(sweeper) = sweeper.filter(|_| due(&kind)) {
            deleted.extend(sweeper(children, &labelled).await.map_err(failed)?);
        }
    }
    for (kind, by_labels) in dynamic_kinds() {
        if due(&kind) {
            let selector = if by_labels { &labelled } else { &mariadb };
            let swept = children.sweep_dynamic(&kind, selector).await;
            deleted.extend(swept.map_err(failed)?);
        }
    }
    Ok(deleted)
}
