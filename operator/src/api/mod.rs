//! The custom resources of `barbican.openstack.c5c3.io/v1alpha1` and the vocabulary around them.
//!
//! Each nested shape lives in a module named after its spec field. Schema-level rules (OpenAPI
//! constraints and CEL `x-kubernetes-validations`) are declared on the types, so the CRD
//! manifests are generated and never edited by hand; each CEL rule and its message are public
//! constants the admission webhook reuses.

pub mod api_server;
pub mod audit;
pub mod autoscaling;
pub mod barbican;
pub mod catalog;
pub mod conditions;
pub mod config_grammar;
pub mod config_ownership;
pub mod database;
pub mod db_backup;
pub mod db_clean;
pub mod deployment;
pub mod fixtures;
pub mod gateway;
pub mod image;
pub mod keystone;
pub mod logging;
pub mod memcached;
pub mod names;
pub mod network_policy;
pub mod paste;
pub mod policy;
pub mod refs;
pub mod secret_store;
pub mod tls;

#[cfg(test)]
mod cel_tests;

pub use barbican::{Barbican, BarbicanSpec, BarbicanStatus, ServiceUserSpec};
pub use secret_store::{
    BarbicanSecretStore, BarbicanSecretStoreSpec, BarbicanSecretStoreStatus, OpenBaoServerSpec,
    OpenBaoStoreSpec, SecretStoreType,
};

/// API group of both kinds.
pub const GROUP: &str = "barbican.openstack.c5c3.io";
/// API version of both kinds.
pub const VERSION: &str = "v1alpha1";
