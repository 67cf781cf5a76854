//! Target clusters: the registry of clusters registered by Secrets in `--clusters-namespace`,
//! each engaged with a client of its own, and the resolution a CR's `targetClusterRef` goes
//! through. See `target-clusters.md`.
//!
//! - [`registration`]: reading one registration Secret (pure).
//! - [`Registry`]: the engaged clusters by name, kept in step with the Secrets by
//!   [`run_registry`]; a changed kubeconfig or namespace list (its hash) is engaged afresh, a
//!   deleted Secret deregisters the cluster.

pub mod registration;

use std::{
    collections::BTreeMap,
    future::Future,
    sync::{Arc, RwLock},
};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, Client, ResourceExt,
    config::{KubeConfigOptions, Kubeconfig},
    runtime::{WatchStreamExt, watcher},
};

pub use registration::{REGISTRATION_LABEL, Registration, RegistrationError};

/// The namespace registration Secrets live in unless `--clusters-namespace` says otherwise.
pub const DEFAULT_CLUSTERS_NAMESPACE: &str = "c5c3-clusters";

/// A cluster the operator is connected to.
#[derive(Clone)]
pub struct Engaged {
    /// The cluster name.
    pub name: String,
    /// The client every read and write on it goes through.
    pub client: Client,
    /// The namespaces LIST/WATCH are limited to; `None` for cluster-wide.
    pub namespaces: Option<Vec<String>>,
    /// The hash of the registration it was engaged from.
    pub hash: String,
}

impl std::fmt::Debug for Engaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engaged")
            .field("name", &self.name)
            .field("namespaces", &self.namespaces)
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Debug)]
enum Entry {
    Engaged(Engaged),
    Refused { hash: String, reason: String },
}

/// Why a cluster name does not resolve; the message is what the CR's condition carries.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// No registration Secret of that name (or it is not labelled).
    #[error("cluster not found")]
    NotFound,
    /// The registration exists but could not be engaged.
    #[error("cluster {name:?} is registered but not engaged: {reason}")]
    Refused {
        /// The cluster name.
        name: String,
        /// Why.
        reason: String,
    },
    /// `--clusters-namespace` is empty: target clusters are switched off.
    #[error("target clusters are switched off (--clusters-namespace is empty)")]
    Disabled,
}

/// The registered clusters by name.
#[derive(Clone, Default)]
pub struct Registry {
    entries: Arc<RwLock<BTreeMap<String, Entry>>>,
    disabled: bool,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("clusters", &self.names())
            .field("disabled", &self.disabled)
            .finish()
    }
}

/// How long a CR whose target cluster does not resolve waits before looking again (flat, no
/// backoff).
pub const UNRESOLVED_REQUEUE: std::time::Duration = std::time::Duration::from_secs(15);

/// Why the children of a CR naming `target` cannot be placed this pass; `None` when the CR
/// has no target (it is single-cluster).
///
/// A name that resolves is refused too, for now: placing children on a target cluster (owner
/// labels instead of ownerReferences, watches and the deletion sweep there) is not built yet,
/// and creating them on the management cluster instead would put them in the wrong place.
pub fn placement_refusal(registry: &Registry, target: Option<&str>) -> Option<String> {
    let target = target?;
    Some(match registry.resolve(target) {
        Err(unresolved) => unresolved.to_string(),
        Ok(_) => format!(
            "cluster {target:?} is engaged, but this operator cannot place children on a target cluster yet"
        ),
    })
}

/// Builds the client of a registration.
pub async fn connect(kubeconfig: Kubeconfig) -> Result<Client, String> {
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("the kubeconfig does not configure a client: {e}"))?;
    Client::try_from(config).map_err(|e| format!("building the client failed: {e}"))
}

