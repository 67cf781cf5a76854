//! The controllers and the frame they run in.
//!
//! The frame imports neither controller: [`pipeline`], the table-driven runner; [`status`],
//! the status skeleton's pure rules; [`children`], the per-CR cluster handle; [`events`];
//! [`cache`], the management cluster's watch cache the passes read, and [`held`], its copies
//! of the Secrets and Jobs it reads among the many it only watches as metadata; [`fanout`],
//! one watch shared by both controllers; [`relist`], the backoff of every watch. The two
//! controllers, [`barbican`] (its steps, its triggers) and [`secretstore`], import the frame
//! and not each other. [`manager`] and [`remote`] (the watches on the target clusters) wire
//! both controllers to the frame, so they import both. `operator/tests/it/architecture.rs`
//! keeps it so.

pub mod applied;
pub mod barbican;
pub mod cache;
pub mod children;
pub mod discovery;
pub mod env;
pub mod events;
pub mod fanout;
pub mod held;
pub mod manager;
pub mod ownership;
pub mod pass;
pub mod pipeline;
pub mod probe_cache;
pub mod relist;
pub mod remote;
pub mod scope;
pub mod secretstore;
pub mod status;
pub mod step_error;
pub mod writes;
