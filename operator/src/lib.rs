//! barbican-operator: a Kubernetes operator that runs OpenStack Barbican (the key manager) and
//! attaches OpenBao/Vault secret stores to it.
//!
//! The crate is organised after `shared/design.md`: [`api`] holds the two custom resources
//! (`Barbican`, `BarbicanSecretStore`), their schema-level rules and the names the operator
//! fixes; [`crd`] turns them into the CustomResourceDefinition manifests under `deploy/crds/`;
//! [`admission`] holds the webhooks' defaulting and validation as pure functions; [`render`]
//! renders barbican's configuration. [`clock`] and [`resolve`] are the seams through which tests
//! give the operator virtual time and the sim's service names.

// Every CR field, Secret, registration and remote answer is hostile input: outside tests an
// `unwrap` and an arithmetic operation that can overflow or panic are refused, and each
// `expect` left states the invariant of a constant or of the operator's own types that makes
// it unreachable.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::arithmetic_side_effects))]

pub mod admission;
pub mod api;
pub mod clock;
pub mod clusters;
pub mod controller;
pub mod crd;
pub mod endpoints;
pub mod keystone;
pub mod kube_requests;
pub mod leader;
pub mod metrics;
pub mod openbao;
pub mod peer_http;
// The properties the proptest suite and the fuzz targets check: test oracles, not part of the
// operator; they build only for those (`--features properties`).
#[cfg(feature = "properties")]
pub mod properties;
pub mod render;
pub mod resolve;
