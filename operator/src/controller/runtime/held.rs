//! Kinds the operator reads a few objects of among many: Secrets (a cluster keeps every Helm
//! release as a Secret of up to 1 MiB, and the operator reads only the ones its CRs name and
//! the ones it writes) and Jobs (other applications run thousands; the operator reads its
//! db-sync and db-clean runs, and the db-sync Job carries no labels to select it by).
//!
//! Such a kind is watched as metadata only (`PartialObjectMeta`): enough to wake the CRs
//! that name an object or own it, and to say which version of each object is current. A full
//! copy is held only of an object a pass has read from the API server (or written), and only
//! while it is current: a cached read answers from the copy when its resourceVersion is the
//! one the metadata watch last delivered, and goes to the API server otherwise. So the
//! operator's memory follows what it reads, not what the cluster holds, and a converged
//! operator still reads nothing (every copy it needs is current until the object changes).

use std::{collections::HashMap, sync::Mutex};

use kube::{
    Resource, ResourceExt,
    core::PartialObjectMeta,
    runtime::{
        reflector::{ObjectRef, Store},
        watcher,
    },
};

/// What the cache says about one object.
#[derive(Debug, PartialEq)]
pub enum Cached<K> {
    /// The kind is not watched, or its first list is not complete: ask the API server.
    Unknown,
    /// The watch has not seen it (it does not exist, or it was created a moment ago).
    Absent,
    /// The watch's latest copy.
    Present(K),
}

/// The held copies of one kind, beside the store its metadata watch fills.
pub struct Held<K: Resource<DynamicType = ()> + 'static> {
    metadata: Store<PartialObjectMeta<K>>,
    /// Boxed: a map's table is sized for twice its entries at worst, and a typed object's
    /// inline size is kilobytes (a Job's, with its pod template's every optional field).
    copies: Mutex<HashMap<(String, String), Box<K>>>,
    /// What a copy keeps of what was read (see [`Held::trimmed`]).
    trim: fn(&mut K),
}

/// The key of an object: its namespace (empty when cluster-scoped) and name.
fn key(namespace: Option<&str>, name: &str) -> (String, String) {
    (namespace.unwrap_or_default().to_string(), name.to_string())
}

fn key_of<K: Resource>(object: &K) -> (String, String) {
    key(object.meta().namespace.as_deref(), &object.name_any())
}

