//! What a controller's own watch does with each event: which changes wake a pass, and each
//! delivered CR noted against the operator's own writes.

use std::{
    hash::{Hash, Hasher},
    sync::Arc,
};

use kube::{Resource, runtime::watcher};

use super::env::Env;

/// What wakes the controller for a change to the CR itself: spec (generation), labels,
/// annotations, finalizers, deletion. A status-only update changes none of them.
pub fn meaningful_change<K: Resource>(object: &K) -> Option<u64> {
    let meta = object.meta();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    meta.generation.hash(&mut hasher);
    meta.labels.hash(&mut hasher);
    meta.annotations.hash(&mut hasher);
    meta.finalizers.hash(&mut hasher);
    meta.deletion_timestamp.is_some().hash(&mut hasher);
    meta.uid.hash(&mut hasher);
    Some(hasher.finish())
}

/// Notes each CR the watch delivers (see [`super::cache::OwnWrites`]); a deleted one is forgotten.
pub fn observe<K: Resource>(
    env: Arc<Env>,
) -> impl Fn(&Result<watcher::Event<K>, watcher::Error>) + Send + 'static {
    move |event| match event {
        Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => {
            env.writes.observed(object)
        }
        // The store now holds what the list found: no older than any write answered before
        // the list began (a watch that fell behind relists and skips the versions between).
        Ok(watcher::Event::InitDone) => env.writes.relisted(),
        Ok(watcher::Event::Delete(object)) => {
            if let Some(uid) = object.meta().uid.as_deref() {
                env.writes.forget(uid);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_only_update_is_not_a_meaningful_change() {
        let mut barbican = crate::api::fixtures::barbican();
        barbican.metadata.generation = Some(1);
        let before = meaningful_change(&barbican);
        barbican.status = Some(Default::default());
        barbican.metadata.resource_version = Some("9".into());
        assert_eq!(meaningful_change(&barbican), before);
        barbican.metadata.generation = Some(2);
        assert_ne!(meaningful_change(&barbican), before);
        barbican.metadata.generation = Some(1);
        barbican.metadata.finalizers = Some(vec!["x".into()]);
        assert_ne!(meaningful_change(&barbican), before);
    }
}
