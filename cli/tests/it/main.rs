//! The integration tests of this crate, linked into one binary (one link instead of one per
//! file); each module is one former test file.

mod common;
mod demo;
mod kubectl;
mod operator_run;
mod soak;
mod stopping;
