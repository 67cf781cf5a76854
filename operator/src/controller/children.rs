//! The per-CR cluster handle: every read and write of a Barbican's children goes through one
//! [`Children`], so choosing the cluster they land on (the target-cluster work) changes this
//! one place rather than every step.
//!
//! Writes are server-side applies under the reference's field manager, forced. An apply is
//! skipped when the live object already carries everything the desired one says, so a pass
//! over a converged Barbican sends no write at all.
//!
//! Every write passes one ownership rule ([`made_for`]): a child is applied, created or
//! deleted only when it is absent or was made for the handle's [`Owner`]. A foreign object
//! that merely shares a child's name is never modified: an apply or create meets
//! [`ChildError::NameTaken`], a delete leaves it alone, and a delete names the uid it checked
//! as a precondition, so an object replaced in between is not the one deleted.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Api, Client, Resource,
    api::{
        ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
        Preconditions,
    },
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;
use std::collections::BTreeMap;

use super::cache::{Cache, Cached, is_own_apply};
pub use crate::api::names::FIELD_MANAGER;
use crate::api::names::{OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL};

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

/// The CR a [`Children`] handle acts for: what the ownership rule compares a live child with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Its kind (`Barbican`, `BarbicanSecretStore`).
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its namespace, which is also its children's.
    pub namespace: String,
    /// Its uid: the one a controller ownerReference must name.
    pub uid: Option<String>,
}

impl Owner {
    /// The owner `owner` is.
    pub fn of<O: Resource<DynamicType = ()>>(owner: &O) -> Self {
        Self {
            kind: O::kind(&()).into_owned(),
            name: owner.meta().name.clone().unwrap_or_default(),
            namespace: owner.meta().namespace.clone().unwrap_or_default(),
            uid: owner.meta().uid.clone(),
        }
    }
}

/// Why a request about a child did not go through.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The API server refused or could not be reached.
    #[error(transparent)]
    Api(#[from] kube::Error),
    /// An object of the child's kind and name exists and was not made for this owner.
    #[error(transparent)]
    NameTaken(Box<Taken>),
}

/// An object in a child's place that is someone else's, and is left as it is.
#[derive(Debug, thiserror::Error)]
#[error(
    "{kind} {name:?} in namespace {namespace:?}{} exists and is not owned by {owner_kind} {owner:?}; it is left as it is (rename or remove it)",
    cluster.as_deref().map(|c| format!(" on cluster {c:?}")).unwrap_or_default()
)]
pub struct Taken {
    /// The child's kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// The target cluster it is on; `None` on the management cluster.
    pub cluster: Option<String>,
    /// The owner's kind.
    pub owner_kind: String,
    /// The owner's name.
    pub owner: String,
}

/// Where one CR's children live: a client, a namespace, and the cluster's name when it is a
/// target cluster rather than the management cluster; and the CR they are written for.
#[derive(Clone)]
pub struct Children {
    client: Client,
    namespace: String,
    owner: Owner,
    cluster: Option<String>,
    /// The namespaces the target cluster's registration limits the operator to, if any.
    allowed: Option<Vec<String>>,
    /// The watch cache, on the management cluster only (see [`super::cache`]).
    cache: Option<Cache>,
}

/// The longest value a label may carry: a CR whose name is longer cannot own remote children.
pub const MAX_LABEL_VALUE_LENGTH: usize = 63;

/// The three labels that record ownership of a child on a target cluster, where no
/// ownerReference can point at the CR (it lives on the management cluster).
pub fn owner_labels(kind: &str, name: &str, namespace: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (OWNER_KIND_LABEL.to_string(), kind.to_string()),
        (OWNER_NAME_LABEL.to_string(), name.to_string()),
        (OWNER_NAMESPACE_LABEL.to_string(), namespace.to_string()),
    ])
}

