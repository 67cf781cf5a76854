//! The object store of one cluster: objects as JSON, one global monotonic resourceVersion, and
//! a bounded event history that watches replay from.
//!
//! Semantics follow kube-apiserver: uid, creationTimestamp and generation are the server's;
//! generation moves only when something outside metadata and status changes; with a status
//! subresource, main-resource writes keep the stored status and status writes keep everything
//! else; a stale resourceVersion is a 409; a no-op write keeps the resourceVersion and emits
//! nothing; an object with finalizers is only marked for deletion, and goes when the last
//! finalizer is removed; dependents of a deleted owner are collected.

use std::{
    collections::{BTreeMap, VecDeque},
    sync::Arc,
};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::{clock::Clock, errors::ApiError, resources::ResourceType};

mod deletion;
mod writes;

/// A watch event kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// An object appeared.
    Added,
    /// An object changed.
    Modified,
    /// An object went away.
    Deleted,
}

impl EventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as watches see it.
#[derive(Clone, Debug)]
pub struct Event {
    /// The resourceVersion the change produced.
    pub revision: u64,
    /// `group/plural` of the object.
    pub storage_key: String,
    /// What happened.
    pub kind: EventType,
    /// The object after the change (before it, for a deletion: with its last resourceVersion).
    /// Shared: the history, every watch and the controllers see the same copy.
    pub object: Arc<Value>,
    /// For an update or a deletion, the object before it: a watch with selectors sees an
    /// object that starts or stops matching as ADDED or DELETED, as kube-apiserver's watch
    /// cache shows it, and a continued list reads the objects as they were when it started
    /// ([`Store::presented_at`]). `None` for a creation.
    pub previous: Option<Arc<Value>>,
}

/// How a deletion treats the objects that name the deleted one as their owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// The owner goes now; the garbage collector deletes dependents afterwards.
    Background,
    /// Dependents go first; the owner waits (finalizer `foregroundDeletion`) until none with
    /// `blockOwnerDeletion` remains.
    Foreground,
    /// The owner goes; dependents stay, without the owner reference.
    Orphan,
}

/// The finalizer that holds an owner during foreground deletion.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// How many events watches can resume from before a resourceVersion is too old (410).
pub const DEFAULT_HISTORY: usize = 10_000;

/// Stored objects by storage key, then (namespace, name). Each is shared with the watch
/// events that carry it, so a write copies the object once, not once per holder.
type Objects = BTreeMap<String, BTreeMap<(String, String), Arc<Value>>>;

/// The store.
pub struct Store {
    objects: Objects,
    revision: u64,
    history: VecDeque<Event>,
    history_limit: usize,
    events: broadcast::Sender<Event>,
    names_issued: u64,
    /// Owner uid to the (storage key, namespace, name) of its dependents, so a deletion finds
    /// dependents without scanning every object.
    dependents_by_owner: BTreeMap<String, std::collections::BTreeSet<(String, String, String)>>,
    /// Owners held by the foreground-deletion finalizer, re-checked after every removal.
    foreground_waiting: std::collections::BTreeSet<(String, String, String)>,
    /// Stamps creation and deletion timestamps.
    clock: Clock,
    /// Every event since the simulated controllers last looked, while they run.
    changes: Option<Vec<Event>>,
    /// How many times objects were stored or removed, and at which of those counts each
    /// storage key last changed: what lets a reader derive something from one kind once and
    /// know when to derive it again (the RBAC policy every request is authorized by).
    mutations: u64,
    changed_at: std::collections::HashMap<String, u64>,
    /// The last cluster IP handed to a Service (an offset into 10.96.0.0/12).
    cluster_ips_issued: u32,
}

impl Default for Store {
    fn default() -> Self {
        Self::new(DEFAULT_HISTORY)
    }
}

fn text<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// Whether everything but metadata and status (what generation tracks) is the same.
fn same_spec(a: &Value, b: &Value) -> bool {
    // Compared in place: this runs on every write, and objects carry large metadata.
    fn rest(o: &Value) -> impl Iterator<Item = (&String, &Value)> {
        o.as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind"))
    }
    // serde_json maps iterate in key order, so equal maps yield equal sequences.
    rest(a).eq(rest(b))
}

/// Whether kube-apiserver keeps a `metadata.generation` for objects of `t`: custom resources,
/// and the built-in kinds whose strategies set it (workloads, autoscalers, disruption budgets,
/// network policies, webhook configurations, CRDs, and in the core group pod templates and
/// replication controllers). A ConfigMap, Secret, Service or Pod has none.
fn has_generation(t: &ResourceType) -> bool {
    if t.group.is_empty() && matches!(t.kind.as_str(), "PodTemplate" | "ReplicationController") {
        return true;
    }
    const WITH_GENERATION: [&str; 7] = [
        "apps",
        "batch",
        "autoscaling",
        "policy",
        "networking.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
    ];
    let built_in_group = t.group.is_empty()
        || t.group.ends_with(".k8s.io")
        || WITH_GENERATION.contains(&t.group.as_str());
    t.schema.is_some() || !built_in_group || WITH_GENERATION.contains(&t.group.as_str())
}

