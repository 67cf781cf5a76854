//! The watch cache of the management cluster: what the controllers' watches have seen, read by
//! the passes instead of the API server.
//!
//! A converged Barbican's pass used to read every child before deciding that nothing needed
//! writing: 31 GETs per Barbican per resync, all answered by objects the operator was already
//! watching. The watches now fill reflector stores registered here, and [`Children`] reads
//! them first. The rules that keep a cached read as safe as a GET:
//!
//! - A store is used only once its first list is complete (before that: the API server).
//! - The watch that fills a store is the one that wakes the controller, and the store is
//!   written before the wake-up is delivered, so a pass is never older than what woke it.
//! - A cached object that is missing is only trusted where acting on a stale "absent" is
//!   harmless: an apply (it creates or repeats) and a delete (nothing to delete; the watch
//!   event of a late arrival wakes another pass). A plain read falls back to a GET, so a child
//!   created a moment ago by this pass is found.
//! - The CRs themselves carry the status this operator writes; a pass that started from a
//!   copy older than its own last write would undo it. [`OwnWrites`] remembers the
//!   resourceVersion of every write to a CR until the watch has delivered it, and a CR with a
//!   write still in flight is read from the API server.
//!
//! - Secrets and Jobs are watched as metadata only, and a pass's reads of them are held while
//!   they stay current (see [`super::held`]); the other children are watched by the label
//!   every child carries (`app.kubernetes.io/managed-by`), so what other applications keep in
//!   the cluster costs the operator nothing.
//!
//! Target clusters are not cached: a read there is also how a pass learns that the cluster is
//! gone (the spec's target-cluster-loss rules), which a cache would hide.
//!
//! [`Children`]: super::children::Children

use std::{
    any::{Any, TypeId},
    collections::HashMap,
    sync::{Arc, Mutex, RwLock},
};

use futures::{
    FutureExt,
    future::{BoxFuture, Shared},
};
use kube::{
    Resource, ResourceExt,
    api::{ApiResource, DynamicObject},
    core::PartialObjectMeta,
    runtime::{
        reflector::{ObjectRef, Store, store::Writer},
        watcher,
    },
};

use super::held::Held;

pub use super::held::Cached;

/// The reflector stores of the management cluster, by kind: typed built-ins by their Rust
/// type, kinds known only at run time by group and kind.
#[derive(Clone, Default)]
pub struct Cache {
    typed: Arc<RwLock<HashMap<TypeId, Box<dyn Any + Send + Sync>>>>,
    dynamic: Arc<RwLock<HashMap<String, Store<DynamicObject>>>>,
    /// Kinds watched as metadata, with copies of what was read (see [`super::held`]), by
    /// their Rust type: each an `Arc<Held<K>>`.
    held: Arc<RwLock<HashMap<TypeId, Box<dyn Any + Send + Sync>>>>,
    /// Each store's first complete list, awaited before the first pass.
    listed: Arc<RwLock<Vec<Shared<BoxFuture<'static, ()>>>>>,
    /// Set once every store registered so far has listed: later passes do not wait.
    all_listed: Arc<std::sync::atomic::AtomicBool>,
    /// Set once a wait ran out: later passes do not wait again.
    gave_up: Arc<std::sync::atomic::AtomicBool>,
    /// This operator's last write to each child of a watched kind, until the watch delivers
    /// it (see [`Cache::wrote`]).
    written: Arc<Mutex<HashMap<WrittenKey, Written>>>,
}

/// A child by its Rust type, namespace and name.
type WrittenKey = (TypeId, Option<String>, String);

/// A write the watch may not have delivered yet: the object as the write answered, and the
/// resourceVersion of the cached copy it replaced. The watch store showing that version
/// still is what says it is behind: a version never comes back once replaced.
struct Written {
    stale: String,
    after: Box<dyn Any + Send + Sync>,
}

