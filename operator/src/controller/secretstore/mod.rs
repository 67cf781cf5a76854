//! The BarbicanSecretStore controller. So far its pure decisions: [`credentials`], the AppRole
//! credentials ladder and the re-mint timing.

pub mod credentials;
