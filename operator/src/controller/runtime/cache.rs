//! The watch cache of the management cluster: what the controllers' watches have seen, read by
//! the passes instead of the API server.
//!
//! A converged Barbican's pass reads every child before deciding that nothing needs writing,
//! and the operator watches all of them already: the watches fill reflector stores registered
//! here, and [`Children`] reads them first, so a resync of a quiet cluster sends no GET. The
//! rules that keep a cached read as safe as a GET:
//!
//! - A store is used only once its first list is complete (before that: the API server).
//! - The watch that fills a store is the one that wakes the controller, and the store is
//!   written before the wake-up is delivered, so a pass is never older than what woke it.
//! - A cached object that is missing is trusted where acting on a stale "absent" is harmless
//!   (an apply creates or repeats; a delete has nothing to delete, and the watch event of a
//!   late arrival wakes another pass), and for a read of this operator's own child of a kind
//!   the cache follows by label: a child created a moment ago is found through the answer to
//!   its create until the watch delivers it ([`Cache::created`]). A read of anything else (an
//!   input a user names carries no label of the operator's) falls back to a GET.
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
    borrow::Cow,
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

/// A child by its kind (the Rust type's name, or `group/kind` for a kind known only at run
/// time), namespace and name.
type WrittenKey = (Cow<'static, str>, Option<String>, String);

/// The [`WrittenKey`] kind of the typed kind `K` (static: every cached read builds a key).
fn typed_kind<K: 'static>() -> Cow<'static, str> {
    Cow::Borrowed(std::any::type_name::<K>())
}

/// A write the watch may not have delivered yet: the object as the write answered, and the
/// resourceVersion of the cached copy it replaced (`None`: the write created it, and the
/// store did not hold it). The watch store showing that version still (or, for a create,
/// not holding the object) is what says it is behind: a version never comes back once
/// replaced.
struct Written {
    stale: Option<String>,
    after: Box<dyn Any + Send + Sync>,
    /// When it was recorded: a create the store still lacks after [`CREATE_DELIVERY`] is not
    /// believed any more (the watch may have delivered it and its deletion in between).
    at: std::time::Instant,
}

/// How long the answer to a create stands in for the object while the store lacks it. A
/// watch delivers in milliseconds; past this the cache says it does not know, and the API
/// server answers.
const CREATE_DELIVERY: std::time::Duration = std::time::Duration::from_secs(5);

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

/// An equality label selector (`k=v,k2=v2`), parsed once per list rather than once per
/// object: every pass lists this way over every cached object of a kind.
struct Selector<'a>(Vec<(&'a str, &'a str)>);

impl<'a> Selector<'a> {
    /// `None` when the selector uses anything but equality (the API server evaluates those).
    fn parse(selector: &'a str) -> Option<Selector<'a>> {
        let mut terms = Vec::new();
        for term in selector.split(',').filter(|t| !t.is_empty()) {
            let (key, value) = term.split_once('=')?;
            if key.ends_with('!') || value.starts_with('=') {
                return None;
            }
            terms.push((key, value));
        }
        Some(Selector(terms))
    }

    /// Whether `labels` carry every term.
    fn matches(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        self.0
            .iter()
            .all(|(key, value)| labels.get(*key).map(String::as_str) == Some(*value))
    }
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
        self.trimmed_metadata_writer(|_| {})
    }

    /// As [`Cache::metadata_writer`], each held copy keeping only what `trim` leaves of it
    /// (see [`Held::trimmed`]).
    pub fn trimmed_metadata_writer<K>(&self, trim: fn(&mut K)) -> Writer<PartialObjectMeta<K>>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let writer = Writer::<PartialObjectMeta<K>>::default();
        let store = writer.as_reader();
        self.await_list(store.clone());
        write(&self.held).insert(
            TypeId::of::<K>(),
            Box::new(Arc::new(Held::trimmed(store, trim))),
        );
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
        self.after_own_write(typed_kind::<K>(), namespace, name, cached)
    }

    /// `cached`, or this operator's own later write to it while the watch has not delivered
    /// that yet. A pass that ran between a write and its watch event decided from the copy
    /// before the write, and applied the same child again (a write per such race, in the
    /// steady state too when the race fell at the end of a convergence).
    fn after_own_write<K>(
        &self,
        kind: Cow<'static, str>,
        namespace: Option<&str>,
        name: &str,
        cached: Cached<K>,
    ) -> Cached<K>
    where
        K: Resource + Clone + Send + Sync + 'static,
    {
        let key = (kind, namespace.map(String::from), name.to_string());
        let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
        let Some(entry) = written.get(&key) else {
            return cached;
        };
        match &cached {
            Cached::Unknown => cached,
            // This operator created it a moment ago: the answer stands in until the watch
            // delivers it, for a while.
            Cached::Absent if entry.stale.is_none() && entry.at.elapsed() < CREATE_DELIVERY => {
                match entry.after.downcast_ref::<K>() {
                    Some(after) => Cached::Present(after.clone()),
                    None => cached,
                }
            }
            Cached::Absent => {
                // A create the store still lacks after a while (the API server answers), or a
                // write over a copy the store no longer holds (it was deleted).
                let was_create = entry.stale.is_none();
                written.remove(&key);
                if was_create { Cached::Unknown } else { cached }
            }
            Cached::Present(object) => {
                if entry.stale.is_some()
                    && object.meta().resource_version == entry.stale
                    && let Some(after) = entry.after.downcast_ref::<K>()
                {
                    return Cached::Present(after.clone());
                }
                // The watch has delivered the write, or something newer: the store is current.
                written.remove(&key);
                cached
            }
        }
    }

    /// Records that this operator created `after` where the store held nothing (see
    /// [`Cache::get`]), so a pass finds it before the watch delivers it. Only for kinds whose
    /// watch fills a store here; the held kinds keep their own copies.
    pub fn created<K>(&self, namespace: Option<&str>, after: &K)
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        if self.holds_all::<K>() {
            self.record_created(typed_kind::<K>(), namespace, after);
        }
    }

    /// [`Cache::created`] for a kind known only at run time whose watch fills a store here.
    pub fn created_dynamic(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        after: &DynamicObject,
    ) {
        let kind = dynamic_key(resource);
        if read(&self.dynamic).contains_key(&kind) {
            self.record_created(kind.into(), namespace, after);
        }
    }

    fn record_created<K>(&self, kind: Cow<'static, str>, namespace: Option<&str>, after: &K)
    where
        K: Resource + Clone + Send + Sync + 'static,
    {
        let Some(name) = after.meta().name.clone() else {
            return;
        };
        let key = (kind, namespace.map(String::from), name);
        self.written
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                key,
                Written {
                    stale: None,
                    after: Box::new(after.clone()),
                    at: std::time::Instant::now(),
                },
            );
    }

    /// Whether the store of the typed kind `K` holds every child of this operator of its kind
    /// in the namespaces watched (a held kind holds only what was read: its "absent" is not an
    /// answer).
    pub fn holds_all<K>(&self) -> bool
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        self.held::<K>().is_none() && self.store::<K>().is_some()
    }

    /// Records that this operator wrote `after` over the copy it had read, of resourceVersion
    /// `before` (see [`Cache::get`]). Only for kinds whose watch fills a store here; the held
    /// kinds keep their own copies.
    pub fn wrote<K>(&self, namespace: Option<&str>, before: &str, after: &K)
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        if self.holds_all::<K>() {
            self.record_write(typed_kind::<K>(), namespace, before, after);
        }
    }

    /// [`Cache::wrote`] for a kind known only at run time whose watch fills a store here.
    pub fn wrote_dynamic(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        before: &str,
        after: &DynamicObject,
    ) {
        let kind = dynamic_key(resource);
        if read(&self.dynamic).contains_key(&kind) {
            self.record_write(kind.into(), namespace, before, after);
        }
    }

    fn record_write<K>(
        &self,
        kind: Cow<'static, str>,
        namespace: Option<&str>,
        before: &str,
        after: &K,
    ) where
        K: Resource + Clone + Send + Sync + 'static,
    {
        let Some(name) = after.meta().name.clone() else {
            return;
        };
        if after.meta().resource_version.as_deref() == Some(before) {
            return;
        }
        let key = (kind, namespace.map(String::from), name);
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
            _ => Some(before.to_string()),
        };
        written.insert(
            key,
            Written {
                stale,
                after: Box::new(after.clone()),
                at: std::time::Instant::now(),
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
        let kind = dynamic_key(resource);
        let Some(store) = read(&self.dynamic).get(&kind).cloned() else {
            return Cached::Unknown;
        };
        let key = ObjectRef::new_with(name, resource.clone());
        let cached = lookup(&store, &namespace.map_or(key.clone(), |ns| key.within(ns)));
        self.after_own_write(kind.into(), namespace, name, cached)
    }

    /// The objects of `resource` in `namespace` whose labels match `selector` (equality
    /// terms), by name, as the cache holds them (a sweep reads their metadata only, and a
    /// deep copy of every MariaDB object of a namespace per pass was a fifth of the
    /// operator's CPU at N = 1000); `None` when the kind is not watched here or its first
    /// list is not complete.
    pub fn list_dynamic(
        &self,
        resource: &ApiResource,
        namespace: &str,
        selector: &str,
    ) -> Option<Vec<Arc<DynamicObject>>> {
        let selector = Selector::parse(selector)?;
        let store = read(&self.dynamic).get(&dynamic_key(resource)).cloned()?;
        ready(&store).then(|| selected(&store, namespace, &selector))
    }

    /// The objects of `K` in `namespace` whose labels match `selector` (equality terms);
    /// `None` when the cache cannot answer.
    pub fn list<K>(&self, namespace: &str, selector: &str) -> Option<Vec<K>>
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let selector = Selector::parse(selector)?;
        if let Some(held) = self.held::<K>() {
            return held.list(namespace, |labels| selector.matches(labels));
        }
        let store = self.store::<K>().filter(ready)?;
        let found = selected(&store, namespace, &selector);
        Some(found.into_iter().map(|o| o.as_ref().clone()).collect())
    }
}