/// How long a pass waits for the stores' first lists before it goes ahead without them (and
/// reads the API server). On a healthy cluster the lists take milliseconds; a watch that
/// never lists (its kind forbidden, say) must not stop the controllers.
pub const LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dynamic: Vec<String> = read(&self.dynamic).keys().cloned().collect();
        f.debug_struct("Cache")
            .field("typed", &read(&self.typed).len())
            .field("dynamic", &dynamic)
            .finish()
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|p| p.into_inner())
}

fn dynamic_key(resource: &ApiResource) -> String {
    format!("{}/{}", resource.group, resource.kind)
}

fn ready<K>(store: &Store<K>) -> bool
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    store
        .wait_until_ready()
        .now_or_never()
        .is_some_and(|r| r.is_ok())
}

fn lookup<K>(store: &Store<K>, key: &ObjectRef<K>) -> Cached<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    if !ready(store) {
        return Cached::Unknown;
    }
    match store.get(key) {
        Some(object) => Cached::Present(object.as_ref().clone()),
        None => Cached::Absent,
    }
}

/// Whether `labels` carry every `key=value` of `selector`; `None` when the selector uses
/// anything but equality (the API server evaluates those).
fn matches(selector: &str, labels: &std::collections::BTreeMap<String, String>) -> Option<bool> {
    let mut all = true;
    for term in selector.split(',').filter(|t| !t.is_empty()) {
        let (key, value) = term.split_once('=')?;
        if key.ends_with('!') || value.starts_with('=') {
            return None;
        }
        all &= labels.get(key).map(String::as_str) == Some(value);
    }
    Some(all)
}

