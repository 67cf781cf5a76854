//! What the steps of one pass work on: the shared environment (clients, clock, caches) and the
//! pass's own working copy of the CR's status plus what earlier steps found.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{Resource, ResourceExt};

use crate::{
    api::{
        barbican::{Barbican, BarbicanStatus},
        conditions::{BarbicanConditionType, Reason},
    },
    controller::{
        events::{EventWhy, Severity, reference},
        pipeline::{Context, Handoffs},
        runtime::children::Children,
        runtime::env::Env,
        status::{Report, set},
        step_error::{ErrorKind, StepError},
    },
};

/// One pass over one Barbican.
#[derive(Clone)]
pub struct State {
    /// The shared environment.
    pub env: Arc<Env>,
    /// The CR as this pass read it.
    pub barbican: Arc<Barbican>,
    /// The status the pass is building.
    pub status: BarbicanStatus,
    /// Where the children live.
    pub children: Children,
    /// What the steps hand on to later ones, by type, as the table (`pipeline()`) declares.
    pub handoffs: Handoffs,
}

impl Context for State {
    type Condition = BarbicanConditionType;
    fn conditions(&self) -> &[Condition] {
        &self.status.conditions
    }
    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.status.conditions
    }
    fn handoffs(&self) -> &Handoffs {
        &self.handoffs
    }
    fn handoffs_mut(&mut self) -> &mut Handoffs {
        &mut self.handoffs
    }
    /// A child's name taken by a foreign object is the CR's to fix: its step's condition says
    /// which object (reason `NameTaken`); other failures are the runner's to count and retry.
    fn report_failure(&mut self, condition: BarbicanConditionType, error: &StepError) {
        if error.kind == ErrorKind::NameTaken {
            self.report(Report::not_ready(
                condition,
                Reason::NameTaken,
                error.what.clone(),
            ));
        }
    }
    /// The catalog step owns `status.catalog`, its record of what it registered in Keystone.
    fn merge_member(&mut self, condition: BarbicanConditionType, member: &Self) {
        if condition == BarbicanConditionType::KeystoneCatalogReady {
            self.status.catalog = member.status.catalog.clone();
        }
    }
}

impl State {
    /// A pass over `barbican`, starting from its stored status.
    pub fn new(env: Arc<Env>, barbican: Arc<Barbican>, children: Children) -> Self {
        Self {
            env,
            status: barbican.status.clone().unwrap_or_default(),
            barbican,
            children,
            handoffs: Handoffs::default(),
        }
    }

    /// The CR's name.
    pub fn name(&self) -> String {
        self.barbican.name_any()
    }

    /// The CR's namespace.
    pub fn namespace(&self) -> String {
        self.barbican.namespace().unwrap_or_default()
    }

    /// Sets a condition, stamped with the CR's generation and the clock's time.
    pub fn report(&mut self, report: Report) {
        set(
            &mut self.status.conditions,
            &report,
            self.barbican.metadata.generation,
            self.env.clock.now(),
        );
    }

    /// The condition of `type_` as it stands in this pass.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Records the CR as the owner of a child (see [`Children::stamp`]).
    pub fn stamp(&self, meta: &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) {
        self.children.stamp(meta, self.barbican.as_ref());
    }

    /// Publishes an event about the CR.
    pub async fn event(&self, severity: Severity, reason: impl Into<EventWhy>, note: &str) {
        self.env
            .events
            .publish(&reference(self.barbican.as_ref()), severity, reason, note)
            .await;
    }
}

/// The metadata of a child named `name`: common labels, the CR's namespace, the owner.
pub fn owned_metadata(
    state: &State,
    name: &str,
) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
    let mut meta = super::labels::child_metadata(name, &state.namespace());
    meta.labels = Some(super::labels::common(&state.name()));
    state.stamp(&mut meta);
    meta
}

/// Whether a resource is one of the Barbican's (see [`crate::controller::runtime::children::owned_by`]).
pub fn owned_by<K: Resource>(object: &K, barbican: &Barbican) -> bool {
    crate::controller::runtime::children::owned_by(object, barbican)
}
