//! barbican-sim: an in-memory Kubernetes API server for testing operators without a cluster.
//!
//! The library is a general Kubernetes API server and knows nothing of Barbican. A [`Cluster`]
//! serves the REST API in-process ([`Cluster::client`] hands out a `kube::Client`) and over HTTP
//! on loopback ([`Cluster::serve`]); one process can run many clusters.
//!
//! Built so far: built-in and CRD-defined resource types ([`resources`]), object semantics
//! ([`store`]), merge and JSON patches, list with selectors and paging, watch with history,
//! bookmarks and initial events, finalizers, owner-reference garbage collection, namespace
//! deletion, discovery, and structural schema validation and defaulting ([`schema`]).

pub mod apply;
pub mod bench;
pub mod clock;
pub mod cluster;
pub mod control;
pub mod controllers;
pub mod errors;
pub mod faults;
pub mod resources;
pub mod schema;
pub mod selectors;
pub mod services;
pub mod store;
pub mod strategic;
pub mod table;
pub mod tokens;
pub mod validation;
pub mod webhooks;

pub use cluster::Cluster;
