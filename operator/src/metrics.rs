//! The operator's Prometheus metrics, under the `barbican_operator_` prefix.
//!
//! The two pipeline vectors: `barbican_operator_reconcile_duration_seconds` (by
//! `sub_reconciler`) and `barbican_operator_reconcile_errors_total` (by `sub_reconciler`,
//! `condition_type` and the failure's `kind`); the pipeline records through them. And the per-CR Job series:
//! `barbican_operator_db_{sync,clean}_total{barbican,namespace,result}` and
//! `barbican_operator_db_{sync,clean}_duration_seconds{barbican,namespace}`, dropped when the
//! Barbican's finalizer completes. And `barbican_operator_condition_status{kind,name,namespace,
//! condition}`, 1 while a CR's condition is True and 0 otherwise, set on every pass (what the
//! chart's alerts read: a condition held False is an outage the operator already diagnosed),
//! dropped with the CR's other series.

use std::time::Duration;

mod condition_status;

use condition_status::ConditionStatus;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder,
};

/// The metric name prefix.
pub const PREFIX: &str = "barbican_operator";

/// The registry and the vectors in it.
/// The buckets of the Job duration histograms, in seconds.
pub const JOB_BUCKETS: [f64; 8] = [1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0];

/// The two Jobs the operator counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// `{name}-db-sync`.
    DbSync,
    /// The runs of `{name}-db-clean`.
    DbClean,
}

/// The operator's registry and its series.
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    reconcile_duration: HistogramVec,
    reconcile_errors: IntCounterVec,
    jobs_total: [IntCounterVec; 2],
    jobs_duration: [HistogramVec; 2],
    remints: IntCounterVec,
    panics: IntCounterVec,
    kube_requests: IntCounterVec,
    conditions: ConditionStatus,
}

/// The Job counters, indexed by [`JobKind`] (without the prefix).
const JOB_TOTALS: [&str; 2] = ["db_sync_total", "db_clean_total"];
/// The re-mint counter (without the prefix).
const REMINTS_TOTAL: &str = "secretstore_remints_total";
/// The condition gauge (without the prefix).
const CONDITION_STATUS: &str = "condition_status";

/// Why a store's secret ID was re-minted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// Before its TTL lapsed, at two thirds of it.
    Proactive,
    /// After the server had rejected it.
    Reactive,
}

impl Trigger {
    /// The `trigger` label.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Proactive => "proactive",
            Trigger::Reactive => "reactive",
        }
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

fn counter(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let vec = IntCounterVec::new(Opts::new(format!("{PREFIX}_{name}"), help), labels)
        .expect("a valid counter");
    registry
        .register(Box::new(vec.clone()))
        .expect("registered once");
    vec
}

fn histogram(
    registry: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
    buckets: Option<Vec<f64>>,
) -> HistogramVec {
    let mut opts = HistogramOpts::new(format!("{PREFIX}_{name}"), help);
    if let Some(buckets) = buckets {
        opts = opts.buckets(buckets);
    }
    let vec = HistogramVec::new(opts, labels).expect("a valid histogram");
    registry
        .register(Box::new(vec.clone()))
        .expect("registered once");
    vec
}

impl Metrics {
    /// A registry with every series registered.
    pub fn new() -> Self {
        let metrics = Self::unstarted();
        for controller in Self::CONTROLLERS {
            metrics.panics.with_label_values(&[controller]);
        }
        metrics
    }

    fn unstarted() -> Self {
        let registry = Registry::new();
        let job_labels = ["barbican", "namespace", "result"];
        let cr_labels = ["barbican", "namespace"];
        let buckets = Some(JOB_BUCKETS.to_vec());
        Self {
            reconcile_duration: histogram(
                &registry,
                "reconcile_duration_seconds",
                "How long each pipeline step took",
                &["sub_reconciler"],
                None,
            ),
            reconcile_errors: counter(
                &registry,
                "reconcile_errors_total",
                "Pipeline step failures, by step, the condition it reports through, and kind",
                &["sub_reconciler", "condition_type", "kind"],
            ),
            jobs_total: [
                counter(
                    &registry,
                    JOB_TOTALS[JobKind::DbSync as usize],
                    "Terminal db-sync Jobs, by result",
                    &job_labels,
                ),
                counter(
                    &registry,
                    JOB_TOTALS[JobKind::DbClean as usize],
                    "Terminal db-clean runs, by result",
                    &job_labels,
                ),
            ],
            jobs_duration: [
                histogram(
                    &registry,
                    "db_sync_duration_seconds",
                    "How long db-sync Jobs ran",
                    &cr_labels,
                    buckets.clone(),
                ),
                histogram(
                    &registry,
                    "db_clean_duration_seconds",
                    "How long db-clean runs ran",
                    &cr_labels,
                    buckets,
                ),
            ],
            remints: counter(
                &registry,
                REMINTS_TOTAL,
                "AppRole secret IDs re-minted, by trigger (an initial mint is not counted)",
                &["store", "namespace", "trigger"],
            ),
            panics: counter(
                &registry,
                "reconcile_panics_total",
                "Passes that panicked, by controller (the CR is retried with backoff; the others go on)",
                &["controller"],
            ),
            kube_requests: counter(
                &registry,
                "kube_requests_total",
                "Requests sent to an API server, by verb, resource and answer (code, or timeout/error)",
                &["verb", "resource", "code"],
            ),
            conditions: ConditionStatus::default(),
            registry,
        }
    }

