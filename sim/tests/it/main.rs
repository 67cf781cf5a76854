//! The integration tests of this crate, linked into one binary (one link instead of one per
//! file); each module is one former test file.

mod controllers;
mod defaults;
mod faults;
mod negotiation;
mod pod_router;
mod preconditions;
mod proxy;
mod scale;
mod self_reviews;
mod unit;
mod watch_delivery;
mod webhooks;
