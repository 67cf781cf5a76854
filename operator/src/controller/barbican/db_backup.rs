//! The dump before a migration (`spec.dbBackup`): when one is due, and the `{name}-db-backup`
//! Job that makes it. Pure; the Database step runs the Job and gates db-sync on it.
//!
//! A dump is due when the installed schema is about to be migrated to another release or
//! image: not on a first install (there is nothing to keep), not when db-sync only reruns for
//! a changed config. The Job `mariadb-dump`s the database (`--single-transaction`, so barbican
//! keeps serving) into `<claim>/<name>/<UTC time>-<installed release>.sql`, written under a
//! temporary name and renamed once whole, then removes all but the newest `keep`. The
//! password reaches it as `MYSQL_PWD` from the database Secret, never on its command line.

use std::collections::BTreeMap;

use k8s_openapi::api::{
    batch::v1::{Job, JobSpec},
    core::v1::{
        Container, EnvVar, EnvVarSource, PersistentVolumeClaimVolumeSource, PodSecurityContext,
        PodSpec, PodTemplateSpec, ResourceRequirements, SecretKeySelector, Volume, VolumeMount,
    },
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::{dsn, jobs::hashed_job, pod};
use crate::api::{
    barbican::BarbicanSpec,
    database::{CredentialsMode, DatabaseTlsMode},
    db_backup::DbBackupSpec,
    names::db_backup_job_name,
};

/// Where the claim is mounted in the dump's pod.
pub const BACKUP_DIR: &str = "/backups";
/// The uid and gid the dump runs as: the `mysql` user of MariaDB's image.
pub const BACKUP_UID: i64 = 999;
/// The longest a dump may run before its Job fails.
pub const DEADLINE_SECONDS: i64 = 3600;
/// The claim's volume.
const VOLUME: &str = "backups";

/// A migration a dump is taken before: from the installed schema to the requested one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migration {
    /// `status.installedRelease`.
    pub from_release: String,
    /// `status.installedImage` (empty when an older operator recorded none).
    pub from_image: String,
    /// `spec.openStackRelease`.
    pub to_release: String,
    /// `spec.image`.
    pub to_image: String,
}

impl Migration {
    /// As the condition and the Job's environment name it.
    pub fn describe(&self) -> String {
        format!(
            "{} ({}) to {} ({})",
            self.from_release,
            if self.from_image.is_empty() {
                "image not recorded"
            } else {
                &self.from_image
            },
            self.to_release,
            self.to_image
        )
    }
}

/// The migration a dump must come before, when `spec.dbBackup` asks for dumps and a schema is
/// installed that db-sync would migrate to another release or image.
pub fn due(
    spec: &BarbicanSpec,
    installed_release: Option<&str>,
    installed_image: Option<&str>,
) -> Option<Migration> {
    spec.db_backup.as_ref()?;
    let from_release = installed_release.filter(|r| !r.is_empty())?;
    let from_image = installed_image.unwrap_or_default();
    let to_image = spec.image.reference();
    if from_release == spec.open_stack_release && from_image == to_image {
        return None;
    }
    Some(Migration {
        from_release: from_release.to_string(),
        from_image: from_image.to_string(),
        to_release: spec.open_stack_release.clone(),
        to_image,
    })
}

/// `mariadb-dump`'s TLS flags for the database's TLS block (the keypair and CA mounted where
/// the other pods have them). MariaDB's client has no check of the chain without the host
/// name, so `verify-ca` verifies both, as `verify-full` does.
pub fn tls_flags(spec: &BarbicanSpec) -> Vec<String> {
    let Some(tls) = &spec.database.tls else {
        return vec![];
    };
    let dir = dsn::TLS_DIR;
    let files = || {
        [
            format!("--ssl-ca={dir}/ca.crt"),
            format!("--ssl-cert={dir}/tls.crt"),
            format!("--ssl-key={dir}/tls.key"),
        ]
    };
    match tls.mode.unwrap_or(DatabaseTlsMode::Require) {
        DatabaseTlsMode::Disabled => vec!["--skip-ssl".into()],
        DatabaseTlsMode::Prefer | DatabaseTlsMode::Require => {
            let mut flags = vec!["--ssl".to_string()];
            flags.extend(files());
            flags.push("--skip-ssl-verify-server-cert".into());
            flags
        }
        DatabaseTlsMode::VerifyCa | DatabaseTlsMode::VerifyFull => {
            let mut flags = vec!["--ssl".to_string()];
            flags.extend(files());
            flags.push("--ssl-verify-server-cert".into());
            flags
        }
    }
}

