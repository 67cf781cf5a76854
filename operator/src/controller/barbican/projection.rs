//! What the SecretStores step hands on, and which stores it reads.
//!
//! [`Projection`] is the SecretStores step's output: the Config step renders its stores into
//! barbican.conf, and the Deployment step and the db-sync Job mount its credentials and CA.
//! [`attaches`] and [`sources`] say which stores and Secrets a Barbican's projection reads;
//! the watches use them to wake the right Barbican.

use kube::ResourceExt;

use crate::{
    api::{
        names::{approle_secret_name, instance_ca_secret_name},
        secret_store::BarbicanSecretStore,
    },
    render::barbican_conf::ProjectedStore,
};

/// What the step found for this pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Projection {
    /// Whether the stores form a valid projection (exactly one default, one OpenBao store).
    pub valid: bool,
    /// The stores to render, sorted by name.
    pub stores: Vec<ProjectedStore>,
    /// The Secret holding the OpenBao store's `secret-id`, for the pods' env var.
    pub credentials_secret: Option<String>,
    /// The Secret holding the OpenBao store's `ca.crt`, mounted into the pods.
    pub ca_secret: Option<String>,
    /// The digest of the OpenBao store's `secret-id`, for the pod-template annotation.
    pub credentials_digest: Option<String>,
}

/// Whether `store` is attached to the Barbican `namespace/name`.
pub fn attaches(store: &BarbicanSecretStore, namespace: &str, name: &str) -> bool {
    // Borrowed: every pass and every store event asks this of every cached store.
    store.metadata.namespace.as_deref() == Some(namespace) && store.spec.barbican_ref.name == name
}

/// The stores in `namespace` attached to the Barbican `name`, from the watch cache.
pub fn attached(
    stores: &[std::sync::Arc<BarbicanSecretStore>],
    namespace: &str,
    name: &str,
) -> Vec<BarbicanSecretStore> {
    stores
        .iter()
        .filter(|s| attaches(s, namespace, name))
        .map(|s| s.as_ref().clone())
        .collect()
}

/// Where a store's credentials and CA live.
pub fn sources(store: &BarbicanSecretStore) -> (String, Option<String>) {
    let open_bao = store.spec.open_bao.as_ref();
    match (
        open_bao.and_then(|o| o.instance_ref.as_ref()),
        open_bao.and_then(|o| o.server.as_ref()),
    ) {
        (Some(instance), _) => (
            approle_secret_name(&store.name_any()),
            Some(instance_ca_secret_name(&instance.name)),
        ),
        (None, Some(server)) => (
            server.credentials_secret_ref.name.clone(),
            server.ca_bundle_secret_ref.as_ref().map(|r| r.name.clone()),
        ),
        (None, None) => (approle_secret_name(&store.name_any()), None),
    }
}