impl Cache {
    /// A writer for the typed kind `K`, whose store this cache now answers from.
    pub fn writer<K>(&self) -> Writer<K>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let writer = Writer::<K>::default();
        let store = writer.as_reader();
        self.await_list(store.clone());
        write(&self.typed).insert(TypeId::of::<K>(), Box::new(store));
        writer
    }

    fn await_list<K>(&self, store: Store<K>)
    where
        K: Resource + Clone + Send + Sync + 'static,
        K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
    {
        let listed = async move {
            let _ = store.wait_until_ready().await;
        };
        write(&self.listed).push(listed.boxed().shared());
        self.all_listed
            .store(false, std::sync::atomic::Ordering::Relaxed);
    }

    /// Waits until every store has completed its first list, or [`LIST_WAIT`] has passed
    /// (`false`: some store has not listed; the cache answers [`Cached::Unknown`] for it).
    /// The watches must be running for the wait to end, as they are under a controller.
    pub async fn listed(&self) -> bool {
        use std::sync::atomic::Ordering;
        if self.all_listed.load(Ordering::Relaxed) {
            return true;
        }
        if self.gave_up.load(Ordering::Relaxed) {
            return false;
        }
        let all = futures::future::join_all(read(&self.listed).clone());
        let listed = tokio::time::timeout(LIST_WAIT, all).await.is_ok();
        if listed {
            self.all_listed.store(true, Ordering::Relaxed);
        }
        if !listed && !self.gave_up.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "the watch cache has not completed its first lists in {LIST_WAIT:?}; passes read the API server for what it lacks"
            );
        }
        listed
    }

    /// A writer for `resource`, whose store this cache now answers from.
    pub fn dynamic_writer(&self, resource: &ApiResource) -> Writer<DynamicObject> {
        let writer = Writer::<DynamicObject>::new(resource.clone());
        let store = writer.as_reader();
        self.await_list(store.clone());
        write(&self.dynamic).insert(dynamic_key(resource), store);
        writer
    }

    /// A writer for the metadata watch of the typed kind `K`, which this cache now answers
    /// from through held copies (see [`super::held`]).
    pub fn metadata_writer<K>(&self) -> Writer<PartialObjectMeta<K>>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let writer = Writer::<PartialObjectMeta<K>>::default();
        let store = writer.as_reader();
        self.await_list(store.clone());
        write(&self.held).insert(TypeId::of::<K>(), Box::new(Arc::new(Held::new(store))));
        writer
    }

    fn held<K>(&self) -> Option<Arc<Held<K>>>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        read(&self.held)
            .get(&TypeId::of::<K>())
            .and_then(|h| h.downcast_ref::<Arc<Held<K>>>())
            .cloned()
    }

    /// Keeps a copy of `object`, just read from or written to the API server, when its kind
    /// is held (see [`super::held`]); does nothing for other kinds, whose watch keeps them.
    pub fn hold<K>(&self, object: &K)
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        if let Some(held) = self.held::<K>() {
            let mut object = object.clone();
            slim(&mut object);
            held.hold(object);
        }
    }

    /// Drops the held copy of each object the metadata watch of `K` sees deleted (for the
    /// watch's `inspect`).
    pub fn forget_deleted<K>(
        &self,
    ) -> impl Fn(&Result<watcher::Event<PartialObjectMeta<K>>, watcher::Error>) + use<K>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let held = self.held::<K>();
        move |event| {
            if let (Some(held), Ok(event)) = (&held, event) {
                held.forget(event);
            }
        }
    }

    fn store<K>(&self) -> Option<Store<K>>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        read(&self.typed)
            .get(&TypeId::of::<K>())
            .and_then(|s| s.downcast_ref::<Store<K>>())
            .cloned()
    }

    /// The object `name` of the typed kind `K` in `namespace` (`None`: cluster-scoped).
    pub fn get<K>(&self, namespace: Option<&str>, name: &str) -> Cached<K>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        if let Some(held) = self.held::<K>() {
            return held.get(namespace, name);
        }
        let Some(store) = self.store::<K>() else {
            return Cached::Unknown;
        };
        let key = ObjectRef::<K>::new(name);
        let cached = lookup(&store, &namespace.map_or(key.clone(), |ns| key.within(ns)));
        self.after_own_write(namespace, name, cached)
    }

    /// `cached`, or this operator's own later write to it while the watch has not delivered
    /// that yet. A pass that ran between a write and its watch event decided from the copy
    /// before the write, and applied the same child again (a write per such race, in the
    /// steady state too when the race fell at the end of a convergence).
    fn after_own_write<K>(
        &self,
        namespace: Option<&str>,
        name: &str,
        cached: Cached<K>,
    ) -> Cached<K>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let Cached::Present(object) = &cached else {
            return cached;
        };
        let key = (
            TypeId::of::<K>(),
            namespace.map(String::from),
            name.to_string(),
        );
        let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
        let Some(entry) = written.get(&key) else {
            return cached;
        };
        if object.meta().resource_version.as_ref() == Some(&entry.stale)
            && let Some(after) = entry.after.downcast_ref::<K>()
        {
            return Cached::Present(after.clone());
        }
        // The watch has delivered the write, or something newer: the store is current.
        written.remove(&key);
        cached
    }

    /// Records that this operator wrote `after` over the copy it had read, of resourceVersion
    /// `before` (see [`Cache::get`]). Only for kinds whose watch fills a store here; the held
    /// kinds keep their own copies.
    pub fn wrote<K>(&self, namespace: Option<&str>, before: &str, after: &K)
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        if self.held::<K>().is_some() || self.store::<K>().is_none() {
            return;
        }
        let Some(name) = after.meta().name.clone() else {
            return;
        };
        if after.meta().resource_version.as_deref() == Some(before) {
            return;
        }
        let key = (TypeId::of::<K>(), namespace.map(String::from), name);
        let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
        // A second write before the watch delivered the first: the store still shows the
        // version before the first.
        let stale = match written.get(&key) {
            Some(entry)
                if entry
                    .after
                    .downcast_ref::<K>()
                    .and_then(|a| a.meta().resource_version.as_deref())
                    == Some(before) =>
            {
                entry.stale.clone()
            }
            _ => before.to_string(),
        };
        written.insert(
            key,
            Written {
                stale,
                after: Box::new(after.clone()),
            },
        );
    }

    /// The object `name` of `resource` in `namespace` (`None`: cluster-scoped).
    pub fn get_dynamic(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Cached<DynamicObject> {
        let Some(store) = read(&self.dynamic).get(&dynamic_key(resource)).cloned() else {
            return Cached::Unknown;
        };
        let key = ObjectRef::new_with(name, resource.clone());
        lookup(&store, &namespace.map_or(key.clone(), |ns| key.within(ns)))
    }

    /// The objects of `K` in `namespace` whose labels match `selector` (equality terms);
    /// `None` when the cache cannot answer.
    pub fn list<K>(&self, namespace: &str, selector: &str) -> Option<Vec<K>>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        matches(selector, &Default::default())?;
        if let Some(held) = self.held::<K>() {
            return held.list(namespace, |labels| {
                matches(selector, labels).unwrap_or(false)
            });
        }
        let store = self.store::<K>().filter(ready)?;
        let mut found: Vec<K> = store
            .state()
            .iter()
            // Borrowed comparisons only: every pass lists this way, over every cached object
            // of the kind, so an allocation per object made the lists quadratic in the CRs.
            .filter(|o| {
                o.meta().namespace.as_deref() == Some(namespace)
                    && matches(selector, o.labels()).unwrap_or(false)
            })
            .map(|o| o.as_ref().clone())
            .collect();
        // The API server lists by name; so does the cache, so decisions do not depend on
        // hash order.
        found.sort_by_key(|o| o.name_any());
        Some(found)
    }
}

