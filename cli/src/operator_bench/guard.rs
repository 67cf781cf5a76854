//! `barbican-sim bench --guard <baseline>`: CI's check that the operator's cost has not
//! regressed. The baseline (`ci/bench-baseline.json`) names the shape to run and the figures
//! measured at it; a run fails on what is deterministic enough to hold on any machine (a
//! steady-state write or non-watch read, writes per Barbican above the documented floor plus
//! one, peak RSS more than a quarter above the baseline's) and prints the wall-clock figures
//! (time to Ready, CPU) against the baseline without failing on them: they follow the machine.

use serde::Deserialize;

use std::{path::PathBuf, time::Duration};

use super::{Foreign, Options, Report};

/// Runs the shape `baseline` names with `operator` and holds the report to it: the report and
/// the verdict are printed (the report also to `json`), and the failures are the error.
pub async fn run(
    baseline: &std::path::Path,
    operator: PathBuf,
    timeout: Duration,
    json: Option<PathBuf>,
    steady_log: Option<PathBuf>,
) -> Result<(), String> {
    let base = Baseline::read(baseline)?;
    let options = Options {
        barbicans: base.barbicans,
        steady: Duration::from_secs(base.steady_seconds),
        timeout,
        operator,
        steady_log,
        converging_log: None,
        foreign: base.foreign(),
    };
    let report = super::run(&options).await?;
    let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    if let Some(path) = json {
        std::fs::write(&path, &text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    println!("{}", report.summary());
    let verdict = check(&report, &base);
    println!("against {} ({}):", baseline.display(), base.measured);
    for figure in &verdict.figures {
        println!("  {figure}");
    }
    if verdict.failures.is_empty() {
        println!("the bench guard passes");
        Ok(())
    } else {
        Err(format!(
            "the bench guard fails:\n  {}",
            verdict.failures.join("\n  ")
        ))
    }
}

/// What `ci/bench-baseline.json` holds.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The shape: Barbicans, each with a managed store.
    pub barbicans: usize,
    /// The steady-state window, in seconds.
    pub steady_seconds: u64,
    /// The foreign objects beside them.
    pub foreign_secrets: usize,
    /// The size of each foreign Secret's payload, in bytes.
    pub foreign_secret_bytes: usize,
    /// Foreign Deployments.
    pub foreign_deployments: usize,
    /// The writes per Barbican a convergence needs, as docs/performance.md explains them.
    pub writes_per_barbican_floor: f64,
    /// The GETs per Barbican a convergence sent at this shape (of every resource; the floor
    /// is 0, see [`super::READ_FLOORS`]).
    pub gets_per_barbican: f64,
    /// The operator's peak RSS measured at this shape, in MiB.
    pub peak_rss_mib: f64,
    /// Time to Ready measured at this shape, in seconds (printed, not checked).
    pub ready_seconds: f64,
    /// The operator's CPU seconds measured at this shape (printed, not checked).
    pub cpu_seconds: f64,
    /// Where and when the figures were measured, and why they last changed.
    pub measured: String,
}

/// How far above the baseline's peak RSS a run may go.
pub const RSS_MARGIN: f64 = 1.25;

/// How many writes per Barbican above the floor a run may send.
pub const WRITES_MARGIN: f64 = 1.0;

/// How many GETs per Barbican above the baseline's a convergence may send: a read added to
/// every pass shows here (a pass runs many times per Barbican while it converges) even when
/// the steady window, shorter than the periodic requeue, holds no pass.
pub const GETS_MARGIN: f64 = 1.0;

impl Baseline {
    /// Reads the baseline at `path`.
    pub fn read(path: &std::path::Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The foreign objects of the shape.
    pub fn foreign(&self) -> Foreign {
        Foreign {
            secrets: self.foreign_secrets,
            secret_bytes: self.foreign_secret_bytes,
            deployments: self.foreign_deployments,
        }
    }
}

/// What the guard found: the failures, and every figure against the baseline.
#[derive(Debug, Default, PartialEq)]
pub struct Verdict {
    /// Why the run fails; empty when it passes.
    pub failures: Vec<String>,
    /// Each figure against the baseline, one line each.
    pub figures: Vec<String>,
}

/// Holds `report` to `baseline`.
pub fn check(report: &Report, baseline: &Baseline) -> Verdict {
    let mut verdict = Verdict::default();
    if report.steady_writes > 0 {
        verdict.failures.push(format!(
            "{} write(s) in the steady state, which has none: {}",
            report.steady_writes,
            requests_of(report, super::is_write)
        ));
    }
    if report.steady_non_watch_reads > 0 {
        verdict.failures.push(format!(
            "{} non-watch read(s) in the steady state, where every read is the watch caches': {}",
            report.steady_non_watch_reads,
            requests_of(report, |k| k.starts_with("get ") || k.starts_with("list "))
        ));
    }
    let writes_limit = baseline.writes_per_barbican_floor + WRITES_MARGIN;
    if report.writes_per_barbican > writes_limit {
        verdict.failures.push(format!(
            "{:.2} writes per Barbican, above the floor {:.2} plus {WRITES_MARGIN} (docs/performance.md)",
            report.writes_per_barbican, baseline.writes_per_barbican_floor
        ));
    }
    let gets = gets_per_barbican(report);
    let gets_limit = baseline.gets_per_barbican + GETS_MARGIN;
    if gets > gets_limit {
        verdict.failures.push(format!(
            "{gets:.2} GETs per Barbican while converging, above the baseline's {:.2} plus {GETS_MARGIN}: {}",
            baseline.gets_per_barbican,
            report
                .reads_per_barbican
                .iter()
                .filter(|(k, n)| k.starts_with("get ") && **n >= 0.05)
                .map(|(k, n)| format!("{n:.1} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let rss_limit = baseline.peak_rss_mib * RSS_MARGIN;
    if report.operator_peak_rss_mib > rss_limit {
        verdict.failures.push(format!(
            "peak RSS {:.1} MiB, more than {:.0}% above the baseline's {:.1} MiB",
            report.operator_peak_rss_mib,
            (RSS_MARGIN - 1.0) * 100.0,
            baseline.peak_rss_mib
        ));
    }
    let ratio = |now: f64, then: f64| if then > 0.0 { now / then } else { 0.0 };
    verdict.figures = vec![
        format!(
            "writes per Barbican {:.2} (floor {:.2}, fails above {writes_limit:.2})",
            report.writes_per_barbican, baseline.writes_per_barbican_floor
        ),
        format!(
            "GETs per Barbican while converging {gets:.2} (baseline {:.2}, fails above {gets_limit:.2})",
            baseline.gets_per_barbican
        ),
        format!(
            "peak RSS {:.1} MiB ({:.2}× the baseline's {:.1}, fails above {rss_limit:.1})",
            report.operator_peak_rss_mib,
            ratio(report.operator_peak_rss_mib, baseline.peak_rss_mib),
            baseline.peak_rss_mib
        ),
        format!(
            "Ready in {:.1} s ({:.2}× the baseline's {:.1} s; not checked: wall clock)",
            report.converge_seconds,
            ratio(report.converge_seconds, baseline.ready_seconds),
            baseline.ready_seconds
        ),
        format!(
            "operator CPU {:.1} s ({:.2}× the baseline's {:.1} s; not checked: wall clock)",
            report.operator_cpu_seconds,
            ratio(report.operator_cpu_seconds, baseline.cpu_seconds),
            baseline.cpu_seconds
        ),
        format!(
            "steady state: {} writes, {} non-watch reads (fails above 0)",
            report.steady_writes, report.steady_non_watch_reads
        ),
    ];
    verdict
}

/// The GETs per Barbican of a convergence, every resource's.
pub fn gets_per_barbican(report: &Report) -> f64 {
    report
        .reads_per_barbican
        .iter()
        .filter(|(k, _)| k.starts_with("get "))
        .map(|(_, n)| n)
        .sum()
}

/// The steady-state requests `keep` selects, as `verb resource ×n`.
fn requests_of(report: &Report, keep: impl Fn(&str) -> bool) -> String {
    report
        .steady_requests
        .iter()
        .filter(|(k, _)| keep(k))
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn baseline() -> Baseline {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ci/bench-baseline.json");
        Baseline::read(&path).unwrap()
    }

    /// A run at the baseline's figures.
    fn report(base: &Baseline) -> Report {
        Report {
            barbicans: base.barbicans,
            foreign: base.foreign(),
            converge_seconds: base.ready_seconds,
            convergence_requests: BTreeMap::new(),
            steady_seconds: base.steady_seconds as f64,
            steady_requests: BTreeMap::from([("watch apps/deployments".to_string(), 1)]),
            writes_per_barbican: base.writes_per_barbican_floor,
            minimum_writes_per_barbican: 14.0,
            writes_above_minimum_per_barbican: BTreeMap::new(),
            reads_per_barbican: BTreeMap::from([(
                "get deployments.apps".to_string(),
                base.gets_per_barbican,
            )]),
            read_floors: BTreeMap::new(),
            steady_writes: 0,
            steady_non_watch_reads: 0,
            convergence_watch_endings: BTreeMap::new(),
            steady_watch_endings: BTreeMap::new(),
            operator_counted_writes: 0,
            operator_peak_rss_mib: base.peak_rss_mib,
            operator_cpu_seconds: base.cpu_seconds,
        }
    }

    #[test]
    fn the_committed_baseline_reads_and_a_run_at_it_passes() {
        let base = baseline();
        assert_eq!(base.barbicans, 200, "the shape CI runs");
        let verdict = check(&report(&base), &base);
        assert_eq!(verdict.failures, Vec::<String>::new());
        assert_eq!(verdict.figures.len(), 6);
    }

    /// What a per-pass GET reintroduced into the operator does to a run: a read in the steady
    /// state, named.
    #[test]
    fn a_per_pass_get_in_the_steady_state_fails_the_guard() {
        let base = baseline();
        let mut run = report(&base);
        run.steady_requests
            .insert("get barbican.openstack.c5c3.io/barbicans".into(), 3);
        run.steady_non_watch_reads = 3;
        let verdict = check(&run, &base);
        assert_eq!(verdict.failures.len(), 1, "{verdict:?}");
        assert!(
            verdict.failures[0].contains("get barbican.openstack.c5c3.io/barbicans ×3"),
            "{verdict:?}"
        );
    }

    /// The same GET while converging, where every Barbican has many passes: measured with a
    /// GET added to `cache::current` (every pass), 14.0 GETs of barbicans per Barbican.
    #[test]
    fn a_per_pass_get_while_converging_fails_the_guard() {
        let base = baseline();
        let mut run = report(&base);
        run.reads_per_barbican
            .insert("get barbicans.barbican.openstack.c5c3.io".into(), 14.0);
        let verdict = check(&run, &base);
        assert_eq!(verdict.failures.len(), 1, "{verdict:?}");
        assert!(
            verdict.failures[0].contains("14.0 get barbicans.barbican.openstack.c5c3.io"),
            "{verdict:?}"
        );
    }

    #[test]
    fn a_steady_write_fails_the_guard() {
        let base = baseline();
        let mut run = report(&base);
        run.steady_requests
            .insert("patch apps/deployments".into(), 1);
        run.steady_writes = 1;
        let verdict = check(&run, &base);
        assert_eq!(verdict.failures.len(), 1, "{verdict:?}");
        assert!(verdict.failures[0].contains("patch apps/deployments ×1"));
    }

    #[test]
    fn writes_fail_above_the_floor_plus_one_and_memory_a_quarter_above_the_baseline() {
        let base = baseline();
        let mut run = report(&base);
        run.writes_per_barbican = base.writes_per_barbican_floor + 0.9;
        run.operator_peak_rss_mib = base.peak_rss_mib * 1.2;
        assert_eq!(check(&run, &base).failures, Vec::<String>::new());
        run.writes_per_barbican = base.writes_per_barbican_floor + 1.1;
        run.operator_peak_rss_mib = base.peak_rss_mib * 1.3;
        let failures = check(&run, &base).failures;
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(failures[0].contains("writes per Barbican"), "{failures:?}");
        assert!(failures[1].contains("peak RSS"), "{failures:?}");
    }

    #[test]
    fn wall_clock_figures_are_printed_against_the_baseline_but_never_fail() {
        let base = baseline();
        let mut run = report(&base);
        run.converge_seconds = base.ready_seconds * 3.0;
        run.operator_cpu_seconds = base.cpu_seconds * 2.0;
        let verdict = check(&run, &base);
        assert_eq!(verdict.failures, Vec::<String>::new());
        assert!(
            verdict
                .figures
                .iter()
                .any(|f| f.contains("Ready in") && f.contains("3.00×"))
        );
        assert!(
            verdict
                .figures
                .iter()
                .any(|f| f.contains("CPU") && f.contains("2.00×"))
        );
    }

    /// Reads per Barbican come from the operator's own counter, every answer counted.
    #[test]
    fn reads_per_barbican_are_the_counted_reads_by_verb_and_resource() {
        let page = "barbican_operator_kube_requests_total{code=\"200\",resource=\"deployments.apps\",verb=\"get\"} 30\n\
barbican_operator_kube_requests_total{code=\"404\",resource=\"deployments.apps\",verb=\"get\"} 10\n\
barbican_operator_kube_requests_total{code=\"200\",resource=\"secrets\",verb=\"list\"} 2\n\
barbican_operator_kube_requests_total{code=\"200\",resource=\"secrets\",verb=\"patch\"} 9\n";
        let reads = super::super::counted_reads_per_barbican(page, 20.0);
        assert_eq!(
            reads,
            BTreeMap::from([
                ("get deployments.apps".to_string(), 2.0),
                ("list secrets".to_string(), 0.1),
            ])
        );
    }
}