/// What kube-apiserver does with a Secret's `stringData`: each entry is written into `data`
/// (base64, taking precedence over a `data` entry of the same key), and `stringData` is not
/// stored.
fn merge_string_data(secret: &mut Value) {
    let Some(Value::Object(strings)) = secret.as_object_mut().and_then(|o| o.remove("stringData"))
    else {
        return;
    };
    if !secret["data"].is_object() {
        secret["data"] = json!({});
    }
    for (key, value) in strings {
        let text = value.as_str().unwrap_or_default();
        secret["data"][key] = json!(crate::tokens::base64(text.as_bytes()));
    }
}

/// A refused `metadata.name`, worded and detailed as kube-apiserver words it.
fn name_error(t: &ResourceType, name: &str, reason: &str, detail: String) -> ApiError {
    ApiError::invalid_object(
        &t.kind,
        &t.group,
        name,
        &[("metadata.name".into(), detail, reason.into())],
    )
}

impl Store {
    /// An empty store keeping `history` events, on the wall clock.
    pub fn new(history: usize) -> Self {
        Self::with_clock(history, Clock::wall())
    }

    /// An empty store keeping `history` events, stamping times from `clock`.
    pub fn with_clock(history: usize, clock: Clock) -> Self {
        let (events, _) = broadcast::channel(4096);
        Self {
            objects: BTreeMap::new(),
            revision: 0,
            history: VecDeque::new(),
            history_limit: history,
            events,
            names_issued: 0,
            dependents_by_owner: BTreeMap::new(),
            foreground_waiting: std::collections::BTreeSet::new(),
            clock,
            changes: None,
            mutations: 0,
            changed_at: Default::default(),
            cluster_ips_issued: 9,
        }
    }

    /// Starts (or stops) keeping every event for [`Store::take_changes`].
    pub fn track_changes(&mut self, on: bool) {
        self.changes = on.then(Vec::new);
    }

    /// The events since the last call, oldest first (empty unless tracking).
    pub fn take_changes(&mut self) -> Vec<Event> {
        self.changes
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The clock the store stamps times from.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Now, as Kubernetes writes timestamps.
    fn now(&self) -> String {
        self.clock.rfc3339()
    }

    fn owner_uids(object: &Value) -> Vec<String> {
        object["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["uid"].as_str().map(String::from))
            .collect()
    }

    /// Stores an object, keeping the owner index in step; returns the object it replaced.
    fn put(
        &mut self,
        storage_key: &str,
        namespace: &str,
        name: &str,
        object: Arc<Value>,
    ) -> Option<Arc<Value>> {
        let id = (
            storage_key.to_string(),
            namespace.to_string(),
            name.to_string(),
        );
        if let Some(old) = self
            .objects
            .get(storage_key)
            .and_then(|m| m.get(&(id.1.clone(), id.2.clone())))
        {
            for uid in Self::owner_uids(old) {
                if let Some(set) = self.dependents_by_owner.get_mut(&uid) {
                    set.remove(&id);
                }
            }
        }
        for uid in Self::owner_uids(&object) {
            self.dependents_by_owner
                .entry(uid)
                .or_default()
                .insert(id.clone());
        }
        self.mark_changed(storage_key);
        self.objects
            .entry(id.0.clone())
            .or_default()
            .insert((id.1, id.2), object)
    }

    fn mark_changed(&mut self, storage_key: &str) {
        self.mutations += 1;
        match self.changed_at.get_mut(storage_key) {
            Some(at) => *at = self.mutations,
            None => {
                self.changed_at
                    .insert(storage_key.to_string(), self.mutations);
            }
        }
    }

    /// When the objects under `storage_key` last changed, as a count of the store's changes
    /// (0 if never): equal counts mean nothing of that kind was stored or removed in between.
    pub fn changed_at(&self, storage_key: &str) -> u64 {
        self.changed_at.get(storage_key).copied().unwrap_or(0)
    }

    /// Removes an object, keeping the owner index in step.
    fn take(&mut self, storage_key: &str, namespace: &str, name: &str) -> Option<Arc<Value>> {
        let removed = self
            .objects
            .get_mut(storage_key)?
            .remove(&(namespace.to_string(), name.to_string()))?;
        self.mark_changed(storage_key);
        let id = (
            storage_key.to_string(),
            namespace.to_string(),
            name.to_string(),
        );
        for uid in Self::owner_uids(&removed) {
            if let Some(set) = self.dependents_by_owner.get_mut(&uid) {
                set.remove(&id);
                if set.is_empty() {
                    self.dependents_by_owner.remove(&uid);
                }
            }
        }
        Some(removed)
    }

    /// The current resourceVersion.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The oldest resourceVersion a watch can resume from.
    pub fn oldest_resumable(&self) -> u64 {
        self.history
            .front()
            .map(|e| e.revision - 1)
            .unwrap_or(self.revision)
    }

    /// The objects of `t` (in `namespace`, or all) as they were at `revision`, rebuilt from the
    /// current ones by undoing the history's later changes, newest first: what a continued
    /// list serves, since kube-apiserver serves every page of a list from the first page's
    /// snapshot. `None` once the history no longer reaches back to `revision` (then the
    /// continue token has expired: 410).
    pub fn presented_at<'a>(
        &'a self,
        t: &'a ResourceType,
        namespace: Option<&'a str>,
        revision: u64,
    ) -> Option<Vec<std::borrow::Cow<'a, Value>>> {
        if revision < self.oldest_resumable() {
            return None;
        }
        let key = t.storage_key();
        let mut at: BTreeMap<(String, String), Option<Arc<Value>>> = self
            .objects
            .get(&key)
            .into_iter()
            .flat_map(|m| m.iter())
            .filter(|((ns, _), _)| namespace.is_none_or(|n| n == ns))
            .map(|(id, o)| (id.clone(), Some(Arc::clone(o))))
            .collect();
        for event in self.history.iter().rev() {
            if event.revision <= revision {
                break;
            }
            if event.storage_key != key {
                continue;
            }
            let id = (
                text(&event.object, "/metadata/namespace")
                    .unwrap_or("")
                    .to_string(),
                text(&event.object, "/metadata/name")
                    .unwrap_or("")
                    .to_string(),
            );
            if namespace.is_some_and(|n| n != id.0) {
                continue;
            }
            let before = match event.kind {
                EventType::Added => None,
                EventType::Modified | EventType::Deleted => {
                    Some(Arc::clone(event.previous.as_ref()?))
                }
            };
            at.insert(id, before);
        }
        Some(
            at.into_values()
                .flatten()
                .map(|o| std::borrow::Cow::Owned(presented(&o, t).into_owned()))
                .collect(),
        )
    }

