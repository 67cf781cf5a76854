//! The watches on the registered target clusters: for every engaged cluster, the kinds the
//! operator projects there and the inputs it reads there, each event routed only to the CRs
//! (and stores) whose Barbican names that cluster. The set of watches follows the registry: a
//! newly engaged cluster gets its watches, a re-engaged one (changed kubeconfig or namespaces)
//! gets fresh ones, a deregistered one loses them.

use std::{
    collections::{BTreeMap, BTreeSet},
    future::Future,
};

use futures::{StreamExt, channel::mpsc, stream::BoxStream};
use kube::{
    Api,
    api::{ApiResource, DynamicObject},
    runtime::{WatchStreamExt, reflector::ObjectRef, reflector::Store, watcher},
};

use super::{
    barbican::{
        backend_tls::backend_tls_policy_resource,
        database::mariadb_resource,
        projected_kinds,
        secrets::eso,
        wakes::{placed_on, remote_wakes, stores_placed_on},
    },
    discovery::{certificate_resource, http_route_resource, serves},
    secretstore::managed::openbao_cluster_resource,
};
use crate::{
    api::{barbican::Barbican, secret_store::BarbicanSecretStore},
    clusters::{Engaged, Registry},
};

/// Where the wake-ups of the remote watches go: the two controllers' trigger streams.
#[derive(Clone)]
pub struct Wakes {
    /// The Barbican controller's.
    pub barbicans: mpsc::UnboundedSender<ObjectRef<Barbican>>,
    /// The BarbicanSecretStore controller's.
    pub stores: mpsc::UnboundedSender<ObjectRef<BarbicanSecretStore>>,
}

/// The CRD-backed kinds watched on a target cluster when it serves them (mariadb-operator,
/// ESO, OpenBao, Gateway API, cert-manager), each with whether it is namespaced; the built-in projected kinds
/// are watched always.
fn custom() -> Vec<(ApiResource, bool)> {
    vec![
        (mariadb_resource("MariaDB", "mariadbs"), true),
        (mariadb_resource("Database", "databases"), true),
        (mariadb_resource("User", "users"), true),
        (mariadb_resource("Grant", "grants"), true),
        (eso("SecretStore", "secretstores"), true),
        (eso("ClusterSecretStore", "clustersecretstores"), false),
        (openbao_cluster_resource(), true),
        (http_route_resource(), true),
        (certificate_resource(), true),
        (backend_tls_policy_resource(), true),
    ]
}

/// What a remote watch brings: an object of a kind that changed, or a failed watch request.
enum Seen {
    Changed(String, Box<DynamicObject>),
    Failed,
}

/// Whether a cluster's watches are failing: a healthy cluster's first failure wakes the CRs
/// placed on it (a converged CR has no requeue due before the 10-minute resync, and a read
/// of the target in a pass is how it learns the cluster is gone). Later failures of the same
/// stretch wake nothing; any event from the cluster ends the stretch.
#[derive(Debug, Default)]
struct Liveness {
    failing: bool,
}

impl Liveness {
    /// Records a failed watch request: `true` when it starts a failing stretch.
    fn failed(&mut self) -> bool {
        !std::mem::replace(&mut self.failing, true)
    }

    /// Records an event from the cluster.
    fn answered(&mut self) {
        self.failing = false;
    }
}

/// The watch streams of one engaged cluster: per kind, cluster-wide, or one per declared
/// namespace (a cluster-scoped kind is then not watched at all).
async fn streams(engaged: &Engaged) -> Vec<BoxStream<'static, Seen>> {
    let mut kinds: Vec<(ApiResource, bool)> = projected_kinds(false)
        .into_iter()
        .map(|r| (r, true))
        .collect();
    for (resource, namespaced) in custom() {
        if serves(&engaged.client, &resource).await.unwrap_or(false) {
            kinds.push((resource, namespaced));
        }
    }
    let mut streams = Vec::new();
    for (resource, namespaced) in kinds {
        let apis: Vec<Api<DynamicObject>> = match (&engaged.namespaces, namespaced) {
            (None, _) => vec![Api::all_with(engaged.client.clone(), &resource)],
            (Some(namespaces), true) => namespaces
                .iter()
                .map(|ns| Api::namespaced_with(engaged.client.clone(), ns, &resource))
                .collect(),
            (Some(_), false) => Vec::new(),
        };
        for api in apis {
            let kind = resource.kind.clone();
            streams.push(
                watcher(api, watcher::Config::default())
                    .backoff(crate::controller::runtime::relist::Relist::default())
                    .touched_objects()
                    .map(move |event| match event {
                        Ok(object) => Seen::Changed(kind.clone(), Box::new(object)),
                        Err(_) => Seen::Failed,
                    })
                    .boxed(),
            );
        }
    }
    streams
}