    /// The layer that counts a client's requests into `kube_requests_total` and bounds them
    /// by [`crate::kube_requests::REQUEST_TIMEOUT`] (see [`crate::kube_requests`]).
    pub fn count_requests(&self) -> crate::kube_requests::CountRequests {
        crate::kube_requests::CountRequests::new(
            self.kube_requests.clone(),
            crate::kube_requests::REQUEST_TIMEOUT,
        )
    }

    /// How many requests of `verb` on `resource` were answered `code` (`timeout`, `error`).
    pub fn kube_requests(&self, verb: &str, resource: &str, code: &str) -> u64 {
        self.kube_requests
            .get_metric_with_label_values(&[verb, resource, code])
            .map_or(0, |c| c.get())
    }

    /// The controllers whose panics are counted; their series exist from the start at 0, so an
    /// alert on an increase has a series to watch.
    pub const CONTROLLERS: [&str; 2] = ["barbican", "secretstore"];

    /// Counts one pass of `controller` (`barbican` or `secretstore`) that panicked.
    pub fn panicked(&self, controller: &str) {
        self.panics.with_label_values(&[controller]).inc();
    }

    /// How many passes of `controller` panicked.
    pub fn panics(&self, controller: &str) -> u64 {
        self.counted("reconcile_panics_total", &[("controller", controller)])
    }

    /// Counts one re-mint of the store `namespace/store`'s secret ID.
    pub fn remint(&self, store: &str, namespace: &str, trigger: Trigger) {
        self.remints
            .with_label_values(&[store, namespace, trigger.as_str()])
            .inc();
    }

    /// How many re-mints of `trigger` were counted for the store (read without creating the
    /// series).
    pub fn remints(&self, store: &str, namespace: &str, trigger: Trigger) -> u64 {
        self.counted(
            REMINTS_TOTAL,
            &[
                ("store", store),
                ("namespace", namespace),
                ("trigger", trigger.as_str()),
            ],
        )
    }

    /// Drops the re-mint and condition series of the store `namespace/store` (its deletion was
    /// observed).
    pub fn forget_store(&self, store: &str, namespace: &str) {
        self.conditions
            .forget("BarbicanSecretStore", store, namespace);
        for trigger in [Trigger::Proactive, Trigger::Reactive] {
            let _ = self
                .remints
                .remove_label_values(&[store, namespace, trigger.as_str()]);
        }
    }

    /// The samples of the family `name` (without the prefix) whose labels include `labels`,
    /// read through a gather so that asking never creates a series.
    fn samples(&self, name: &str, labels: &[(&str, &str)]) -> Vec<prometheus::proto::Metric> {
        let full = format!("{PREFIX}_{name}");
        self.registry
            .gather()
            .iter()
            .filter(|family| family.name() == full)
            .flat_map(|family| family.get_metric())
            .filter(|metric| {
                labels.iter().all(|(key, value)| {
                    metric
                        .get_label()
                        .iter()
                        .any(|l| l.name() == *key && l.value() == *value)
                })
            })
            .cloned()
            .collect()
    }

    /// The value of the counter `name` (without the prefix) whose labels include `labels`.
    fn counted(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        self.samples(name, labels)
            .iter()
            .map(|metric| metric.get_counter().get_value() as u64)
            .sum()
    }

