//! What a pass of either controller comes to: the scheduler's [`Next`], or an [`Error`] the
//! manager logs, counts and retries with backoff.

use std::time::Duration;

/// Why a pass failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A step failed; its condition and the status were written first.
    #[error("step {step} failed: {source}")]
    Step {
        /// The step's name.
        step: &'static str,
        /// What went wrong.
        source: crate::controller::step_error::StepError,
    },
    /// Talking to the API server failed.
    #[error("{what}: {source}")]
    Api {
        /// What the operator was doing.
        what: &'static str,
        /// The client's error.
        source: kube::Error,
    },
    /// The pass panicked: contained, counted in `barbican_operator_reconcile_panics_total`,
    /// and retried with backoff like any failure. The panic's text is not carried (it may
    /// quote what a tenant wrote); the log names where it happened.
    #[error("the pass panicked (a bug: the operator's log says where)")]
    Panicked,
}

/// How often a CR whose child's name is taken looks again, at most: the foreign object's
/// removal wakes nothing (it carries nothing that names the CR), so the error backoff's
/// 5-minute steps would leave the CR waiting long after the name came free.
pub const NAME_TAKEN_RETRY: Duration = Duration::from_secs(30);

impl Error {
    /// The longest the retry after this failure may wait: [`NAME_TAKEN_RETRY`] for a name
    /// taken by a foreign object, the backoff's own bound otherwise.
    pub fn retry_cap(&self) -> Option<Duration> {
        match self {
            Error::Step { source, .. }
                if source.kind == crate::controller::step_error::ErrorKind::NameTaken =>
            {
                Some(NAME_TAKEN_RETRY)
            }
            _ => None,
        }
    }
}

/// What a pass asks of the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Come back after this long.
    After(Duration),
    /// Wait for a change.
    AwaitChange,
}

/// How long after its deletion a CR waits for its cleanup. Past it the finalizer is released
/// anyway, with a Warning naming what is left: a Database held by a foreign finalizer (or a
/// mariadb-operator that was uninstalled), or a target cluster that is registered but refuses
/// every request, must not keep the CR in Terminating for ever.
pub const FINALIZER_BOUND: Duration = Duration::from_secs(10 * 60);

/// Whether a CR deleted at `deleted_at` has waited past [`FINALIZER_BOUND`] at `now`.
pub fn past_finalizer_bound(deleted_at: Option<jiff::Timestamp>, now: jiff::Timestamp) -> bool {
    let bound =
        jiff::SignedDuration::try_from(FINALIZER_BOUND).unwrap_or(jiff::SignedDuration::MAX);
    deleted_at.is_some_and(|at| now.duration_since(at) >= bound)
}

/// A client error told by its kind alone: the HTTP status a server answered, or that no
/// answer came.
pub fn failure_kind(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => format!("the API server answered {}", status.code),
        _ => "no answer from the API server".to_string(),
    }
}

/// Wraps a client error with what the pass was doing when it failed.
pub fn api_failed(what: &'static str) -> impl FnOnce(kube::Error) -> Error {
    move |source| Error::Api { what, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_is_looked_at_again_within_thirty_seconds() {
        use crate::controller::step_error::{ErrorKind, StepError};
        let step = |kind| Error::Step {
            step: "Deployment",
            source: StepError::new(kind, "x"),
        };
        assert_eq!(
            step(ErrorKind::NameTaken).retry_cap(),
            Some(NAME_TAKEN_RETRY)
        );
        assert_eq!(step(ErrorKind::Api).retry_cap(), None);
        assert_eq!(Error::Panicked.retry_cap(), None);
    }

    #[test]
    fn the_finalizer_wait_is_bounded_to_ten_minutes_after_the_deletion() {
        let at = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
        let deleted = Some(at("2026-01-01T00:00:00Z"));
        assert!(!past_finalizer_bound(deleted, at("2026-01-01T00:09:59Z")));
        assert!(past_finalizer_bound(deleted, at("2026-01-01T00:10:00Z")));
        assert!(!past_finalizer_bound(None, at("2030-01-01T00:00:00Z")));
    }
}
