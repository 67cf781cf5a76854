//! The per-CR cluster handle: every read and write of a Barbican's children goes through one
//! [`Children`], so choosing the cluster they land on (the target-cluster work) changes this
//! one place rather than every step.
//!
//! A child is created by POST and changed by server-side applies under the reference's field
//! manager, forced, each naming the uid of the object it checked. An apply is skipped when the
//! live object already carries everything the desired one says, so a pass over a converged
//! Barbican sends no write at all.
//!
//! Every write passes one ownership rule ([`made_for`]): a child is applied, created or
//! deleted only when it is absent or was made for the handle's [`Owner`]. A foreign object
//! that merely shares a child's name is never modified: an apply or create meets
//! [`ChildError::NameTaken`], a delete leaves it alone, and a delete names the uid it checked
//! as a precondition, so an object replaced in between is not the one deleted.
//!
//! The handle also records every child a pass read, wrote or [`Children::keep`]s by name:
//! after the pass, [`Children::sweep`] deletes this owner's children of a kind whose steps all
//! went through that it did not record (see [`super::sweep`]), so a child the spec no longer
//! asks for goes without a step deciding to delete it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Api, Client, Resource,
    api::{ApiResource, DeleteParams, DynamicObject, ListParams, PostParams, Preconditions},
};
use serde::{Serialize, de::DeserializeOwned};
use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{Arc, Mutex},
};

pub use super::applied::{APPLIED_HASH_ANNOTATION, covers, owns_unwanted, stamped};
use super::cache::{Cache, Cached};
use super::converge::converge;
pub use super::ownership::{
    ChildError, MAX_LABEL_VALUE_LENGTH, Owner, Taken, is_ours, label_owner_refusal, made_for,
    owned_by, owner_labels, owner_selector,
};
pub use crate::api::names::FIELD_MANAGER;

/// A namespaced built-in or typed kind the handle reads and writes.
pub trait Child:
    Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
    + Clone
    + Serialize
    + DeserializeOwned
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> Child for K where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + Serialize
        + DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// Where one CR's children live: a client, the cluster's name when it is a target cluster
/// rather than the management cluster, and the CR they are written for (whose namespace is
/// theirs).
#[derive(Clone)]
pub struct Children {
    client: Client,
    owner: Owner,
    cluster: Option<String>,
    /// The namespaces the target cluster's registration limits the operator to, if any.
    allowed: Option<Vec<String>>,
    /// The watch cache, on the management cluster only (see [`super::cache`]).
    cache: Option<Cache>,
    /// The children this pass read, wrote or kept, by kind and name: what the sweep leaves.
    /// Shared by the copies the parallel steps work on.
    kept: Arc<Mutex<BTreeSet<(String, String)>>>,
    /// The client of requests whose answer is a backend's rather than the API server's (the
    /// health probe through `services/proxy`): without kube's retry of 503s, which would
    /// take a barbican answering 503 for an API server that asks to be retried.
    probes: Option<Client>,
}

fn not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}

impl Children {
    /// The children of `owner` on the management cluster (`client`), in its namespace, read
    /// through `cache`.
    pub fn local(client: Client, owner: Owner, cache: Cache) -> Self {
        Self {
            client,
            owner,
            cluster: None,
            allowed: None,
            cache: Some(cache),
            kept: Arc::default(),
            probes: None,
        }
    }

    /// The children of `owner` on the target cluster `cluster` (`client`), in its namespace;
    /// `allowed` is the registration's namespace list (`None`: cluster-wide).
    pub fn remote(
        client: Client,
        owner: Owner,
        cluster: &str,
        allowed: Option<Vec<String>>,
    ) -> Self {
        Self {
            client,
            owner,
            cluster: Some(cluster.to_string()),
            allowed,
            cache: None,
            kept: Arc::default(),
            probes: None,
        }
    }

    /// These children, probing their backends through `probes` (see [`Children::probe_client`]).
    pub fn with_probes(self, probes: Client) -> Self {
        Self {
            probes: Some(probes),
            ..self
        }
    }

    /// The client a probe of a backend through the API server's proxy goes through: one that
    /// does not retry the backend's own 503 as if the API server had asked for it.
    pub fn probe_client(&self) -> &Client {
        self.probes.as_ref().unwrap_or(&self.client)
    }