    /// Counts one terminal Job of `kind` for the Barbican `namespace/barbican`.
    pub fn job_finished(
        &self,
        kind: JobKind,
        barbican: &str,
        namespace: &str,
        succeeded: bool,
        seconds: Option<f64>,
    ) {
        let index = kind as usize;
        let result = if succeeded { "succeeded" } else { "failed" };
        self.jobs_total[index]
            .with_label_values(&[barbican, namespace, result])
            .inc();
        if let Some(seconds) = seconds {
            self.jobs_duration[index]
                .with_label_values(&[barbican, namespace])
                .observe(seconds);
        }
    }

    /// How many terminal Jobs of `kind` were counted for the Barbican.
    pub fn jobs_counted(&self, kind: JobKind, barbican: &str, namespace: &str) -> u64 {
        self.counted(
            JOB_TOTALS[kind as usize],
            &[("barbican", barbican), ("namespace", namespace)],
        )
    }

    /// Sets the condition series of the `kind` (`Barbican`, `BarbicanSecretStore`) CR
    /// `namespace/name` to its `conditions` as they stand after a pass.
    pub fn conditions(&self, kind: &str, name: &str, namespace: &str, conditions: &[Condition]) {
        self.conditions.set(kind, name, namespace, conditions);
    }

    /// The condition series of the CR, if the last pass set it: 1 True, 0 otherwise.
    pub fn condition(
        &self,
        kind: &str,
        name: &str,
        namespace: &str,
        condition: &str,
    ) -> Option<i64> {
        self.conditions.get(kind, name, namespace, condition)
    }

    /// Drops every series of the Barbican `namespace/barbican` (its finalizer completed).
    pub fn forget_barbican(&self, barbican: &str, namespace: &str) {
        self.conditions.forget("Barbican", barbican, namespace);
        for index in 0..2 {
            for result in ["succeeded", "failed"] {
                let _ = self.jobs_total[index].remove_label_values(&[barbican, namespace, result]);
            }
            let _ = self.jobs_duration[index].remove_label_values(&[barbican, namespace]);
        }
    }

    /// How many times `step` has run (the samples of its duration histogram).
    pub fn step_runs(&self, step: &str) -> u64 {
        self.reconcile_duration
            .with_label_values(&[step])
            .get_sample_count()
    }

    /// Every metric family the operator exports, with its label names (what alerts and
    /// dashboards may select on), whether or not a series of it exists yet.
    pub fn families(&self) -> Vec<(String, Vec<String>)> {
        use prometheus::core::Collector;
        let collectors: Vec<&dyn Collector> = vec![
            &self.reconcile_duration,
            &self.reconcile_errors,
            &self.jobs_total[0],
            &self.jobs_total[1],
            &self.jobs_duration[0],
            &self.jobs_duration[1],
            &self.remints,
            &self.panics,
            &self.kube_requests,
        ];
        collectors
            .into_iter()
            .flat_map(|c| c.desc())
            .map(|d| (d.fq_name.clone(), d.variable_labels.clone()))
            .chain(std::iter::once((
                format!("{PREFIX}_{CONDITION_STATUS}"),
                condition_status::LABELS.map(String::from).to_vec(),
            )))
            .collect()
    }

    /// Everything, in the Prometheus text format (what `/metrics` serves).
    pub fn render(&self) -> String {
        let mut buffer = Vec::new();
        // Encoding into a Vec cannot fail for well-formed metrics.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut buffer);
        let mut text = String::from_utf8(buffer).unwrap_or_default();
        self.conditions
            .render(&format!("{PREFIX}_{CONDITION_STATUS}"), &mut text);
        text
    }
}

impl Metrics {
    /// A pipeline step ran for `elapsed`.
    pub fn step_duration(&self, step: &str, elapsed: Duration) {
        self.reconcile_duration
            .with_label_values(&[step])
            .observe(elapsed.as_secs_f64());
    }

