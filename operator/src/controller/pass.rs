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

/// What a pass asks of the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Come back after this long.
    After(Duration),
    /// Wait for a change.
    AwaitChange,
}

/// Wraps a client error with what the pass was doing when it failed.
pub fn api_failed(what: &'static str) -> impl FnOnce(kube::Error) -> Error {
    move |source| Error::Api { what, source }
}
