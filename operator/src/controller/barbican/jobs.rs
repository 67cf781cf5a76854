//! The Jobs the operator runs: the `{name}-db-sync` migration and the pods of the
//! `{name}-db-clean` CronJob, with what both share (the config mount, the database
//! credentials, the restricted container), and the pure reading of a Job's state.
//!
//! When a finished db-sync Job is replaced: its pod template is hashed into the annotation
//! `cobaltcore.c5c3.io/pod-spec-hash`. A finished Job whose hash differs from the template the
//! pass would write (a new image, a renamed config Secret, a changed credential source) is
//! deleted and recreated under the same name; a finished Job with the same hash is the answer
//! for those inputs. A failed Job with the same hash is rerun on a backoff (see
//! [`retry_delay`]): a migration that failed on a transient database outage must not block
//! every later rollout until a human deletes the Job. Each attempt is a Job of its own, counted
//! once in the db-sync metrics; the attempt number rides on the Job
//! ([`DB_SYNC_ATTEMPT_ANNOTATION`]), so a restarted operator continues the schedule.

use std::{collections::BTreeMap, time::Duration};

use jiff::Timestamp;
use k8s_openapi::api::{
    batch::v1::{Job, JobSpec},
    core::v1::{Container, EnvVar, PodSpec, PodTemplateSpec, Volume},
};
use sha2::{Digest, Sha256};

use super::{pod, projection::Projection};
use crate::{
    api::{barbican::BarbicanSpec, names::db_connection_secret_name},
    render::secrets::{DATABASE_CONNECTION_ENV, hex},
};

/// The annotation holding the hash of a Job's pod template.
pub const POD_SPEC_HASH_ANNOTATION: &str = "cobaltcore.c5c3.io/pod-spec-hash";
/// db-sync retries before the Job fails.
pub const DB_SYNC_BACKOFF_LIMIT: i32 = 4;
/// The annotation on a db-sync Job numbering its attempt for one pod template (1 for the
/// first Job of new inputs).
pub const DB_SYNC_ATTEMPT_ANNOTATION: &str = "barbican.c5c3.io/db-sync-attempt";
/// How long after the first failed attempt the second runs; each later wait doubles.
pub const DB_SYNC_RETRY_FIRST: Duration = Duration::from_secs(60);
/// The longest wait between two attempts.
pub const DB_SYNC_RETRY_CAP: Duration = Duration::from_secs(30 * 60);

/// How long after attempt `attempt` failed the next one runs: 1 minute doubling to 30.
pub fn retry_delay(attempt: u32) -> Duration {
    let doublings = attempt.saturating_sub(1).min(5);
    DB_SYNC_RETRY_FIRST
        .saturating_mul(1u32 << doublings)
        .min(DB_SYNC_RETRY_CAP)
}

/// The attempt a live Job records (a Job without a readable number is the first).
pub fn attempt(job: &Job) -> u32 {
    job.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(DB_SYNC_ATTEMPT_ANNOTATION))
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(1)
}

/// Numbers `job` as attempt `attempt`.
pub fn set_attempt(job: &mut Job, attempt: u32) {
    job.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(DB_SYNC_ATTEMPT_ANNOTATION.into(), attempt.to_string());
}

/// Where a Job stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobState {
    /// Still running (or not started).
    Running,
    /// Complete at this time.
    Complete(Option<Timestamp>),
    /// Failed at this time, with the condition's message.
    Failed(Option<Timestamp>, String),
}

impl JobState {
    /// Whether the Job has finished.
    pub fn finished(&self) -> bool {
        !matches!(self, JobState::Running)
    }
}

/// A Job's state from its conditions; when both Failed and Complete are True, Failed wins.
pub fn state(job: &Job) -> JobState {
    let conditions = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let find = |type_: &str| {
        conditions
            .iter()
            .find(|c| c.type_ == type_ && c.status == "True")
    };
    if let Some(failed) = find("Failed") {
        return JobState::Failed(
            failed.last_transition_time.as_ref().map(|t| t.0),
            failed.message.clone().unwrap_or_default(),
        );
    }
    if let Some(complete) = find("Complete") {
        return JobState::Complete(complete.last_transition_time.as_ref().map(|t| t.0));
    }
    JobState::Running
}