    /// Whether a target cluster serves the Gateway API, probed now (bounded by the OpenBao
    /// timeout); `None` for the management cluster, whose verdict is the setup probe's. The
    /// spec probes a target on every pass, so a target that was down, or that installs the
    /// Gateway API later, is seen as it is now.
    pub async fn probe_gateway_api(&self) -> Option<crate::controller::discovery::GatewayApi> {
        use crate::controller::discovery::GatewayApi;
        self.cluster.as_ref()?;
        Some(
            tokio::time::timeout(
                crate::openbao::TIMEOUT,
                crate::controller::discovery::probe_gateway_api(&self.client),
            )
            .await
            .unwrap_or_else(|_| GatewayApi::ProbeFailed("the discovery request timed out".into())),
        )
    }

    /// Why nothing may be read or written here: the namespace is outside the ones the target
    /// cluster is registered for.
    pub fn namespace_refusal(&self) -> Option<String> {
        let allowed = self.allowed.as_ref()?;
        (!allowed.contains(&self.owner.namespace)).then(|| {
            format!(
                "namespace {:?} is outside the namespaces cluster {:?} is registered for ({})",
                self.owner.namespace,
                self.cluster.as_deref().unwrap_or_default(),
                allowed.join(", ")
            )
        })
    }

    /// The target cluster's name; `None` on the management cluster.
    pub fn cluster(&self) -> Option<&str> {
        self.cluster.as_deref()
    }

    /// The client of the cluster the children live on.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Records `owner` on a child's metadata: a controller ownerReference on the owner's own
    /// cluster, the three owner labels (and no ownerReference) on a target cluster.
    pub fn stamp<O: Resource<DynamicType = ()>>(&self, meta: &mut ObjectMeta, owner: &O) {
        if self.cluster.is_some() {
            meta.owner_references = None;
            meta.labels
                .get_or_insert_with(BTreeMap::new)
                .extend(owner_labels(
                    &O::kind(&()),
                    owner.meta().name.as_deref().unwrap_or_default(),
                    owner.meta().namespace.as_deref().unwrap_or_default(),
                ));
        } else {
            meta.owner_references = owner.controller_owner_ref(&()).map(|o| vec![o]);
        }
    }

    /// A cluster-scoped kind known only at run time (the ESO ClusterSecretStore).
    pub fn cluster_scoped(&self, resource: &ApiResource) -> Api<DynamicObject> {
        Api::all_with(self.client.clone(), resource)
    }

    /// The namespace the children live in.
    pub fn namespace(&self) -> &str {
        &self.owner.namespace
    }

    /// The typed API of a namespaced kind.
    pub fn api<K: Child>(&self) -> Api<K> {
        Api::namespaced(self.client.clone(), &self.owner.namespace)
    }

