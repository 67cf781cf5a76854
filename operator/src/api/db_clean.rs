//! The recurring `barbican-manage db clean` CronJob.
//!
//! Barbican only soft-deletes, so without the clean-up its tables grow for ever. The block is
//! resolved at reconcile time, never defaulted into the stored CR, so a field left unset keeps
//! tracking the operator's default across upgrades.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Days a soft-deleted row survives when `retentionDays` is unset (Barbican's own default).
pub const DEFAULT_RETENTION_DAYS: i32 = 90;
/// Cron schedule when `schedule` is unset.
pub const DEFAULT_SCHEDULE: &str = "1 0 * * *";
/// Whether the expired-secrets pass runs when unset: a deliberate deviation from the CLI's
/// false, because an expired secret is otherwise never purged.
pub const DEFAULT_SOFT_DELETE_EXPIRED_SECRETS: bool = true;
/// Whether the unassociated-projects pass runs when unset.
pub const DEFAULT_CLEAN_UNASSOCIATED_PROJECTS: bool = false;

/// The longest retention (a hundred years): past it the number says nothing more.
pub const MAX_RETENTION_DAYS: i32 = 36500;

/// Knobs of the db-clean CronJob. A missing block resolves like an empty one.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DbCleanSpec {
    /// Days a soft-deleted row survives before it is hard-deleted (`--min-days`); 90 when
    /// unset, at least 1 so the sweep never races rows an in-flight request just wrote.
    /// Lowering it applies retroactively at the next firing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_RETENTION_DAYS))]
    pub retention_days: Option<i32>,
    /// Cron expression (Kubernetes CronJob grammar, descriptors such as `@daily` included);
    /// `1 0 * * *` when unset. Checked by the validating webhook, not by a pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 256))]
    pub schedule: Option<String>,
    /// Adds `--soft-delete-expired-secrets`; true when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soft_delete_expired_secrets: Option<bool>,
    /// Adds `--clean-unassociated-projects`, which also drops those projects' quotas; false
    /// when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean_unassociated_projects: Option<bool>,
    /// Pauses the CronJob without deleting it; `DBCleanReady` stays True under its own reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
}

/// A [`DbCleanSpec`] with every default applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectiveDbClean {
    /// `--min-days`.
    pub retention_days: i32,
    /// The CronJob schedule.
    pub schedule: String,
    /// Whether `--soft-delete-expired-secrets` is passed.
    pub soft_delete_expired_secrets: bool,
    /// Whether `--clean-unassociated-projects` is passed.
    pub clean_unassociated_projects: bool,
    /// Whether the user paused the CronJob.
    pub suspend: bool,
}

impl DbCleanSpec {
    /// Resolves a possibly missing block against the operator defaults.
    pub fn effective(spec: Option<&DbCleanSpec>) -> EffectiveDbClean {
        let empty = DbCleanSpec::default();
        let spec = spec.unwrap_or(&empty);
        EffectiveDbClean {
            retention_days: spec.retention_days.unwrap_or(DEFAULT_RETENTION_DAYS),
            schedule: spec
                .schedule
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| DEFAULT_SCHEDULE.to_string()),
            soft_delete_expired_secrets: spec
                .soft_delete_expired_secrets
                .unwrap_or(DEFAULT_SOFT_DELETE_EXPIRED_SECRETS),
            clean_unassociated_projects: spec
                .clean_unassociated_projects
                .unwrap_or(DEFAULT_CLEAN_UNASSOCIATED_PROJECTS),
            suspend: spec.suspend.unwrap_or(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_block_resolves_like_an_empty_one() {
        let missing = DbCleanSpec::effective(None);
        let empty = DbCleanSpec::effective(Some(&DbCleanSpec::default()));
        assert_eq!(missing, empty);
        assert_eq!(missing.retention_days, 90);
        assert_eq!(missing.schedule, "1 0 * * *");
        assert!(missing.soft_delete_expired_secrets);
        assert!(!missing.clean_unassociated_projects);
        assert!(!missing.suspend);
    }

    #[test]
    fn set_fields_win_over_defaults() {
        let spec = DbCleanSpec {
            retention_days: Some(7),
            schedule: Some("@daily".into()),
            soft_delete_expired_secrets: Some(false),
            clean_unassociated_projects: Some(true),
            suspend: Some(true),
        };
        let effective = DbCleanSpec::effective(Some(&spec));
        assert_eq!(effective.retention_days, 7);
        assert_eq!(effective.schedule, "@daily");
        assert!(!effective.soft_delete_expired_secrets);
        assert!(effective.clean_unassociated_projects);
        assert!(effective.suspend);
    }
}
