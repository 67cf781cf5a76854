//! A pipeline step's failure: what kind it is, what the step was doing, and the client's
//! error when there is one. The kind is the `kind` label of
//! `barbican_operator_reconcile_errors_total`, so a dashboard tells an API server that refuses
//! from a tenant's unusable input without reading logs.

use std::fmt;

use super::runtime::children::ChildError;

/// What kind of failure a step met.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A request to the API server (the management cluster's or a target's) failed.
    Api,
    /// The CR, or an input it references, cannot be used as written; the step's condition
    /// says which field and what is allowed.
    InvalidInput,
    /// Something the step needs is not there yet (a watch cache still filling).
    DependencyNotReady,
    /// The CR's placement forbids the step (a target cluster outside its namespaces).
    Placement,
    /// A child's name is taken by an object that is not this CR's; the step's condition says
    /// which (reason `NameTaken`), and the object is left as it is.
    NameTaken,
    /// The operator's own pipeline table is wrong: a step read a value it does not declare, or
    /// that no earlier step gave. A bug to report, never the CR's doing.
    Internal,
}

impl ErrorKind {
    /// The metric label.
    pub fn metric_label(self) -> &'static str {
        match self {
            Self::Api => "api",
            Self::InvalidInput => "invalid_input",
            Self::DependencyNotReady => "dependency_not_ready",
            Self::Placement => "placement",
            Self::NameTaken => "name_taken",
            Self::Internal => "internal",
        }
    }
}

/// A step's failure.
#[derive(Debug)]
pub struct StepError {
    /// What kind it is.
    pub kind: ErrorKind,
    /// What the step was doing, or (without a source) the whole message.
    pub what: String,
    /// The client's error, when a request failed.
    pub source: Option<kube::Error>,
}

impl StepError {
    /// A failure of `kind` told in `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            what: message.into(),
            source: None,
        }
    }

    /// The CR or an input cannot be used as written.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// A request about a child failed while the step was doing `what`: the API server's
    /// error, or a foreign object in the child's place ([`ErrorKind::NameTaken`], told on its
    /// own: what the step was doing adds nothing to "this name is someone else's").
    pub fn api(what: &str, source: impl Into<ChildError>) -> Self {
        match source.into() {
            ChildError::Api(source) => Self {
                kind: ErrorKind::Api,
                what: what.to_string(),
                source: Some(source),
            },
            ChildError::NameTaken(taken) => Self::new(ErrorKind::NameTaken, taken.to_string()),
        }
    }

    /// The `kind` label this failure is counted under.
    pub fn metric_label(&self) -> &'static str {
        self.kind.metric_label()
    }
}

/// `map_err` adapter: `.map_err(|e| api_error("reading the Deployment", e))`.
pub fn api_error(what: &str, source: impl Into<ChildError>) -> StepError {
    StepError::api(what, source)
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {source}", self.what),
            None => f.write_str(&self.what),
        }
    }
}

impl std::error::Error for StepError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Two failures are the same when their kind and their message are (a client error has no
/// equality of its own; its text is what the condition and the log carry).
impl PartialEq for StepError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.to_string() == other.to_string()
    }
}

impl Eq for StepError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::runtime::children::Taken;

    #[test]
    fn an_api_failure_says_what_was_being_done_and_keeps_the_client_error() {
        let source = kube::Error::Api(
            kube::core::Status::failure("deployments.apps \"kms\" is forbidden", "Forbidden")
                .with_code(403)
                .boxed(),
        );
        let error = api_error("reading the Deployment", source);
        assert_eq!(error.metric_label(), "api");
        assert!(
            error.to_string().starts_with("reading the Deployment: "),
            "{error}"
        );
        assert!(error.to_string().contains("forbidden"), "{error}");
        assert!(std::error::Error::source(&error).is_some());
    }

    #[test]
    fn a_foreign_object_in_a_childs_place_is_its_own_kind_naming_the_object() {
        let taken = ChildError::NameTaken(Box::new(Taken {
            kind: "Service".into(),
            name: "kms".into(),
            namespace: "team-b".into(),
            cluster: Some("edge-1".into()),
            owner_kind: "Barbican".into(),
            owner: "kms".into(),
        }));
        let error = api_error("applying the Service", taken);
        assert_eq!(error.metric_label(), "name_taken");
        assert_eq!(
            error.to_string(),
            "Service \"kms\" in namespace \"team-b\" on cluster \"edge-1\" exists and is not owned by Barbican \"kms\"; it is left as it is (rename or remove it)"
        );
        assert!(std::error::Error::source(&error).is_none());
    }

    #[test]
    fn every_kind_has_its_own_label() {
        let labels: std::collections::BTreeSet<_> = [
            ErrorKind::Api,
            ErrorKind::InvalidInput,
            ErrorKind::DependencyNotReady,
            ErrorKind::Placement,
            ErrorKind::NameTaken,
            ErrorKind::Internal,
        ]
        .map(ErrorKind::metric_label)
        .into_iter()
        .collect();
        assert_eq!(labels.len(), 6);
        assert_eq!(
            StepError::invalid_input("spec.x: not allowed").to_string(),
            "spec.x: not allowed"
        );
    }
}
