//! The runtime both controllers run in, generic over the controller: it imports neither.
//!
//! [`scheduling`], the requeues on the operator's clock with backoff after failures;
//! [`supervision`], a pass's panic contained to its CR and a stopped task ending the process;
//! [`watched`], what a controller's own watch wakes for;
//! [`cache`], the management cluster's watch cache the passes read, with its plumbing
//! ([`scope`], [`fanout`], [`relist`], [`held`]); [`writes`] to the CRs themselves and
//! [`children`], every write of a child through the one [`ownership`] rule (with [`applied`],
//! whether a live child already carries what a pass would apply); [`env`], what every pass
//! shares.

pub mod applied;
pub mod cache;
pub mod children;
pub mod converge;
pub mod env;
pub mod fanout;
pub mod held;
pub mod ownership;
pub mod relist;
pub mod scheduling;
pub mod scope;
pub mod supervision;
pub mod sweep;
pub mod watched;
pub mod writes;
