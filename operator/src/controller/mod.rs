//! The controllers and the frame they run in.
//!
//! The frame imports neither controller: [`runtime`], generic over the controller (requeues
//! on the clock, containment and supervision, the watch cache and its plumbing, writes and
//! the per-CR children handle); [`pipeline`], the table-driven runner; [`status`], the status
//! skeleton's pure rules; [`events`]; [`discovery`]; [`pass`] and [`step_error`]. The two
//! controllers, [`barbican`] (its steps, its triggers) and [`secretstore`], import the frame
//! and not each other. [`manager`] and [`remote`] (the watches on the target clusters) wire
//! both controllers to the frame, so they import both. `operator/tests/it/architecture.rs`
//! keeps it so.

pub mod barbican;
pub mod discovery;
pub mod events;
pub mod manager;
pub mod pass;
pub mod pipeline;
pub mod probe_cache;
pub mod remote;
pub mod runtime;
pub mod secretstore;
pub mod status;
pub mod step_error;