    /// A pipeline step failed: its name, the condition type it reports through, and the
    /// failure's kind.
    pub fn step_error(&self, step: &str, condition_type: &str, kind: &str) {
        self.reconcile_errors
            .with_label_values(&[step, condition_type, kind])
            .inc();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(type_: &str, status: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-01-01T00:00:00Z".parse().unwrap(),
            ),
            message: String::new(),
            observed_generation: None,
            reason: "Test".into(),
        }
    }

    #[test]
    fn a_crs_conditions_are_gauges_that_go_with_it() {
        let metrics = Metrics::new();
        metrics.conditions(
            "Barbican",
            "kms",
            "ns",
            &[
                condition("Ready", "False"),
                condition("BarbicanAPIReady", "True"),
            ],
        );
        metrics.conditions(
            "BarbicanSecretStore",
            "primary",
            "ns",
            &[condition("CredentialsReady", "Unknown")],
        );
        let text = metrics.render();
        assert!(
            text.contains("barbican_operator_condition_status{condition=\"BarbicanAPIReady\",kind=\"Barbican\",name=\"kms\",namespace=\"ns\"} 1"),
            "{text}"
        );
        assert_eq!(metrics.condition("Barbican", "kms", "ns", "Ready"), Some(0));
        assert_eq!(
            metrics.condition("BarbicanSecretStore", "primary", "ns", "CredentialsReady"),
            Some(0)
        );
        // A later pass flips it.
        metrics.conditions("Barbican", "kms", "ns", &[condition("Ready", "True")]);
        assert_eq!(metrics.condition("Barbican", "kms", "ns", "Ready"), Some(1));
        metrics.forget_barbican("kms", "ns");
        assert_eq!(metrics.condition("Barbican", "kms", "ns", "Ready"), None);
        assert_eq!(
            metrics.condition("BarbicanSecretStore", "primary", "ns", "CredentialsReady"),
            Some(0),
            "another CR's series stay"
        );
        metrics.forget_store("primary", "ns");
        assert!(
            !metrics.render().contains("condition_status{"),
            "{}",
            metrics.render()
        );
    }

    #[test]
    fn jobs_are_counted_per_barbican_and_dropped_with_it() {
        let metrics = Metrics::new();
        metrics.job_finished(JobKind::DbSync, "kms", "ns", true, Some(42.0));
        metrics.job_finished(JobKind::DbClean, "kms", "ns", false, None);
        let text = metrics.render();
        assert!(
            text.contains("barbican_operator_db_sync_total{barbican=\"kms\",namespace=\"ns\",result=\"succeeded\"} 1"),
            "{text}"
        );
        assert!(text.contains("barbican_operator_db_sync_duration_seconds_bucket{barbican=\"kms\",namespace=\"ns\",le=\"60\"} 1"), "{text}");
        assert!(text.contains("barbican_operator_db_clean_total{barbican=\"kms\",namespace=\"ns\",result=\"failed\"} 1"));
        assert_eq!(metrics.jobs_counted(JobKind::DbSync, "kms", "ns"), 1);
        metrics.forget_barbican("kms", "ns");
        let text = metrics.render();
        assert!(!text.contains("barbican=\"kms\""), "{text}");
    }

    #[test]
    fn remints_are_split_by_trigger_dropped_with_the_store_and_reading_creates_nothing() {
        let metrics = Metrics::new();
        assert_eq!(metrics.remints("primary", "ns", Trigger::Proactive), 0);
        assert_eq!(metrics.jobs_counted(JobKind::DbSync, "kms", "ns"), 0);
        assert!(
            !metrics.render().contains("primary") && !metrics.render().contains("kms"),
            "asking made a series: {}",
            metrics.render()
        );
        metrics.remint("primary", "ns", Trigger::Proactive);
        metrics.remint("primary", "ns", Trigger::Reactive);
        metrics.remint("primary", "ns", Trigger::Reactive);
        let text = metrics.render();
        assert!(
            text.contains("barbican_operator_secretstore_remints_total{namespace=\"ns\",store=\"primary\",trigger=\"reactive\"} 2"),
            "{text}"
        );
        assert_eq!(metrics.remints("primary", "ns", Trigger::Proactive), 1);
        assert_eq!(metrics.remints("primary", "other", Trigger::Proactive), 0);
        metrics.forget_store("primary", "ns");
        assert!(!metrics.render().contains("primary"));
    }

    #[test]
    fn steps_are_timed_and_failures_counted_under_the_spec_names() {
        let metrics = Metrics::new();
        metrics.step_duration("Deployment", Duration::from_millis(30));
        metrics.step_duration("Deployment", Duration::from_millis(10));
        metrics.step_error("Config", "SecretsReady", "invalid_input");
        metrics.step_error("Config", "SecretsReady", "invalid_input");
        let text = metrics.render();
        assert!(
            text.contains("barbican_operator_reconcile_duration_seconds_count{sub_reconciler=\"Deployment\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("barbican_operator_reconcile_errors_total{condition_type=\"SecretsReady\",kind=\"invalid_input\",sub_reconciler=\"Config\"} 2"),
            "{text}"
        );
    }
}
