//! The API container's uWSGI command line and the database connection budget it implies.

use super::release::{Release, parse};
use crate::api::api_server::{DEFAULT_UWSGI_PROCESSES, DEFAULT_UWSGI_THREADS, UwsgiSpec};

/// The API port.
pub const PORT: u16 = 9311;

/// Where the API pods mount the TLS Secret's `tls.crt` and `tls.key` (`spec.tls`).
pub const TLS_DIR: &str = "/etc/barbican-api-tls";

/// The listener flag and its value: `--http :9311`, or with TLS `--https :9311,<crt>,<key>`
/// (uWSGI's HTTP router serves both; keep-alive and the rest apply alike).
pub fn listener(tls: bool) -> [String; 2] {
    if tls {
        [
            "--https".into(),
            format!(":{PORT},{TLS_DIR}/tls.crt,{TLS_DIR}/tls.key"),
        ]
    } else {
        ["--http".into(), format!(":{PORT}")]
    }
}

/// uWSGI's access-log line.
pub const LOG_FORMAT: &str =
    "%(method) %(uri) => generated %(rsize) bytes in %(msecs) msecs (%(proto) %(status))";

/// The module uWSGI loads (barbican 21, 2025.2, and later).
pub const WSGI_MODULE: &str = "barbican.wsgi.api:application";

/// What uWSGI evaluates for barbican 20 (2025.1), which has no `barbican.wsgi` package (the
/// module line fails there with `No module named 'barbican.wsgi'`): the same application,
/// built by the function its `barbican-wsgi-api` script calls.
pub const WSGI_EVAL_2025_1: &str =
    "from barbican.api import app; application = app.get_api_wsgi_script()";

/// The first release whose barbican ships `barbican.wsgi.api`.
const FIRST_WSGI_MODULE: Release = Release {
    year: 2025,
    minor: 2,
};

/// How uWSGI finds barbican's application in `release`: `--module` (the reference's line) from
/// 2025.2, `--eval` before. A release that does not parse (admission refuses those) gets the
/// module.
pub fn wsgi_entry(release: &str) -> [String; 2] {
    match parse(release) {
        Ok(r) if r < FIRST_WSGI_MODULE => ["--eval".into(), WSGI_EVAL_2025_1.into()],
        _ => ["--module".into(), WSGI_MODULE.into()],
    }
}

/// `processes` and `threads` as the command uses them: the spec's, or the defaults (2 and 1)
/// when unset or below 1.
pub fn workers(spec: Option<&UwsgiSpec>) -> (i32, i32) {
    let pick = |value: Option<i32>, default: i32| value.filter(|v| *v >= 1).unwrap_or(default);
    (
        pick(spec.and_then(|s| s.processes), DEFAULT_UWSGI_PROCESSES),
        pick(spec.and_then(|s| s.threads), DEFAULT_UWSGI_THREADS),
    )
}

/// The container's `command` (not `args`), in the reference's order: HTTP on 9311 (HTTPS with
/// `tls`, see [`listener`]), keep-alive (on unless explicitly false, with its timeout when
/// set), logging, the WSGI entry of `release` ([`wsgi_entry`]), the process model, and
/// `--harakiri` last when set. No `--pyargv`, no `--config-file`: barbican finds its
/// configuration under `/etc/barbican`.
pub fn command(spec: Option<&UwsgiSpec>, release: &str, tls: bool) -> Vec<String> {
    let mut command: Vec<String> = vec!["uwsgi".into()];
    command.extend(listener(tls));
    if spec.and_then(|s| s.http_keep_alive) != Some(false) {
        command.push("--http-keepalive".into());
        if let Some(timeout) = spec
            .and_then(|s| s.http_keep_alive_timeout)
            .filter(|t| *t > 0)
        {
            command.extend(["--http-keepalive-timeout".into(), timeout.to_string()]);
        }
    }
    command.extend([
        "--log-master".into(),
        "--log-format".into(),
        LOG_FORMAT.into(),
    ]);
    command.extend(wsgi_entry(release));
    command.extend(["--master".into(), "--lazy-apps".into(), "--need-app".into()]);
    let (processes, threads) = workers(spec);
    command.extend([
        "--processes".into(),
        processes.to_string(),
        "--threads".into(),
        threads.to_string(),
    ]);
    if let Some(harakiri) = spec.and_then(|s| s.harakiri).filter(|h| *h > 0) {
        command.extend(["--harakiri".into(), harakiri.to_string()]);
    }
    command
}

