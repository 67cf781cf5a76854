//! The namespaces the controllers watch on the management cluster (`--watch-namespaces`):
//! every namespace, with one cluster-wide watch per kind, or a list, with one watch per
//! namespace and kind, so the operator needs namespaced Roles only (see the chart's
//! `watchNamespaces`).
//!
//! A cache fed by several namespaces' watches cannot take their relists as they come: a
//! relist of one namespace ends in `InitDone`, which replaces the whole cache with that
//! namespace's objects. [`Merged`] turns the per-namespace event streams into the stream of
//! one watch: a single `Init … InitDone` once every namespace has listed, and afterwards a
//! namespace's relist as the `Apply`s it found and a `Delete` for each object it no longer has.

use std::collections::{BTreeMap, BTreeSet};

use futures::{Stream, StreamExt, stream::BoxStream};
use kube::{
    Api, Client, Resource,
    runtime::{WatchStreamExt, reflector::store::Writer, watcher},
};
use serde::de::DeserializeOwned;

/// Where the controllers watch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum WatchScope {
    /// Every namespace.
    #[default]
    All,
    /// These namespaces only.
    Namespaces(BTreeSet<String>),
}

/// A `--watch-namespaces` value that is not a list of namespace names.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "--watch-namespaces: {name:?} is not a namespace name (lowercase letters, digits and '-', at most 63, starting and ending with a letter or digit)"
)]
pub struct ScopeError {
    /// The offending entry.
    pub name: String,
}

