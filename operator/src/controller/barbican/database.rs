//! The Database step: the MariaDB cluster gate and the Database/User/Grant CRs in managed
//! mode, the release gate, and the `{name}-db-sync` Job that promotes `installedRelease`.

use std::time::Duration;

use k8s_openapi::api::{batch::v1::Job, core::v1::PersistentVolumeClaim};
use kube::api::{ApiResource, DynamicObject};
use serde_json::json;

use super::{
    db_backup,
    handoffs::ConfigSecret,
    job_metrics::{LAST_DB_SYNC_JOB_ANNOTATION, count_once},
    jobs::{self, SyncAction},
    release::{self, Gate},
    state::{State, owned_metadata},
    uwsgi,
};
use crate::{
    api::{
        barbican::BarbicanSpec,
        conditions::{BarbicanConditionType as T, Reason},
        database::CredentialsMode,
        names::{db_backup_job_name, db_sync_job_name},
    },
    controller::{
        events::Severity,
        pipeline::{Outcome, StepFuture},
        runtime::children::made_for,
        status::Report,
        status::condition_true,
        step_error::{StepError, api_error},
    },
    metrics::JobKind,
};

/// The MariaDB and db-sync waits.
pub const DATABASE_REQUEUE: Duration = Duration::from_secs(30);
/// A mariadb-operator kind.
pub fn mariadb_resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "k8s.mariadb.com".into(),
        version: "v1alpha1".into(),
        api_version: "k8s.mariadb.com/v1alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The mariadb-operator kinds a Barbican may make, with their plurals.
pub const MARIADB_KINDS: [(&str, &str); 3] = [
    ("Database", "databases"),
    ("User", "users"),
    ("Grant", "grants"),
];

/// The three CRs a managed database needs (Dynamic credentials: the Database alone; a
/// brownfield database, `host`: none).
pub fn managed_kinds(spec: &BarbicanSpec) -> Vec<(&'static str, &'static str)> {
    if spec.database.cluster_ref.is_none() {
        return vec![];
    }
    let mut kinds = vec![MARIADB_KINDS[0]];
    if spec.database.credentials_mode.unwrap_or_default() == CredentialsMode::Static {
        kinds.extend([MARIADB_KINDS[1], MARIADB_KINDS[2]]);
    }
    kinds
}

/// The pods the SQL user must serve: the HPA's ceiling when it owns the count, else the
/// replicas.
pub fn pods(spec: &BarbicanSpec) -> i32 {
    match &spec.autoscaling {
        Some(autoscaling) => autoscaling.max_replicas,
        None => spec
            .deployment
            .as_ref()
            .map_or(3, |d| d.effective_replicas()),
    }
}

/// The spec of the mariadb-operator CR `kind` for the Barbican `name`; the User's
/// `maxUserConnections` sized for the topology and held to `ceiling`, the platform's bound on
/// one tenant's share of a MariaDB server others use too.
pub fn managed_spec(
    kind: &str,
    spec: &BarbicanSpec,
    name: &str,
    ceiling: Option<i64>,
) -> serde_json::Value {
    let cluster = spec
        .database
        .cluster_ref
        .as_ref()
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let mariadb_ref = json!({"name": cluster});
    match kind {
        "Database" => json!({"mariaDbRef": mariadb_ref, "name": spec.database.database,
            "characterSet": "utf8", "collate": "utf8_general_ci"}),
        "User" => json!({"mariaDbRef": mariadb_ref,
        "passwordSecretKeyRef": {"name": spec.database.secret_ref.name, "key": "password"},
        "maxUserConnections": uwsgi::max_user_connections(
            pods(spec),
            spec.api_server.as_ref().and_then(|a| a.uwsgi.as_ref()),
        ).min(ceiling.unwrap_or(i64::MAX))}),
        _ => json!({"mariaDbRef": mariadb_ref, "privileges": ["ALL PRIVILEGES"],
            "database": spec.database.database, "table": "*", "username": name}),
    }
}

async fn wait(state: &mut State, reason: Reason, message: String) -> Result<Outcome, StepError> {
    state.report(Report::not_ready(T::DatabaseReady, reason, message));
    Ok(Outcome::Requeue(DATABASE_REQUEUE))
}

/// Reports `reason` on DatabaseReady with a Warning event (raised when the condition changes)
/// and returns the error that backs the pass off.
async fn refuse(state: &mut State, reason: Reason, message: String) -> StepError {
    let changed = state
        .condition(T::DatabaseReady.as_str())
        .is_none_or(|c| c.reason != reason.as_str() || c.message != message);
    if changed {
        state.event(Severity::Warning, reason, &message).await;
    }
    state.report(Report::not_ready(T::DatabaseReady, reason, message.clone()));
    StepError::invalid_input(message)
}