    /// Forgets the event history, as etcd compaction does: a watch resuming from any earlier
    /// resourceVersion is answered 410 Gone.
    pub fn compact(&mut self) {
        self.history.clear();
    }

    /// New events, from the moment of subscription.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Kept events after `revision`.
    pub fn history_after(&self, revision: u64) -> Vec<Event> {
        self.history
            .iter()
            .filter(|e| e.revision > revision)
            .cloned()
            .collect()
    }

    /// Records the deletion of `object`, the stored copy before it being `taken`.
    fn record_deletion(
        &mut self,
        storage_key: &str,
        object: Arc<Value>,
        taken: Option<Arc<Value>>,
    ) {
        self.record_change(storage_key, EventType::Deleted, object, taken);
    }

    /// Records a change to `object`, with the object before it (`previous`).
    fn record_change(
        &mut self,
        storage_key: &str,
        kind: EventType,
        object: Arc<Value>,
        previous: Option<Arc<Value>>,
    ) {
        let event = Event {
            revision: self.revision,
            storage_key: storage_key.into(),
            kind,
            object,
            previous,
        };
        if let Some(changes) = &mut self.changes {
            changes.push(event.clone());
        }
        self.history.push_back(event.clone());
        while self.history.len() > self.history_limit {
            self.history.pop_front();
        }
        let _ = self.events.send(event);
    }

    /// Stores `object` and records the event `kind` for it: one shared copy for the store,
    /// the history, the watches and the controllers. Returned for a caller that answers with
    /// it.
    fn put_recorded(
        &mut self,
        storage_key: &str,
        namespace: &str,
        name: &str,
        kind: EventType,
        object: Value,
        previous: Option<Arc<Value>>,
    ) -> Arc<Value> {
        let shared = Arc::new(object);
        let replaced = self.put(storage_key, namespace, name, Arc::clone(&shared));
        // An update always carries what it replaced: a continued list reads the past from it.
        let previous = previous.or(match kind {
            EventType::Modified => replaced,
            _ => None,
        });
        self.record_change(storage_key, kind, Arc::clone(&shared), previous);
        shared
    }

    /// The stored object itself (at whichever version of its storage it was written), shared.
    pub fn stored(
        &self,
        t: &ResourceType,
        namespace: &str,
        name: &str,
    ) -> Result<Arc<Value>, ApiError> {
        self.objects
            .get(&t.storage_key())
            .and_then(|m| m.get(&(namespace.to_string(), name.to_string())))
            .cloned()
            .ok_or_else(|| ApiError::not_found(&resource_name(t), name))
    }

