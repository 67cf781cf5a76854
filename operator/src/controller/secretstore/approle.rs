//! The AppRole credentials ladder of a managed store, as pure decisions over the
//! `<store>-approle` Secret's stamps and the clock.
//!
//! The timer state lives only in two annotations of that Secret: when the secret ID was minted
//! and its TTL in seconds (0 = it never expires). A Secret without usable stamps is minted
//! afresh. A secret ID is re-minted proactively at two thirds of its lifetime, which leaves a
//! full third as the margin in which a failing re-mint can be retried while the pods' credential
//! is still valid; a rejected one is re-minted reactively, at most once per ten minutes.

use std::{collections::BTreeMap, time::Duration};

use jiff::{SignedDuration, Timestamp};

use crate::api::names::{SECRET_ID_MINTED_AT_ANNOTATION, SECRET_ID_TTL_SECONDS_ANNOTATION};

/// The retry cadence of every waiting or failing state, and the floor of a re-mint timer.
pub const RETRY: Duration = Duration::from_secs(30);
/// How often a credential with no TTL is revalidated.
pub const REVALIDATE: Duration = Duration::from_secs(15 * 60);
/// The least time between two reactive re-mints.
pub const REACTIVE_COOLDOWN: Duration = Duration::from_secs(10 * 60);

/// When a secret ID was minted and how long it lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// When it was minted.
    pub minted_at: Timestamp,
    /// Its TTL; zero means it never expires.
    pub ttl: Duration,
}

/// CredentialsReady's message for a secret ID that logs in: the same words whether it was just
/// minted or found working on a later pass, so a revalidation that finds nothing new changes
/// nothing in the status (and writes nothing).
pub fn logs_in_message(stamp: &Stamp) -> String {
    format!(
        "the secret ID minted at {} (TTL {} s) logs in",
        stamp.minted_at,
        stamp.ttl.as_secs()
    )
}

/// The stamp of a `<store>-approle` Secret's annotations; `None` when either is missing,
/// unparseable or negative (the Secret is then treated as unstamped and minted afresh).
pub fn stamp(annotations: &BTreeMap<String, String>) -> Option<Stamp> {
    let minted_at = annotations
        .get(SECRET_ID_MINTED_AT_ANNOTATION)?
        .parse()
        .ok()?;
    let ttl: i64 = annotations
        .get(SECRET_ID_TTL_SECONDS_ANNOTATION)?
        .parse()
        .ok()?;
    let ttl = u64::try_from(ttl).ok()?;
    Some(Stamp {
        minted_at,
        ttl: Duration::from_secs(ttl),
    })
}

/// The annotations that record `stamp` (RFC 3339 UTC, whole seconds).
pub fn annotations(stamp: &Stamp) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            SECRET_ID_MINTED_AT_ANNOTATION.to_string(),
            stamp.minted_at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        ),
        (
            SECRET_ID_TTL_SECONDS_ANNOTATION.to_string(),
            stamp.ttl.as_secs().to_string(),
        ),
    ])
}

/// The point in a secret ID's life at which it is re-minted proactively: two thirds of its
/// TTL after minting; `None` when it never expires.
pub fn remint_at(stamp: &Stamp) -> Option<Timestamp> {
    if stamp.ttl.is_zero() {
        return None;
    }
    // The TTL is the server's word: near u64::MAX seconds, doubling it first would overflow.
    let two_thirds = match stamp.ttl.checked_mul(2) {
        Some(double) => double.checked_div(3).unwrap_or_default(),
        None => stamp
            .ttl
            .checked_div(3)
            .unwrap_or_default()
            .saturating_mul(2),
    };
    let two_thirds = SignedDuration::try_from(two_thirds).ok()?;
    stamp.minted_at.checked_add(two_thirds).ok()
}

/// What the ladder does this pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// No usable credential: mint one (an initial mint, not counted as a re-mint).
    Mint,
    /// Past two thirds of the TTL: re-mint before it lapses.
    RemintProactively,
    /// Still in its time: probe it with a login.
    Probe,
}

/// The ladder's step for a Secret that has `role_id`/`secret_id` (empty when absent) and
/// `stamp`, at `now`.
pub fn step(role_id: &str, secret_id: &str, stamp: Option<&Stamp>, now: Timestamp) -> Step {
    let Some(stamp) = stamp else {
        return Step::Mint;
    };
    if role_id.is_empty() || secret_id.is_empty() {
        return Step::Mint;
    }
    match remint_at(stamp) {
        // At the point itself, not after it: a requeue lands on it exactly on a virtual clock.
        Some(at) if now >= at => Step::RemintProactively,
        _ => Step::Probe,
    }
}

