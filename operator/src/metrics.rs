//! The operator's Prometheus metrics, under the `barbican_operator_` prefix.
//!
//! So far the two pipeline vectors: `barbican_operator_reconcile_duration_seconds` (by
//! `sub_reconciler`) and `barbican_operator_reconcile_errors_total` (by `sub_reconciler` and
//! `condition_type`). A [`Metrics`] is the pipeline's [`Recorder`].

use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder,
};

use crate::{api::conditions::BarbicanConditionType, controller::pipeline::Recorder};

/// The metric name prefix.
pub const PREFIX: &str = "barbican_operator";

/// The registry and the vectors in it.
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    reconcile_duration: HistogramVec,
    reconcile_errors: IntCounterVec,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh registry with every vector registered.
    pub fn new() -> Self {
        let registry = Registry::new();
        let reconcile_duration = HistogramVec::new(
            HistogramOpts::new(
                format!("{PREFIX}_reconcile_duration_seconds"),
                "How long each pipeline step took",
            ),
            &["sub_reconciler"],
        )
        .expect("a valid histogram");
        let reconcile_errors = IntCounterVec::new(
            Opts::new(
                format!("{PREFIX}_reconcile_errors_total"),
                "Pipeline step failures, by step and the condition it reports through",
            ),
            &["sub_reconciler", "condition_type"],
        )
        .expect("a valid counter");
        registry
            .register(Box::new(reconcile_duration.clone()))
            .expect("registered once");
        registry
            .register(Box::new(reconcile_errors.clone()))
            .expect("registered once");
        Self {
            registry,
            reconcile_duration,
            reconcile_errors,
        }
    }

    /// How many times `step` has run (the samples of its duration histogram).
    pub fn step_runs(&self, step: &str) -> u64 {
        self.reconcile_duration
            .with_label_values(&[step])
            .get_sample_count()
    }

    /// Everything, in the Prometheus text format (what `/metrics` serves).
    pub fn render(&self) -> String {
        let mut buffer = Vec::new();
        // Encoding into a Vec cannot fail for well-formed metrics.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut buffer);
        String::from_utf8(buffer).unwrap_or_default()
    }
}

impl Recorder for Metrics {
    fn duration(&self, step: &'static str, elapsed: Duration) {
        self.reconcile_duration
            .with_label_values(&[step])
            .observe(elapsed.as_secs_f64());
    }

    fn error(&self, step: &'static str, condition: BarbicanConditionType) {
        self.reconcile_errors
            .with_label_values(&[step, condition.as_str()])
            .inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_timed_and_failures_counted_under_the_spec_names() {
        let metrics = Metrics::new();
        metrics.duration("Deployment", Duration::from_millis(30));
        metrics.duration("Deployment", Duration::from_millis(10));
        metrics.error("Config", BarbicanConditionType::SecretsReady);
        metrics.error("Config", BarbicanConditionType::SecretsReady);
        let text = metrics.render();
        assert!(
            text.contains("barbican_operator_reconcile_duration_seconds_count{sub_reconciler=\"Deployment\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("barbican_operator_reconcile_errors_total{condition_type=\"SecretsReady\",sub_reconciler=\"Config\"} 2"),
            "{text}"
        );
    }
}
