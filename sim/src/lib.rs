//! barbican-sim: an in-memory Kubernetes API server for testing operators without a cluster.
//!
//! The library is a general Kubernetes API server and knows nothing of Barbican. A [`Cluster`]
//! serves the REST API in-process ([`Cluster::client`] hands out a `kube::Client`) and over HTTP
//! on loopback ([`Cluster::serve`]); one process can run many clusters.
//!
//! What it does: built-in and CRD-defined resource types ([`resources`]), object semantics
//! ([`store`]), merge, JSON, strategic merge patches and server-side apply ([`apply`]), list
//! with selectors and paging, watch with history, bookmarks and initial events, finalizers,
//! owner-reference garbage collection, namespace deletion, discovery, structural schema
//! validation and defaulting ([`schema`]) and CEL ([`validation`]), admission webhooks called
//! over HTTPS ([`webhooks`]), RBAC for service accounts ([`rbac`]) through a service registry ([`services`]), simulated workload
//! controllers ([`controllers`]) on a virtual or wall [`clock`], seeded fault injection
//! ([`faults`]) with an HTTP control surface ([`control`]), and a benchmark ([`bench`](mod@bench)).
//!
//! Time: a virtual clock moves only when a test advances it; the reasons for not using tokio's
//! paused clock are in [`clock`].

pub mod apply;
pub mod audit;
pub mod bench;
pub mod bootstrap;
pub mod clock;
pub mod cluster;
pub mod control;
pub mod controllers;
pub mod defaults;
pub mod durations;
pub mod errors;
pub mod faults;
pub mod field_conflicts;
pub mod field_validation;
pub mod kubelet;
pub mod leftovers;
pub mod listener;
pub mod memo;
pub mod pod_security;
pub mod portforward;
pub mod printers;
pub mod protobuf;
pub mod proxy;
pub mod rbac;
pub mod request_options;
pub mod resources;
pub mod schema;
pub mod selector_grammar;
pub mod selectors;
pub mod services;
pub mod store;
pub mod strategic;
pub mod table;
pub mod tls;
pub mod tokens;
pub mod typed;
pub mod validation;
pub mod versions;
pub mod webhooks;
pub mod wire_order;
pub mod zero_values;

pub use cluster::Cluster;
