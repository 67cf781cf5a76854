//! What admission needs to know beyond the object itself, behind a small trait so the rules
//! stay pure: the webhook adapter answers from the API server, tests from fixed data.

use crate::api::BarbicanSecretStore;

/// A lookup that could not be answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LookupError(pub String);

/// Cluster state admission consults.
pub trait Lookups {
    /// Whether a PriorityClass of this name exists.
    fn priority_class_exists(&self, name: &str) -> Result<bool, LookupError>;
    /// The stores in `namespace`, read without a cache (a just-created sibling must count).
    fn secret_stores(&self, namespace: &str) -> Result<Vec<BarbicanSecretStore>, LookupError>;
}

/// Fixed answers: what tests and the corpus use, and what the webhook adapter fills from the
/// API server before it calls the pure rules.
#[derive(Debug, Clone, Default)]
pub struct KnownState {
    /// Names of the PriorityClasses that exist.
    pub priority_classes: Vec<String>,
    /// Every store the lookup may return (filtered by namespace on read).
    pub secret_stores: Vec<BarbicanSecretStore>,
    /// When set, every lookup fails with this message.
    pub unavailable: Option<String>,
}

impl Lookups for KnownState {
    fn priority_class_exists(&self, name: &str) -> Result<bool, LookupError> {
        match &self.unavailable {
            Some(why) => Err(LookupError(why.clone())),
            None => Ok(self.priority_classes.iter().any(|p| p == name)),
        }
    }

    fn secret_stores(&self, namespace: &str) -> Result<Vec<BarbicanSecretStore>, LookupError> {
        match &self.unavailable {
            Some(why) => Err(LookupError(why.clone())),
            None => Ok(self
                .secret_stores
                .iter()
                .filter(|s| s.metadata.namespace.as_deref() == Some(namespace))
                .cloned()
                .collect()),
        }
    }
}
