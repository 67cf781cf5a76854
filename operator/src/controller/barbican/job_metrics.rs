//! The db-sync and db-clean Job series: each terminal Job is counted exactly once, however
//! many passes (or operator processes) see it.

use k8s_openapi::api::batch::v1::Job;
use kube::{Api, ResourceExt};
use serde_json::json;

use super::{jobs, state::State};
use crate::{
    api::barbican::Barbican,
    api::conditions::EventReason,
    controller::{events::Severity, runtime::writes::patch_metadata},
    metrics::JobKind,
};

/// The CR annotation recording the last db-sync Job counted in the metrics.
pub const LAST_DB_SYNC_JOB_ANNOTATION: &str = "cobaltcore.c5c3.io/last-db-sync-job-uid";

/// The CR annotation recording the last db-clean run counted in the metrics.
pub const LAST_DB_CLEAN_JOB_ANNOTATION: &str = "cobaltcore.c5c3.io/last-db-clean-job-uid";

/// Counts a terminal Job once: the CR annotation `annotation` records the last one counted,
/// written with the CR's resourceVersion as precondition, so two passes (or two operator
/// processes) never both count it. A failed write skips the metric with a Warning.
pub async fn count_once(state: &State, kind: JobKind, annotation: &str, job: &Job) {
    let uid = job.uid().unwrap_or_default();
    let counted = state
        .barbican
        .annotations()
        .get(annotation)
        .is_some_and(|u| *u == uid);
    if counted || uid.is_empty() {
        return;
    }
    let api: Api<Barbican> = Api::namespaced(state.env.client.clone(), &state.namespace());
    let patch = json!({"metadata": {
        "resourceVersion": state.barbican.resource_version(),
        "annotations": {annotation: uid},
    }});
    match patch_metadata(&state.env.writes, &api, &state.name(), &patch).await {
        Ok(_) => {
            let succeeded = matches!(jobs::state(job), jobs::JobState::Complete(_));
            state.env.metrics.job_finished(
                kind,
                &state.name(),
                &state.namespace(),
                succeeded,
                jobs::duration_seconds(job),
            );
        }
        Err(error) => {
            let reason = match kind {
                JobKind::DbSync => EventReason::DBSyncMetricEmissionDeferred,
                JobKind::DbClean => EventReason::DBCleanMetricEmissionDeferred,
            };
            state
                .event(
                    Severity::Warning,
                    reason,
                    &format!(
                        "recording Job {} as counted failed: {error}",
                        job.name_any()
                    ),
                )
                .await;
        }
    }
}
