//! The DBClean step: the `{name}-db-clean` CronJob running `barbican-manage db clean`, suspended
//! while the spec says so and for the whole of a schema convergence, and DBCleanReady from the
//! newest terminal run it spawned.
//!
//! It runs ahead of Database: the pipeline stops at Database for as long as a migration runs,
//! and the CronJob has to be suspended for exactly that window.

use k8s_openapi::api::{
    batch::v1::{CronJob, CronJobSpec, Job, JobSpec, JobTemplateSpec},
    core::v1::{PodSpec, PodTemplateSpec},
};
use kube::ResourceExt;
use sha2::{Digest, Sha256};

use super::{
    handoffs::ConfigSecret,
    job_metrics::{LAST_DB_CLEAN_JOB_ANNOTATION, count_once},
    jobs::{self, JobState},
    labels, release,
    state::{State, owned_metadata},
};
use crate::{
    api::{
        barbican::{BarbicanSpec, BarbicanStatus},
        conditions::{BarbicanConditionType as T, Reason},
        db_clean::DbCleanSpec,
        names::{DB_CLEAN_SUFFIX, MAX_BARBICAN_NAME_LENGTH},
    },
    controller::{
        events::Severity,
        pipeline::{Outcome, StepFuture},
        status::Report,
        step_error::api_error,
    },
    metrics::JobKind,
    render::secrets::hex,
};

/// A Job run by the clean-up may take at most this long.
pub const ACTIVE_DEADLINE_SECONDS: i64 = 3600;

/// The CronJob's name: `{name}-db-clean`, or for a name longer than 43 characters its first 34
/// (trailing `-`/`.` dropped), a dash, 8 hex characters of its SHA-256, and the suffix, so an
/// inherited over-long name still fits the CronJob limit and stays stable.
pub fn cronjob_name(barbican: &str) -> String {
    if barbican.len() <= MAX_BARBICAN_NAME_LENGTH {
        return format!("{barbican}{DB_CLEAN_SUFFIX}");
    }
    let head = barbican[..34].trim_end_matches(['-', '.']);
    let digest = hex(&Sha256::digest(barbican.as_bytes()));
    format!("{head}-{}{DB_CLEAN_SUFFIX}", &digest[..8])
}

/// The `barbican-manage db clean` command line.
pub fn command(spec: Option<&DbCleanSpec>) -> Vec<String> {
    let effective = DbCleanSpec::effective(spec);
    let mut command: Vec<String> = ["barbican-manage", "db", "clean", "--min-days"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    command.push(effective.retention_days.to_string());
    if effective.soft_delete_expired_secrets {
        command.push("--soft-delete-expired-secrets".into());
    }
    if effective.clean_unassociated_projects {
        command.push("--clean-unassociated-projects".into());
    }
    command
}

/// Whether a schema convergence is under way: the installed release is not the requested one
/// (a first install included).
pub fn migrating(installed: Option<&str>, requested: &str) -> bool {
    installed != Some(requested)
}

/// The image the clean-up runs: the spec's, unless the tag check or the release gate refuses
/// it (see [`release::refusal`]); then the image that installed the schema, which the refused
/// one has not replaced. `None` when the spec's image is refused and nothing was installed yet.
pub fn admitted_image(spec: &BarbicanSpec, status: &BarbicanStatus) -> Option<String> {
    let image = spec.image.reference();
    match release::refusal(
        spec.image.tag.as_deref(),
        &spec.open_stack_release,
        status.installed_release.as_deref(),
        status.installed_image.as_deref(),
        &image,
    ) {
        None => Some(image),
        Some(_) => status.installed_image.clone().filter(|i| !i.is_empty()),
    }
}

/// The CronJob, running `image`.
pub fn cronjob(
    spec: &BarbicanSpec,
    barbican: &str,
    config_secret: &str,
    image: &str,
    suspend: bool,
) -> CronJob {
    let effective = DbCleanSpec::effective(spec.db_clean.as_ref());
    let (mut container, volumes) = jobs::container(
        "db-clean",
        command(spec.db_clean.as_ref()),
        spec,
        barbican,
        config_secret,
    );
    container.image = Some(image.to_string());
    let mut pod_labels = labels::common(barbican);
    pod_labels.insert("app.kubernetes.io/component".into(), "db-clean".into());
    CronJob {
        metadata: Default::default(),
        spec: CronJobSpec {
            schedule: effective.schedule,
            suspend: Some(suspend),
            concurrency_policy: Some("Forbid".into()),
            job_template: JobTemplateSpec {
                metadata: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                    labels: Some(labels::common(barbican)),
                    ..Default::default()
                }),
                spec: Some(JobSpec {
                    active_deadline_seconds: Some(ACTIVE_DEADLINE_SECONDS),
                    template: PodTemplateSpec {
                        metadata: Some(
                            k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                                labels: Some(pod_labels),
                                ..Default::default()
                            },
                        ),
                        spec: Some(PodSpec {
                            containers: vec![container],
                            volumes: Some(volumes),
                            restart_policy: Some("OnFailure".into()),
                            ..PodSpec::default()
                        }),
                    },
                    ..JobSpec::default()
                }),
            },
            ..CronJobSpec::default()
        },
        status: None,
    }
}

