//! The Kubernetes CronJob schedule grammar: five fields or a descriptor.
//!
//! Kubernetes parses schedules with robfig/cron's standard parser: minute, hour, day of month,
//! month, day of week; month and weekday names; `@yearly`, `@annually`, `@monthly`, `@weekly`,
//! `@daily`, `@midnight`, `@hourly` and `@every <duration>`. No seconds, no years, no Quartz
//! extensions (`L`, `W`, `#`), and no `TZ=` prefix (the CronJob's timeZone field does that).
//! Field ranges are checked by croner with seconds and years disallowed.

use croner::parser::{CronParser, Seconds, Year};

/// Why a schedule is refused.
pub fn check(schedule: &str) -> Result<(), String> {
    let schedule = schedule.trim();
    if schedule.is_empty() {
        return Err("must not be empty".into());
    }
    if schedule.starts_with("TZ=") || schedule.starts_with("CRON_TZ=") {
        return Err("must not carry a TZ= prefix: Kubernetes takes the time zone from the CronJob's timeZone field".into());
    }
    if let Some(descriptor) = schedule.strip_prefix('@') {
        return match descriptor.split_once(' ') {
            Some(("every", duration)) => check_duration(duration.trim()),
            None if matches!(
                descriptor.to_ascii_lowercase().as_str(),
                "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly"
            ) =>
            {
                Ok(())
            }
            _ => Err(format!(
                "unknown descriptor @{descriptor}, allowed: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @every <duration>"
            )),
        };
    }
    let fields: Vec<&str> = schedule.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected 5 fields (minute hour day-of-month month day-of-week), found {}",
            fields.len()
        ));
    }
    for field in &fields {
        for atom in field.split([',', '-', '/']) {
            let is_name = atom.len() == 3 && atom.chars().all(|c| c.is_ascii_alphabetic());
            if !(atom == "*"
                || atom == "?"
                || is_name
                || (!atom.is_empty() && atom.chars().all(|c| c.is_ascii_digit())))
            {
                return Err(format!(
                    "{atom:?} in field {field:?} is not part of the Kubernetes cron grammar"
                ));
            }
        }
    }
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(schedule)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A Go duration as `@every` takes it: one or more `<number><unit>`, units ns, us, µs, ms, s,
/// m, h; positive.
fn check_duration(duration: &str) -> Result<(), String> {
    let invalid = || {
        Err(format!(
            "@every takes a duration such as 1h30m or 90s, not {duration:?}"
        ))
    };
    let mut rest = duration;
    let mut total = 0f64;
    if rest.is_empty() {
        return invalid();
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let Ok(value) = rest[..digits].parse::<f64>() else {
            return invalid();
        };
        rest = &rest[digits..];
        let unit = ["ns", "us", "µs", "ms", "s", "m", "h"]
            .into_iter()
            .filter(|u| rest.starts_with(u))
            .max_by_key(|u| u.len());
        let Some(unit) = unit else { return invalid() };
        rest = &rest[unit.len()..];
        total += value;
    }
    if total <= 0.0 {
        return invalid();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_schedules_are_accepted() {
        for schedule in [
            "1 0 * * *",
            "*/15 * * * *",
            "0 3 * * MON-FRI",
            "0 0 1 JAN,JUL *",
            "30 2 1-15/2 * ?",
            "@daily",
            "@midnight",
            "@hourly",
            "@Yearly",
            "@every 1h30m",
            "@every 90s",
        ] {
            assert_eq!(check(schedule), Ok(()), "{schedule}");
        }
    }

    #[test]
    fn other_grammars_are_refused_with_a_reason() {
        for (schedule, reason) in [
            ("", "must not be empty"),
            ("0 0 * * * *", "expected 5 fields"),
            ("* * *", "expected 5 fields"),
            ("0 0 * * * 2030", "expected 5 fields"),
            ("0 0 L * *", "not part of the Kubernetes cron grammar"),
            ("0 0 15W * *", "not part of the Kubernetes cron grammar"),
            ("0 0 * * 5#3", "not part of the Kubernetes cron grammar"),
            ("61 0 * * *", ""),
            ("0 25 * * *", ""),
            ("TZ=UTC 0 0 * * *", "timeZone"),
            ("@fortnightly", "unknown descriptor"),
            ("@every", "unknown descriptor"),
            ("@every soon", "@every takes a duration"),
            ("@every 0s", "@every takes a duration"),
        ] {
            let error = check(schedule).expect_err(schedule);
            assert!(error.contains(reason), "{schedule}: {error}");
        }
    }
}