/// The resourceVersions of this operator's own writes to its CRs that the watch has not yet
/// delivered, by uid (see the module's rules).
///
/// The watch may deliver a write before its response arrives (both travel separately), so the
/// last few versions the watch delivered are kept too: a write whose version is among them is
/// in the cache already. Versions are only compared for equality, as the API asks.
#[derive(Debug, Default)]
pub struct OwnWrites {
    by_uid: Mutex<HashMap<String, Versions>>,
}

/// What [`OwnWrites`] knows of one CR.
#[derive(Debug, Default)]
struct Versions {
    /// This operator's last write, until the watch delivers it.
    pending: Option<String>,
    /// The versions the watch delivered last, newest last.
    delivered: std::collections::VecDeque<String>,
}

/// How many delivered versions are remembered per CR: more than can arrive between a write's
/// request and its response.
const DELIVERED: usize = 8;

impl OwnWrites {
    /// Records a write whose response is `written`.
    pub fn wrote<K: Resource>(&self, written: &K) {
        let meta = written.meta();
        if let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) {
            let mut by_uid = self.lock();
            let versions = by_uid.entry(uid.clone()).or_default();
            versions.pending = (!versions.delivered.contains(version)).then(|| version.clone());
        }
    }

    /// Notes that the watch delivered `seen`: the write it carries is in the cache now.
    pub fn observed<K: Resource>(&self, seen: &K) {
        let meta = seen.meta();
        let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) else {
            return;
        };
        let mut by_uid = self.lock();
        let versions = by_uid.entry(uid.clone()).or_default();
        if versions.pending.as_ref() == Some(version) {
            versions.pending = None;
        }
        if versions.delivered.len() == DELIVERED {
            versions.delivered.pop_front();
        }
        versions.delivered.push_back(version.clone());
    }

    /// Notes that the store was replaced by a fresh list: a relist skips the versions between
    /// the last event and the list, so a write among them would stay pending for ever; the
    /// list is at least as new as every write answered before it began.
    pub fn relisted(&self) {
        for versions in self.lock().values_mut() {
            versions.pending = None;
        }
    }

    /// Whether the cached copy of the CR `uid` has seen every write of this operator.
    pub fn settled(&self, uid: &str) -> bool {
        self.lock().get(uid).is_none_or(|v| v.pending.is_none())
    }

    /// Forgets a deleted CR.
    pub fn forget(&self, uid: &str) {
        self.lock().remove(uid);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Versions>> {
        self.by_uid.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The copy of the CR `name` in `namespace` a pass starts from: the watch cache's when it holds
/// the CR and has delivered every write of this operator to it, the API server's otherwise
/// (`None`: it is gone).
pub async fn current<K>(
    api: &kube::Api<K>,
    store: &Store<K>,
    writes: &OwnWrites,
    namespace: &str,
    name: &str,
) -> Result<Option<K>, kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug + 'static,
{
    if let Cached::Present(cached) = lookup(store, &ObjectRef::new(name).within(namespace))
        && cached
            .meta()
            .uid
            .as_deref()
            .is_some_and(|uid| writes.settled(uid))
    {
        return Ok(Some(cached));
    }
    api.get_opt(name).await
}

/// Whether a managedFields entry is this operator's server-side apply.
pub fn is_own_apply(
    entry: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry,
) -> bool {
    entry.manager.as_deref() == Some(crate::api::names::FIELD_MANAGER)
        && entry.operation.as_deref() == Some("Apply")
}

/// Drops what the operator never reads from a cached object: managedFields are most of a
/// server-side-applied object's size, and the cache holds every object it reads. Even the
/// operator's own apply entry goes (at a thousand Barbicans those entries, parsed, were 115 of
/// the operator's 258 MiB): a field the operator set and no longer sets is found by the
/// applied-hash annotation instead (any change of the desired object changes the hash, so the
/// cached copy stops covering it and the apply takes the field away; see
/// [`super::children::APPLIED_HASH_ANNOTATION`]). [`super::children::owns_unwanted`] still
/// reads the entry where an object comes from the API server (a target cluster).
pub fn slim<K: Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Secret;
    use kube::runtime::watcher::Event;

    fn secret(name: &str, labels: &[(&str, &str)]) -> Secret {
        let mut secret = Secret::default();
        secret.metadata.name = Some(name.into());
        secret.metadata.namespace = Some("openstack".into());
        secret.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        secret
    }

    #[test]
    fn a_kind_answers_only_once_its_first_list_is_complete() {
        let cache = Cache::default();
        assert_eq!(
            cache.get::<Secret>(Some("openstack"), "a"),
            Cached::Unknown,
            "not watched"
        );
        let mut writer = cache.writer::<Secret>();
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitApply(secret("a", &[("x", "1")])));
        assert_eq!(
            cache.get::<Secret>(Some("openstack"), "a"),
            Cached::Unknown,
            "listing"
        );
        assert_eq!(cache.list::<Secret>("openstack", "x=1"), None);
        writer.apply_watcher_event(&Event::InitDone);
        assert!(matches!(
            cache.get::<Secret>(Some("openstack"), "a"),
            Cached::Present(s) if s.metadata.name.as_deref() == Some("a")
        ));
        assert_eq!(cache.get::<Secret>(Some("openstack"), "b"), Cached::Absent);
        assert_eq!(
            cache.get::<Secret>(Some("other"), "a"),
            Cached::Absent,
            "another namespace"
        );
    }

    #[test]
    fn an_own_write_the_watch_has_not_delivered_is_read_in_place_of_the_copy_it_replaced() {
        use k8s_openapi::api::batch::v1::CronJob;
        let cronjob = |version: &str, suspend: bool| {
            let mut c = CronJob::default();
            c.metadata.name = Some("b-db-clean".into());
            c.metadata.namespace = Some("openstack".into());
            c.metadata.resource_version = Some(version.into());
            c.spec.suspend = Some(suspend);
            c
        };
        let version = |c: Cached<CronJob>| match c {
            Cached::Present(c) => c.metadata.resource_version.unwrap_or_default(),
            other => format!("{other:?}"),
        };
        let cache = Cache::default();
        let mut writer = cache.writer::<CronJob>();
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitApply(cronjob("1", true)));
        writer.apply_watcher_event(&Event::InitDone);
        let get = || cache.get::<CronJob>(Some("openstack"), "b-db-clean");

        cache.wrote(Some("openstack"), "1", &cronjob("2", false));
        assert_eq!(
            version(get()),
            "2",
            "the store still shows 1: the write is read"
        );
        cache.wrote(Some("openstack"), "2", &cronjob("3", false));
        assert_eq!(
            version(get()),
            "3",
            "a second write on the first, both in flight"
        );
        writer.apply_watcher_event(&Event::Apply(cronjob("3", false)));
        assert_eq!(version(get()), "3", "delivered: the store answers");
        writer.apply_watcher_event(&Event::Apply(cronjob("4", true)));
        assert_eq!(
            version(get()),
            "4",
            "a later change by anyone is not hidden"
        );

        cache.wrote(Some("openstack"), "4", &cronjob("5", false));
        writer.apply_watcher_event(&Event::Apply(cronjob("6", true)));
        assert_eq!(
            version(get()),
            "6",
            "something newer than the write: the store"
        );
        cache.wrote(Some("openstack"), "6", &cronjob("6", true));
        assert_eq!(version(get()), "6", "no write happened: nothing recorded");
        cache.wrote(Some("other"), "6", &cronjob("7", false));
        assert_eq!(version(get()), "6", "a write elsewhere is another object");
    }

    #[tokio::test]
    async fn the_first_pass_waits_for_every_store_to_list() {
        let cache = Cache::default();
        assert!(cache.listed().await, "nothing to wait for");
        let mut secrets = cache.writer::<Secret>();
        let mut services = cache.writer::<k8s_openapi::api::core::v1::Service>();
        let waiting = tokio::spawn({
            let cache = cache.clone();
            async move { cache.listed().await }
        });
        secrets.apply_watcher_event(&Event::Init);
        secrets.apply_watcher_event(&Event::InitDone);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "one store has not listed");
        services.apply_watcher_event(&Event::Init);
        services.apply_watcher_event(&Event::InitDone);
        assert!(waiting.await.unwrap());
    }

    #[test]
    fn a_list_filters_by_namespace_and_equality_labels_in_name_order() {
        let cache = Cache::default();
        let mut writer = cache.writer::<Secret>();
        writer.apply_watcher_event(&Event::Init);
        for s in [
            secret("c", &[("x", "1"), ("y", "2")]),
            secret("a", &[("x", "1")]),
            secret("b", &[("x", "2")]),
        ] {
            writer.apply_watcher_event(&Event::InitApply(s));
        }
        let mut elsewhere = secret("d", &[("x", "1")]);
        elsewhere.metadata.namespace = Some("other".into());
        writer.apply_watcher_event(&Event::InitApply(elsewhere));
        writer.apply_watcher_event(&Event::InitDone);
        let names = |found: Vec<Secret>| -> Vec<String> {
            found.into_iter().map(|s| s.name_any()).collect()
        };
        assert_eq!(names(cache.list("openstack", "x=1").unwrap()), ["a", "c"]);
        assert_eq!(names(cache.list("openstack", "x=1,y=2").unwrap()), ["c"]);
        assert_eq!(
            cache.list::<Secret>("openstack", "x!=1"),
            None,
            "the API server evaluates what is not equality"
        );
    }

    #[test]
    fn a_dynamic_kind_is_found_by_group_and_kind() {
        let cache = Cache::default();
        let resource = ApiResource {
            group: "k8s.mariadb.com".into(),
            version: "v1alpha1".into(),
            api_version: "k8s.mariadb.com/v1alpha1".into(),
            kind: "MariaDB".into(),
            plural: "mariadbs".into(),
        };
        let mut writer = cache.dynamic_writer(&resource);
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitApply(
            DynamicObject::new("db", &resource).within("openstack"),
        ));
        writer.apply_watcher_event(&Event::InitDone);
        assert!(matches!(
            cache.get_dynamic(&resource, Some("openstack"), "db"),
            Cached::Present(_)
        ));
        let mut other = resource.clone();
        other.kind = "Database".into();
        assert_eq!(
            cache.get_dynamic(&other, Some("openstack"), "db"),
            Cached::Unknown
        );
    }

    #[tokio::test]
    async fn a_pass_starts_from_the_cache_only_once_it_has_seen_the_operators_last_write() {
        let (store, mut writer) = kube::runtime::reflector::store::<Secret>();
        let api: kube::Api<Secret> = kube::Api::namespaced(
            crate::controller::children::unanswered_client(),
            "openstack",
        );
        let writes = OwnWrites::default();
        let mut cr = secret("a", &[]);
        cr.metadata.uid = Some("u1".into());
        cr.metadata.resource_version = Some("1".into());
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitApply(cr.clone()));
        writer.apply_watcher_event(&Event::InitDone);
        let found = current(&api, &store, &writes, "openstack", "a")
            .await
            .unwrap();
        assert_eq!(
            found,
            Some(cr.clone()),
            "no request: the client never answers"
        );
        let mut written = cr.clone();
        written.metadata.resource_version = Some("2".into());
        writes.wrote(&written);
        let read = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            current(&api, &store, &writes, "openstack", "a"),
        )
        .await;
        assert!(
            !matches!(read, Ok(Ok(_))),
            "a write in flight sends the read to the API server, which never answers"
        );
        writer.apply_watcher_event(&Event::Apply(written.clone()));
        writes.observed(&written);
        let found = current(&api, &store, &writes, "openstack", "a")
            .await
            .unwrap();
        assert_eq!(found, Some(written));
    }

    #[test]
    fn a_write_is_pending_until_the_watch_delivers_its_resource_version() {
        let writes = OwnWrites::default();
        let mut object = secret("a", &[]);
        object.metadata.uid = Some("u1".into());
        assert!(writes.settled("u1"));
        object.metadata.resource_version = Some("7".into());
        writes.wrote(&object);
        assert!(!writes.settled("u1"));
        object.metadata.resource_version = Some("6".into());
        writes.observed(&object);
        assert!(!writes.settled("u1"), "an older copy");
        object.metadata.resource_version = Some("7".into());
        writes.observed(&object);
        assert!(writes.settled("u1"));
        writes.wrote(&object);
        assert!(
            writes.settled("u1"),
            "version 7 was delivered already: the watch can beat the write's response"
        );
        object.metadata.resource_version = Some("8".into());
        writes.wrote(&object);
        assert!(!writes.settled("u1"));
        writes.relisted();
        assert!(
            writes.settled("u1"),
            "a relist skips versions: the fresh list is newer than the write"
        );
        writes.wrote(&object);
        writes.forget("u1");
        assert!(writes.settled("u1"));
    }

    #[test]
    fn a_write_delivered_before_its_response_is_settled_even_after_later_versions() {
        let writes = OwnWrites::default();
        let mut object = secret("a", &[]);
        object.metadata.uid = Some("u1".into());
        for version in ["10", "11", "12"] {
            object.metadata.resource_version = Some(version.into());
            writes.observed(&object);
        }
        object.metadata.resource_version = Some("11".into());
        writes.wrote(&object);
        assert!(
            writes.settled("u1"),
            "11 came through the watch before its response"
        );
        for version in 13..13 + DELIVERED {
            object.metadata.resource_version = Some(version.to_string());
            writes.observed(&object);
        }
        object.metadata.resource_version = Some("12".into());
        writes.wrote(&object);
        assert!(
            !writes.settled("u1"),
            "a version older than what is remembered counts as not delivered (a GET, never a stale pass)"
        );
    }
}
