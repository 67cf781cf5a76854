//! `barbican_operator_condition_status{kind,name,namespace,condition}`: 1 while a CR's
//! condition is True, 0 while it is False or Unknown.
//!
//! Kept as a map from each CR to its conditions, not as a prometheus vector. At 1000
//! Barbicans and their stores the vector held 17,000 series, each with its label values and
//! precomputed label pairs (11 MiB), and every scrape built all of them again as protobuf
//! before writing text (12 MiB more, at the operator's peak: a scrape right after
//! convergence). Here a CR costs one entry of static condition names, and a scrape writes
//! the text straight from the map.

use std::{
    borrow::Cow,
    collections::BTreeMap,
    fmt::Write,
    sync::{Arc, Mutex},
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::api::conditions::{BarbicanConditionType, StoreConditionType};

/// The family's help text.
pub const HELP: &str = "1 while the condition of the CR is True, 0 while it is False or Unknown";
/// The family's label names, in the order the series carry them.
pub const LABELS: [&str; 4] = ["kind", "name", "namespace", "condition"];

/// A CR: its kind, namespace and name.
type Key = (String, String, String);
/// A CR's conditions: each type (static where it is the spec's) and whether it is True.
type States = Vec<(Cow<'static, str>, bool)>;
/// Every CR's.
type Series = BTreeMap<Key, States>;

/// Every CR's conditions as its last pass left them.
#[derive(Clone, Default)]
pub struct ConditionStatus {
    series: Arc<Mutex<Series>>,
}

/// The condition type as a static name where it is one of the spec's (all of them, in
/// practice): no allocation per CR and condition.
fn interned(type_: &str) -> Cow<'static, str> {
    BarbicanConditionType::ALL
        .iter()
        .map(|t| t.as_str())
        .chain(StoreConditionType::ALL.iter().map(|t| t.as_str()))
        .find(|known| *known == type_)
        .map_or_else(|| Cow::Owned(type_.to_string()), Cow::Borrowed)
}

/// A label value as the text format writes it: backslash, double quote and newline escaped.
fn escaped(value: &str) -> Cow<'_, str> {
    if !value.contains(['\\', '"', '\n']) {
        return Cow::Borrowed(value);
    }
    Cow::Owned(
        value
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n"),
    )
}

impl ConditionStatus {
    fn lock(&self) -> std::sync::MutexGuard<'_, Series> {
        // A panic while holding the lock leaves the map whole: every change is one insert.
        self.series.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the series of `conditions` of the `kind` CR `namespace/name`; the CR's other
    /// conditions keep theirs.
    pub fn set(&self, kind: &str, name: &str, namespace: &str, conditions: &[Condition]) {
        let mut series = self.lock();
        let entry = series
            .entry((kind.to_string(), namespace.to_string(), name.to_string()))
            .or_default();
        for condition in conditions {
            let value = condition.status == "True";
            match entry.iter_mut().find(|(t, _)| *t == condition.type_) {
                Some((_, v)) => *v = value,
                None => entry.push((interned(&condition.type_), value)),
            }
        }
    }

    /// The series of `condition` of the CR, if a pass set it.
    pub fn get(&self, kind: &str, name: &str, namespace: &str, condition: &str) -> Option<i64> {
        let series = self.lock();
        let entry = series.get(&(kind.to_string(), namespace.to_string(), name.to_string()))?;
        entry
            .iter()
            .find(|(t, _)| t == condition)
            .map(|(_, v)| i64::from(*v))
    }

    /// Drops every series of the CR.
    pub fn forget(&self, kind: &str, name: &str, namespace: &str) {
        self.lock()
            .remove(&(kind.to_string(), namespace.to_string(), name.to_string()));
    }

    /// Appends the family in the Prometheus text format to `out` (nothing while no CR has a
    /// series, as the registry leaves out a family without series).
    pub fn render(&self, full_name: &str, out: &mut String) {
        let series = self.lock();
        if series.is_empty() {
            return;
        }
        let _ = writeln!(out, "# HELP {full_name} {HELP}");
        let _ = writeln!(out, "# TYPE {full_name} gauge");
        for ((kind, namespace, name), conditions) in series.iter() {
            let (kind, namespace, name) = (escaped(kind), escaped(namespace), escaped(name));
            for (condition, value) in conditions {
                let _ = writeln!(
                    out,
                    "{full_name}{{condition=\"{}\",kind=\"{kind}\",name=\"{name}\",namespace=\"{namespace}\"}} {}",
                    escaped(condition),
                    i64::from(*value)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped_as_the_text_format_wants() {
        assert_eq!(escaped("plain"), "plain");
        assert_eq!(escaped("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }

    #[test]
    fn the_spec_condition_types_cost_no_allocation() {
        assert!(matches!(interned("Ready"), Cow::Borrowed("Ready")));
        assert!(matches!(interned("CredentialsReady"), Cow::Borrowed(_)));
        assert!(matches!(interned("Other"), Cow::Owned(_)));
    }
}
