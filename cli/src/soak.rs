//! `barbican-sim soak --seeds K`: runs [`barbican_features::soak::run_seed`] for each seed and
//! prints one line per seed, every violation with its seed, and a summary. With `--edits`, the
//! edit-sequence check ([`barbican_features::edits`]) instead.

use std::{path::Path, time::Duration};

use barbican_features::soak::{Options, run_seed};

/// Runs the seeds one after another; an error when any violation was found.
pub async fn run(
    seeds: std::ops::Range<u64>,
    faults_for: Duration,
    verbose: bool,
    json: Option<&Path>,
) -> Result<(), String> {
    let options = Options {
        faults_for,
        ..Options::default()
    };
    let (mut reports, mut violations) = (Vec::new(), 0);
    let started = std::time::Instant::now();
    for seed in seeds.clone() {
        let report = run_seed(seed, &options).await?;
        println!(
            "seed {seed}: {} actions, {} violation(s), {}, {}s of virtual time in {:.1}s",
            report.schedule.len(),
            report.violations.len(),
            report
                .converged_after
                .map_or("did not converge".to_string(), |s| format!(
                    "Ready again at +{s}s"
                )),
            report.virtual_seconds,
            report.wall.as_secs_f64()
        );
        if verbose {
            for line in &report.schedule {
                println!("    {line}");
            }
        }
        for v in &report.violations {
            println!("  VIOLATION {v}");
        }
        violations += report.violations.len();
        reports.push(report.to_json());
    }
    println!(
        "soak: {} seed(s) from {}, {violations} violation(s), {:.1}s",
        seeds.end - seeds.start,
        seeds.start,
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&reports).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    if violations > 0 {
        return Err(format!("{violations} invariant violation(s)"));
    }
    Ok(())
}

/// The edit-sequence check over `seeds`: a summary line, and for each sequence that differs
/// its seed, the differences and the (shrunk) sequence as a scenario. `batch` sequences share
/// a cluster; `parallel` batches run at once.
pub async fn edits(
    seeds: std::ops::Range<u64>,
    steps: usize,
    batch: usize,
    parallel: usize,
    shrink: bool,
) -> Result<(), String> {
    let started = std::time::Instant::now();
    // Progress goes to stderr: a run of thousands of sequences takes an hour, and whether it
    // is shrinking a finding or still running must be visible while it runs.
    let mut tell = |progress: barbican_features::edits::Progress| match progress {
        barbican_features::edits::Progress::Ran {
            done,
            total,
            differing,
            not_compared,
        } => eprintln!(
            "soak --edits: {done}/{total} sequence(s), {differing} differing, {not_compared} not compared, {:.0}s",
            started.elapsed().as_secs_f64()
        ),
        barbican_features::edits::Progress::Shrinking { seed, differences } => {
            eprintln!("soak --edits: seed {seed} differs; shrinking it. As found:");
            for difference in differences {
                eprintln!("  {difference}");
            }
        }
    };
    let report =
        barbican_features::edits::check(seeds.clone(), steps, batch, parallel, shrink, &mut tell)
            .await?;
    for finding in &report.findings {
        println!(
            "seed {}: the children after {} version(s) differ from a fresh install:",
            finding.seed,
            finding.versions.len()
        );
        for difference in &finding.differences {
            println!("  {difference}");
        }
        println!(
            "as a scenario (Background: Given a simulated cluster with the operator running):\n{}",
            barbican_features::edits::scenario(finding)
        );
    }
    for (seed, why) in &report.not_installable {
        println!("seed {seed}: not compared: {why}");
    }
    println!(
        "soak --edits: {} sequence(s) of {steps} edit(s) from seed {}, {} differing, {} not compared, {:.1}s",
        report.sequences,
        seeds.start,
        report.findings.len(),
        report.not_installable.len(),
        report.wall.as_secs_f64()
    );
    if report.findings.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} sequence(s) differ from a fresh install",
            report.findings.len()
        ))
    }
}