impl Registry {
    /// A registry that never resolves anything (`--clusters-namespace` is empty).
    pub fn disabled() -> Self {
        Self {
            disabled: true,
            ..Self::default()
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Entry>> {
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Entry>> {
        self.entries.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The cluster `name`, or why it does not resolve.
    pub fn resolve(&self, name: &str) -> Result<Engaged, ResolveError> {
        if self.disabled {
            return Err(ResolveError::Disabled);
        }
        match self.read().get(name) {
            None => Err(ResolveError::NotFound),
            Some(Entry::Engaged(engaged)) => Ok(engaged.clone()),
            Some(Entry::Refused { reason, .. }) => Err(ResolveError::Refused {
                name: name.to_string(),
                reason: reason.clone(),
            }),
        }
    }

    /// The names registered (engaged or refused).
    pub fn names(&self) -> Vec<String> {
        self.read().keys().cloned().collect()
    }

    /// Takes in a (possibly changed) registration Secret: engages it afresh when its hash
    /// changed, records why when it cannot be, and deregisters a Secret that lost its label.
    pub async fn apply(&self, secret: &Secret) {
        let name = secret.name_any();
        let registration = match registration::parse(secret) {
            Ok(registration) => registration,
            Err(RegistrationError::NotRegistered) => {
                self.remove(&name);
                return;
            }
            Err(refused) => {
                tracing::warn!(cluster = %name, reason = %refused, "a cluster registration is refused");
                self.write().insert(
                    name,
                    Entry::Refused {
                        hash: String::new(),
                        reason: refused.to_string(),
                    },
                );
                return;
            }
        };
        let unchanged = match self.read().get(&name) {
            Some(Entry::Engaged(e)) => e.hash == registration.hash,
            Some(Entry::Refused { hash, .. }) => *hash == registration.hash,
            None => false,
        };
        if unchanged {
            return;
        }
        let entry = match connect(registration.kubeconfig).await {
            Ok(client) => {
                tracing::info!(cluster = %name, namespaces = ?registration.namespaces, "engaged a target cluster");
                Entry::Engaged(Engaged {
                    name: name.clone(),
                    client,
                    namespaces: registration.namespaces,
                    hash: registration.hash,
                })
            }
            Err(reason) => {
                tracing::warn!(cluster = %name, %reason, "a target cluster could not be engaged");
                Entry::Refused {
                    hash: registration.hash,
                    reason,
                }
            }
        };
        self.write().insert(name, entry);
    }

    /// Deregisters `name`.
    pub fn remove(&self, name: &str) {
        if self.write().remove(name).is_some() {
            tracing::info!(cluster = %name, "deregistered a target cluster");
        }
    }

    /// Keeps only the clusters named in `present` (after a relist).
    pub fn retain(&self, present: &[String]) {
        self.write().retain(|name, _| present.contains(name));
    }
}

/// Keeps `registry` in step with the registration Secrets in `namespace` until `shutdown`.
pub async fn run_registry(
    client: Client,
    namespace: String,
    registry: Registry,
    shutdown: impl Future<Output = ()>,
) {
    let api: Api<Secret> = Api::namespaced(client, &namespace);
    let config = watcher::Config::default().labels(REGISTRATION_LABEL);
    let mut seen: Vec<String> = Vec::new();
    let events = watcher(api, config).default_backoff();
    let mut events = std::pin::pin!(events.take_until(shutdown));
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Init) => seen.clear(),
            Ok(watcher::Event::InitApply(secret)) => {
                seen.push(secret.name_any());
                registry.apply(&secret).await;
            }
            Ok(watcher::Event::InitDone) => registry.retain(&seen),
            Ok(watcher::Event::Apply(secret)) => registry.apply(&secret).await,
            Ok(watcher::Event::Delete(secret)) => registry.remove(&secret.name_any()),
            Err(error) => tracing::warn!(%error, "watching the cluster registrations"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    #[tokio::test]
    async fn placement_is_refused_with_the_resolvers_error_and_for_now_on_an_engaged_cluster() {
        let registry = Registry::default();
        assert_eq!(placement_refusal(&registry, None), None, "single-cluster");
        assert_eq!(
            placement_refusal(&registry, Some("edge-1")).as_deref(),
            Some("cluster not found")
        );
        assert!(
            placement_refusal(&Registry::disabled(), Some("edge-1"))
                .unwrap()
                .contains("--clusters-namespace")
        );
        let mut secret = Secret::default();
        secret.metadata.name = Some("edge-1".into());
        secret.metadata.labels =
            Some([(REGISTRATION_LABEL.to_string(), "true".to_string())].into());
        secret.data = Some(
            [(
                "kubeconfig".to_string(),
                ByteString(
                    b"apiVersion: v1\nkind: Config\nclusters:\n- name: e\n  cluster: {server: 'https://e.example:6443'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: e\n  context: {cluster: e, user: u}\ncurrent-context: e\n"
                        .to_vec(),
                ),
            )]
            .into(),
        );
        registry.apply(&secret).await;
        assert!(registry.resolve("edge-1").is_ok());
        assert!(
            placement_refusal(&registry, Some("edge-1"))
                .unwrap()
                .contains("cannot place children on a target cluster yet")
        );
    }
}
