//! Durations as Go writes them (`90s`, `1h30m`, `250ms`): the one scanner behind the sim's
//! flags and fault rules, `@every` schedules, and the fake OpenBao's TTLs. Each caller decides
//! which units it takes and whether a bare number (seconds) is allowed.

use std::time::Duration;

/// Splits `text` into `(amount, unit)` terms: `1h30m` → `[(1, "h"), (30, "m")]`, and a bare
/// number → `[(n, "")]`. `None` when it is empty, does not start with a digit, or an amount
/// does not fit.
pub fn terms(text: &str) -> Option<Vec<(u64, &str)>> {
    let mut terms = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let amount = rest[..digits].parse().ok()?;
        let after = &rest[digits..];
        let unit = after
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(after.len());
        terms.push((amount, &after[..unit]));
        rest = &after[unit..];
    }
    (!terms.is_empty()).then_some(terms)
}

/// A duration written `250ms`, `5s` or `2m` (a bare number is seconds), as the fault rules and
/// the `serve` flags take it; `key` names the setting in the error.
pub fn duration(key: &str, text: &str) -> Result<Duration, String> {
    let allowed = || format!("{key}={text}: a duration is a whole number with ms, s or m");
    match terms(text).as_deref() {
        Some([(n, "ms")]) => Ok(Duration::from_millis(*n)),
        Some([(n, "s" | "")]) => Ok(Duration::from_secs(*n)),
        Some([(n, "m")]) => Ok(Duration::from_secs(n * 60)),
        _ => Err(allowed()),
    }
}
