//! Admission: defaulting and validation of both kinds as pure functions.
//!
//! The webhook server (to come) is a thin adapter around these: it decodes an AdmissionReview,
//! calls [`defaulting`] or the validators, and encodes the verdict.

pub mod barbican;
pub mod catalog;
pub mod cron;
pub mod defaulting;
pub mod lookups;
pub mod quantity;
pub mod review;
pub mod secret_store;
pub mod server;
pub mod tls;
pub mod verdict;
