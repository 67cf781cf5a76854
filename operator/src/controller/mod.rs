//! The controllers and the frame they run in: [`pipeline`], the table-driven runner;
//! [`status`], the status skeleton's pure rules; [`children`], the per-CR cluster handle;
//! [`events`]; [`barbican`], the Barbican controller's steps; [`remote`], the watches on the
//! target clusters; [`cache`], the management cluster's watch cache the passes read, and [`held`], its
//! copies of the Secrets and Jobs it reads among the many it only watches as metadata;
//! [`fanout`], one watch shared by both controllers; [`relist`], the backoff of every watch.

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
pub mod triggers;
pub mod writes;
