//! OpenStack releases and the release gate: which transitions of `spec.openStackRelease` the
//! Database step accepts before any Job runs.
//!
//! Releases come twice a year, `YYYY.1` then `YYYY.2`, and barbican's migrations only promise
//! one step at a time: `Y.1 → Y.2` or `Y.2 → (Y+1).1`. Downgrades have no migrations at all.

use crate::api::conditions::Reason;

/// A parsed release: year and half.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Release {
    /// The year, 2010 or later.
    pub year: u16,
    /// 1 or 2.
    pub minor: u8,
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.year, self.minor)
    }
}

/// Parses `YYYY.N` with an optional `-patch` suffix (`2026.1-p1`).
pub fn parse(text: &str) -> Result<Release, String> {
    let base = text.split_once('-').map_or(text, |(base, _)| base);
    let (year, minor) = base
        .split_once('.')
        .ok_or_else(|| format!("{text:?} is not a release of the form YYYY.N"))?;
    let year: u16 = year
        .parse()
        .ok()
        .filter(|y| *y >= 2010 && year.len() == 4)
        .ok_or_else(|| format!("{text:?}: the year must be four digits, 2010 or later"))?;
    let minor: u8 = match minor {
        "1" => 1,
        "2" => 2,
        _ => return Err(format!("{text:?}: the release number must be 1 or 2")),
    };
    Ok(Release { year, minor })
}

impl Release {
    /// The release after this one.
    pub fn next(self) -> Release {
        if self.minor == 1 {
            Release {
                year: self.year,
                minor: 2,
            }
        } else {
            Release {
                year: self.year.saturating_add(1),
                minor: 1,
            }
        }
    }
}

/// What the gate allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Nothing installed yet, or the release installed: no transition.
    Steady,
    /// A one-step upgrade to this release; stamp `status.targetRelease`.
    Upgrade(String),
}

/// Why the gate refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The DatabaseReady reason (also the Warning event's).
    pub reason: Reason,
    /// What is wrong and what to do.
    pub message: String,
}

fn reject(reason: Reason, message: String) -> Rejection {
    Rejection { reason, message }
}

/// The release gate: `installed` is `status.installedRelease` (empty before the first sync),
/// `requested` is `spec.openStackRelease`; `installed_image` is `status.installedImage` and
/// `image` the spec's image reference.
pub fn gate(
    installed: Option<&str>,
    requested: &str,
    installed_image: Option<&str>,
    image: &str,
) -> Result<Gate, Rejection> {
    let Some(installed) = installed.filter(|i| !i.is_empty()) else {
        return Ok(Gate::Steady);
    };
    let from = parse(installed).map_err(|e| {
        reject(
            Reason::VersionParseError,
            format!("status.installedRelease: {e}"),
        )
    })?;
    let to = parse(requested).map_err(|e| {
        reject(
            Reason::VersionParseError,
            format!("spec.openStackRelease: {e}"),
        )
    })?;
    if from == to {
        return Ok(Gate::Steady);
    }
    if to < from {
        return Err(reject(
            Reason::DowngradeNotSupported,
            format!(
                "spec.openStackRelease {to} is older than the installed {from}; barbican has no downgrade migrations"
            ),
        ));
    }
    if to != from.next() {
        return Err(reject(
            Reason::UpgradePathInvalid,
            format!(
                "spec.openStackRelease {to} skips a release: from {from} the next step is {}",
                from.next()
            ),
        ));
    }
    if installed_image == Some(image) {
        return Err(reject(
            Reason::ImageReleaseMismatch,
            format!(
                "spec.openStackRelease moved to {to} but spec.image is still {image}, the image that installed {from}; update the image with the release"
            ),
        ));
    }
    Ok(Gate::Upgrade(requested.to_string()))
}

/// Why the spec's image may not run against the installed schema, if it may not: the tag check
/// ([`tag_mismatch`]) and then the [`gate`]. What the Database step refuses, the clean-up
/// CronJob must not carry either.
pub fn refusal(
    tag: Option<&str>,
    requested: &str,
    installed: Option<&str>,
    installed_image: Option<&str>,
    image: &str,
) -> Option<Rejection> {
    if let Some(message) = tag_mismatch(tag, requested) {
        return Some(reject(Reason::ImageReleaseMismatch, message));
    }
    gate(installed, requested, installed_image, image).err()
}

