//! The BarbicanSecretStore controller: the single writer of a store's status. It mints a
//! managed store's AppRole credentials ([`managed`]), validates a brownfield store's
//! ([`brownfield`]), and observes whether the parent's Deployment mounts the store's section.
//!
//! - [`approle`]: the pure ladder and re-mint timing of the `<store>-approle` credentials.
//! - [`status`]: the pure status rules.
//! - [`reconcile`]: one pass.

pub mod approle;
pub mod brownfield;
pub mod managed;
pub mod reconcile;
pub mod status;
pub mod verified;
