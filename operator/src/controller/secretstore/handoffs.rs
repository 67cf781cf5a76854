//! The values the store pipeline's steps hand on to later ones, each declared in the table
//! (`pipeline()`) by the step that gives it and by the steps that need it.

use super::managed::Session;
use crate::{api::barbican::Barbican, controller::runtime::children::Children};

/// The parent Barbican: from Parent to Placement.
pub struct Parent(pub Barbican);

/// Where the store's credentials live (the parent's cluster): from Placement to Provision,
/// Credentials and ConfigProjected.
pub struct Placed(pub Children);

/// What provisioning came to: from Provision to Credentials.
pub enum Provisioned {
    /// A brownfield store: nothing is provisioned, its own credentials are validated.
    Brownfield,
    /// Provisioning settled the pass's findings (a failure, or a verdict reused): nothing is
    /// minted.
    Settled,
    /// A provisioner session to mint with.
    Session(Box<Session>),
}