fn is_label(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

impl WatchScope {
    /// From a comma-separated list; empty means every namespace.
    pub fn parse(list: &str) -> Result<Self, ScopeError> {
        let names: BTreeSet<String> = list
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect();
        if let Some(bad) = names.iter().find(|n| !is_label(n)) {
            return Err(ScopeError { name: bad.clone() });
        }
        Ok(if names.is_empty() {
            Self::All
        } else {
            Self::Namespaces(names)
        })
    }

    /// Whether objects in `namespace` are watched.
    pub fn includes(&self, namespace: &str) -> bool {
        match self {
            Self::All => true,
            Self::Namespaces(names) => names.contains(namespace),
        }
    }

    /// The watch events of a namespaced kind in scope, as one watch's (see [`Merged`]), each
    /// watch backing off on errors; `api` gives the kind's API in a namespace (`None`: all).
    pub fn events<K>(
        &self,
        api: impl Fn(Option<&str>) -> Api<K>,
        config: &watcher::Config,
    ) -> BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>
    where
        K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
    {
        match self {
            Self::All => watcher(api(None), config.clone())
                .backoff(crate::controller::runtime::relist::Relist::default())
                .boxed(),
            Self::Namespaces(names) => merged(
                names
                    .iter()
                    .map(|ns| {
                        watcher(api(Some(ns)), config.clone())
                            .backoff(crate::controller::runtime::relist::Relist::default())
                            .boxed()
                    })
                    .collect(),
            ),
        }
    }

    /// The objects of a namespaced kind in scope as they change, each written to `writer` (a
    /// [`super::cache::Cache`] store, slimmed) before it is passed on: a controller's trigger
    /// whose pass then finds the object in the cache.
    pub fn cached<K>(
        &self,
        api: impl Fn(Option<&str>) -> Api<K>,
        config: &watcher::Config,
        writer: Writer<K>,
    ) -> BoxStream<'static, Result<K, watcher::Error>>
    where
        K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
        K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
    {
        filling(self.events(api, config), writer)
    }
}

/// The objects of `events` as they change, each written (slimmed) to `writer` before it is
/// passed on, the watch driven on a task of its own (see [`super::fanout::fan_out`]; also for
/// a cluster-scoped kind's watch).
pub fn filling<K>(
    events: impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    writer: Writer<K>,
) -> BoxStream<'static, Result<K, watcher::Error>>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone + Send + Sync,
{
    let [filled] =
        super::fanout::fan_out::<K, 1>(events.modify(super::cache::slim).reflect(writer));
    filled.touched_objects().boxed()
}

/// The API of the typed kind `K` in a namespace, or in all (for [`WatchScope::events`]).
pub fn typed<K>(client: &Client) -> impl Fn(Option<&str>) -> Api<K> + use<K>
where
    K: Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
{
    let client = client.clone();
    move |ns| match ns {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// The API of the dynamic `resource` in a namespace, or in all (for [`WatchScope::events`]).
pub fn dynamic(
    client: &Client,
    resource: &kube::api::ApiResource,
) -> impl Fn(Option<&str>) -> Api<kube::api::DynamicObject> + use<> {
    let (client, resource) = (client.clone(), resource.clone());
    move |ns| match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

/// One watch's events from several namespaces' watches (see the module documentation).
pub fn merged<K>(
    streams: Vec<BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>>,
) -> BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>
where
    K: Resource + Clone + Send + 'static,
{
    let count = streams.len();
    let tagged = streams
        .into_iter()
        .enumerate()
        .map(|(i, s)| s.map(move |e| (i, e)).boxed());
    let mut merge = Merged::new(count);
    futures::stream::select_all(tagged)
        .flat_map(move |(i, event)| {
            let out: Vec<Result<watcher::Event<K>, watcher::Error>> = match event {
                Ok(event) => merge.on(i, event).into_iter().map(Ok).collect(),
                Err(e) => vec![Err(e)],
            };
            futures::stream::iter(out)
        })
        .boxed()
}

/// The state of [`merged`]: which namespaces have listed, and the objects each one has.
#[derive(Debug)]
pub struct Merged<K> {
    /// Namespaces (by index) whose first list has not ended.
    listing: BTreeSet<usize>,
    /// Whether the single `Init` went out.
    started: bool,
    /// The objects of each namespace, by name.
    live: Vec<BTreeMap<String, K>>,
    /// The objects a namespace's current relist found so far.
    relist: Vec<Option<BTreeMap<String, K>>>,
    /// Changes of namespaces that have listed, held until every namespace has.
    held: Vec<watcher::Event<K>>,
}

impl<K: Resource + Clone> Merged<K> {
    /// For `count` namespaces.
    pub fn new(count: usize) -> Self {
        Self {
            listing: (0..count).collect(),
            started: false,
            live: vec![BTreeMap::new(); count],
            relist: vec![None; count],
            held: Vec::new(),
        }
    }

    fn listed(&self) -> bool {
        self.listing.is_empty()
    }

    /// What the merged stream says when namespace `i` says `event`.
    pub fn on(&mut self, i: usize, event: watcher::Event<K>) -> Vec<watcher::Event<K>> {
        use watcher::Event::{Apply, Delete, Init, InitApply, InitDone};
        let name = |o: &K| o.meta().name.clone().unwrap_or_default();
        let mut out = Vec::new();
        match event {
            Init => {
                self.relist[i] = Some(BTreeMap::new());
                if !self.started {
                    self.started = true;
                    out.push(Init);
                }
            }
            InitApply(object) => {
                if let Some(seen) = &mut self.relist[i] {
                    seen.insert(name(&object), object.clone());
                }
                if self.listed() {
                    out.push(Apply(object));
                } else {
                    out.push(InitApply(object));
                }
            }
            InitDone => {
                let seen = self.relist[i].take().unwrap_or_default();
                let gone: Vec<K> = self.live[i]
                    .iter()
                    .filter(|(k, _)| !seen.contains_key(*k))
                    .map(|(_, o)| o.clone())
                    .collect();
                self.live[i] = seen;
                if self.listed() {
                    out.extend(gone.into_iter().map(Delete));
                } else {
                    self.listing.remove(&i);
                    if self.listed() {
                        out.push(InitDone);
                        out.append(&mut self.held);
                    }
                }
            }
            Apply(object) => {
                self.live[i].insert(name(&object), object.clone());
                self.emit(Apply(object), &mut out);
            }
            Delete(object) => {
                self.live[i].remove(&name(&object));
                self.emit(Delete(object), &mut out);
            }
        }
        out
    }

    fn emit(&mut self, event: watcher::Event<K>, out: &mut Vec<watcher::Event<K>>) {
        if self.listed() {
            out.push(event);
        } else {
            self.held.push(event);
        }
    }
}

/// Runs `stream` to its end, for tests.
#[cfg(test)]
async fn collect<S: futures::Stream + Unpin>(stream: S) -> Vec<S::Item> {
    stream.collect().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use watcher::Event::{Apply, Delete, Init, InitApply, InitDone};

    fn map(ns: &str, name: &str, v: &str) -> ConfigMap {
        let mut m = ConfigMap::default();
        m.metadata.name = Some(name.into());
        m.metadata.namespace = Some(ns.into());
        m.data = Some([("v".to_string(), v.to_string())].into());
        m
    }

    fn names(events: &[watcher::Event<ConfigMap>]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                Init => "Init".to_string(),
                InitDone => "InitDone".to_string(),
                InitApply(o) => format!("InitApply {}", o.metadata.name.as_deref().unwrap()),
                Apply(o) => format!("Apply {}", o.metadata.name.as_deref().unwrap()),
                Delete(o) => format!("Delete {}", o.metadata.name.as_deref().unwrap()),
            })
            .collect()
    }

    #[test]
    fn scope_lists_parse_and_name_the_bad_entry() {
        assert_eq!(WatchScope::parse(""), Ok(WatchScope::All));
        assert_eq!(WatchScope::parse(" , "), Ok(WatchScope::All));
        let scope = WatchScope::parse("openstack, legacy").unwrap();
        assert!(scope.includes("openstack") && scope.includes("legacy"));
        assert!(!scope.includes("kube-system"));
        assert!(WatchScope::All.includes("anything"));
        let error = WatchScope::parse("openstack,Legacy").unwrap_err();
        assert_eq!(error.name, "Legacy");
        assert!(
            error
                .to_string()
                .starts_with("--watch-namespaces: \"Legacy\" is not")
        );
    }

    #[test]
    fn one_init_until_every_namespace_listed_and_changes_held_until_then() {
        let mut merge = Merged::<ConfigMap>::new(2);
        let mut out = Vec::new();
        out.extend(merge.on(0, Init));
        out.extend(merge.on(0, InitApply(map("a", "a1", "1"))));
        out.extend(merge.on(0, InitDone));
        out.extend(merge.on(0, Apply(map("a", "a2", "1"))));
        out.extend(merge.on(1, Init));
        out.extend(merge.on(1, InitApply(map("b", "b1", "1"))));
        assert_eq!(
            names(&out),
            ["Init", "InitApply a1", "InitApply b1"],
            "a's change waits for b's list"
        );
        let done = merge.on(1, InitDone);
        assert_eq!(names(&done), ["InitDone", "Apply a2"]);
    }

    #[test]
    fn a_later_relist_of_one_namespace_applies_and_deletes_only_there() {
        let mut merge = Merged::<ConfigMap>::new(2);
        for i in 0..2 {
            merge.on(i, Init);
        }
        merge.on(0, InitApply(map("a", "a1", "1")));
        merge.on(0, InitApply(map("a", "a2", "1")));
        merge.on(0, InitDone);
        merge.on(1, InitApply(map("b", "b1", "1")));
        merge.on(1, InitDone);
        // a relists (its watch expired): a2 went away while it was not watching.
        let mut out = merge.on(0, Init);
        out.extend(merge.on(0, InitApply(map("a", "a1", "2"))));
        out.extend(merge.on(0, InitDone));
        assert_eq!(names(&out), ["Apply a1", "Delete a2"], "b1 is untouched");
        let deleted = merge.on(1, Delete(map("b", "b1", "1")));
        assert_eq!(names(&deleted), ["Delete b1"]);
    }

    #[tokio::test]
    async fn merged_streams_feed_one_cache_as_one_watch_would() {
        let a = futures::stream::iter(vec![
            Ok(Init),
            Ok(InitApply(map("a", "a1", "1"))),
            Ok(InitDone),
        ])
        .boxed();
        let b = futures::stream::iter(vec![
            Ok(Init),
            Ok(InitApply(map("b", "b1", "1"))),
            Ok(InitDone),
        ])
        .boxed();
        let (reader, mut writer) = kube::runtime::reflector::store::<ConfigMap>();
        for event in collect(merged(vec![a, b])).await {
            writer.apply_watcher_event(&event.unwrap());
        }
        let mut cached: Vec<String> = reader
            .state()
            .iter()
            .map(|m| m.metadata.name.clone().unwrap())
            .collect();
        cached.sort();
        assert_eq!(
            cached,
            ["a1", "b1"],
            "neither namespace's list replaced the other's"
        );
    }
}
