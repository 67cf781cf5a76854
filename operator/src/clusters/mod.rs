//! Target clusters: the registry of clusters registered by Secrets in `--clusters-namespace`,
//! each engaged with a client of its own, and the resolution a CR's `targetClusterRef` goes
//! through. See `target-clusters.md`.
//!
//! - [`registration`]: reading one registration Secret (pure).
//! - [`Registry`]: the engaged clusters by name, kept in step with the Secrets by
//!   [`run_registry`]; a changed kubeconfig or namespace list (its hash) is engaged afresh, a
//!   deleted Secret deregisters the cluster.

pub mod registration;
pub mod tunnel;

use std::{
    collections::BTreeMap,
    future::Future,
    sync::{Arc, Mutex, RwLock},
};

use jiff::Timestamp;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, Client, ResourceExt,
    config::{KubeConfigOptions, Kubeconfig},
    runtime::{WatchStreamExt, watcher},
};

pub use registration::{REGISTRATION_LABEL, Registration, RegistrationError};

use crate::controller::{
    runtime::cache::Cache,
    runtime::children::{Children, Owner},
};

/// The namespace registration Secrets live in unless `--clusters-namespace` says otherwise.
pub const DEFAULT_CLUSTERS_NAMESPACE: &str = "c5c3-clusters";

/// A cluster the operator is connected to.
#[derive(Clone)]
pub struct Engaged {
    /// The cluster name.
    pub name: String,
    /// The client every read and write on it goes through.
    pub client: Client,
    /// The client of the health probes through its `services/proxy`: kube's retry of 503s
    /// off, since a 503 there is barbican's own answer.
    pub probes: Client,
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
    Engaged(Box<Engaged>),
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
#[derive(Clone)]
pub struct Registry {
    entries: Arc<RwLock<BTreeMap<String, Entry>>>,
    /// When this process first failed to resolve each cluster (cleared when it resolves): the
    /// second of the two windows a deletion waits out.
    failures: Arc<Mutex<BTreeMap<String, Timestamp>>>,
    /// Bumped on every engagement and deregistration, so the remote watches can follow.
    changes: Arc<tokio::sync::watch::Sender<u64>>,
    disabled: bool,
    /// Counts the requests of every engaged cluster's client, as the management cluster's
    /// are (see [`crate::kube_requests`]).
    counting: Option<crate::kube_requests::CountRequests>,
}

impl Default for Registry {
    fn default() -> Self {
        Self {
            entries: Arc::default(),
            failures: Arc::default(),
            changes: Arc::new(tokio::sync::watch::channel(0).0),
            disabled: false,
            counting: None,
        }
    }
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

/// How long a deletion waits for an unresolvable target cluster, in each of its two windows.
pub const ABANDON_AFTER: std::time::Duration = std::time::Duration::from_secs(300);

/// Whether a deletion may give up on its target cluster's children: both windows, 5 minutes
/// since the deletion timestamp and 5 minutes since this process first failed to resolve the
/// cluster, have run out.
pub fn may_abandon(deleted_at: Timestamp, first_failed_at: Timestamp, now: Timestamp) -> bool {
    let after = jiff::SignedDuration::try_from(ABANDON_AFTER).unwrap_or_default();
    // Timestamps come from the API server: one near the end of time must not overflow.
    let passed = |since: Timestamp| since.checked_add(after).is_ok_and(|due| now >= due);
    passed(deleted_at) && passed(first_failed_at)
}

/// Where the children of `owner` naming `target` live: the management cluster (`management`,
/// read through its watch `cache`) without a target, the engaged target cluster otherwise, or
/// the resolver's error. A failure is recorded at `now` (see [`Registry::first_failure`]).
pub fn place(
    registry: &Registry,
    management: &Client,
    cache: &Cache,
    owner: Owner,
    target: Option<&str>,
    now: Timestamp,
) -> Result<Children, ResolveError> {
    let Some(target) = target else {
        return Ok(Children::local(management.clone(), owner, cache.clone()));
    };
    let mut failures = registry.failures.lock().unwrap_or_else(|p| p.into_inner());
    match registry.resolve(target) {
        Ok(engaged) => {
            failures.remove(target);
            Ok(
                Children::remote(engaged.client, owner, target, engaged.namespaces)
                    .with_probes(engaged.probes),
            )
        }
        Err(unresolved) => {
            failures.entry(target.to_string()).or_insert(now);
            Err(unresolved)
        }
    }
}

/// The User-Agent of the operator's requests, on the management cluster and on every target
/// cluster, so their audit logs name it (kube's client sends none of its own).
pub const USER_AGENT: &str = concat!("barbican-operator/", env!("CARGO_PKG_VERSION"));

/// Makes `config`'s requests carry [`USER_AGENT`].
pub fn identify(config: &mut kube::Config) {
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(USER_AGENT),
    ));
}