/// The newest terminal Job the CronJob (uid `owner`) spawned.
pub fn newest_terminal(jobs: Vec<Job>, owner: &str) -> Option<Job> {
    jobs.into_iter()
        .filter(|j| {
            j.owner_references()
                .iter()
                .any(|o| o.controller == Some(true) && o.uid == owner)
                && jobs::state(j).finished()
        })
        .max_by_key(|j| j.metadata.creation_timestamp.clone().map(|t| t.0))
}

/// The DatabaseReady reasons of a rejected transition: a migration held by one of them is not
/// coming.
pub const GATE_REJECTIONS: [Reason; 4] = [
    Reason::VersionParseError,
    Reason::DowngradeNotSupported,
    Reason::UpgradePathInvalid,
    Reason::ImageReleaseMismatch,
];

/// The DBClean step.
pub fn db_clean(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let t = T::DBCleanReady;
        let config_secret = state.handoffs.need::<ConfigSecret>()?.0.clone();
        if config_secret.is_empty() {
            state.report(Report::not_ready(
                t,
                Reason::WaitingForSecretStores,
                "no config Secret to mount yet: the secret stores do not form a valid projection",
            ));
            // Kept, not swept, should a pass ever go through from here; today the Database
            // step waits in both of these cases, so the pass sweeps nothing.
            state.children.keep::<CronJob>(&cronjob_name(&state.name()));
            return Ok(Outcome::Done);
        }
        let spec = state.barbican.spec.clone();
        let effective = DbCleanSpec::effective(spec.db_clean.as_ref());
        let migrating = migrating(
            state.status.installed_release.as_deref(),
            &spec.open_stack_release,
        );
        let name = state.name();
        let Some(image) = admitted_image(&spec, &state.status) else {
            state.report(Report::not_ready(
                t,
                Reason::DBCleanBlocked,
                "the clean-up waits for an image the release gate admits: spec.image does not match spec.openStackRelease and no image has installed the schema yet",
            ));
            // A CronJob made before keeps its schedule and image until an image is admitted.
            state.children.keep::<CronJob>(&cronjob_name(&name));
            return Ok(Outcome::Done);
        };
        let mut desired = cronjob(
            &spec,
            &name,
            &config_secret,
            &image,
            effective.suspend || migrating,
        );
        let cron_name = cronjob_name(&name);
        desired.metadata = owned_metadata(state, &cron_name);
        let live = state
            .children
            .ensure(&desired)
            .await
            .map_err(|e| api_error("applying the db-clean CronJob", e))?;

        if effective.suspend {
            state.report(Report::ready(
                t,
                Reason::DBCleanSuspended,
                "spec.dbClean.suspend is set",
            ));
            return Ok(Outcome::Done);
        }
        if migrating {
            let blocked = state
                .condition(T::DatabaseReady.as_str())
                .is_some_and(|c| GATE_REJECTIONS.iter().any(|r| c.reason == r.as_str()));
            state.report(if blocked {
                Report::not_ready(
                    t,
                    Reason::DBCleanBlocked,
                    "the clean-up waits for a schema convergence the release gate rejected; correct spec.openStackRelease and spec.image",
                )
            } else {
                Report::ready(
                    t,
                    Reason::DBCleanSuspended,
                    format!("suspended while the schema converges to {}", spec.open_stack_release),
                )
            });
            return Ok(Outcome::Done);
        }
        let runs = state
            .children
            .list::<Job>(&labels_selector(&name))
            .await
            .map_err(|e| api_error("listing the db-clean Jobs", e))?;
        let newest = newest_terminal(runs, &live.uid().unwrap_or_default());
        if let Some(job) = &newest {
            count_once(state, JobKind::DbClean, LAST_DB_CLEAN_JOB_ANNOTATION, job).await;
        }
        match newest.as_ref().map(jobs::state) {
            Some(JobState::Failed(_, message)) => {
                let message = format!(
                    "the newest run {} failed: {message}",
                    newest.as_ref().map(|j| j.name_any()).unwrap_or_default()
                );
                let changed = state
                    .condition(t.as_str())
                    .is_none_or(|c| c.message != message);
                if changed {
                    state
                        .event(Severity::Warning, Reason::DBCleanJobFailed, &message)
                        .await;
                }
                state.report(Report::not_ready(t, Reason::DBCleanJobFailed, message));
            }
            _ => state.report(Report::ready(
                t,
                Reason::DBCleanScheduled,
                format!("scheduled {:?}", effective.schedule),
            )),
        }
        Ok(Outcome::Done)
    })
}

