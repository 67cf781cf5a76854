//! What every pass of both controllers shares: the clients, the clock, the caches, the
//! metrics and the events. Built once by the manager; a pass holds it behind an `Arc`.

use std::{sync::Arc, time::Duration};

use kube::Client;

use crate::{
    clock::Clock,
    controller::{
        discovery::GatewayApi, events::Events, probe_cache::ProbeCache, runtime::children::Children,
    },
    metrics::Metrics,
    resolve::Resolve,
};

/// Shared by every pass of both controllers.
pub struct Env {
    /// The management cluster's client: the CRs, their status, events.
    pub client: Client,
    /// Where time is read.
    pub clock: Arc<dyn Clock>,
    /// Name resolution for the health probe.
    pub resolver: Arc<dyn Resolve>,
    /// The pipeline series.
    pub metrics: Arc<Metrics>,
    /// Passing health probes, reused within their TTL.
    pub probes: ProbeCache,
    /// Whether the Gateway API's HTTPRoute is served (probed at start).
    pub gateway_api: GatewayApi,
    /// The namespace the operator runs in (allowed into the API pods).
    pub operator_namespace: String,
    /// Events about the CRs.
    pub events: Events,
    /// How long a health probe may take.
    pub probe_timeout: Duration,
    /// The platform's ceiling on the SQL user's `max_user_connections`, if any.
    pub max_user_connections: Option<i64>,
    /// The registered target clusters.
    pub clusters: crate::clusters::Registry,
    /// The watch cache of BarbicanSecretStores: the SecretStores step finds a Barbican's stores
    /// here (the reference's field index on `spec.barbicanRef.name`) instead of listing them.
    pub stores: kube::runtime::reflector::Store<crate::api::secret_store::BarbicanSecretStore>,
    /// The watch cache of Barbicans (a pass starts from it, see [`crate::controller::runtime::cache`]).
    pub barbicans: kube::runtime::reflector::Store<crate::api::barbican::Barbican>,
    /// The watch cache of the management cluster's children and inputs.
    pub cache: crate::controller::runtime::cache::Cache,
    /// This operator's writes to its CRs that the watches have not delivered yet.
    pub writes: crate::controller::runtime::cache::OwnWrites,
}

impl Env {
    /// Where the children of `owner` live: the management cluster, or the registered target
    /// cluster `target` (see [`crate::clusters::place`]), as of now. Every write through the
    /// handle passes the ownership rule for `owner` ([`crate::controller::runtime::children::is_ours`]).
    pub fn place<O: kube::Resource<DynamicType = ()>>(
        &self,
        owner: &O,
        target: Option<&str>,
    ) -> Result<Children, crate::clusters::ResolveError> {
        crate::clusters::place(
            &self.clusters,
            &self.client,
            &self.cache,
            crate::controller::runtime::children::Owner::of(owner),
            target,
            self.clock.now(),
        )
    }
}
