//! A dump of the database before a new release (or image) migrates its schema.
//!
//! Downgrades are refused, and barbican's migrations run forward only: a migration that goes
//! wrong has no way back but the data as it was before it. With the block, every db-sync that
//! migrates the installed schema to another release or image waits for a `mariadb-dump` of
//! the database onto a PersistentVolumeClaim, and the newest dumps are kept.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::refs::DNS1123_SUBDOMAIN_PATTERN;

/// How many dumps are kept when `keep` is unset.
pub const DEFAULT_KEEP: i32 = 3;
/// The most dumps `keep` may ask for.
pub const MAX_KEEP: i32 = 100;
/// The image the dump runs in when `image` is unset: MariaDB's, whose `mariadb-dump` speaks
/// to every supported server.
pub const DEFAULT_IMAGE: &str = "docker.io/library/mariadb:11.4";
/// An image reference: no whitespace, no control character.
pub const IMAGE_PATTERN: &str = r"^[^\s]+$";

/// The dump before each migration. Present: a db-sync that migrates the installed schema to
/// another release or image runs only after the Job `{name}-db-backup` dumped the database
/// into `{claim}/{name}/`; absent (the default): migrations run without one.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DbBackupSpec {
    /// Where the dumps go: a PersistentVolumeClaim in the Barbican's namespace, which must
    /// exist (the operator provisions no storage). Each Barbican writes under a directory of
    /// its own name there, so several may share one claim.
    pub persistent_volume_claim: ClaimRefSpec,
    /// How many dumps are kept, the newest; 3 when unset, at most 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub keep: Option<i32>,
    /// The image the dump runs in; it needs `mariadb-dump` and a POSIX shell.
    /// `docker.io/library/mariadb:11.4` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512), regex(pattern = IMAGE_PATTERN))]
    pub image: Option<String>,
}

/// A PersistentVolumeClaim by name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRefSpec {
    /// The claim's name, in the Barbican's namespace.
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS1123_SUBDOMAIN_PATTERN))]
    pub claim_name: String,
}

impl DbBackupSpec {
    /// The number of dumps kept.
    pub fn effective_keep(&self) -> i32 {
        self.keep.unwrap_or(DEFAULT_KEEP).clamp(1, MAX_KEEP)
    }

    /// The image the dump runs in.
    pub fn effective_image(&self) -> &str {
        self.image
            .as_deref()
            .filter(|i| !i.is_empty())
            .unwrap_or(DEFAULT_IMAGE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_apply_and_a_hostile_keep_is_bounded() {
        let spec = DbBackupSpec::default();
        assert_eq!(spec.effective_keep(), 3);
        assert_eq!(spec.effective_image(), DEFAULT_IMAGE);
        for (keep, effective) in [(0, 1), (-5, 1), (7, 7), (i32::MAX, 100)] {
            let spec = DbBackupSpec {
                keep: Some(keep),
                ..DbBackupSpec::default()
            };
            assert_eq!(spec.effective_keep(), effective, "{keep}");
        }
    }
}