/// The release a tag names (`2026.1`, `2026.1-p3`, `v2026.1`), when it names one.
pub fn tag_release(tag: &str) -> Option<Release> {
    parse(tag.trim_start_matches('v')).ok()
}

/// The earlier tag check: a tag naming another release than `requested` would run the wrong
/// barbican-manage. Digest-only images and tags that name no release pass.
pub fn tag_mismatch(tag: Option<&str>, requested: &str) -> Option<String> {
    let named = tag_release(tag?)?;
    let requested = parse(requested).ok()?;
    (named != requested).then(|| {
        format!(
            "spec.image tag {:?} names release {named}, not spec.openStackRelease {requested}",
            tag.unwrap_or_default()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_the_tag_check_then_the_gate() {
        assert!(refusal(Some("2026.1"), "2026.1", Some("2026.1"), Some("a"), "b").is_none());
        let tag = refusal(Some("2026.2"), "2026.1", Some("2026.1"), Some("a"), "b").unwrap();
        assert_eq!(tag.reason, Reason::ImageReleaseMismatch);
        let skip = refusal(None, "2026.2", Some("2025.2"), Some("a"), "b").unwrap();
        assert_eq!(skip.reason, Reason::UpgradePathInvalid);
        assert!(refusal(None, "2026.1", Some("2025.2"), Some("a"), "b").is_none());
    }

    fn reason(installed: &str, requested: &str) -> Result<Gate, Reason> {
        gate(Some(installed), requested, Some("old"), "new").map_err(|r| r.reason)
    }

    #[test]
    fn releases_parse_with_an_optional_patch_suffix() {
        assert_eq!(
            parse("2026.1").unwrap(),
            Release {
                year: 2026,
                minor: 1
            }
        );
        assert_eq!(
            parse("2026.2-p1").unwrap(),
            Release {
                year: 2026,
                minor: 2
            }
        );
        for bad in ["2026", "2026.3", "26.1", "2009.1", "abcd.1", "2026.1.1", ""] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_gate_accepts_one_step_on_the_cadence_and_rejects_everything_else() {
        let table = [
            ("2025.1", "2025.2", Ok(Gate::Upgrade("2025.2".into()))),
            ("2025.2", "2026.1", Ok(Gate::Upgrade("2026.1".into()))),
            ("2026.1", "2026.1", Ok(Gate::Steady)),
            ("2026.1-p1", "2026.1", Ok(Gate::Steady)),
            ("2025.1", "2026.1", Err(Reason::UpgradePathInvalid)),
            ("2025.1", "2026.2", Err(Reason::UpgradePathInvalid)),
            ("2025.2", "2026.2", Err(Reason::UpgradePathInvalid)),
            ("2026.1", "2025.2", Err(Reason::DowngradeNotSupported)),
            ("2026.2", "2026.1", Err(Reason::DowngradeNotSupported)),
            ("garbage", "2026.1", Err(Reason::VersionParseError)),
            ("2026.1", "2026.9", Err(Reason::VersionParseError)),
        ];
        for (installed, requested, expected) in table {
            assert_eq!(
                reason(installed, requested),
                expected,
                "{installed} → {requested}"
            );
        }
    }

    #[test]
    fn nothing_installed_is_steady_and_an_unchanged_image_is_a_mismatch() {
        assert_eq!(gate(None, "2026.1", None, "x"), Ok(Gate::Steady));
        assert_eq!(gate(Some(""), "garbage", None, "x"), Ok(Gate::Steady));
        let same = gate(
            Some("2025.2"),
            "2026.1",
            Some("repo@sha256:a"),
            "repo@sha256:a",
        );
        assert_eq!(same.unwrap_err().reason, Reason::ImageReleaseMismatch);
    }

    #[test]
    fn a_tag_naming_another_release_is_a_mismatch_and_digests_pass() {
        assert!(tag_mismatch(Some("2025.2"), "2026.1").is_some());
        assert!(tag_mismatch(Some("2026.1-p2"), "2026.1").is_none());
        assert!(tag_mismatch(Some("latest"), "2026.1").is_none());
        assert!(tag_mismatch(None, "2026.1").is_none());
    }
}