/// The label selector of [`owner_labels`].
pub fn owner_selector(kind: &str, name: &str, namespace: &str) -> String {
    owner_labels(kind, name, namespace)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Why `owner` cannot own children on a target cluster: its name does not fit a label value.
pub fn label_owner_refusal(owner_name: &str) -> Option<String> {
    (owner_name.len() > MAX_LABEL_VALUE_LENGTH).then(|| {
        format!(
            "metadata.name is {} characters; a CR placing children on a target cluster must have at most {MAX_LABEL_VALUE_LENGTH}, since it is recorded in the {OWNER_NAME_LABEL} label",
            owner_name.len()
        )
    })
}

/// Whether `object` belongs to `owner`: a controller ownerReference to its uid (the owner's
/// own cluster, or what an older operator left on a target), or the three owner labels naming
/// it, in its namespace.
pub fn owned_by<K: Resource, O: Resource<DynamicType = ()>>(object: &K, owner: &O) -> bool {
    labelled_for(object.meta(), &Owner::of(owner))
}

/// [`owned_by`] over an object's metadata and an [`Owner`].
fn labelled_for(meta: &ObjectMeta, owner: &Owner) -> bool {
    let labels = meta.labels.clone().unwrap_or_default();
    let labelled = meta.namespace.as_deref() == Some(owner.namespace.as_str())
        && owner_labels(&owner.kind, &owner.name, &owner.namespace)
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v));
    controlled_by(meta, owner) || labelled
}

/// Whether `object` was made for `owner` on the cluster `cluster` names (`None`: the
/// management cluster): there, only a controller ownerReference to the owner's uid counts (a
/// foreign object that merely shares the name, or copies the labels, is not ours); on a target
/// cluster, which holds no ownerReferences to the management cluster's objects, the owner
/// labels ([`owned_by`]).
pub fn made_for<K: Resource, O: Resource<DynamicType = ()>>(
    cluster: Option<&str>,
    object: &K,
    owner: &O,
) -> bool {
    is_ours(cluster, object.meta(), &Owner::of(owner))
}

/// The ownership rule every write of a child passes (see [`made_for`]): whether the object
/// `meta` describes, on `cluster`, was made for `owner`.
pub fn is_ours(cluster: Option<&str>, meta: &ObjectMeta, owner: &Owner) -> bool {
    match cluster {
        Some(_) => labelled_for(meta, owner),
        None => controlled_by(meta, owner),
    }
}

/// Whether `meta` carries a controller ownerReference to `owner`'s uid (never true for an
/// owner without one).
fn controlled_by(meta: &ObjectMeta, owner: &Owner) -> bool {
    let Some(uid) = owner.uid.as_deref() else {
        return false;
    };
    meta.owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true) && o.uid == uid)
}

/// Whether the operator's apply entry in `live`'s managedFields owns a field `desired` no
/// longer sets: then an apply of `desired` is due, and server-side apply removes the field
/// (a field taken away from the spec must leave the child, not linger because the rest of
/// the child still matches).
pub fn owns_unwanted<K: Resource>(live: &K, desired: &Value) -> bool {
    live.meta()
        .managed_fields
        .iter()
        .flatten()
        .filter(|e| is_own_apply(e))
        .filter_map(|e| e.fields_v1.as_ref())
        .any(|fields| fields_beyond(&fields.0, desired))
}

/// Whether the FieldsV1 set `fields` names a field that `desired` lacks. Map fields are
/// `f:<name>`; list elements `k:<key fields>` (matched by those fields, a key the desired
/// element leaves to the server's default counting as a match), `v:<value>` or `i:<index>`.
fn fields_beyond(fields: &Value, desired: &Value) -> bool {
    let Some(fields) = fields.as_object() else {
        return false;
    };
    fields.iter().any(|(key, sub)| {
        if let Some(name) = key.strip_prefix("f:") {
            match desired.get(name) {
                None | Some(Value::Null) => true,
                Some(wanted) => fields_beyond(sub, wanted),
            }
        } else if let Some(element) = key.strip_prefix("k:") {
            let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(element) else {
                return false;
            };
            let found = desired.as_array().into_iter().flatten().find(|item| {
                keys.iter()
                    .all(|(k, v)| item.get(k).is_none_or(|have| have == v))
            });
            match found {
                None => true,
                Some(item) => fields_beyond(sub, item),
            }
        } else if let Some(value) = key.strip_prefix("v:") {
            let Ok(value) = serde_json::from_str::<Value>(value) else {
                return false;
            };
            !desired
                .as_array()
                .into_iter()
                .flatten()
                .any(|item| *item == value)
        } else {
            // `.` (the element itself) and `i:<index>`: nothing further to compare.
            false
        }
    })
}