/// How long a finished Job ran: its terminal condition's time minus its creation.
pub fn duration_seconds(job: &Job) -> Option<f64> {
    let finished = match state(job) {
        JobState::Complete(at) | JobState::Failed(at, _) => at?,
        JobState::Running => return None,
    };
    let created = job.metadata.creation_timestamp.as_ref()?.0;
    Some(finished.duration_since(created).as_secs_f64().max(0.0))
}

/// The hash of a pod template: SHA-256 of its JSON.
pub fn pod_spec_hash(template: &PodTemplateSpec) -> String {
    let json = serde_json::to_vec(template).unwrap_or_default();
    hex(&Sha256::digest(json))
}

/// What the operator keeps of a Job it read (see
/// [`crate::controller::runtime::held::Held::trimmed`]): the steps decide on a live Job's
/// metadata (its recorded hash and attempt, its owner, its creation) and its status, never on
/// its spec, whose pod template is most of its size.
pub fn as_read(job: &mut Job) {
    job.spec = None;
}

/// The hash recorded on a live Job.
pub fn recorded_hash(job: &Job) -> Option<&str> {
    job.metadata
        .annotations
        .as_ref()?
        .get(POD_SPEC_HASH_ANNOTATION)
        .map(String::as_str)
}

/// What a Job container shares with the others: the image, the config mount (plus the
/// database TLS keypair), the DSN from the derived Secret, the restricted security context.
pub fn container(
    name: &str,
    command: Vec<String>,
    spec: &BarbicanSpec,
    barbican: &str,
    config_secret: &str,
) -> (Container, Vec<Volume>) {
    let inputs = pod::Inputs {
        name: barbican.into(),
        config_secret: config_secret.into(),
        projection: Projection::default(),
        ..pod::Inputs::default()
    };
    let (volumes, mounts) = pod::volumes(spec, &inputs);
    let container = Container {
        name: name.into(),
        image: Some(spec.image.reference()),
        command: Some(command),
        env: Some(vec![EnvVar {
            name: DATABASE_CONNECTION_ENV.into(),
            value: None,
            value_from: Some(k8s_openapi::api::core::v1::EnvVarSource {
                secret_key_ref: Some(k8s_openapi::api::core::v1::SecretKeySelector {
                    name: db_connection_secret_name(barbican),
                    key: crate::api::names::CONNECTION_KEY.into(),
                    optional: None,
                }),
                ..Default::default()
            }),
        }]),
        security_context: Some(pod::restricted()),
        volume_mounts: Some(mounts),
        ..Container::default()
    };
    (container, volumes)
}

/// The db-sync pod template: `barbican-manage db upgrade`, no `--config-file` (barbican finds
/// barbican.conf on its search path, where the config Secret is mounted).
pub fn db_sync_template(
    spec: &BarbicanSpec,
    barbican: &str,
    config_secret: &str,
) -> PodTemplateSpec {
    let (container, volumes) = container(
        "db-sync",
        vec!["barbican-manage".into(), "db".into(), "upgrade".into()],
        spec,
        barbican,
        config_secret,
    );
    PodTemplateSpec {
        metadata: None,
        spec: Some(PodSpec {
            containers: vec![container],
            volumes: Some(volumes),
            restart_policy: Some("Never".into()),
            ..PodSpec::default()
        }),
    }
}

/// The db-sync Job (no labels, no TTL), its template's hash annotated.
pub fn db_sync_job(
    spec: &BarbicanSpec,
    barbican: &str,
    namespace: &str,
    config_secret: &str,
) -> Job {
    let template = db_sync_template(spec, barbican, config_secret);
    let job = JobSpec {
        backoff_limit: Some(DB_SYNC_BACKOFF_LIMIT),
        ..JobSpec::default()
    };
    hashed_job(
        &crate::api::names::db_sync_job_name(barbican),
        namespace,
        template,
        job,
    )
}