/// After the server rejected the credential: re-mint now, or report InvalidCredentials while
/// the last mint is younger than the cooldown.
pub fn may_remint_reactively(stamp: &Stamp, now: Timestamp) -> bool {
    now.duration_since(stamp.minted_at)
        >= SignedDuration::try_from(REACTIVE_COOLDOWN).unwrap_or(SignedDuration::MAX)
}

/// When to come back after a successful pass: at the proactive re-mint point, never sooner
/// than the retry cadence; every 15 minutes for a credential without TTL.
pub fn requeue_after(stamp: &Stamp, now: Timestamp) -> Duration {
    match remint_at(stamp) {
        None => REVALIDATE,
        Some(at) => {
            let left = at.duration_since(now);
            Duration::try_from(left)
                .unwrap_or(Duration::ZERO)
                .max(RETRY)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn stamp_of(ttl: u64) -> Stamp {
        Stamp {
            minted_at: t("2026-01-01T00:00:00Z"),
            ttl: Duration::from_secs(ttl),
        }
    }

    #[test]
    fn a_ttl_near_the_largest_number_never_overflows() {
        for ttl in [u64::MAX, u64::MAX / 2 + 1, i64::MAX as u64] {
            let huge = stamp_of(ttl);
            // Past any timestamp jiff can hold: no re-mint point, revalidated as if unexpiring.
            assert_eq!(remint_at(&huge), None, "{ttl}");
            assert_eq!(requeue_after(&huge, t("2026-01-01T00:00:00Z")), REVALIDATE);
            assert_eq!(
                step("r", "s", Some(&huge), t("2026-01-01T00:00:00Z")),
                Step::Probe
            );
        }
        let mut annotations = annotations(&stamp_of(1));
        annotations.insert(
            SECRET_ID_TTL_SECONDS_ANNOTATION.into(),
            u64::MAX.to_string(),
        );
        assert_eq!(
            stamp(&annotations),
            None,
            "above i64::MAX reads as unstamped"
        );
    }

    #[test]
    fn stamps_round_trip_and_bad_ones_read_as_unstamped() {
        let s = stamp_of(2_592_000);
        assert_eq!(stamp(&annotations(&s)), Some(s));
        let mut bad = annotations(&s);
        bad.insert(SECRET_ID_TTL_SECONDS_ANNOTATION.into(), "-5".into());
        assert_eq!(stamp(&bad), None);
        bad.insert(SECRET_ID_TTL_SECONDS_ANNOTATION.into(), "soon".into());
        assert_eq!(stamp(&bad), None);
        let mut missing = annotations(&s);
        missing.remove(SECRET_ID_MINTED_AT_ANNOTATION);
        assert_eq!(stamp(&missing), None);
    }

    #[test]
    fn the_requeue_rides_the_two_thirds_point_floored_at_thirty_seconds() {
        let minted = t("2026-01-01T00:00:00Z");
        // TTL 0: never expires, revalidate every 15 minutes.
        assert_eq!(requeue_after(&stamp_of(0), minted), REVALIDATE);
        // TTL 60 s: the two-thirds point is 40 s after minting.
        assert_eq!(
            requeue_after(&stamp_of(60), minted),
            Duration::from_secs(40)
        );
        // …and 30 s later only 10 s are left: the floor holds at 30 s.
        let later = minted + SignedDuration::from_secs(30);
        assert_eq!(requeue_after(&stamp_of(60), later), RETRY);
        // TTL 1 h: 40 minutes.
        assert_eq!(
            requeue_after(&stamp_of(3600), minted),
            Duration::from_secs(2400)
        );
        // Past the point: the floor, not a negative wait.
        let past = minted + SignedDuration::from_secs(3000);
        assert_eq!(requeue_after(&stamp_of(3600), past), RETRY);
    }

    #[test]
    fn the_ladder_mints_reminds_or_probes() {
        let minted = t("2026-01-01T00:00:00Z");
        let s = stamp_of(3600);
        assert_eq!(step("r", "s", None, minted), Step::Mint);
        assert_eq!(step("", "s", Some(&s), minted), Step::Mint);
        assert_eq!(step("r", "", Some(&s), minted), Step::Mint);
        assert_eq!(
            step("r", "s", Some(&s), minted + SignedDuration::from_secs(2399)),
            Step::Probe
        );
        assert_eq!(
            step("r", "s", Some(&s), minted + SignedDuration::from_secs(2400)),
            Step::RemintProactively
        );
        assert_eq!(
            step(
                "r",
                "s",
                Some(&stamp_of(0)),
                minted + SignedDuration::from_hours(9999)
            ),
            Step::Probe
        );
    }

    #[test]
    fn a_reactive_remint_waits_ten_minutes_after_the_last_mint() {
        let s = stamp_of(3600);
        assert!(!may_remint_reactively(
            &s,
            s.minted_at + SignedDuration::from_secs(599)
        ));
        assert!(may_remint_reactively(
            &s,
            s.minted_at + SignedDuration::from_secs(600)
        ));
    }
}
