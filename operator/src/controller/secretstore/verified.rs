//! Verdicts a store already earned, reused until they are due again.
//!
//! A store is woken by every status flip of its parent (that is how it learns its section
//! landed), but its credentials only need checking on their own schedule: at the re-mint
//! point, or every 15 minutes. A passing verdict is kept with a fingerprint of everything it was
//! drawn from (the store's and the instance's generations and the resourceVersions of the
//! Secrets it read) and reused while nothing of that changed and it is not yet due (at most 15 minutes,
//! so a credential revoked behind the operator's back shows within that). A failure is never
//! reused, and an operator restart starts without verdicts.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use jiff::{SignedDuration, Timestamp};

use kube::ResourceExt;

use super::{approle::REVALIDATE, status::Findings};
use crate::api::secret_store::BarbicanSecretStore;

#[derive(Clone, Debug)]
struct Entry {
    fingerprint: String,
    findings: Findings,
    due: Timestamp,
}

/// The key of `store`'s verdict: `namespace/name`.
pub fn key(store: &BarbicanSecretStore) -> String {
    format!(
        "{}/{}",
        store.namespace().unwrap_or_default(),
        store.name_any()
    )
}

/// Passing verdicts by `namespace/name`.
#[derive(Clone, Default)]
pub struct Verified(Arc<Mutex<HashMap<String, Entry>>>);

impl Verified {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The verdict recorded for `key` with `fingerprint`, if not yet due at `now`; its requeue
    /// is the time left.
    pub fn reuse(&self, key: &str, fingerprint: &str, now: Timestamp) -> Option<Findings> {
        let entries = self.entries();
        let entry = entries.get(key)?;
        if entry.fingerprint != fingerprint || now >= entry.due {
            return None;
        }
        let left = Duration::try_from(entry.due.duration_since(now)).ok()?;
        Some(Findings {
            requeue: left,
            ..entry.findings.clone()
        })
    }

    /// Records `findings` for `key` when they pass (until their requeue is due); forgets `key`
    /// otherwise.
    pub fn record(&self, key: &str, fingerprint: String, findings: &Findings, now: Timestamp) {
        let passing = findings.credentials.as_ref().is_some_and(|c| c.ready);
        // Never longer than the revalidation interval: a revoked credential shows within it.
        let due = SignedDuration::try_from(findings.requeue.min(REVALIDATE))
            .ok()
            .and_then(|d| now.checked_add(d).ok());
        match due {
            Some(due) if passing => {
                self.entries().insert(
                    key.to_string(),
                    Entry {
                        fingerprint,
                        findings: findings.clone(),
                        due,
                    },
                );
            }
            _ => self.forget(key),
        }
    }

    /// Forgets `key` (a failure, or the store is gone).
    pub fn forget(&self, key: &str) {
        self.entries().remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    #[test]
    fn a_pass_is_reused_until_due_or_until_an_input_changes() {
        let cache = Verified::default();
        let ok = Findings::available(true, "ok", Duration::from_secs(60));
        cache.record("ns/a", "v1".into(), &ok, t(0));
        let reused = cache.reuse("ns/a", "v1", t(20)).expect("reused");
        assert_eq!(reused.requeue, Duration::from_secs(40));
        assert_eq!(reused.credentials, ok.credentials);
        assert!(
            cache.reuse("ns/a", "v2", t(20)).is_none(),
            "an input changed"
        );
        assert!(cache.reuse("ns/a", "v1", t(60)).is_none(), "due");
    }

    #[test]
    fn a_pass_is_never_reused_past_the_revalidation_interval() {
        let cache = Verified::default();
        let long = Findings::available(true, "ok", Duration::from_secs(3600 * 480));
        cache.record("ns/a", "v1".into(), &long, t(0));
        assert!(cache.reuse("ns/a", "v1", t(899)).is_some());
        assert!(cache.reuse("ns/a", "v1", t(900)).is_none());
    }

    #[test]
    fn a_failure_is_never_reused_and_clears_the_last_pass() {
        let cache = Verified::default();
        cache.record(
            "ns/a",
            "v1".into(),
            &Findings::available(false, "ok", Duration::from_secs(900)),
            t(0),
        );
        let failed = Findings::credentials_failed(
            false,
            crate::api::conditions::Reason::InvalidCredentials,
            "no",
            Duration::from_secs(30),
        );
        cache.record("ns/a", "v1".into(), &failed, t(1));
        assert!(cache.reuse("ns/a", "v1", t(2)).is_none());
    }
}