/// The Job `name` in `namespace` running `template` as `job` says (its other fields), the
/// template's hash annotated ([`POD_SPEC_HASH_ANNOTATION`]): what [`sync_action`] compares.
pub fn hashed_job(name: &str, namespace: &str, template: PodTemplateSpec, job: JobSpec) -> Job {
    Job {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            annotations: Some(BTreeMap::from([(
                POD_SPEC_HASH_ANNOTATION.to_string(),
                pod_spec_hash(&template),
            )])),
            ..Default::default()
        },
        spec: Some(JobSpec { template, ..job }),
        status: None,
    }
}

/// What to do about the db-sync Job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncAction {
    /// None exists: create it.
    Create,
    /// A finished Job ran other inputs: delete it and create the new one.
    Replace,
    /// It runs.
    Wait,
    /// It failed for these inputs: attempt `attempt` with the condition's `message`; the next
    /// attempt is due at `retry_at` (`None`: the failure has no time, so it is due now).
    Failed {
        /// The Job condition's message.
        message: String,
        /// Which attempt failed.
        attempt: u32,
        /// When the next attempt is due.
        retry_at: Option<Timestamp>,
    },
    /// It completed for these inputs.
    Succeeded,
}

/// The decision for the live Job (if any) against the template hash this pass wants.
pub fn sync_action(live: Option<&Job>, wanted_hash: &str) -> SyncAction {
    let Some(job) = live else {
        return SyncAction::Create;
    };
    let state = state(job);
    let same = recorded_hash(job) == Some(wanted_hash);
    match state {
        _ if state.finished() && !same => SyncAction::Replace,
        JobState::Running => SyncAction::Wait,
        JobState::Failed(at, message) => {
            let attempt = attempt(job);
            let failed_at = at.or(job.metadata.creation_timestamp.as_ref().map(|t| t.0));
            let retry_at = failed_at.and_then(|t| {
                let delay = jiff::SignedDuration::try_from(retry_delay(attempt)).ok()?;
                t.checked_add(delay).ok()
            });
            SyncAction::Failed {
                message,
                attempt,
                retry_at,
            }
        }
        JobState::Complete(_) => SyncAction::Succeeded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures;
    use k8s_openapi::{
        api::batch::v1::{JobCondition, JobStatus},
        apimachinery::pkg::apis::meta::v1::Time,
    };

    fn job(hash: &str, conditions: &[(&str, &str)]) -> Job {
        let mut job = db_sync_job(&fixtures::barbican().spec, "kms", "ns", "kms-config-1");
        job.metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert(POD_SPEC_HASH_ANNOTATION.into(), hash.into());
        job.status = Some(JobStatus {
            conditions: Some(
                conditions
                    .iter()
                    .map(|(t, s)| JobCondition {
                        type_: t.to_string(),
                        status: s.to_string(),
                        last_transition_time: Some(Time("2026-01-01T00:01:00Z".parse().unwrap())),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        });
        job
    }

    #[test]
    fn the_db_sync_job_runs_the_upgrade_without_a_config_file() {
        let j = db_sync_job(&fixtures::barbican().spec, "kms", "ns", "kms-config-1");
        assert_eq!(j.metadata.name.as_deref(), Some("kms-db-sync"));
        assert!(j.metadata.labels.is_none());
        let spec = j.spec.as_ref().unwrap();
        assert_eq!(spec.backoff_limit, Some(4));
        assert!(spec.ttl_seconds_after_finished.is_none());
        let pod = spec.template.spec.as_ref().unwrap();
        assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
        let c = &pod.containers[0];
        assert_eq!(
            c.command.as_ref().unwrap(),
            &["barbican-manage", "db", "upgrade"]
        );
        assert_eq!(c.env.as_ref().unwrap()[0].name, "OS_DATABASE__CONNECTION");
        assert_eq!(
            c.volume_mounts.as_ref().unwrap()[0].mount_path,
            "/etc/barbican"
        );
        let hash = recorded_hash(&j).unwrap();
        assert_eq!(hash, pod_spec_hash(&spec.template));
        let other = db_sync_job(&fixtures::barbican().spec, "kms", "ns", "kms-config-2");
        assert_ne!(
            recorded_hash(&other),
            Some(hash),
            "a new config reruns the Job"
        );
    }

    #[test]
    fn the_rerun_decision_follows_state_and_hash() {
        assert_eq!(sync_action(None, "h"), SyncAction::Create);
        assert_eq!(sync_action(Some(&job("h", &[])), "h"), SyncAction::Wait);
        assert_eq!(
            sync_action(Some(&job("old", &[])), "h"),
            SyncAction::Wait,
            "never cut a running migration"
        );
        assert_eq!(
            sync_action(Some(&job("h", &[("Complete", "True")])), "h"),
            SyncAction::Succeeded
        );
        assert_eq!(
            sync_action(Some(&job("old", &[("Complete", "True")])), "h"),
            SyncAction::Replace
        );
        assert_eq!(
            sync_action(Some(&job("old", &[("Failed", "True")])), "h"),
            SyncAction::Replace
        );
        assert!(
            matches!(
                sync_action(
                    Some(&job("h", &[("Failed", "True"), ("Complete", "True")])),
                    "h"
                ),
                SyncAction::Failed { .. }
            ),
            "Failed wins"
        );
    }

    #[test]
    fn a_failed_attempt_is_retried_on_a_doubling_backoff() {
        let minutes: Vec<u64> = (1..=8).map(|n| retry_delay(n).as_secs() / 60).collect();
        assert_eq!(minutes, [1, 2, 4, 8, 16, 30, 30, 30]);
        assert_eq!(retry_delay(u32::MAX), DB_SYNC_RETRY_CAP);
        assert_eq!(retry_delay(0), DB_SYNC_RETRY_FIRST);

        let mut failed = job("h", &[("Failed", "True")]);
        assert_eq!(
            sync_action(Some(&failed), "h"),
            SyncAction::Failed {
                message: String::new(),
                attempt: 1,
                retry_at: Some("2026-01-01T00:02:00Z".parse().unwrap()),
            },
            "the first retry is a minute after the failure"
        );
        set_attempt(&mut failed, 3);
        assert!(matches!(
            sync_action(Some(&failed), "h"),
            SyncAction::Failed { attempt: 3, retry_at: Some(t), .. }
                if t == "2026-01-01T00:05:00Z".parse::<Timestamp>().unwrap()
        ));
        failed
            .metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert(DB_SYNC_ATTEMPT_ANNOTATION.into(), "x\u{7}".into());
        assert_eq!(
            attempt(&failed),
            1,
            "an unreadable number is the first attempt"
        );
    }

    #[test]
    fn a_job_as_held_decides_as_the_job_read_whole() {
        let mut retried = job("h", &[("Failed", "True")]);
        set_attempt(&mut retried, 3);
        for whole in [
            job("h", &[]),
            job("h", &[("Complete", "True")]),
            job("h", &[("Failed", "True")]),
            job("other", &[("Complete", "True")]),
            retried,
        ] {
            let mut held = whole.clone();
            as_read(&mut held);
            assert!(held.spec.is_none(), "the pod template is not kept");
            for wanted in ["h", "other"] {
                assert_eq!(
                    sync_action(Some(&held), wanted),
                    sync_action(Some(&whole), wanted)
                );
            }
            assert_eq!(attempt(&held), attempt(&whole));
            assert_eq!(duration_seconds(&held), duration_seconds(&whole));
            assert_eq!(recorded_hash(&held), recorded_hash(&whole));
        }
    }

    #[test]
    fn duration_is_the_terminal_time_minus_creation() {
        let mut j = job("h", &[("Complete", "True")]);
        j.metadata.creation_timestamp = Some(Time("2026-01-01T00:00:30Z".parse().unwrap()));
        assert_eq!(duration_seconds(&j), Some(30.0));
        assert_eq!(duration_seconds(&job("h", &[])), None);
    }
}