/// Whether `live` already carries everything `desired` says: every key of an object, every
/// element of a list (lists must have the same length), every scalar equal. Fields the server
/// adds (defaults, status, managedFields) do not count.
pub fn covers(live: &Value, desired: &Value) -> bool {
    match (live, desired) {
        (Value::Object(live), Value::Object(desired)) => desired
            .iter()
            .all(|(k, d)| live.get(k).is_some_and(|l| covers(l, d)) || d.is_null()),
        (Value::Array(live), Value::Array(desired)) => {
            live.len() == desired.len() && live.iter().zip(desired).all(|(l, d)| covers(l, d))
        }
        (live, desired) => live == desired,
    }
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
            namespace: owner.namespace.clone(),
            owner,
            cluster: None,
            allowed: None,
            cache: Some(cache),
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
            namespace: owner.namespace.clone(),
            owner,
            cluster: Some(cluster.to_string()),
            allowed,
            cache: None,
        }
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
        (!allowed.contains(&self.namespace)).then(|| {
            format!(
                "namespace {:?} is outside the namespaces cluster {:?} is registered for ({})",
                self.namespace,
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
        &self.namespace
    }

    /// The typed API of a namespaced kind.
    pub fn api<K: Child>(&self) -> Api<K> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// The API of a kind known only at run time (HTTPRoute, the ESO stores).
    pub fn dynamic(&self, resource: &ApiResource) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), &self.namespace, resource)
    }

    /// What the watch cache says of `name` (always [`Cached::Unknown`] on a target cluster).
    fn cached<K: Child>(&self, name: &str) -> Cached<K> {
        match &self.cache {
            Some(cache) => cache.get::<K>(Some(&self.namespace), name),
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
        let namespace = namespaced.then_some(self.namespace.as_str());
        match &self.cache {
            Some(cache) => cache.get_dynamic(resource, namespace, name),
            None => Cached::Unknown,
        }
    }

    /// Reads `name`, `None` when it does not exist: from the watch cache when it holds it,
    /// from the API server otherwise (so a child created a moment ago is found).
    pub async fn get<K: Child>(&self, name: &str) -> Result<Option<K>, kube::Error> {
        match self.cached::<K>(name) {
            Cached::Present(object) => Ok(Some(object)),
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
            .and_then(|c| c.list::<K>(&self.namespace, labels))
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
            namespace: self.namespace.clone(),
            cluster: self.cluster.clone(),
            owner_kind: self.owner.kind.clone(),
            owner: self.owner.name.clone(),
        })))
    }

    /// Reads the child `name`: `None` when it does not exist, [`ChildError::NameTaken`] when
    /// an object of that name is someone else's (a step never takes a foreign object's state
    /// for its child's).
    pub async fn own<K: Child>(&self, name: &str) -> Result<Option<K>, ChildError> {
        let live = self.get::<K>(name).await?;
        if let Some(live) = &live {
            self.claim(&K::kind(&()), live.meta())?;
        }
        Ok(live)
    }

    /// Makes `desired` live: applied when the live object lacks anything it says, left alone
    /// otherwise; refused with [`ChildError::NameTaken`] when the live object is not this
    /// owner's. Returns the live object.
    pub async fn ensure<K: Child>(&self, desired: &K) -> Result<K, ChildError> {
        let name = desired.meta().name.clone().unwrap_or_default();
        let cached = self.cached::<K>(&name);
        let before = match &cached {
            Cached::Present(object) => object.meta().resource_version.clone(),
            _ => None,
        };
        let live = present_or_read(cached, &self.api::<K>(), &name).await?;
        if let Some(live) = &live {
            self.claim(&K::kind(&()), live.meta())?;
        }
        let live = apply_unless_covered(self.api::<K>(), desired, live).await?;
        self.hold(Some(&live));
        if let (Some(cache), Some(before)) = (&self.cache, before) {
            cache.wrote(Some(&self.namespace), &before, &live);
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
        let cached = self.cached_dynamic(resource, true, &name);
        let api = self.dynamic(resource);
        let live = present_or_read(cached, &api, &name).await?;
        if let Some(live) = &live {
            self.claim(&resource.kind, live.meta())?;
        }
        Ok(apply_unless_covered(api, desired, live).await?)
    }

    /// Creates `object`; an existing one of the same name is returned as it is when it is this
    /// owner's, and refused with [`ChildError::NameTaken`] when it is not.
    pub async fn create<K: Child>(&self, object: &K) -> Result<K, ChildError> {
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

/// The annotation on every child holding a hash of what the operator last applied to it.
/// `covers` and the managedFields comparison miss one kind of edit: a field taken away inside
/// an atomic list (a NetworkPolicy peer's `matchLabels`), where the operator owns the list as
/// a whole and the new list is covered by the old. A desired object whose hash differs from
/// the recorded one does not cover the live object, so it is applied.
pub const APPLIED_HASH_ANNOTATION: &str = "barbican.c5c3.io/applied-hash";

/// `wanted` with [`APPLIED_HASH_ANNOTATION`] set to the hash of `wanted` itself.
pub fn stamped(mut wanted: Value) -> Value {
    use sha2::{Digest, Sha256};
    let bytes = serde_json::to_vec(&wanted).unwrap_or_default();
    let hash = crate::render::secrets::hex(&Sha256::digest(bytes));
    let short = hash.get(..16).unwrap_or(&hash).to_string();
    if let Some(metadata) = wanted.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = metadata
            .entry("annotations")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.insert(APPLIED_HASH_ANNOTATION.into(), Value::String(short));
        }
    }
    wanted
}