impl<K> Held<K>
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    /// Held copies checked against `metadata`, the store of the kind's metadata watch.
    pub fn new(metadata: Store<PartialObjectMeta<K>>) -> Self {
        Self::trimmed(metadata, |_| {})
    }

    /// Held copies with only what `trim` leaves of each object: for a kind whose passes read
    /// less than the whole object (a Job's decisions read its metadata and status, never its
    /// pod template), so the copies cost what is read. A read from the cache answers with
    /// the trimmed copy.
    pub fn trimmed(metadata: Store<PartialObjectMeta<K>>, trim: fn(&mut K)) -> Self {
        Self {
            metadata,
            copies: Mutex::new(HashMap::new()),
            trim,
        }
    }

    fn copies(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Box<K>>> {
        self.copies.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn listed(&self) -> bool {
        use futures::FutureExt;
        self.metadata
            .wait_until_ready()
            .now_or_never()
            .is_some_and(|r| r.is_ok())
    }

    /// The current version of `namespace/name` as the metadata watch knows it: `None` when it
    /// has not listed yet, `Some(None)` when the object is not there.
    fn current_version(&self, namespace: Option<&str>, name: &str) -> Option<Option<String>> {
        if !self.listed() {
            return None;
        }
        let reference = ObjectRef::<PartialObjectMeta<K>>::new(name);
        let reference = match namespace {
            Some(ns) => reference.within(ns),
            None => reference,
        };
        Some(
            self.metadata
                .get(&reference)
                .map(|m| m.metadata.resource_version.clone().unwrap_or_default()),
        )
    }

    /// What the cache says of `namespace/name`: the held copy when it is current, absent when
    /// the watch has not seen the object, unknown (read the API server, then [`Held::hold`])
    /// otherwise.
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Cached<K> {
        let Some(version) = self.current_version(namespace, name) else {
            return Cached::Unknown;
        };
        // A copy of an object the watch has not delivered yet (this pass created it a moment
        // ago) stays: the watch delivers that very version next.
        let Some(version) = version else {
            return Cached::Absent;
        };
        match self.copies().get(&key(namespace, name)) {
            Some(copy) if copy.meta().resource_version.as_deref() == Some(version.as_str()) => {
                Cached::Present(K::clone(copy))
            }
            _ => Cached::Unknown,
        }
    }

    /// Keeps `object`, as read from or written to the API server (slimmed), for later reads,
    /// trimmed to what passes read.
    pub fn hold(&self, mut object: K) {
        (self.trim)(&mut object);
        self.copies().insert(key_of(&object), Box::new(object));
    }

    /// The held objects in `namespace` whose labels `select`s, by name; `None` when one of
    /// them is not held at its current version (the API server answers, and its answer is
    /// held).
    pub fn list(
        &self,
        namespace: &str,
        select: impl Fn(&std::collections::BTreeMap<String, String>) -> bool,
    ) -> Option<Vec<K>> {
        if !self.listed() {
            return None;
        }
        // Filtered under the metadata store's lock: thousands of other applications' Secrets
        // share the namespaces, and a snapshot of them all per pass was quadratic in the CRs.
        let selected = self.metadata.state_filter(|metadata| {
            metadata.metadata.namespace.as_deref() == Some(namespace) && select(metadata.labels())
        });
        let copies = self.copies();
        let mut found = Vec::new();
        for metadata in selected {
            let copy = copies.get(&key_of(metadata.as_ref()))?;
            if copy.meta().resource_version != metadata.metadata.resource_version {
                return None;
            }
            found.push(K::clone(copy));
        }
        found.sort_by_key(|o| o.name_any());
        Some(found)
    }

    /// Drops the copy of an object the watch saw deleted, and after a relist (which reports
    /// no deletions) the copies of every object it no longer has.
    pub fn forget(&self, event: &watcher::Event<PartialObjectMeta<K>>) {
        match event {
            watcher::Event::Delete(gone) => {
                self.copies().remove(&key_of(gone));
            }
            watcher::Event::InitDone => {
                let live: std::collections::HashSet<(String, String)> = self
                    .metadata
                    .state()
                    .iter()
                    .map(|m| key_of(m.as_ref()))
                    .collect();
                self.copies().retain(|k, _| live.contains(k));
            }
            _ => {}
        }
    }

    /// How many copies are held.
    pub fn len(&self) -> usize {
        self.copies().len()
    }

    /// Whether no copy is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Drops the labels and annotations of an object the operator neither labelled as its own
/// (`app.kubernetes.io/managed-by: <managed_by>`) nor owns through one of its kinds (an owner
/// reference into API group `group`): a held kind's metadata watch keeps thousands of other
/// applications' objects (Helm keeps every release as a labelled Secret) only to know their
/// names, owners and versions. A pass that reads such an object reads it whole (and holds it
/// so); a list of the kind by label answers among the operator's own objects, as the lists
/// of the kinds watched by that label do.
pub fn forget_foreign_labels<K: Resource>(object: &mut K, managed_by: &str, group: &str) {
    let meta = object.meta();
    let labelled = meta
        .labels
        .as_ref()
        .and_then(|l| l.get("app.kubernetes.io/managed-by"))
        .is_some_and(|v| v == managed_by);
    let owned = meta.owner_references.iter().flatten().any(|o| {
        o.api_version
            .strip_prefix(group)
            .is_some_and(|rest| rest.starts_with('/'))
    });
    if !labelled && !owned {
        let meta = object.meta_mut();
        meta.labels = None;
        meta.annotations = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Secret;
    use kube::runtime::reflector::store::Writer;
    use watcher::Event;

    fn metadata(name: &str, version: &str, labels: &[(&str, &str)]) -> PartialObjectMeta<Secret> {
        let mut m = PartialObjectMeta::<Secret>::default();
        m.metadata.name = Some(name.into());
        m.metadata.namespace = Some("openstack".into());
        m.metadata.resource_version = Some(version.into());
        m.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        m
    }

    fn secret(name: &str, version: &str) -> Secret {
        let mut s = Secret::default();
        s.metadata.name = Some(name.into());
        s.metadata.namespace = Some("openstack".into());
        s.metadata.resource_version = Some(version.into());
        s
    }

    fn listed(
        objects: Vec<PartialObjectMeta<Secret>>,
    ) -> (Held<Secret>, Writer<PartialObjectMeta<Secret>>) {
        let mut writer = Writer::default();
        let held = Held::new(writer.as_reader());
        writer.apply_watcher_event(&Event::Init);
        for o in objects {
            writer.apply_watcher_event(&Event::InitApply(o));
        }
        writer.apply_watcher_event(&Event::InitDone);
        (held, writer)
    }

    #[test]
    fn a_copy_answers_only_while_it_is_the_version_the_watch_last_saw() {
        let (held, mut writer) = listed(vec![metadata("db", "5", &[])]);
        assert_eq!(
            held.get(Some("openstack"), "db"),
            Cached::Unknown,
            "not read yet"
        );
        held.hold(secret("db", "5"));
        assert_eq!(
            held.get(Some("openstack"), "db"),
            Cached::Present(secret("db", "5"))
        );
        writer.apply_watcher_event(&Event::Apply(metadata("db", "6", &[])));
        assert_eq!(
            held.get(Some("openstack"), "db"),
            Cached::Unknown,
            "changed since it was read: the API server answers"
        );
        assert_eq!(held.get(Some("openstack"), "other"), Cached::Absent);
    }

    #[test]
    fn nothing_answers_before_the_first_list_and_a_deleted_object_is_let_go() {
        let mut writer = Writer::<PartialObjectMeta<Secret>>::default();
        let held = Held::new(writer.as_reader());
        held.hold(secret("db", "5"));
        assert_eq!(
            held.get(Some("openstack"), "db"),
            Cached::Unknown,
            "listing"
        );
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitApply(metadata("db", "5", &[])));
        writer.apply_watcher_event(&Event::InitDone);
        assert!(matches!(
            held.get(Some("openstack"), "db"),
            Cached::Present(_)
        ));
        let gone = Event::Delete(metadata("db", "5", &[]));
        writer.apply_watcher_event(&gone);
        held.forget(&gone);
        assert!(held.is_empty(), "no copy outlives its object");
        assert_eq!(held.get(Some("openstack"), "db"), Cached::Absent);
    }

    #[test]
    fn a_copy_made_before_the_watch_delivers_it_waits_for_it_and_a_relist_drops_the_missing() {
        let (held, mut writer) = listed(vec![]);
        held.hold(secret("new", "7"));
        assert_eq!(
            held.get(Some("openstack"), "new"),
            Cached::Absent,
            "not delivered yet"
        );
        writer.apply_watcher_event(&Event::Apply(metadata("new", "7", &[])));
        assert!(
            matches!(held.get(Some("openstack"), "new"), Cached::Present(_)),
            "the copy waited for its version"
        );
        held.hold(secret("gone-in-a-gap", "3"));
        for event in [
            Event::Init,
            Event::InitApply(metadata("new", "7", &[])),
            Event::InitDone,
        ] {
            writer.apply_watcher_event(&event);
            held.forget(&event);
        }
        assert_eq!(held.len(), 1, "the relist no longer has the other one");
    }

    #[test]
    fn a_trimmed_kind_keeps_and_answers_only_what_its_trim_leaves() {
        let mut writer = Writer::default();
        let held = Held::trimmed(writer.as_reader(), |s: &mut Secret| s.data = None);
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitApply(metadata("db", "5", &[])));
        writer.apply_watcher_event(&Event::InitDone);
        let mut read = secret("db", "5");
        read.data = Some([("password".to_string(), Default::default())].into());
        held.hold(read);
        let Cached::Present(copy) = held.get(Some("openstack"), "db") else {
            panic!("held at the current version");
        };
        assert_eq!(copy, secret("db", "5"), "the data was trimmed away");
        assert_eq!(held.list("openstack", |_| true), Some(vec![copy]));
    }

    #[test]
    fn other_applications_objects_keep_no_labels_or_annotations() {
        let group = "barbican.openstack.c5c3.io";
        let helm = || {
            let mut m = metadata("sh.helm.release.v1.app.v3", "4", &[("owner", "helm")]);
            m.metadata.annotations = Some([("note".to_string(), "x".to_string())].into());
            m
        };
        let mut foreign = helm();
        forget_foreign_labels(&mut foreign, "barbican-operator", group);
        assert_eq!(
            (foreign.metadata.labels, foreign.metadata.annotations),
            (None, None)
        );
        assert_eq!(foreign.metadata.resource_version.as_deref(), Some("4"));

        let mut own = metadata(
            "kms-config-1",
            "5",
            &[("app.kubernetes.io/managed-by", "barbican-operator")],
        );
        let before = own.clone();
        forget_foreign_labels(&mut own, "barbican-operator", group);
        assert_eq!(
            own.metadata, before.metadata,
            "the operator's own keep their labels"
        );

        for api_version in [format!("{group}/v1alpha1"), "other.example/v1".to_string()] {
            let mut owned = helm();
            owned.metadata.owner_references = Some(vec![
                k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
                    api_version: api_version.clone(),
                    kind: "BarbicanSecretStore".into(),
                    name: "s".into(),
                    uid: "u".into(),
                    ..Default::default()
                },
            ]);
            forget_foreign_labels(&mut owned, "barbican-operator", group);
            assert_eq!(
                owned.metadata.annotations.is_some(),
                api_version.starts_with(group),
                "an owner of the operator's kinds keeps them ({api_version})"
            );
        }
    }

    #[test]
    fn a_list_answers_only_when_every_selected_object_is_held_at_its_version() {
        let (held, _writer) = listed(vec![
            metadata("b", "1", &[("x", "1")]),
            metadata("a", "2", &[("x", "1")]),
            metadata("foreign", "3", &[]),
        ]);
        let select = |labels: &std::collections::BTreeMap<String, String>| {
            labels.get("x").map(String::as_str) == Some("1")
        };
        held.hold(secret("a", "2"));
        assert_eq!(held.list("openstack", select), None, "b is not held");
        held.hold(secret("b", "1"));
        let names: Vec<String> = held
            .list("openstack", select)
            .unwrap()
            .iter()
            .map(|s| s.name_any())
            .collect();
        assert_eq!(
            names,
            ["a", "b"],
            "by name; the unselected one needs no copy"
        );
        assert_eq!(held.list("elsewhere", select), Some(vec![]));
    }
}
