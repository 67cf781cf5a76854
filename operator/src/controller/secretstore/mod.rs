//! The BarbicanSecretStore controller: the single writer of a store's status. It mints a
//! managed store's AppRole credentials ([`managed`]), validates a brownfield store's
//! ([`brownfield`]), and observes whether the parent's Deployment mounts the store's section.
//! A pass is a table of steps run by the same runner as the Barbican's.
//!
//! - [`approle`]: the pure ladder and re-mint timing of the `<store>-approle` credentials.
//! - [`status`]: the pure status rules.
//! - [`parent`], [`credentials`], [`projected`]: the steps.
//! - [`reconcile`]: one pass: the deletion, the table, the status write.

pub mod approle;
pub mod brownfield;
pub mod credentials;
pub mod handoffs;
pub mod managed;
pub mod parent;
pub mod projected;
pub mod reconcile;
pub mod state;
pub mod status;
pub mod verified;

use crate::{
    api::conditions::StoreConditionType as T,
    controller::pipeline::{Handoff, Pipeline, step},
};
use handoffs::{Parent, Placed, Provisioned};
use state::StoreState;

/// The step table. Parent and Placement end the pass when the store has no parent or its
/// cluster does not resolve (nothing is minted where it may not belong); a failure of
/// provisioning or of the credentials is the store's finding, and ConfigProjected is still
/// observed after it. Each value a step hands on is declared by its giver and its readers.
#[rustfmt::skip]
pub fn pipeline() -> Pipeline<StoreState> {
    let (parent, placed) = (Handoff::of::<Parent>(), Handoff::of::<Placed>());
    let provisioned = Handoff::of::<Provisioned>();
    Pipeline {
        sequence: vec![
            step("Parent",          T::CredentialsReady,  parent::parent)
                .gives(&[parent]),
            step("Placement",       T::CredentialsReady,  parent::placement)
                .needs(&[parent]).gives(&[placed]),
            step("Provision",       T::ProvisioningReady, credentials::provision)
                .needs(&[placed]).gives(&[provisioned]),
            step("Credentials",     T::CredentialsReady,  credentials::credentials)
                .needs(&[placed, provisioned]),
            step("ConfigProjected", T::ConfigProjected,   projected::config_projected_step)
                .needs(&[placed]),
        ],
        parallel: vec![],
    }
}

#[cfg(test)]
mod tests {
    /// Every value a step reads is given by an earlier step, and by one only.
    #[test]
    fn the_step_table_is_well_formed() {
        assert_eq!(super::pipeline().check(), Ok(()));
    }
}
