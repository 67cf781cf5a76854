//! Requeues on the operator's [`Clock`], not on kube-runtime's scheduler (which sleeps on
//! tokio time): a pass returns "wait for a change" to kube-runtime and [`Runtime`] sleeps on
//! the clock before feeding the object back in. On a virtual clock, "10 seconds later" then
//! happens when the scenario says so, and never on the wall clock.

use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::channel::mpsc;
use kube::{
    Resource,
    runtime::{controller::Action, reflector::ObjectRef, watcher},
};

use super::{env::Env, supervision::contained};
use crate::{
    clock::Clock,
    controller::pass::{Error, Next},
};

/// The first retry after a failed pass; it doubles per consecutive failure.
pub const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// The longest retry interval after failures.
pub const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// The retry interval after `failures` consecutive failed passes.
pub fn backoff(failures: u32) -> Duration {
    BACKOFF_BASE
        .saturating_mul(2u32.saturating_pow(failures.saturating_sub(1)))
        .min(BACKOFF_MAX)
}

/// The pending wake-up of each CR: which scheduling it is (so a fired task removes only its
/// own entry) and its task.
type Pending<K> = HashMap<ObjectRef<K>, (u64, tokio::task::AbortHandle)>;

/// Requeues on the operator's clock: at most one pending wake-up per CR, the newest wins.
/// Both maps stay as small as the set of live CRs: a wake-up's entry goes when it fires, and a
/// deleted CR's entries go when its deletion is observed ([`Requeues::forget`]).
pub struct Requeues<K: Resource<DynamicType = ()>> {
    clock: Arc<dyn Clock>,
    wake: mpsc::UnboundedSender<ObjectRef<K>>,
    pending: Arc<Mutex<Pending<K>>>,
    failures: Mutex<HashMap<ObjectRef<K>, u32>>,
    scheduled: std::sync::atomic::AtomicU64,
}

impl<K: Resource<DynamicType = ()> + 'static> Requeues<K> {
    /// Requeues waking through a new channel, and the stream of its wake-ups.
    pub fn new(clock: Arc<dyn Clock>) -> (Self, mpsc::UnboundedReceiver<ObjectRef<K>>) {
        let (wake, woken) = mpsc::unbounded();
        (
            Self {
                clock,
                wake,
                pending: Arc::default(),
                failures: Mutex::default(),
                scheduled: Default::default(),
            },
            woken,
        )
    }

    /// Wakes `key` after `after`, replacing its pending wake-up.
    pub fn schedule(&self, key: ObjectRef<K>, after: Duration) {
        let id = self
            .scheduled
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (sleep, wake, target) = (self.clock.sleep(after), self.wake.clone(), key.clone());
        let pending = self.pending.clone();
        // Held until the entry is in the map, so a zero-length sleep cannot fire before it.
        let mut entries = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let task = tokio::spawn(async move {
            sleep.await;
            {
                let mut entries = pending.lock().unwrap_or_else(|p| p.into_inner());
                if entries
                    .get(&target)
                    .is_some_and(|(current, _)| *current == id)
                {
                    entries.remove(&target);
                }
            }
            let _ = wake.unbounded_send(target);
        });
        if let Some((_, previous)) = entries.insert(key, (id, task.abort_handle())) {
            previous.abort();
        }
    }

    /// Drops what is kept for a CR that is gone: its pending wake-up and its failure count.
    pub fn forget(&self, key: &ObjectRef<K>) {
        if let Some((_, task)) = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key)
        {
            task.abort();
        }
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }

    /// How many CRs have something kept (a pending wake-up or a failure count).
    #[cfg(test)]
    fn kept(&self) -> usize {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        pending
            .keys()
            .chain(failures.keys())
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    /// Counts a failed pass of `key` and returns its backoff.
    pub fn failed(&self, key: &ObjectRef<K>) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let count = failures.entry(key.clone()).or_default();
        *count = count.saturating_add(1);
        backoff(*count)
    }

    /// Clears `key`'s failure count after a pass that did not fail.
    pub fn succeeded(&self, key: &ObjectRef<K>) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }
}

/// What the passes of one controller share: the environment, the requeues, the resync, and
/// the controller's own memory across passes (`S`; the store controller's verdicts).
pub struct Runtime<K: Resource<DynamicType = ()>, S = ()> {
    /// What every pass shares.
    pub env: Arc<Env>,
    /// The controller's requeues.
    pub requeues: Requeues<K>,
    /// The longest a CR waits for its next pass.
    pub resync: Duration,
    /// The controller's own memory across passes.
    pub state: S,
}