    fn bump(&mut self) -> String {
        self.revision += 1;
        self.revision.to_string()
    }

    /// The stored object.
    pub fn get(&self, t: &ResourceType, namespace: &str, name: &str) -> Result<Value, ApiError> {
        self.stored(t, namespace, name).map(|o| with_type(&o, t))
    }

    /// Every stored object of a type (in one namespace, or all), in (namespace, name) order.
    pub fn list(&self, t: &ResourceType, namespace: Option<&str>) -> Vec<Value> {
        self.presented_in(t, namespace)
            .map(std::borrow::Cow::into_owned)
            .collect()
    }

    /// The stored objects of type `t` whose ownerReferences name the owner with `uid`, as `t`
    /// presents them, in (namespace, name) order: found through the owner index, so a
    /// controller that reacts to one owner does not scan every object of the type (at 1000
    /// Barbicans in one namespace that scan made each Deployment event cost 1000 copies).
    pub fn owned_by(&self, t: &ResourceType, uid: &str) -> Vec<Value> {
        let storage_key = t.storage_key();
        let Some(objects) = self.objects.get(&storage_key) else {
            return Vec::new();
        };
        self.dependents_by_owner
            .get(uid)
            .into_iter()
            .flatten()
            .filter(|(key, _, _)| *key == storage_key)
            .filter_map(|(_, namespace, name)| objects.get(&(namespace.clone(), name.clone())))
            .map(|o| presented(o, t).into_owned())
            .collect()
    }

    /// [`Store::list`] without copying: each object as `t` presents it, borrowed where no
    /// conversion is needed, so that a caller filtering by selectors copies only what matches.
    pub fn presented_in<'a>(
        &'a self,
        t: &'a ResourceType,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = std::borrow::Cow<'a, Value>> + 'a {
        self.objects
            .get(&t.storage_key())
            .into_iter()
            .flat_map(|m| m.iter())
            .filter(move |((ns, _), _)| namespace.is_none_or(|n| n == ns))
            .map(move |(_, o)| presented(o, t))
    }
}

/// `plural.group` (or `plural` for core), as error messages name a resource.
pub fn resource_name(t: &ResourceType) -> String {
    if t.group.is_empty() {
        t.plural.clone()
    } else {
        format!("{}.{}", t.plural, t.group)
    }
}

/// The allocator's index of a cluster IP it could have issued (`10.(96+a).b.c`), if any.
fn allocated_index(ip: &str) -> Option<u32> {
    let octets: Vec<u32> = ip
        .split('.')
        .map(|o| o.parse().ok())
        .collect::<Option<_>>()?;
    match octets.as_slice() {
        [10, a, b, c] if (96..=255).contains(a) && *b < 256 && *c < 256 => {
            Some(((a - 96) << 16) | (b << 8) | c)
        }
        _ => None,
    }
}

fn namespaces() -> ResourceType {
    crate::resources::namespace_type()
}

/// The object with `apiVersion` and `kind` of the version it is served at.
fn with_type(object: &Value, t: &ResourceType) -> Value {
    let mut object = object.clone();
    set_type(&mut object, t);
    object
}

fn set_type(object: &mut Value, t: &ResourceType) {
    if !t.version.is_empty() {
        object["apiVersion"] = json!(t.api_version());
    }
    if !t.kind.is_empty() {
        object["kind"] = json!(t.kind);
    }
    crate::versions::convert(object, t);
}

/// `object` (stored at any version of its storage) as `t` serves it: borrowed when it is
/// already of `t`'s apiVersion and kind, converted otherwise. What a watch of `t` sends.
pub fn presented<'a>(object: &'a Value, t: &ResourceType) -> std::borrow::Cow<'a, Value> {
    if object["apiVersion"]
        .as_str()
        .is_some_and(|v| t.is_api_version(v))
        && object["kind"].as_str() == Some(t.kind.as_str())
    {
        std::borrow::Cow::Borrowed(object)
    } else {
        std::borrow::Cow::Owned(with_type(object, t))
    }
}

fn uid(seed: u64) -> String {
    // Deterministic per cluster, shaped like a UUID.
    let x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (x >> 32) as u32,
        (x >> 16) as u16,
        x as u16 & 0xfff,
        seed as u16 & 0xfff,
        seed
    )
}

fn suffix(n: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut x = n.wrapping_mul(0x2545_F491_4F6C_DD1D);
    (0..5)
        .map(|_| {
            let c = ALPHABET[(x % ALPHABET.len() as u64) as usize] as char;
            x /= ALPHABET.len() as u64;
            c
        })
        .collect()
}