/// The SQL user's `max_user_connections`: every worker thread holds a connection once its app
/// has loaded, across every pod plus one surging during a rollout, and two spare for
/// db-sync and an operator's session: `(pods + 1) × processes × threads + 2`.
pub fn max_user_connections(pods: i32, spec: Option<&UwsgiSpec>) -> i64 {
    let (processes, threads) = workers(spec);
    // Every factor is the CR's: saturating, so a hostile spec caps rather than overflows.
    i64::from(pods.max(0))
        .saturating_add(1)
        .saturating_mul(i64::from(processes))
        .saturating_mul(i64::from(threads))
        .saturating_add(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(spec: Option<&UwsgiSpec>) -> String {
        command(spec, "2025.2", false).join(" ")
    }

    #[test]
    fn barbican_of_2025_1_is_loaded_by_eval_and_later_releases_by_the_module() {
        let entry = |release: &str| wsgi_entry(release).join(" ");
        assert_eq!(entry("2025.1"), format!("--eval {WSGI_EVAL_2025_1}"));
        for release in ["2025.2", "2026.1", "2026.2", "2027.1-p1", "not-a-release"] {
            assert_eq!(
                entry(release),
                format!("--module {WSGI_MODULE}"),
                "{release}"
            );
        }
        let line = command(None, "2025.1", false);
        let at = line.iter().position(|w| w == "--eval").unwrap();
        assert_eq!(
            line[at + 1],
            WSGI_EVAL_2025_1,
            "one word: the shell never sees it"
        );
        assert!(!line.iter().any(|w| w == "--module"));
    }

    #[test]
    fn connections_saturate_instead_of_overflowing_on_a_hostile_spec() {
        let huge = UwsgiSpec {
            processes: Some(i32::MAX),
            threads: Some(i32::MAX),
            ..UwsgiSpec::default()
        };
        assert_eq!(max_user_connections(i32::MAX, Some(&huge)), i64::MAX);
        assert_eq!(max_user_connections(3, None), 10, "(3+1)·2·1+2");
    }

    #[test]
    fn the_default_command_is_the_references() {
        assert_eq!(
            joined(None),
            format!(
                "uwsgi --http :9311 --http-keepalive --log-master --log-format {LOG_FORMAT} \
                 --module barbican.wsgi.api:application --master --lazy-apps --need-app \
                 --processes 2 --threads 1"
            )
        );
    }

    #[test]
    fn every_knob_lands_in_its_place() {
        let spec = UwsgiSpec {
            processes: Some(4),
            threads: Some(2),
            http_keep_alive: Some(true),
            harakiri: Some(20),
            http_keep_alive_timeout: Some(30),
        };
        let line = command(Some(&spec), "2025.2", false);
        let at = |flag: &str| line.iter().position(|t| t == flag).unwrap();
        assert_eq!(line[at("--http-keepalive-timeout") + 1], "30");
        assert_eq!(at("--http-keepalive-timeout"), at("--http-keepalive") + 1);
        assert_eq!(line[at("--processes") + 1], "4");
        assert_eq!(line[at("--threads") + 1], "2");
        assert_eq!(
            &line[line.len() - 2..],
            ["--harakiri", "20"],
            "harakiri comes last"
        );
        assert!(!line.iter().any(|t| t == "--pyargv" || t == "--config-file"));
    }

    #[test]
    fn with_tls_the_router_serves_https_from_the_mounted_pair_and_nothing_else_changes() {
        let plain = command(None, "2025.2", false);
        let tls = command(None, "2025.2", true);
        assert_eq!(
            tls[1..3],
            [
                "--https".to_string(),
                ":9311,/etc/barbican-api-tls/tls.crt,/etc/barbican-api-tls/tls.key".to_string()
            ]
        );
        assert!(!tls.iter().any(|w| w == "--http"));
        assert_eq!(
            tls[3..],
            plain[3..],
            "keep-alive and the rest as without TLS"
        );
    }

    #[test]
    fn keep_alive_off_drops_both_flags_and_low_values_fall_back() {
        let spec = UwsgiSpec {
            processes: Some(0),
            threads: Some(-1),
            http_keep_alive: Some(false),
            harakiri: None,
            http_keep_alive_timeout: Some(30),
        };
        let line = joined(Some(&spec));
        assert!(!line.contains("keepalive"), "{line}");
        assert!(line.ends_with("--processes 2 --threads 1"), "{line}");
    }

    #[test]
    fn the_connection_budget_covers_every_worker_and_a_surge() {
        assert_eq!(max_user_connections(3, None), 4 * 2 + 2);
        let spec = UwsgiSpec {
            processes: Some(4),
            threads: Some(2),
            ..UwsgiSpec::default()
        };
        assert_eq!(max_user_connections(3, Some(&spec)), 4 * 4 * 2 + 2);
        assert_eq!(max_user_connections(0, Some(&spec)), 4 * 2 + 2);
    }
}
