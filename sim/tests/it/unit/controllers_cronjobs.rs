//! Tests of `barbican_sim::controllers::cronjobs`.

use jiff::{SignedDuration, Timestamp, tz::TimeZone};

use barbican_sim::controllers::cronjobs::*;

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn descriptors_fields_and_every_schedule_as_kubernetes_does() {
    let t0 = at("2026-01-01T00:00:00Z");
    let utc = TimeZone::UTC;
    for (schedule, after, next) in [
        ("@daily", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"),
        ("@hourly", "2026-01-01T10:30:00Z", "2026-01-01T11:00:00Z"),
        (
            "*/15 * * * *",
            "2026-01-01T10:31:00Z",
            "2026-01-01T10:45:00Z",
        ),
        (
            "0 3 * * SUN",
            "2026-01-01T00:00:00Z",
            "2026-01-04T03:00:00Z",
        ),
        ("@every 90s", "2026-01-01T00:00:00Z", "2026-01-01T00:01:30Z"),
        ("@every 1h", "2026-01-01T00:30:00Z", "2026-01-01T01:00:00Z"),
    ] {
        let parsed = Schedule::parse(schedule).unwrap();
        assert_eq!(
            parsed.next_after(at(after), t0, &utc),
            Some(at(next)),
            "{schedule} after {after}"
        );
    }
    let weekly = Schedule::parse("@weekly").unwrap();
    let first = weekly.next_after(t0, t0, &utc).unwrap();
    assert_eq!(
        weekly
            .next_after(first, t0, &utc)
            .unwrap()
            .duration_since(first),
        SignedDuration::from_hours(7 * 24)
    );
}

#[test]
fn schedules_follow_the_time_zone_asked_for() {
    let berlin = TimeZone::get("Europe/Berlin").unwrap();
    let daily = Schedule::parse("0 2 * * *").unwrap();
    let t0 = at("2026-01-01T00:00:00Z");
    // 02:00 in Berlin in winter is 01:00 UTC.
    assert_eq!(
        daily.next_after(t0, t0, &berlin),
        Some(at("2026-01-01T01:00:00Z"))
    );
}

#[test]
fn the_latest_missed_run_is_found() {
    let t0 = at("2026-01-01T00:00:00Z");
    let utc = TimeZone::UTC;
    let hourly = Schedule::parse("@hourly").unwrap();
    assert_eq!(
        hourly.latest_between(t0, at("2026-01-01T05:30:00Z"), t0, &utc),
        Some(at("2026-01-01T05:00:00Z"))
    );
    assert_eq!(
        hourly.latest_between(
            at("2026-01-01T05:00:00Z"),
            at("2026-01-01T05:30:00Z"),
            t0,
            &utc
        ),
        None
    );
    let every = Schedule::parse("@every 10m").unwrap();
    assert_eq!(
        every.latest_between(t0, at("2026-01-01T00:25:00Z"), t0, &utc),
        Some(at("2026-01-01T00:20:00Z"))
    );
}

#[test]
fn bad_schedules_are_refused() {
    for bad in [
        "",
        "* * * *",
        "@every nonsense",
        "61 * * * *",
        "@fortnightly",
    ] {
        assert!(Schedule::parse(bad).is_err(), "{bad}");
    }
}