fn labels_selector(barbican: &str) -> String {
    labels::common(barbican)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures;

    #[test]
    fn long_names_collapse_onto_a_stable_hash_within_the_limit() {
        assert_eq!(cronjob_name("barbican"), "barbican-db-clean");
        let long = "a-very-long-barbican-name-inherited-from-a-parent-cr";
        let collapsed = cronjob_name(long);
        assert_eq!(collapsed.len(), 52);
        assert!(collapsed.starts_with(&long[..34]));
        assert!(collapsed.ends_with("-db-clean"));
        assert_eq!(collapsed, cronjob_name(long), "stable");
        let dotted = format!("{}-.{}", "x".repeat(32), "y".repeat(20));
        assert!(
            !cronjob_name(&dotted).contains("-.-"),
            "{}",
            cronjob_name(&dotted)
        );
    }

    #[test]
    fn the_command_resolves_the_defaults_at_reconcile_time() {
        assert_eq!(
            command(None),
            [
                "barbican-manage",
                "db",
                "clean",
                "--min-days",
                "90",
                "--soft-delete-expired-secrets"
            ]
        );
        let spec = DbCleanSpec {
            retention_days: Some(7),
            soft_delete_expired_secrets: Some(false),
            clean_unassociated_projects: Some(true),
            ..DbCleanSpec::default()
        };
        assert_eq!(
            command(Some(&spec)),
            [
                "barbican-manage",
                "db",
                "clean",
                "--min-days",
                "7",
                "--clean-unassociated-projects"
            ]
        );
    }

    #[test]
    fn the_cronjob_forbids_overlap_and_bounds_each_run() {
        let c = cronjob(
            &fixtures::barbican().spec,
            "kms",
            "kms-config-1",
            "img",
            true,
        );
        let spec = c.spec;
        assert_eq!(spec.schedule, "1 0 * * *");
        assert_eq!(spec.suspend, Some(true));
        assert_eq!(spec.concurrency_policy.as_deref(), Some("Forbid"));
        assert!(spec.successful_jobs_history_limit.is_none());
        let job = spec.job_template.spec.unwrap();
        assert_eq!(job.active_deadline_seconds, Some(3600));
        assert!(job.backoff_limit.is_none());
        let pod = job.template.spec.unwrap();
        assert_eq!(pod.restart_policy.as_deref(), Some("OnFailure"));
        assert_eq!(
            job.template.metadata.unwrap().labels.unwrap()["app.kubernetes.io/component"],
            "db-clean"
        );
    }

    #[test]
    fn the_cronjob_never_carries_an_image_the_gate_refused() {
        let mut spec = fixtures::barbican().spec;
        let release = spec.open_stack_release.clone();
        let installed = BarbicanStatus {
            installed_release: Some(release.clone()),
            installed_image: Some("registry/barbican:installed".into()),
            ..BarbicanStatus::default()
        };
        assert_eq!(
            admitted_image(&spec, &installed),
            Some(spec.image.reference()),
            "an admitted image runs"
        );
        // A tag naming another release while the release is unchanged.
        let other = crate::controller::barbican::release::parse(&release)
            .unwrap()
            .next();
        spec.image.tag = Some(other.to_string());
        spec.image.digest = None;
        assert_eq!(
            admitted_image(&spec, &installed).as_deref(),
            Some("registry/barbican:installed"),
            "the refused tag is not carried; the installed image keeps running"
        );
        assert_eq!(
            admitted_image(&spec, &BarbicanStatus::default()),
            None,
            "nothing installed yet: no image to run"
        );
        let c = cronjob(
            &spec,
            "kms",
            "kms-config-1",
            "registry/barbican:installed",
            false,
        );
        let pod = c.spec.job_template.spec.unwrap().template.spec.unwrap();
        assert_eq!(
            pod.containers[0].image.as_deref(),
            Some("registry/barbican:installed")
        );
    }

    #[test]
    fn a_convergence_is_under_way_until_the_requested_release_is_installed() {
        assert!(migrating(None, "2026.1"));
        assert!(migrating(Some("2025.2"), "2026.1"));
        assert!(!migrating(Some("2026.1"), "2026.1"));
    }
}