/// Applies `desired` unless `live` (the object as [`present_or_read`] found it) already
/// covers it.
async fn apply_unless_covered<K>(
    api: Api<K>,
    desired: &K,
    live: Option<K>,
) -> Result<K, kube::Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = desired.meta().name.clone().unwrap_or_default();
    let wanted = stamped(serde_json::to_value(desired).map_err(kube::Error::SerdeError)?);
    if let Some(live) = live {
        let current = serde_json::to_value(&live).map_err(kube::Error::SerdeError)?;
        if covers(&current, &wanted) && !owns_unwanted(&live, &wanted) {
            return Ok(live);
        }
    }
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&wanted),
    )
    .await
}

/// The object as the cache holds it, read from the API server when the cache does not hold
/// it. A cached "absent" is not believed before a write: the watch cache follows the
/// operator's own children (by their labels), so a foreign object under a child's name is
/// absent from it, and an apply believing the cache would take that object over. Creating a
/// child costs this one read; a converged pass finds every child in the cache and reads
/// nothing.
async fn present_or_read<K>(
    cached: Cached<K>,
    api: &Api<K>,
    name: &str,
) -> Result<Option<K>, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match cached {
        Cached::Present(object) => Ok(Some(object)),
        Cached::Absent | Cached::Unknown => api.get_opt(name).await,
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
    use serde_json::json;

    #[test]
    fn a_field_the_operator_set_and_no_longer_wants_calls_for_an_apply() {
        // Any kind carries managedFields; a ConfigMap is the smallest.
        let live: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
            "metadata": {"managedFields": [{
                "manager": FIELD_MANAGER, "operation": "Apply", "fieldsV1": {
                    "f:metadata": {"f:labels": {"f:app": {}}},
                    "f:spec": {
                        "f:priorityClassName": {},
                        "f:containers": {"k:{\"name\":\"api\"}": {
                            ".": {}, "f:name": {},
                            "f:ports": {"k:{\"containerPort\":9311,\"protocol\":\"TCP\"}": {
                                ".": {}, "f:containerPort": {}
                            }}
                        }},
                        "f:finalizers": {"v:\"a\"": {}}
                    }
                }
            }, {
                "manager": "kubectl", "operation": "Update",
                "fieldsV1": {"f:spec": {"f:somethingElse": {}}}
            }]}
        }))
        .unwrap();
        let wanted = json!({
            "metadata": {"name": "x", "labels": {"app": "barbican"}},
            "spec": {
                "priorityClassName": "high",
                // The protocol is the server's default: the element still matches.
                "containers": [{"name": "api", "ports": [{"containerPort": 9311}]}],
                "finalizers": ["a"]
            }
        });
        assert!(
            !owns_unwanted(&live, &wanted),
            "everything owned is still wanted"
        );
        let mut removed = wanted.clone();
        removed["spec"]
            .as_object_mut()
            .unwrap()
            .remove("priorityClassName");
        assert!(owns_unwanted(&live, &removed));
        let mut renamed = wanted.clone();
        renamed["spec"]["containers"][0]["name"] = json!("other");
        assert!(owns_unwanted(&live, &renamed));
        let mut no_port = wanted.clone();
        no_port["spec"]["containers"][0]["ports"] = json!([]);
        assert!(owns_unwanted(&live, &no_port));
        let mut no_value = wanted.clone();
        no_value["spec"]["finalizers"] = json!([]);
        assert!(owns_unwanted(&live, &no_value));
        let mut no_label = wanted;
        no_label["metadata"]["labels"] = json!({});
        assert!(owns_unwanted(&live, &no_label));
        // Another manager's fields are not the operator's to remove.
        assert!(!owns_unwanted(
            &k8s_openapi::api::core::v1::ConfigMap::default(),
            &json!({})
        ));
    }

    #[test]
    fn a_live_object_covers_what_it_carries_plus_server_defaults() {
        let live = json!({"metadata": {"name": "a", "uid": "u", "labels": {"x": "1", "y": "2"}},
            "spec": {"ports": [{"port": 9311, "protocol": "TCP"}], "type": "ClusterIP"}});
        let desired = json!({"metadata": {"name": "a", "labels": {"x": "1"}},
            "spec": {"ports": [{"port": 9311}]}});
        assert!(covers(&live, &desired));
    }

    #[test]
    fn a_changed_value_an_added_key_or_a_list_of_another_length_is_not_covered() {
        let live = json!({"spec": {"ports": [{"port": 9311}], "env": ["a", "b"]}});
        assert!(!covers(&live, &json!({"spec": {"ports": [{"port": 80}]}})));
        assert!(!covers(&live, &json!({"spec": {"selector": {"a": "b"}}})));
        assert!(!covers(&live, &json!({"spec": {"env": ["a"]}})));
        assert!(covers(&live, &json!({"spec": {"missing": null}})));
    }

    #[test]
    fn a_selector_emptied_inside_an_atomic_list_is_no_longer_covered() {
        let peer = |labels: serde_json::Value| {
            json!({"metadata": {"name": "b"},
                "spec": {"ingress": [{"from": [{"namespaceSelector": labels}]}]}})
        };
        let live = stamped(peer(json!({"matchLabels": {"team": "a"}})));
        let emptied = stamped(peer(json!({})));
        assert!(
            covers(&live, &peer(json!({}))),
            "without the hash the old list covers the new one"
        );
        assert!(!covers(&live, &emptied), "with it, the edit is applied");
        assert!(covers(
            &live,
            &stamped(peer(json!({"matchLabels": {"team": "a"}})))
        ));
    }

    #[test]
    fn a_field_taken_away_is_applied_away_from_a_cached_copy_without_managed_fields() {
        // The cache keeps no managedFields (`cache::slim`): the applied hash alone must tell
        // that the operator set a field it no longer wants.
        let deployment = |limits: serde_json::Value| {
            json!({"metadata": {"name": "b"},
                "spec": {"template": {"spec": {"priorityClassName": "high",
                    "containers": [{"name": "api", "resources": {"limits": limits}}]}}}})
        };
        let mut live = stamped(deployment(
            json!({"memory": "512Mi", "ephemeral-storage": "1Gi"}),
        ));
        live["metadata"]["resourceVersion"] = json!("7");
        let mut cached: k8s_openapi::api::apps::v1::Deployment =
            serde_json::from_value(live.clone()).unwrap();
        crate::controller::cache::slim(&mut cached);
        assert!(cached.metadata.managed_fields.is_none());
        let without = stamped(deployment(json!({"memory": "512Mi"})));
        let cached = serde_json::to_value(&cached).unwrap();
        assert!(
            covers(&cached, &deployment(json!({"memory": "512Mi"}))),
            "what is left is still there: without the hash nothing would be applied"
        );
        assert!(!covers(&cached, &without), "the hash differs: applied");
        assert!(!owns_unwanted(
            &serde_json::from_value::<k8s_openapi::api::apps::v1::Deployment>(cached.clone())
                .unwrap(),
            &without
        ));
        assert!(covers(
            &cached,
            &stamped(deployment(
                json!({"memory": "512Mi", "ephemeral-storage": "1Gi"})
            ))
        ));
    }

    use crate::controller::children::unanswered_client as client;

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

    #[test]
    fn a_name_longer_than_a_label_value_cannot_own_remote_children() {
        assert_eq!(label_owner_refusal(&"a".repeat(63)), None);
        let refusal = label_owner_refusal(&"a".repeat(64)).unwrap();
        assert!(refusal.contains("64 characters") && refusal.contains(OWNER_NAME_LABEL));
        assert_eq!(
            owner_selector("Barbican", "kms", "openstack"),
            "openstack.c5c3.io/owner-kind=Barbican,openstack.c5c3.io/owner-name=kms,openstack.c5c3.io/owner-namespace=openstack"
        );
    }
}
