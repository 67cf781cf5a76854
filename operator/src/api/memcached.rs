//! The Memcached cache backing keystonemiddleware's token cache.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use super::refs::ClusterRefSpec;

/// Rule: one of `clusterRef` (managed) and a non-empty `servers` list (brownfield).
pub const CACHE_CLUSTER_REF_XOR_SERVERS_RULE: &str =
    "has(self.clusterRef) != (has(self.servers) && size(self.servers) > 0)";
/// Message of [`CACHE_CLUSTER_REF_XOR_SERVERS_RULE`].
pub const CACHE_CLUSTER_REF_XOR_SERVERS_MESSAGE: &str =
    "exactly one of clusterRef or servers must be set";

/// The oslo.cache backend the defaulting webhook writes when `backend` is empty.
pub const DEFAULT_CACHE_BACKEND: &str = "dogpile.cache.pymemcache";

/// The Memcached servers rendered as `[keystone_authtoken] memcached_servers`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = (CACHE_CLUSTER_REF_XOR_SERVERS_RULE, CACHE_CLUSTER_REF_XOR_SERVERS_MESSAGE))]
pub struct CacheSpec {
    /// A Memcached custom resource in the Barbican's namespace (managed mode), reached at
    /// `<name>:11211`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_ref: Option<ClusterRefSpec>,
    /// `host:port` endpoints of existing servers (brownfield mode), comma-joined when rendered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64), inner(length(min = 1, max = 261)))]
    pub servers: Option<Vec<String>>,
    /// The oslo.cache backend; the defaulting webhook fills `dogpile.cache.pymemcache`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 253))]
    pub backend: Option<String>,
    /// Memcached replica count. Part of the shared cache shape the c5c3 operator reads in
    /// managed mode; the Barbican operator ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = super::deployment::MAX_REPLICAS))]
    pub replicas: Option<i32>,
}
