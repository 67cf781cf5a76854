//! The integration tests of this crate, linked into one binary (one link instead of one per
//! file); each module is one former test file.

mod api_lookups;
mod architecture;
mod crd_sync;
mod kube_requests;
mod render_golden;
mod render_properties;
mod render_secrets;
mod webhook_https;