/// Builds the clients of a registration, their requests counted by `counting` when given:
/// the one every request goes through, and the one of the health probes through its proxy,
/// without kube's retries of 429, 503 and 504 (a backend's 503 is its answer, and retrying
/// it for up to fifteen times made an unhealthy barbican a probe that timed out).
pub async fn connect(
    kubeconfig: Kubeconfig,
    counting: Option<&crate::kube_requests::CountRequests>,
) -> Result<(Client, Client), String> {
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .map_err(|e| format!("the kubeconfig does not configure a client: {e}"))?;
    identify(&mut config);
    let build = |config: kube::Config| -> Result<Client, String> {
        let builder = kube::client::ClientBuilder::try_from(config)
            .map_err(|e| format!("building the client failed: {e}"))?;
        Ok(match counting {
            Some(layer) => builder.with_layer(layer).build(),
            None => builder.build(),
        })
    };
    let mut probes = config.clone();
    probes.default_retry = false;
    Ok((build(config)?, build(probes)?))
}

impl Registry {
    /// This registry, counting the requests of the clients it engages with `layer`.
    pub fn counting(self, layer: crate::kube_requests::CountRequests) -> Self {
        Self {
            counting: Some(layer),
            ..self
        }
    }

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
            Some(Entry::Engaged(engaged)) => Ok(engaged.as_ref().clone()),
            Some(Entry::Refused { reason, .. }) => Err(ResolveError::Refused {
                name: name.to_string(),
                reason: reason.clone(),
            }),
        }
    }

    /// When this process first failed to resolve `name` through [`place`], since it last
    /// resolved.
    pub fn first_failure(&self, name: &str) -> Option<Timestamp> {
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures.get(name).copied()
    }

    /// Whether the deletion of the object `meta` may give up on its children on `cluster`
    /// ([`may_abandon`] over its deletion timestamp and this process's first failure to
    /// resolve the cluster; either unknown counts as `now`).
    pub fn gives_up_on(
        &self,
        cluster: &str,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        now: Timestamp,
    ) -> bool {
        let deleted_at = meta.deletion_timestamp.as_ref().map_or(now, |t| t.0);
        let first = self.first_failure(cluster).unwrap_or(now);
        may_abandon(deleted_at, first, now)
    }

    /// The engaged clusters.
    pub fn engaged(&self) -> Vec<Engaged> {
        self.read()
            .values()
            .filter_map(|e| match e {
                Entry::Engaged(engaged) => Some(engaged.as_ref().clone()),
                Entry::Refused { .. } => None,
            })
            .collect()
    }

    /// A receiver that sees a change whenever a cluster is engaged or deregistered.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
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
                self.changed();
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
        let entry = match connect(registration.kubeconfig, self.counting.as_ref()).await {
            Ok((client, probes)) => {
                tracing::info!(cluster = %name, namespaces = ?registration.namespaces, "engaged a target cluster");
                Entry::Engaged(Box::new(Engaged {
                    name: name.clone(),
                    client,
                    probes,
                    namespaces: registration.namespaces,
                    hash: registration.hash,
                }))
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
        self.changed();
    }

    /// Deregisters `name`.
    pub fn remove(&self, name: &str) {
        if self.write().remove(name).is_some() {
            tracing::info!(cluster = %name, "deregistered a target cluster");
            self.changed();
        }
    }

    /// Keeps only the clusters named in `present` (after a relist).
    pub fn retain(&self, present: &[String]) {
        let before = self.read().len();
        self.write().retain(|name, _| present.contains(name));
        if self.read().len() != before {
            self.changed();
        }
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
    let events =
        watcher(api, config).backoff(crate::controller::runtime::relist::Relist::default());
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

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    #[test]
    fn a_deletion_timestamp_at_the_end_of_time_never_overflows() {
        let end = Timestamp::MAX;
        assert!(!may_abandon(end, at(0), at(10_000)));
        assert!(!may_abandon(at(0), end, at(10_000)));
        assert!(may_abandon(at(0), at(0), at(300)));
    }

    #[test]
    fn a_deletion_gives_up_only_when_both_windows_have_run_out() {
        let deleted = at(0);
        assert!(!may_abandon(deleted, at(0), at(299)), "neither window");
        assert!(may_abandon(deleted, at(0), at(300)), "both at once");
        // A restarted operator first failed two minutes into the deletion: its own window.
        assert!(!may_abandon(deleted, at(120), at(300)));
        assert!(!may_abandon(deleted, at(120), at(419)));
        assert!(may_abandon(deleted, at(120), at(420)));
        // A failure long before the deletion: the deletion's window decides.
        assert!(!may_abandon(at(600), at(0), at(899)));
        assert!(may_abandon(at(600), at(0), at(900)));
    }

    use crate::controller::runtime::children::unanswered_client as client;

    fn registration(name: &str) -> Secret {
        let mut secret = Secret::default();
        secret.metadata.name = Some(name.into());
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
        secret
    }

    #[tokio::test]
    async fn placement_follows_the_target_and_records_the_first_failure() {
        let registry = Registry::default();
        let management = client();
        let place_in = |registry: &Registry, namespace: &str, target: Option<&str>, now| {
            let owner = Owner {
                kind: "Barbican".into(),
                name: "kms".into(),
                namespace: namespace.into(),
                uid: Some("uid-1".into()),
            };
            place(registry, &management, &Cache::default(), owner, target, now)
        };
        let local = place_in(&registry, "openstack", None, at(0)).unwrap();
        assert_eq!(local.cluster(), None, "single-cluster");
        assert_eq!(
            place_in(&registry, "openstack", Some("edge-1"), at(10))
                .err()
                .map(|e| e.to_string())
                .as_deref(),
            Some("cluster not found")
        );
        let _ = place_in(&registry, "openstack", Some("edge-1"), at(20));
        assert_eq!(registry.first_failure("edge-1"), Some(at(10)), "the first");
        assert!(matches!(
            place_in(&Registry::disabled(), "openstack", Some("edge-1"), at(0)),
            Err(ResolveError::Disabled)
        ));
        let changes = registry.changes();
        registry.apply(&registration("edge-1")).await;
        assert!(
            changes.has_changed().unwrap(),
            "the remote watches hear of it"
        );
        let placed = place_in(&registry, "openstack", Some("edge-1"), at(30)).unwrap();
        assert_eq!(placed.cluster(), Some("edge-1"));
        assert_eq!(placed.namespace(), "openstack");
        assert_eq!(
            registry.first_failure("edge-1"),
            None,
            "cleared once it resolves"
        );
        assert_eq!(registry.engaged().len(), 1);
        assert_eq!(placed.namespace_refusal(), None, "cluster-wide");

        let mut limited = registration("edge-2");
        limited.data.as_mut().unwrap().insert(
            "namespaces".into(),
            ByteString(b"tenant-a,tenant-b".to_vec()),
        );
        registry.apply(&limited).await;
        let placed = place_in(&registry, "openstack", Some("edge-2"), at(40)).unwrap();
        assert!(
            placed
                .namespace_refusal()
                .unwrap()
                .contains("(tenant-a, tenant-b)")
        );
        let inside = place_in(&registry, "tenant-b", Some("edge-2"), at(40)).unwrap();
        assert_eq!(inside.namespace_refusal(), None);
    }
}
