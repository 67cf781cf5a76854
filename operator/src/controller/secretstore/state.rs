//! What the steps of one store pass work on: the shared environment, the store as the pass read
//! it, the values the steps hand on, and what they found for the status.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{Api, ResourceExt};

use super::{
    approle::RETRY,
    status::{Findings, StoreReport},
    verified::Verified,
};
use crate::{
    api::{conditions::StoreConditionType, secret_store::BarbicanSecretStore},
    controller::{
        pipeline::{Context, Handoffs},
        runtime::env::Env,
    },
};

/// One pass over one BarbicanSecretStore.
#[derive(Clone)]
pub struct StoreState {
    /// The shared environment.
    pub env: Arc<Env>,
    /// The verdicts already earned, reused until due.
    pub verified: Verified,
    /// The stores of the store's namespace.
    pub api: Api<BarbicanSecretStore>,
    /// The store as this pass read it.
    pub store: Arc<BarbicanSecretStore>,
    /// The conditions as stored (the status is concluded from `findings` and `projected`).
    conditions: Vec<Condition>,
    /// What the steps hand on to later ones, by type, as the table (`pipeline()`) declares.
    pub handoffs: Handoffs,
    /// CredentialsReady, ProvisioningReady and the requeue, as the steps found them.
    pub findings: Findings,
    /// ConfigProjected: set by the ConfigProjected step, or by the step that ended the pass
    /// before it with what the projection waits for.
    pub projected: Option<StoreReport>,
    /// Set when the pass wrote the store's own metadata (the target cluster it records): the
    /// next pass starts from that write, and this one writes no status.
    pub restart: bool,
}

impl Context for StoreState {
    type Condition = StoreConditionType;
    fn conditions(&self) -> &[Condition] {
        &self.conditions
    }
    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.conditions
    }
    fn handoffs(&self) -> &Handoffs {
        &self.handoffs
    }
    fn handoffs_mut(&mut self) -> &mut Handoffs {
        &mut self.handoffs
    }
}

impl StoreState {
    /// A pass over `store`, nothing found yet.
    pub fn new(
        env: Arc<Env>,
        verified: Verified,
        api: Api<BarbicanSecretStore>,
        store: Arc<BarbicanSecretStore>,
    ) -> Self {
        Self {
            env,
            verified,
            api,
            conditions: store.status.clone().unwrap_or_default().conditions,
            findings: Findings {
                credentials: None,
                provisioning: None,
                managed: instance(&store).is_some(),
                requeue: RETRY,
            },
            store,
            handoffs: Handoffs::default(),
            projected: None,
            restart: false,
        }
    }

    /// The store's name.
    pub fn name(&self) -> String {
        self.store.name_any()
    }

    /// The store's namespace.
    pub fn namespace(&self) -> String {
        self.store.namespace().unwrap_or_default()
    }

    /// The parent Barbican's name.
    pub fn parent_name(&self) -> String {
        self.store.spec.barbican_ref.name.clone()
    }
}

/// The OpenBaoCluster a managed store names; `None` for a brownfield store.
pub fn instance(store: &BarbicanSecretStore) -> Option<String> {
    store
        .spec
        .open_bao
        .as_ref()
        .and_then(|o| o.instance_ref.as_ref())
        .map(|i| i.name.clone())
}
