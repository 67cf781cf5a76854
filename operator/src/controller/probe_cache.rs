//! The health probes that passed, reused within their TTL so a steady Barbican is probed at
//! most once per [`PROBE_TTL`] however often its pass runs.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use jiff::Timestamp;

/// How long a passing probe is reused.
pub const PROBE_TTL: Duration = Duration::from_secs(30);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    uid: String,
    endpoint: String,
    at: Timestamp,
}

/// Passing probes by `namespace/name`, each with the CR's uid, the endpoint and the time.
#[derive(Clone, Default)]
pub struct ProbeCache(Arc<Mutex<HashMap<String, Entry>>>);

impl ProbeCache {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a passing probe of `key` for `uid` at `endpoint` is younger than the TTL.
    pub fn fresh(&self, key: &str, uid: &str, endpoint: &str, now: Timestamp) -> bool {
        self.entries().get(key).is_some_and(|e| {
            e.uid == uid
                && e.endpoint == endpoint
                && now.duration_since(e.at)
                    < jiff::SignedDuration::try_from(PROBE_TTL).unwrap_or(jiff::SignedDuration::MAX)
        })
    }

    /// How much of `ttl` is left of a passing check of `key` for `uid` of `what`; `None` when
    /// there is none, or it is older.
    pub fn left_of(
        &self,
        key: &str,
        uid: &str,
        what: &str,
        now: Timestamp,
        ttl: Duration,
    ) -> Option<Duration> {
        let entries = self.entries();
        let entry = entries
            .get(key)
            .filter(|e| e.uid == uid && e.endpoint == what)?;
        let age = Duration::try_from(now.duration_since(entry.at)).unwrap_or(Duration::ZERO);
        ttl.checked_sub(age).filter(|left| !left.is_zero())
    }

    /// Records a passing probe.
    pub fn record(&self, key: &str, uid: &str, endpoint: &str, now: Timestamp) {
        self.entries().insert(
            key.to_string(),
            Entry {
                uid: uid.to_string(),
                endpoint: endpoint.to_string(),
                at: now,
            },
        );
    }

    /// Forgets `key` (a failed probe, or the CR is gone).
    pub fn evict(&self, key: &str) {
        self.entries().remove(key);
    }

    /// Whether anything is cached for `key`.
    pub fn contains(&self, key: &str) -> bool {
        self.entries().contains_key(key)
    }
}

/// The probe cache key of a Barbican.
pub fn cache_key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_left_of_a_check_counts_down_to_none() {
        let cache = ProbeCache::default();
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        cache.record("k", "u1", "fp", t0);
        let later = |s: i64| t0 + jiff::SignedDuration::from_secs(s);
        let ttl = Duration::from_secs(300);
        assert_eq!(
            cache.left_of("k", "u1", "fp", later(100), ttl),
            Some(Duration::from_secs(200))
        );
        assert_eq!(cache.left_of("k", "u1", "fp", later(300), ttl), None);
        assert_eq!(cache.left_of("k", "u2", "fp", later(1), ttl), None);
        assert_eq!(cache.left_of("k", "u1", "other", later(1), ttl), None);
    }

    #[test]
    fn a_probe_is_reused_for_the_same_uid_and_endpoint_within_the_ttl() {
        let cache = ProbeCache::default();
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        cache.record("ns/kms", "u1", "http://e", t0);
        let later = |s: i64| t0 + jiff::SignedDuration::from_secs(s);
        assert!(cache.fresh("ns/kms", "u1", "http://e", later(29)));
        assert!(!cache.fresh("ns/kms", "u1", "http://e", later(30)));
        assert!(
            !cache.fresh("ns/kms", "u2", "http://e", later(1)),
            "a recreated CR"
        );
        assert!(
            !cache.fresh("ns/kms", "u1", "https://x", later(1)),
            "a new endpoint"
        );
        cache.evict("ns/kms");
        assert!(!cache.contains("ns/kms"));
    }
}