    /// The API of a kind known only at run time (HTTPRoute, the ESO stores).
    pub fn dynamic(&self, resource: &ApiResource) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), &self.owner.namespace, resource)
    }

    /// What the watch cache says of `name` (always [`Cached::Unknown`] on a target cluster).
    fn cached<K: Child>(&self, name: &str) -> Cached<K> {
        match &self.cache {
            Some(cache) => cache.get::<K>(Some(&self.owner.namespace), name),
            None => Cached::Unknown,
        }
    }

    /// What the watch cache says of `name` of a kind known only at run time, in the children's
    /// namespace (`namespaced`) or cluster-scoped.
    fn cached_dynamic(
        &self,
        resource: &ApiResource,
        namespaced: bool,
        name: &str,
    ) -> Cached<DynamicObject> {
        let namespace = namespaced.then_some(self.owner.namespace.as_str());
        match &self.cache {
            Some(cache) => cache.get_dynamic(resource, namespace, name),
            None => Cached::Unknown,
        }
    }

    /// Reads `name`, `None` when it does not exist: from the watch cache when it holds it,
    /// from the API server otherwise (so a child created a moment ago is found).
    pub async fn get<K: Child>(&self, name: &str) -> Result<Option<K>, kube::Error> {
        self.read::<K>(name, false).await
    }

    /// Reads this operator's own child `name` (one it creates, carrying its labels), `None`
    /// when it does not exist: unlike [`Children::get`], the watch cache's "absent" is an
    /// answer here, since the cache follows every child of the operator by its labels and
    /// holds a child created a moment ago (see [`Cache::created`]). Never for an input a user
    /// names: those carry no label of the operator's.
    pub async fn get_own_child<K: Child>(&self, name: &str) -> Result<Option<K>, kube::Error> {
        self.read::<K>(name, true).await
    }

    /// [`Children::get`], or with `own_child` [`Children::get_own_child`]: one cache lookup,
    /// the API server only for what the cache cannot answer.
    async fn read<K: Child>(&self, name: &str, own_child: bool) -> Result<Option<K>, kube::Error> {
        self.keep::<K>(name);
        match self.cached::<K>(name) {
            Cached::Present(object) => Ok(Some(object)),
            Cached::Absent
                if own_child && self.cache.as_ref().is_some_and(Cache::holds_all::<K>) =>
            {
                Ok(None)
            }
            Cached::Absent | Cached::Unknown => {
                let read = self.api::<K>().get_opt(name).await?;
                self.hold(read.as_ref());
                Ok(read)
            }
        }
    }

    /// Keeps what a pass read or wrote when its kind is held (see [`super::held`]).
    fn hold<K: Child>(&self, object: Option<&K>) {
        if let (Some(cache), Some(object)) = (&self.cache, object) {
            cache.hold(object);
        }
    }

    /// Reads the input `name` of a kind known only at run time (a MariaDB, an OpenBaoCluster,
    /// an External Secrets store): never created by this operator, so a cached "absent" is
    /// believed (its watch wakes the CRs that name it when it appears).
    pub async fn get_dynamic(
        &self,
        resource: &ApiResource,
        name: &str,
    ) -> Result<Option<DynamicObject>, kube::Error> {
        self.keep_dynamic(resource, name);
        let cached = self.cached_dynamic(resource, true, name);
        known_or_read(cached, &self.dynamic(resource), name).await
    }

    /// [`Children::get_dynamic`] for a kind that may not be served here: on the management
    /// cluster only the watch cache answers (a kind it does not watch is not served, so there
    /// is nothing to find and nothing to ask), elsewhere the API server does (a 404 for the
    /// kind is "nothing").
    pub async fn find_dynamic(
        &self,
        resource: &ApiResource,
        name: &str,
    ) -> Result<Option<DynamicObject>, kube::Error> {
        self.keep_dynamic(resource, name);
        match (&self.cache, self.cached_dynamic(resource, true, name)) {
            (_, Cached::Present(object)) => Ok(Some(object)),
            (Some(_), _) | (None, Cached::Absent) => Ok(None),
            (None, Cached::Unknown) => match self.dynamic(resource).get_opt(name).await {
                Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
                other => other,
            },
        }
    }

    /// [`Children::get_dynamic`] for a cluster-scoped kind.
    pub async fn get_cluster_scoped(
        &self,
        resource: &ApiResource,
        name: &str,
    ) -> Result<Option<DynamicObject>, kube::Error> {
        let cached = self.cached_dynamic(resource, false, name);
        known_or_read(cached, &self.cluster_scoped(resource), name).await
    }

    /// Lists the children matching `labels` (a label selector), from the watch cache when it
    /// can answer.
    pub async fn list<K: Child>(&self, labels: &str) -> Result<Vec<K>, kube::Error> {
        if let Some(found) = self
            .cache
            .as_ref()
            .and_then(|c| c.list::<K>(&self.owner.namespace, labels))
        {
            return Ok(found);
        }
        let listed = self
            .api::<K>()
            .list(&ListParams::default().labels(labels))
            .await?
            .items;
        for object in &listed {
            self.hold(Some(object));
        }
        Ok(listed)
    }

    /// The ownership rule ([`is_ours`]) applied to `live`, an object of `kind` this handle
    /// is about to write: [`ChildError::NameTaken`] when it is someone else's.
    fn claim(&self, kind: &str, live: &ObjectMeta) -> Result<(), ChildError> {
        if is_ours(self.cluster(), live, &self.owner) {
            return Ok(());
        }
        Err(ChildError::NameTaken(Box::new(Taken {
            kind: kind.to_string(),
            name: live.name.clone().unwrap_or_default(),
            namespace: self.owner.namespace.clone(),
            cluster: self.cluster.clone(),
            owner_kind: self.owner.kind.clone(),
            owner: self.owner.name.clone(),
        })))
    }

    /// Reads the child `name`: `None` when it does not exist, [`ChildError::NameTaken`] when
    /// an object of that name is someone else's (a step never takes a foreign object's state
    /// for its child's).
    ///
    /// A child is this operator's, so the watch cache's "absent" is believed where it follows
    /// the kind ([`Children::get_own_child`]): an object someone else made under the name is
    /// then found by the create that follows (a 409, then [`ChildError::NameTaken`]).
    pub async fn own<K: Child>(&self, name: &str) -> Result<Option<K>, ChildError> {
        let live = self.get_own_child::<K>(name).await?;
        if let Some(live) = &live {
            self.claim(&K::kind(&()), live.meta())?;
        }
        Ok(live)
    }

    /// Makes `desired` live: created when absent, applied when the live object lacks anything
    /// it says, left alone otherwise; refused with [`ChildError::NameTaken`] when the live
    /// object is not this owner's. Returns the live object.
    ///
    /// There is no window between the ownership check and the write: an absent child is
    /// created by POST (an object made under its name in the meantime makes it a 409, and is
    /// then read and checked), and an apply names the uid of the object it checked, so an
    /// object replaced in between refuses it.
    pub async fn ensure<K: Child>(&self, desired: &K) -> Result<K, ChildError> {
        let name = desired.meta().name.clone().unwrap_or_default();
        self.keep::<K>(&name);
        let cached = self.cached::<K>(&name);
        let before = match &cached {
            Cached::Present(object) => object.meta().resource_version.clone(),
            _ => None,
        };
        let was_absent = matches!(cached, Cached::Absent);
        let kind = K::kind(&());
        let live = converge(&self.api::<K>(), desired, cached, |live| {
            self.claim(&kind, live)
        })
        .await?;
        self.hold(Some(&live));
        match (&self.cache, before) {
            (Some(cache), Some(before)) => cache.wrote(Some(&self.owner.namespace), &before, &live),
            (Some(cache), None) if was_absent => cache.created(Some(&self.owner.namespace), &live),
            _ => {}
        }
        Ok(live)
    }

    /// [`Children::ensure`] for a kind known only at run time.
    pub async fn ensure_dynamic(
        &self,
        resource: &ApiResource,
        desired: &DynamicObject,
    ) -> Result<DynamicObject, ChildError> {
        let name = desired.meta().name.clone().unwrap_or_default();
        self.keep_dynamic(resource, &name);
        let cached = self.cached_dynamic(resource, true, &name);
        let before = match &cached {
            Cached::Present(object) => object.meta().resource_version.clone(),
            _ => None,
        };
        let was_absent = matches!(cached, Cached::Absent);
        let live = converge(&self.dynamic(resource), desired, cached, |live| {
            self.claim(&resource.kind, live)
        })
        .await?;
        let namespace = Some(self.owner.namespace.as_str());
        match (&self.cache, before) {
            (Some(cache), Some(before)) => cache.wrote_dynamic(resource, namespace, &before, &live),
            (Some(cache), None) if was_absent => cache.created_dynamic(resource, namespace, &live),
            _ => {}
        }
        Ok(live)
    }

    /// Creates `object`; an existing one of the same name is returned as it is when it is this
    /// owner's, and refused with [`ChildError::NameTaken`] when it is not.
    pub async fn create<K: Child>(&self, object: &K) -> Result<K, ChildError> {
        self.keep::<K>(object.meta().name.as_deref().unwrap_or_default());
        let api = self.api::<K>();
        let live = match api.create(&PostParams::default(), object).await {
            Err(kube::Error::Api(status)) if status.code == 409 => {
                let name = object.meta().name.clone().unwrap_or_default();
                let live = api.get(&name).await?;
                self.claim(&K::kind(&()), live.meta())?;
                live
            }
            other => other?,
        };
        self.hold(Some(&live));
        Ok(live)
    }

    /// Records that this pass keeps the child `name` of kind `K` although it neither read nor
    /// wrote it (a step waiting for its inputs leaves its child as it is): the sweep leaves it.
    pub fn keep<K: Child>(&self, name: &str) {
        self.note(&K::kind(&()), name);
    }

    /// [`Children::keep`] for a kind known only at run time.
    pub fn keep_dynamic(&self, resource: &ApiResource, name: &str) {
        self.note(&resource.kind, name);
    }

    fn note(&self, kind: &str, name: &str) {
        self.kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((kind.to_string(), name.to_string()));
    }

    /// Deletes this owner's children of kind `K` labelled `selector` that the pass did not
    /// keep ([`super::sweep::unkept`]); returns them as `Kind name`. Only for a kind whose
    /// steps all went through this pass: a step that stopped early may not have kept all of
    /// its children yet.
    pub async fn sweep<K: Child>(&self, selector: &str) -> Result<Vec<String>, kube::Error> {
        let live = self.list::<K>(selector).await?;
        let metas = live.iter().map(|o| o.meta()).collect();
        self.delete_unkept(&self.api::<K>(), &K::kind(&()), metas)
            .await
    }

    /// [`Children::sweep`] for a kind known only at run time. On the management cluster a kind
    /// the watch cache does not follow is not served (nothing to sweep) or not listed yet (the
    /// next pass sweeps); on a target cluster a kind it does not serve answers 404.
    pub async fn sweep_dynamic(
        &self,
        resource: &ApiResource,
        selector: &str,
    ) -> Result<Vec<String>, kube::Error> {
        let api = self.dynamic(resource);
        let live: Vec<Arc<DynamicObject>> = match &self.cache {
            Some(cache) => cache
                .list_dynamic(resource, &self.owner.namespace, selector)
                .unwrap_or_default(),
            None => match api.list(&ListParams::default().labels(selector)).await {
                Ok(list) => list.items.into_iter().map(Arc::new).collect(),
                Err(e) if not_found(&e) => Vec::new(),
                Err(e) => return Err(e),
            },
        };
        let metas = live.iter().map(|o| o.meta()).collect();
        self.delete_unkept(&api, &resource.kind, metas).await
    }

    /// Deletes, of `live` (objects of `kind` through `api`), the ones the sweep takes.
    async fn delete_unkept<K>(
        &self,
        api: &Api<K>,
        kind: &str,
        live: Vec<&ObjectMeta>,
    ) -> Result<Vec<String>, kube::Error>
    where
        K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
    {
        let unkept = {
            let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            super::sweep::unkept(self.cluster(), &self.owner, kind, &kept, live)
        };
        let mut deleted = Vec::new();
        for meta in unkept {
            if self.delete_live(api, Some(meta)).await? {
                let name = meta.name.as_deref().unwrap_or_default();
                deleted.push(format!("{kind} {name}"));
            }
        }
        Ok(deleted)
    }

    /// Deletes the child `name` when it exists and is this owner's; `true` when a delete was
    /// issued. An object of that name that is someone else's is left alone.
    pub async fn delete<K: Child>(&self, name: &str) -> Result<bool, kube::Error> {
        let live = known_or_read(self.cached::<K>(name), &self.api::<K>(), name).await?;
        self.delete_live(&self.api::<K>(), live.as_ref().map(|l| l.meta()))
            .await
    }

    /// [`Children::delete`] for a kind known only at run time.
    pub async fn delete_dynamic(
        &self,
        resource: &ApiResource,
        name: &str,
    ) -> Result<bool, kube::Error> {
        let cached = self.cached_dynamic(resource, true, name);
        let api = self.dynamic(resource);
        let live = known_or_read(cached, &api, name).await?;
        self.delete_live(&api, live.as_ref().map(|l| l.meta()))
            .await
    }

    /// Deletes the object `live` describes unless it is gone, going, or not this owner's. The
    /// delete names the uid that was checked, so an object replaced since is not deleted (the
    /// API server answers 409 and the next pass looks again).
    async fn delete_live<K>(
        &self,
        api: &Api<K>,
        live: Option<&ObjectMeta>,
    ) -> Result<bool, kube::Error>
    where
        K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
    {
        let Some(live) = live else {
            return Ok(false);
        };
        if live.deletion_timestamp.is_some() || !is_ours(self.cluster(), live, &self.owner) {
            return Ok(false);
        }
        let name = live.name.clone().unwrap_or_default();
        let params = DeleteParams {
            preconditions: live.uid.clone().map(|uid| Preconditions {
                uid: Some(uid),
                resource_version: None,
            }),
            ..DeleteParams::background()
        };
        match api.delete(&name, &params).await {
            Ok(_) => Ok(true),
            Err(e) if not_found(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// The object as the cache knows it, a cached "absent" believed; read when the cache does not
/// know (for the callers where a stale "absent" is harmless: see [`super::cache`]).
async fn known_or_read<K>(
    cached: Cached<K>,
    api: &Api<K>,
    name: &str,
) -> Result<Option<K>, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match cached {
        Cached::Present(object) => Ok(Some(object)),
        Cached::Absent => Ok(None),
        Cached::Unknown => api.get_opt(name).await,
    }
}

/// A client whose requests are never answered, for tests of what is decided before any
/// request is sent.
#[cfg(test)]
pub(crate) fn unanswered_client() -> Client {
    let (service, _handle) = tower_test::mock::pair::<
        http::Request<kube::client::Body>,
        http::Response<kube::client::Body>,
    >();
    Client::new(service, "default")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::names::{OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL};

    use crate::controller::runtime::children::unanswered_client as client;

    fn barbican(name: &str) -> crate::api::barbican::Barbican {
        let mut barbican = crate::api::fixtures::barbican();
        barbican.metadata.name = Some(name.into());
        barbican.metadata.namespace = Some("openstack".into());
        barbican.metadata.uid = Some("uid-1".into());
        barbican
    }

    #[tokio::test]
    async fn remote_children_carry_the_owner_labels_and_no_owner_reference() {
        let owner = barbican("kms");
        let remote = Children::remote(client(), Owner::of(&owner), "edge-1", None);
        assert_eq!(remote.namespace_refusal(), None, "cluster-wide");
        let limited = Children::remote(
            client(),
            Owner::of(&owner),
            "edge-1",
            Some(vec!["tenant".into()]),
        );
        assert!(
            limited
                .namespace_refusal()
                .unwrap()
                .contains("outside the namespaces cluster \"edge-1\" is registered for (tenant)")
        );
        let mut meta = ObjectMeta {
            name: Some("kms".into()),
            namespace: Some("openstack".into()),
            ..ObjectMeta::default()
        };
        remote.stamp(&mut meta, &owner);
        assert_eq!(meta.owner_references, None);
        let labels = meta.labels.clone().unwrap();
        assert_eq!(labels[OWNER_KIND_LABEL], "Barbican");
        assert_eq!(labels[OWNER_NAME_LABEL], "kms");
        assert_eq!(labels[OWNER_NAMESPACE_LABEL], "openstack");
        let secret = k8s_openapi::api::core::v1::Secret {
            metadata: meta.clone(),
            ..Default::default()
        };
        assert!(owned_by(&secret, &owner));
        assert!(!owned_by(&secret, &barbican("other")), "another owner");
        let mut elsewhere = secret.clone();
        elsewhere.metadata.namespace = Some("tenant".into());
        assert!(
            !owned_by(&elsewhere, &owner),
            "only in the owner's namespace"
        );

        let local = Children::local(client(), Owner::of(&owner), Cache::default());
        let mut meta = ObjectMeta::default();
        local.stamp(&mut meta, &owner);
        let reference = &meta.owner_references.clone().unwrap()[0];
        assert_eq!(
            (reference.uid.as_str(), reference.controller),
            ("uid-1", Some(true))
        );
        assert_eq!(
            meta.labels, None,
            "no owner labels on the owner's own cluster"
        );
        let legacy = k8s_openapi::api::core::v1::Secret {
            metadata: meta,
            ..Default::default()
        };
        assert!(
            owned_by(&legacy, &owner),
            "the ownerReference an older operator left"
        );
    }
}
