//! What a validating webhook answers: every violation at once, plus warnings.

use std::fmt;

/// The admission operation under review.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// A new object.
    Create,
    /// A change to a stored object.
    Update,
}

/// One refused field: where, the offending value when it is safe to echo, and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Field path (`spec.deployment.preStopSleepSeconds`).
    pub field: String,
    /// The offending value, when echoing it leaks nothing.
    pub value: Option<String>,
    /// What would be accepted instead.
    pub allowed: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(value) => write!(
                f,
                "{}: Invalid value: {value:?}: {}",
                self.field, self.allowed
            ),
            None => write!(f, "{}: {}", self.field, self.allowed),
        }
    }
}

/// The outcome of validating one object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Every violation found; the object is admitted when there are none.
    pub violations: Vec<Violation>,
    /// Admission warnings shown to the user whether or not the object is admitted.
    pub warnings: Vec<String>,
}

impl Verdict {
    /// Whether the object is admitted.
    pub fn allowed(&self) -> bool {
        self.violations.is_empty()
    }

    /// Records a violation that echoes the offending value.
    pub fn reject(
        &mut self,
        field: impl Into<String>,
        value: impl fmt::Display,
        allowed: impl Into<String>,
    ) {
        self.violations.push(Violation {
            field: field.into(),
            value: Some(value.to_string()),
            allowed: allowed.into(),
        });
    }

    /// Records a violation without echoing a value (absent fields, or values not safe to show).
    pub fn require(&mut self, field: impl Into<String>, allowed: impl Into<String>) {
        let allowed = allowed.into();
        debug_assert!(
            !allowed.contains("; "),
            "'; ' separates violations in the message: {allowed}"
        );
        self.violations.push(Violation {
            field: field.into(),
            value: None,
            allowed,
        });
    }

    /// Records an admission warning.
    pub fn warn(&mut self, warning: impl Into<String>) {
        self.warnings.push(warning.into());
    }

    /// All violations as one message, as the API server shows a denial.
    pub fn message(&self) -> String {
        self.violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Whether `value` carries a newline or carriage return, which the INI renderer would turn
/// into an injected line.
pub fn has_line_break(value: &str) -> bool {
    value.contains(['\n', '\r'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_collects_every_violation_and_names_each_field() {
        let mut verdict = Verdict::default();
        assert!(verdict.allowed());
        verdict.reject("spec.a", 0, "must be at least 1");
        verdict.require("spec.b", "Required value");
        assert!(!verdict.allowed());
        assert_eq!(
            verdict.message(),
            "spec.a: Invalid value: \"0\": must be at least 1; spec.b: Required value"
        );
    }

    #[test]
    fn line_breaks_are_either_character() {
        assert!(has_line_break("a\nb"));
        assert!(has_line_break("a\rb"));
        assert!(!has_line_break("a b"));
    }
}