/// Provisions the managed database; `Some` when the pass has to wait.
async fn provision(state: &mut State) -> Result<Option<Outcome>, StepError> {
    let spec = state.barbican.spec.clone();
    // The kinds the spec no longer wants (the User and Grant once credentials are Dynamic,
    // all three once the database is brownfield) are not applied, so the pass sweeps them.
    let Some(cluster) = spec.database.cluster_ref.as_ref() else {
        return Ok(None); // Brownfield: the database exists already.
    };
    let mariadb = state
        .children
        .get_dynamic(&mariadb_resource("MariaDB", "mariadbs"), &cluster.name)
        .await
        .map_err(|e| api_error("reading the MariaDB", e))?;
    if !mariadb.is_some_and(|m| condition_true(&m.data, "Ready")) {
        let message = format!("MariaDB {:?} is not ready", cluster.name);
        return wait(state, Reason::ClusterNotReady, message)
            .await
            .map(Some);
    }
    let name = state.name();
    let mut pending = vec![];
    for (kind, plural) in managed_kinds(&spec) {
        let resource = mariadb_resource(kind, plural);
        let mut object = DynamicObject::new(&name, &resource).within(&state.namespace());
        object.metadata = owned_metadata(state, &name);
        // Without the common labels (as the reference writes them), but with the owner
        // labels on a target cluster: they are how teardown tells these objects are ours.
        object.metadata.labels = None;
        state.stamp(&mut object.metadata);
        let ceiling = state.env.max_user_connections;
        object.data = json!({"spec": managed_spec(kind, &spec, &name, ceiling)});
        let live = state
            .children
            .ensure_dynamic(&resource, &object)
            .await
            .map_err(|e| api_error("applying a mariadb-operator resource", e))?;
        if !condition_true(&live.data, "Ready") {
            pending.push(kind);
        }
    }
    if !pending.is_empty() {
        let message = format!("waiting for the {} to be ready", pending.join(", "));
        return wait(state, Reason::WaitingForDatabase, message)
            .await
            .map(Some);
    }
    Ok(None)
}

/// The Database step.
pub fn database(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let config_secret = state.handoffs.need::<ConfigSecret>()?.0.clone();
        if config_secret.is_empty() {
            let message =
                "no config Secret to mount yet: the secret stores do not form a valid projection"
                    .to_string();
            return wait(state, Reason::WaitingForSecretStores, message).await;
        }
        let spec = state.barbican.spec.clone();
        let requested = spec.open_stack_release.clone();
        if let Some(message) = release::tag_mismatch(spec.image.tag.as_deref(), &requested) {
            return wait(state, Reason::ImageReleaseMismatch, message).await;
        }
        if let Some(outcome) = provision(state).await? {
            return Ok(outcome);
        }
        let image = spec.image.reference();
        let installed = state.status.installed_release.clone();
        match release::gate(
            installed.as_deref(),
            &requested,
            state.status.installed_image.as_deref(),
            &image,
        ) {
            Err(rejection) => return Err(refuse(state, rejection.reason, rejection.message).await),
            Ok(Gate::Upgrade(target)) => state.status.target_release = Some(target),
            Ok(Gate::Steady) => {}
        }

        let (name, namespace) = (state.name(), state.namespace());
        let mut desired = jobs::db_sync_job(&spec, &name, &namespace, &config_secret);
        state.stamp(&mut desired.metadata);
        let job_name = db_sync_job_name(&name);
        let live = state
            .children
            .own::<Job>(&job_name)
            .await
            .map_err(|e| api_error("reading the db-sync Job", e))?;
        if let Some(job) = &live
            && jobs::state(job).finished()
        {
            count_once(state, JobKind::DbSync, LAST_DB_SYNC_JOB_ANNOTATION, job).await;
        }
        let run = Run {
            job: &job_name,
            running: (
                Reason::DBSyncInProgress,
                format!("Job {job_name} runs barbican-manage db upgrade to {requested}"),
            ),
            failed: Reason::DBSyncFailed,
        };
        let attempt = match next(state, &desired, live.as_ref(), &run).await? {
            Next::Waiting(outcome) => return Ok(outcome),
            Next::Run(attempt) => attempt,
            Next::Succeeded => {
                let promoted = state.status.installed_release.as_deref()
                    != Some(requested.as_str())
                    || state.status.installed_image.as_deref() != Some(image.as_str());
                state.status.installed_release = Some(requested.clone());
                state.status.installed_image = Some(image.clone());
                state.status.target_release = None;
                if promoted {
                    state
                        .event(
                            Severity::Normal,
                            Reason::DatabaseSynced,
                            &format!("the schema is at {requested} (image {image})"),
                        )
                        .await;
                }
                state.report(Report::ready(
                    T::DatabaseReady,
                    Reason::DatabaseSynced,
                    format!("the schema is at {requested}"),
                ));
                return Ok(Outcome::Done);
            }
        };
        // A migration of an installed schema waits for its dump (spec.dbBackup).
        if let Some(outcome) = dump_first(state).await? {
            return Ok(outcome);
        }
        start(state, desired, live.is_some(), attempt, &run).await
    })
}