/// The dump's shell script. Every value from the spec arrives in the environment and is
/// quoted where the script uses it; `flags` are the operator's own constants.
pub fn script(flags: &[String]) -> String {
    format!(
        r#"set -eu
umask 077
dir="{BACKUP_DIR}/$BARBICAN"
mkdir -p "$dir"
file="$dir/$(date -u +%Y%m%dT%H%M%SZ)-$FROM_RELEASE.sql"
trap 'rm -f "$file.partial"' EXIT
echo "dumping $DB_NAME before the migration from $MIGRATION"
mariadb-dump --single-transaction --routines --triggers --databases "$DB_NAME" --host="$DB_HOST" --port="$DB_PORT" --user="$DB_USER" {flags} >"$file.partial"
mv "$file.partial" "$file"
echo "dumped $DB_NAME to $file"
ls -1 "$dir" | grep '\.sql$' | sort -r | tail -n "+$((KEEP + 1))" | while read -r old; do
  rm -f -- "$dir/$old"
  echo "removed $dir/$old"
done"#,
        flags = flags.join(" ")
    )
}

fn value(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value.into()),
        value_from: None,
    }
}

fn from_secret(name: &str, secret: &str, key: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: None,
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.into(),
                key: key.into(),
                optional: None,
            }),
            ..EnvVarSource::default()
        }),
    }
}

/// The `{name}-db-backup` Job that dumps the database of the Barbican `name` before
/// `migration`, its template's hash annotated (a new migration is a new Job).
pub fn backup_job(
    spec: &BarbicanSpec,
    backup: &DbBackupSpec,
    name: &str,
    namespace: &str,
    migration: &Migration,
) -> Job {
    let database = &spec.database;
    let host = match (&database.cluster_ref, &database.host) {
        (Some(cluster), _) => format!("{}.{namespace}.svc", cluster.name),
        (None, Some(host)) => host.clone(),
        (None, None) => String::new(),
    };
    let managed_static = database.cluster_ref.is_some()
        && database.credentials_mode.unwrap_or_default() == CredentialsMode::Static;
    let user = if managed_static {
        value("DB_USER", name)
    } else {
        from_secret("DB_USER", &database.secret_ref.name, "username")
    };
    let env = vec![
        value("BARBICAN", name),
        value("MIGRATION", migration.describe()),
        value("FROM_RELEASE", migration.from_release.clone()),
        value("KEEP", backup.effective_keep().to_string()),
        value("DB_HOST", host),
        value(
            "DB_PORT",
            database.port.unwrap_or(dsn::DEFAULT_PORT).to_string(),
        ),
        value("DB_NAME", database.database.clone()),
        user,
        from_secret("MYSQL_PWD", &database.secret_ref.name, "password"),
    ];
    let mut volumes = vec![Volume {
        name: VOLUME.into(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name: backup.persistent_volume_claim.claim_name.clone(),
            read_only: None,
        }),
        ..Volume::default()
    }];
    let mut mounts = vec![VolumeMount {
        name: VOLUME.into(),
        mount_path: BACKUP_DIR.into(),
        ..VolumeMount::default()
    }];
    if let Some((volume, mount)) = pod::db_tls_volume(spec) {
        volumes.push(volume);
        mounts.push(mount);
    }
    let mut security = pod::restricted();
    security.run_as_user = Some(BACKUP_UID);
    security.run_as_group = Some(BACKUP_UID);
    let quantities = |cpu: &str, memory: &str| {
        BTreeMap::from([
            ("cpu".to_string(), Quantity(cpu.into())),
            ("memory".to_string(), Quantity(memory.into())),
        ])
    };
    let template = PodTemplateSpec {
        metadata: None,
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "db-backup".into(),
                image: Some(backup.effective_image().to_string()),
                command: Some(vec![
                    "/bin/sh".into(),
                    "-c".into(),
                    script(&tls_flags(spec)),
                ]),
                env: Some(env),
                volume_mounts: Some(mounts),
                security_context: Some(security),
                resources: Some(ResourceRequirements {
                    requests: Some(quantities("100m", "128Mi")),
                    limits: Some(quantities("1", "512Mi")),
                    ..ResourceRequirements::default()
                }),
                ..Container::default()
            }],
            volumes: Some(volumes),
            restart_policy: Some("Never".into()),
            security_context: Some(PodSecurityContext {
                fs_group: Some(BACKUP_UID),
                ..PodSecurityContext::default()
            }),
            ..PodSpec::default()
        }),
    };
    let job = JobSpec {
        backoff_limit: Some(1),
        active_deadline_seconds: Some(DEADLINE_SECONDS),
        ..JobSpec::default()
    };
    hashed_job(&db_backup_job_name(name), namespace, template, job)
}

#[cfg(test)]
mod tests;