/// Watches one engaged cluster until aborted, routing each event.
async fn watch_cluster(
    engaged: Engaged,
    barbicans: Store<Barbican>,
    stores: Store<BarbicanSecretStore>,
    wakes: Wakes,
) {
    let mut events = futures::stream::select_all(streams(&engaged).await);
    let mut liveness = Liveness::default();
    while let Some(seen) = events.next().await {
        let (kind, object) = match seen {
            Seen::Failed => {
                if liveness.failed() {
                    wake_placed(&engaged.name, &barbicans, &stores, &wakes);
                }
                continue;
            }
            Seen::Changed(kind, object) => {
                liveness.answered();
                (kind, *object)
            }
        };
        let (woken, stores_woken) = remote_wakes(
            &engaged.name,
            &kind,
            &object,
            &barbicans.state(),
            &stores.state(),
        );
        for reference in woken {
            let _ = wakes.barbicans.unbounded_send(reference);
        }
        for reference in stores_woken {
            let _ = wakes.stores.unbounded_send(reference);
        }
    }
}

/// A spawned watch that ends when its handle is dropped (with the supervisor, or when its
/// cluster is re-engaged or deregistered).
struct Watching {
    hash: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Wakes every CR whose Barbican names `cluster`, and their stores: an engagement or a
/// deregistration changes what their next pass finds, so it should not wait for a requeue.
fn wake_placed(
    cluster: &str,
    barbicans: &Store<Barbican>,
    stores: &Store<BarbicanSecretStore>,
    wakes: &Wakes,
) {
    let all = barbicans.state();
    for barbican in placed_on(&all, Some(cluster)) {
        let _ = wakes
            .barbicans
            .unbounded_send(ObjectRef::from_obj(barbican.as_ref()));
    }
    for store in stores_placed_on(&stores.state(), &all, Some(cluster)) {
        let _ = wakes
            .stores
            .unbounded_send(ObjectRef::from_obj(store.as_ref()));
    }
}

/// Keeps one set of watches per engaged cluster, following `registry`, until `shutdown`.
pub async fn run_remote_watches(
    registry: Registry,
    barbicans: Store<Barbican>,
    stores: Store<BarbicanSecretStore>,
    wakes: Wakes,
    shutdown: impl Future<Output = ()>,
) {
    let mut changes = registry.changes();
    let mut running: BTreeMap<String, Watching> = BTreeMap::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let engaged: BTreeMap<String, Engaged> = registry
            .engaged()
            .into_iter()
            .map(|e| (e.name.clone(), e))
            .collect();
        // A re-engaged cluster is both dropped and added: one wake-up each.
        let mut changed: BTreeSet<String> = BTreeSet::new();
        running.retain(|name, watching| {
            let current = engaged.get(name).is_some_and(|e| e.hash == watching.hash);
            if !current {
                changed.insert(name.clone());
            }
            current
        });
        for (name, cluster) in engaged {
            if running.contains_key(&name) {
                continue;
            }
            tracing::info!(cluster = %name, "watching a target cluster");
            let task = tokio::spawn(watch_cluster(
                cluster.clone(),
                barbicans.clone(),
                stores.clone(),
                wakes.clone(),
            ));
            running.insert(
                name.clone(),
                Watching {
                    hash: cluster.hash,
                    task,
                },
            );
            changed.insert(name);
        }
        for name in &changed {
            wake_placed(name, &barbicans, &stores, &wakes);
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() {
                // No registry is left to change: the watches run on until the shutdown (an
                // early end would read as a failed task, see `run_barbican_controller`).
                shutdown.await;
                break;
            },
            () = &mut shutdown => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_failure_of_a_stretch_wakes_and_an_event_ends_the_stretch() {
        let mut liveness = Liveness::default();
        assert!(liveness.failed(), "a healthy cluster's first failure wakes");
        assert!(!liveness.failed(), "the same outage wakes once");
        assert!(!liveness.failed());
        liveness.answered();
        assert!(liveness.failed(), "the next outage wakes again");
    }
}