/// A Job the Database step runs to completion: its name, what the condition says while it
/// runs, and the reason of its failure.
struct Run<'a> {
    job: &'a str,
    running: (Reason, String),
    failed: Reason,
}

/// What to do about a Job the step runs.
enum Next {
    /// It completed for these inputs.
    Succeeded,
    /// It runs, or its next attempt is not due yet: the pass waits with this.
    Waiting(Outcome),
    /// Run this attempt (a new Job, replacing the live one).
    Run(u32),
}

/// Where the Job `run` names stands against `desired` (the live one being `live`): a failed
/// attempt is rerun on [`jobs::retry_delay`]'s backoff, its Warning raised once per attempt.
async fn next(
    state: &mut State,
    desired: &Job,
    live: Option<&Job>,
    run: &Run<'_>,
) -> Result<Next, StepError> {
    let wanted = jobs::recorded_hash(desired).unwrap_or_default();
    let retry = |attempt: u32| attempt.saturating_add(1);
    Ok(match jobs::sync_action(live, wanted) {
        SyncAction::Wait => Next::Waiting(running(state, run)),
        SyncAction::Succeeded => Next::Succeeded,
        SyncAction::Create | SyncAction::Replace => Next::Run(1),
        SyncAction::Failed {
            message,
            attempt,
            retry_at,
        } => {
            let now = state.env.clock.now();
            match retry_at.filter(|at| *at > now) {
                // Due: the failed attempt is replaced by the next one.
                None => Next::Run(retry(attempt)),
                Some(at) => {
                    let message = format!(
                        "Job {} failed (attempt {attempt}): {message}; attempt {} runs at {at}",
                        run.job,
                        retry(attempt)
                    );
                    let _ = refuse(state, run.failed, message).await;
                    let wait = at.duration_since(now).unsigned_abs();
                    Next::Waiting(Outcome::Requeue(wait.max(Duration::from_secs(1))))
                }
            }
        }
    })
}

/// Reports the Job of `run` running.
fn running(state: &mut State, run: &Run<'_>) -> Outcome {
    let (reason, message) = run.running.clone();
    state.report(Report::not_ready(T::DatabaseReady, reason, message));
    Outcome::Requeue(DATABASE_REQUEUE)
}

/// Starts attempt `attempt` of `desired`, deleting the live Job first when `replacing`.
async fn start(
    state: &mut State,
    mut desired: Job,
    replacing: bool,
    attempt: u32,
    run: &Run<'_>,
) -> Result<Outcome, StepError> {
    if replacing {
        state
            .children
            .delete::<Job>(run.job)
            .await
            .map_err(|e| api_error("replacing a Job of the database", e))?;
    }
    jobs::set_attempt(&mut desired, attempt);
    // Our old Job may still be being deleted: `create` returns it, and the next pass
    // creates the new one.
    state
        .children
        .create(&desired)
        .await
        .map_err(|e| api_error("creating a Job of the database", e))?;
    Ok(running(state, run))
}