impl<K: Resource<DynamicType = ()> + 'static, S> Runtime<K, S> {
    /// Runs one pass of `object`: after the watch cache's first lists, with a panic
    /// contained to this CR (counted for `controller`), and its next pass scheduled.
    pub async fn pass(
        &self,
        controller: &'static str,
        object: &K,
        reconcile: impl Future<Output = Result<Next, Error>>,
    ) -> Result<Action, Error> {
        // Not before the watch cache's first lists (see [`super::cache`]).
        self.env.cache.listed().await;
        let key = ObjectRef::from_obj(object);
        let outcome = contained(controller, &self.env.metrics, reconcile).await;
        self.settle(key, &outcome);
        outcome.map(|_| Action::await_change())
    }

    /// Schedules the next pass after `outcome`: when the pass asked (never later than the
    /// resync), at the resync when it waits for a change, with backoff after a failure.
    pub fn settle(&self, key: ObjectRef<K>, outcome: &Result<Next, Error>) {
        match outcome {
            Ok(next) => {
                self.requeues.succeeded(&key);
                let after = match next {
                    Next::After(after) => (*after).min(self.resync),
                    Next::AwaitChange => self.resync,
                };
                self.requeues.schedule(key, after);
            }
            Err(error) => {
                let backoff = self.requeues.failed(&key);
                let after = error.retry_cap().map_or(backoff, |cap| backoff.min(cap));
                tracing::warn!(object = %key, %error, retry_in = ?after, "reconcile failed");
                self.requeues.schedule(key, after);
            }
        }
    }
}

/// Forgets the requeue state of each CR whose deletion the watch delivers.
pub fn forget_deleted<K: Resource<DynamicType = ()> + 'static, S: Send + Sync + 'static>(
    runtime: Arc<Runtime<K, S>>,
) -> impl Fn(&Result<watcher::Event<K>, watcher::Error>) + Send + 'static {
    move |event| {
        if let Ok(watcher::Event::Delete(object)) = event {
            runtime.requeues.forget(&ObjectRef::from_obj(object));
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;
    use crate::{api::barbican::Barbican, metrics::Metrics};

    #[tokio::test]
    async fn a_panicking_pass_is_retried_with_backoff_and_other_crs_are_untouched() {
        let clock: Arc<dyn Clock> = Arc::new(crate::clock::SystemClock);
        let (requeues, _woken) = Requeues::<Barbican>::new(clock);
        let (hostile, victim) = (
            ObjectRef::new("hostile").within("tenant-a"),
            ObjectRef::new("victim").within("tenant-b"),
        );
        let metrics = Metrics::new();
        for expected in [1, 2, 4] {
            let outcome = contained("barbican", &metrics, async { panic!("again") }).await;
            assert!(outcome.is_err());
            assert_eq!(requeues.failed(&hostile), Duration::from_secs(expected));
        }
        assert_eq!(
            requeues.failed(&victim),
            Duration::from_secs(1),
            "its own count"
        );
    }

    #[tokio::test]
    async fn requeue_state_goes_when_a_wake_up_fires_or_the_cr_is_deleted() {
        let clock: Arc<dyn Clock> = Arc::new(crate::clock::SystemClock);
        let (requeues, mut woken) = Requeues::<Barbican>::new(clock);
        let gone = ObjectRef::new("gone").within("ns");
        requeues.schedule(gone.clone(), Duration::from_secs(3600));
        let _ = requeues.failed(&gone);
        assert_eq!(requeues.kept(), 1);
        requeues.forget(&gone);
        assert_eq!(requeues.kept(), 0, "a deleted CR leaves nothing behind");
        let soon = ObjectRef::new("soon").within("ns");
        requeues.schedule(soon.clone(), Duration::ZERO);
        assert_eq!(woken.next().await, Some(soon));
        tokio::task::yield_now().await;
        assert_eq!(requeues.kept(), 0, "a fired wake-up leaves nothing behind");
    }

    #[test]
    fn backoff_doubles_from_one_second_up_to_five_minutes() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(2), Duration::from_secs(2));
        assert_eq!(backoff(4), Duration::from_secs(8));
        assert_eq!(backoff(20), BACKOFF_MAX);
    }
}