/// The objects of `store` in `namespace` whose labels match `selector`, by name.
fn selected<K>(store: &Store<K>, namespace: &str, selector: &Selector<'_>) -> Vec<Arc<K>>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    // Filtered under the store's lock, borrowed comparisons only: every pass lists this way,
    // over every cached object of the kind, so an allocation (or an `Arc` of the whole
    // store's snapshot) per object made the lists quadratic in the CRs.
    let mut found = store.state_filter(|o| {
        o.meta().namespace.as_deref() == Some(namespace) && selector.matches(o.labels())
    });
    // The API server lists by name; so does the cache, so decisions do not depend on hash
    // order.
    found.sort_by(|a, b| a.meta().name.cmp(&b.meta().name));
    found
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
    pending: Option<Pending>,
    /// The versions the watch delivered last, newest last.
    delivered: std::collections::VecDeque<String>,
}

/// A write of this operator's the watch has not delivered: its resourceVersion and its answer
/// (the object after it).
#[derive(Debug)]
struct Pending {
    version: String,
    written: Arc<dyn Any + Send + Sync>,
}

/// How many delivered versions are remembered per CR: more than can arrive between a write's
/// request and its response.
const DELIVERED: usize = 8;

impl OwnWrites {
    /// Records a write whose response is `written`.
    pub fn wrote<K: Resource + Clone + Send + Sync + 'static>(&self, written: &K) {
        let meta = written.meta();
        if let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) {
            let mut by_uid = self.lock();
            let versions = by_uid.entry(uid.clone()).or_default();
            versions.pending = (!versions.delivered.contains(version)).then(|| Pending {
                version: version.clone(),
                written: Arc::new(written.clone()),
            });
        }
    }

    /// The answer to this operator's last write to the CR `uid` while the watch has not
    /// delivered it.
    pub fn unsettled<K: Clone + 'static>(&self, uid: &str) -> Option<K> {
        let by_uid = self.lock();
        let versions = by_uid.get(uid)?;
        versions
            .pending
            .as_ref()?
            .written
            .downcast_ref::<K>()
            .cloned()
    }

    /// Notes that the watch delivered `seen`: the write it carries is in the cache now.
    pub fn observed<K: Resource>(&self, seen: &K) {
        let meta = seen.meta();
        let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) else {
            return;
        };
        let mut by_uid = self.lock();
        let versions = by_uid.entry(uid.clone()).or_default();
        if versions
            .pending
            .as_ref()
            .is_some_and(|p| &p.version == version)
        {
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
/// the CR and has delivered every write of this operator to it; the answer to the operator's
/// own last write when the watch has not delivered that yet (the newest copy there is: the
/// watch delivers in order, and whatever comes after it wakes another pass); the API server's
/// only when the cache does not hold the CR (`None`: it is gone). Reading the API server for
/// a write in flight cost a GET per pass that followed a status write, in the steady state
/// too when one fell at the end of a convergence (docs/performance.md).
pub async fn current<K>(
    api: &kube::Api<K>,
    store: &Store<K>,
    writes: &OwnWrites,
    namespace: &str,
    name: &str,
) -> Result<Option<K>, kube::Error>
where
    K: Resource<DynamicType = ()>
        + Clone
        + Send
        + Sync
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + 'static,
{
    if let Cached::Present(cached) = lookup(store, &ObjectRef::new(name).within(namespace))
        && let Some(uid) = cached.meta().uid.as_deref()
    {
        if writes.settled(uid) {
            return Ok(Some(cached));
        }
        if let Some(written) = writes.unsettled::<K>(uid) {
            return Ok(Some(written));
        }
    }
    api.get_opt(name).await
}

/// Drops what the operator never reads from a cached object: managedFields are most of a
/// server-side-applied object's size, and the cache holds every object it reads. Even the
/// operator's own apply entry goes (parsed, those entries are close to half of the operator's
/// memory at a thousand Barbicans): a field the operator set and no longer sets is found by the
/// applied-hash annotation instead (any change of the desired object changes the hash, so the
/// cached copy stops covering it and the apply takes the field away; see
/// [`super::children::APPLIED_HASH_ANNOTATION`]). [`super::children::owns_unwanted`] still
/// reads the entry where an object comes from the API server (a target cluster).
///
/// One fact about the entries is kept: whether the operator's own `Update` entry is there (a
/// child it created by POST whose fields are not yet folded into its apply entry), as that
/// entry without its fields (see [`super::converge`]).
pub fn slim<K: Resource>(object: &mut K) {
    let created = object
        .meta()
        .managed_fields
        .iter()
        .flatten()
        .find(|e| super::applied::is_own_update(e))
        .map(
            |e| k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry {
                manager: e.manager.clone(),
                operation: e.operation.clone(),
                ..Default::default()
            },
        );
    object.meta_mut().managed_fields = created.map(|entry| vec![entry]);
}

#[cfg(test)]
mod tests;
