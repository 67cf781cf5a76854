//! The backoff of every watch the operator runs: it doubles from [`FIRST`] up to [`LONGEST`]
//! per failure, and only a watch that stayed healthy for [`HEALTHY`] starts again from the
//! first step.
//!
//! kube-runtime resets a watch's backoff on every item it yields, and a successful relist
//! yields items. A watch whose list succeeds and whose watch request then fails (a target
//! cluster that lists but drops watches, an RBAC rule for `list` without `watch`) therefore
//! never backed off: it relisted about once a second, per kind and per target cluster. Here
//! a reset between two close failures is ignored.

use std::time::{Duration, Instant};

use kube::runtime::utils::Backoff;

/// The first retry after a failure.
pub const FIRST: Duration = Duration::from_millis(800);
/// The longest wait between two attempts.
pub const LONGEST: Duration = Duration::from_secs(5 * 60);
/// How long a watch must run without a failure before a reset takes effect.
pub const HEALTHY: Duration = Duration::from_secs(2 * 60);

/// A relist backoff (see the module).
#[derive(Clone, Debug)]
pub struct Relist {
    next: Duration,
    last_failure: Option<Instant>,
}

impl Default for Relist {
    fn default() -> Self {
        Self {
            next: FIRST,
            last_failure: None,
        }
    }
}

impl Relist {
    /// The wait before the next attempt after a failure at `now`.
    fn failed_at(&mut self, now: Instant) -> Duration {
        let wait = self.next;
        self.next = self.next.saturating_mul(2).min(LONGEST);
        self.last_failure = Some(now);
        wait
    }

    /// A healthy item at `now`: starts over only after [`HEALTHY`] without a failure.
    fn healthy_at(&mut self, now: Instant) {
        let settled = self
            .last_failure
            .is_none_or(|failed| now.saturating_duration_since(failed) >= HEALTHY);
        if settled {
            self.next = FIRST;
        }
    }
}

impl Iterator for Relist {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        Some(self.failed_at(Instant::now()))
    }
}

impl Backoff for Relist {
    fn reset(&mut self) {
        self.healthy_at(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relist_between_failures_does_not_reset_and_the_wait_grows_to_minutes() {
        let start = Instant::now();
        let mut backoff = Relist::default();
        let mut waits = Vec::new();
        for second in 0..12 {
            let now = start + Duration::from_secs(second);
            // Each cycle: the list succeeds (a reset), then the watch request fails.
            backoff.healthy_at(now);
            waits.push(backoff.failed_at(now));
        }
        assert_eq!(waits[0], FIRST);
        assert_eq!(waits[1], FIRST * 2);
        assert_eq!(*waits.last().unwrap(), LONGEST, "{waits:?}");
    }

    #[test]
    fn a_watch_healthy_for_two_minutes_starts_over() {
        let start = Instant::now();
        let mut backoff = Relist::default();
        backoff.failed_at(start);
        backoff.failed_at(start);
        backoff.healthy_at(start + HEALTHY);
        assert_eq!(backoff.failed_at(start + HEALTHY), FIRST);
    }
}