/// With `spec.dbBackup`, before db-sync migrates an installed schema to another release or
/// image: the dump of the database (the `{name}-db-backup` Job, see [`db_backup`]); `Some`
/// while the migration waits for it.
async fn dump_first(state: &mut State) -> Result<Option<Outcome>, StepError> {
    let spec = state.barbican.spec.clone();
    let (Some(backup), Some(migration)) = (
        spec.db_backup.as_ref(),
        db_backup::due(
            &spec,
            state.status.installed_release.as_deref(),
            state.status.installed_image.as_deref(),
        ),
    ) else {
        return Ok(None);
    };
    let claim = &backup.persistent_volume_claim.claim_name;
    let volume = state
        .children
        .get::<PersistentVolumeClaim>(claim)
        .await
        .map_err(|e| api_error("reading the PersistentVolumeClaim of the dumps", e))?;
    if volume.is_none() {
        let message = format!(
            "PersistentVolumeClaim {claim:?} named by spec.dbBackup does not exist; the migration from {} waits for a dump onto it",
            migration.describe()
        );
        return wait(state, Reason::WaitingForBackupVolume, message)
            .await
            .map(Some);
    }
    let (name, namespace) = (state.name(), state.namespace());
    let mut desired = db_backup::backup_job(&spec, backup, &name, &namespace, &migration);
    state.stamp(&mut desired.metadata);
    let job_name = db_backup_job_name(&name);
    let live = state
        .children
        .own::<Job>(&job_name)
        .await
        .map_err(|e| api_error("reading the db-backup Job", e))?;
    let run = Run {
        job: &job_name,
        running: (
            Reason::DBBackupInProgress,
            format!(
                "Job {job_name} dumps the database onto {claim:?} before the migration from {}",
                migration.describe()
            ),
        ),
        failed: Reason::DBBackupFailed,
    };
    match next(state, &desired, live.as_ref(), &run).await? {
        Next::Succeeded => Ok(None),
        Next::Waiting(outcome) => Ok(Some(outcome)),
        Next::Run(attempt) => start(state, desired, live.is_some(), attempt, &run)
            .await
            .map(Some),
    }
}

/// Deletes the managed database CRs this Barbican made; `true` while any of them was still
/// live, judged before the delete (a delete sets deletionTimestamp, so a check after it would
/// always find nothing). Returns the kinds still live in `left`.
///
/// Only what the operator made for this Barbican is deleted (see [`made_for`]): a brownfield
/// Barbican (`spec.database.host`) made none, and a Database, User or Grant that only shares
/// its name belongs to someone else.
pub async fn tear_down(state: &State, left: &mut Vec<&'static str>) -> Result<bool, StepError> {
    if state.barbican.spec.database.host.is_some() {
        return Ok(false);
    }
    let mut live = false;
    for (kind, plural) in MARIADB_KINDS {
        let resource = mariadb_resource(kind, plural);
        let api = state.children.dynamic(&resource);
        match api.get_opt(&state.name()).await {
            Ok(Some(object))
                if made_for(state.children.cluster(), &object, state.barbican.as_ref()) =>
            {
                live = true;
                left.push(kind);
            }
            Ok(_) => continue,
            // The kind is not served: nothing was provisioned.
            Err(kube::Error::Api(s)) if s.code == 404 => continue,
            Err(e) => return Err(api_error("reading a mariadb-operator resource", e)),
        }
        state
            .children
            .delete_dynamic(&resource, &state.name())
            .await
            .map_err(|e| api_error("deleting a mariadb-operator resource", e))?;
    }
    Ok(live)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures;

    #[test]
    fn the_user_is_sized_from_the_topology() {
        let mut spec = fixtures::barbican().spec;
        let user = managed_spec("User", &spec, "kms", None);
        assert_eq!(user["maxUserConnections"], 10, "(3+1)·2·1+2");
        assert_eq!(
            user["passwordSecretKeyRef"],
            json!({"name": "barbican-db", "key": "password"})
        );
        spec.autoscaling = Some(crate::api::autoscaling::AutoscalingSpec {
            min_replicas: None,
            max_replicas: 9,
            target_cpu_utilization: Some(80),
            target_memory_utilization: None,
        });
        assert_eq!(
            managed_spec("User", &spec, "kms", None)["maxUserConnections"],
            22,
            "(9+1)·2·1+2"
        );
        // The platform's ceiling holds whatever the topology asks for.
        assert_eq!(
            managed_spec("User", &spec, "kms", Some(16))["maxUserConnections"],
            16
        );
        assert_eq!(
            managed_spec("User", &spec, "kms", Some(100))["maxUserConnections"],
            22
        );
        let grant = managed_spec("Grant", &spec, "kms", None);
        assert_eq!(grant["privileges"], json!(["ALL PRIVILEGES"]));
        assert_eq!(grant["username"], "kms");
        assert_eq!(grant["table"], "*");
        assert!(grant.get("host").is_none());
        let database = managed_spec("Database", &spec, "kms", None);
        assert_eq!(database["characterSet"], "utf8");
        assert_eq!(database["collate"], "utf8_general_ci");
    }

    #[test]
    fn dynamic_credentials_need_no_user_or_grant() {
        let mut spec = fixtures::barbican().spec;
        assert_eq!(managed_kinds(&spec).len(), 3);
        spec.database.credentials_mode = Some(CredentialsMode::Dynamic);
        assert_eq!(managed_kinds(&spec), [("Database", "databases")]);
        spec.database.cluster_ref = None;
        spec.database.host = Some("db.example.com".into());
        assert!(
            managed_kinds(&spec).is_empty(),
            "a brownfield database needs none"
        );
    }
}
