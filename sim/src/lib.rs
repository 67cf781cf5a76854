//! barbican-sim: an in-memory Kubernetes API server for testing operators without a cluster.
//!
//! The library is a general Kubernetes API server and knows nothing of Barbican. It grows
//! piece by piece towards the contract in `shared/design.md`; today it holds the structural
//! OpenAPI validation a real API server applies to custom resources ([`schema`]).

pub mod schema;
