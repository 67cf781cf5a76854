//! The step library's own unit tests, one module per module of `src/`.
//!
//! They live in a test target rather than in `#[cfg(test)]` modules so that the library is not
//! compiled a second time as a test harness (docs/performance.md, "the lib-test units").

mod admission;
mod api_differential;
mod backend;
mod chart_identity;
mod check_steps;
mod control_plane;
mod control_steps;
mod edits;
mod edits_compare;
mod edits_generate;
mod examples;
mod install_steps;
mod log_capture;
mod report;
mod runner;
mod soak;
mod step_library;
