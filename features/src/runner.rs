//! What the scenario runner decides around cucumber: which scenarios run (tags, a name
//! fragment), what a failed one prints (see [`crate::report`]), and what each one leaves behind
//! for CI (a JUnit file per feature) and for the timings benchmark.
//!
//! Scenarios tagged `@explained-failure` fail on purpose, to show the failure output: they run
//! only when a tag expression asks for them.

use std::{
    path::{Path, PathBuf},
    sync::{Mutex, OnceLock},
    time::{Duration, Instant},
};

use cucumber::{
    World as _,
    event::ScenarioFinished,
    gherkin::{self, tagexpr::TagOperation},
    tag::Ext as _,
    writer::Stats as _,
};
use futures::future::LocalBoxFuture;

use crate::world::BarbicanWorld;

/// The tag of the scenarios that fail on purpose.
pub const EXPLAINED_FAILURE: &str = "explained-failure";

/// Which scenarios run.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// A cucumber tag expression (`@secretstore and not @slow`).
    pub tags: Option<TagOperation>,
    /// A fragment of the scenario's name.
    pub name: Option<String>,
}

impl Selection {
    /// From `--tags <expr>` / `--name <text>`, else the `FEATURES_TAGS` / `FEATURES_SCENARIO`
    /// environment variables.
    pub fn from(args: &[String], env: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let value = |flag: &str, var: &str| {
            args.iter()
                .position(|a| a == flag)
                .and_then(|i| args.get(i + 1).cloned())
                .or_else(|| env(var))
                .filter(|v| !v.is_empty())
        };
        let tags = value("--tags", "FEATURES_TAGS")
            .map(|t| {
                t.parse::<TagOperation>()
                    .map_err(|e| format!("--tags {t:?} is not a tag expression: {e}"))
            })
            .transpose()?;
        Ok(Self {
            tags,
            name: value("--name", "FEATURES_SCENARIO"),
        })
    }

    /// Whether `scenario` runs: its tags (with its feature's and rule's) satisfy the
    /// expression, or, without one, it is not an explained failure; and its name contains
    /// the fragment.
    pub fn selects(
        &self,
        feature: &gherkin::Feature,
        rule: Option<&gherkin::Rule>,
        scenario: &gherkin::Scenario,
    ) -> bool {
        let tags: Vec<&String> = feature
            .tags
            .iter()
            .chain(rule.into_iter().flat_map(|r| &r.tags))
            .chain(&scenario.tags)
            .collect();
        let tagged = match &self.tags {
            Some(expression) => expression.eval(tags.iter().map(|t| t.as_str())),
            None => !tags.iter().any(|t| *t == EXPLAINED_FAILURE),
        };
        let named = self
            .name
            .as_ref()
            .is_none_or(|n| scenario.name.contains(n.as_str()));
        tagged && named
    }
}

impl Selection {
    /// This selection without the scenarios tagged `tag`.
    pub fn excluding(mut self, tag: &str) -> Self {
        let not = |t: &str| TagOperation::Not(Box::new(TagOperation::Tag(t.to_string())));
        self.tags = Some(match self.tags.take() {
            Some(tags) => TagOperation::And(Box::new(tags), Box::new(not(tag))),
            None => TagOperation::And(Box::new(not(EXPLAINED_FAILURE)), Box::new(not(tag))),
        });
        self
    }

    /// This selection narrowed to the scenarios tagged `tag`.
    pub fn requiring(mut self, tag: &str) -> Self {
        let tag = TagOperation::Tag(tag.to_string());
        self.tags = Some(match self.tags.take() {
            Some(tags) => TagOperation::And(Box::new(tags), Box::new(tag)),
            None => TagOperation::And(
                Box::new(TagOperation::Not(Box::new(TagOperation::Tag(
                    EXPLAINED_FAILURE.to_string(),
                )))),
                Box::new(tag),
            ),
        });
        self
    }
}

impl Selection {
    /// Whether any scenario of the feature file at `path` is selected (an unreadable file
    /// counts as selected, so that cucumber reports why).
    pub fn selects_any_of(&self, path: &Path) -> bool {
        let Ok(feature) = gherkin::Feature::parse_path(path, gherkin::GherkinEnv::default()) else {
            return true;
        };
        feature
            .scenarios
            .iter()
            .any(|s| self.selects(&feature, None, s))
            || feature.rules.iter().any(|r| {
                r.scenarios
                    .iter()
                    .any(|s| self.selects(&feature, Some(r), s))
            })
    }
}

/// The feature files, `features/*.feature`, in name order.
pub fn feature_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("features/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "feature"))
        .collect();
    files.sort();
    files
}

/// The environment variable that runs one shard of the feature files: `k/n` keeps every
/// n-th file starting at the k-th (1-based), so n processes, each on a cluster of its own,
/// run all of them between them.
pub const SHARD_VAR: &str = "FEATURES_SHARD";

/// The files of shard `spec` (`k/n`, `1 <= k <= n`); the error names what is allowed.
pub fn shard<'a>(files: &'a [PathBuf], spec: &str) -> Result<Vec<&'a PathBuf>, String> {
    let parsed = spec.split_once('/').and_then(|(k, n)| {
        Some((
            k.trim().parse::<usize>().ok()?,
            n.trim().parse::<usize>().ok()?,
        ))
    });
    match parsed {
        Some((k, n)) if (1..=n).contains(&k) => Ok(files
            .iter()
            .enumerate()
            .filter(|(i, _)| i % n == k - 1)
            .map(|(_, f)| f)
            .collect()),
        _ => Err(format!(
            "{SHARD_VAR}={spec:?}: expected k/n with 1 <= k <= n, for example 1/2"
        )),
    }
}

/// A feature file's test name: its file stem.
pub fn test_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Runs the `selection` of the files' scenarios in one run ([`run`]), at most `concurrency`
/// at a time across all of them, leaving a JUnit file per feature in `$FEATURES_JUNIT_DIR` and
/// printing the timings line; returns whether anything failed.
///
/// One run, not one per file: with a run per file, a file's last and longest scenario held
/// the next file back while the other lanes were idle (the @real-barbican files took 505 s
/// that way, one lane mostly waiting on a Job's backoff).
pub fn run_files(files: &[&PathBuf], selection: &Selection, concurrency: usize) -> bool {
    let started = Instant::now();
    // Each file is parsed once to see whether the selection takes any of it.
    let files: Vec<&PathBuf> = files
        .iter()
        .copied()
        .filter(|file| selection.selects_any_of(file))
        .collect();
    let (failed, all) = run(&files, selection, concurrency);
    if let Some(dir) = std::env::var_os("FEATURES_JUNIT_DIR").map(PathBuf::from) {
        let _ = std::fs::create_dir_all(dir.as_path());
        for (name, xml) in junit_by_file(&files, &all) {
            let path = dir.join(format!("{name}.xml"));
            if let Err(e) = std::fs::write(&path, xml) {
                eprintln!("writing {}: {e}", path.display());
            }
        }
    }
    println!(
        "scenario timings: {} in {:.1}s of wall time",
        timings(&all),
        started.elapsed().as_secs_f64()
    );
    print!("{}", failures(&all));
    failed
}

/// The failed scenarios, a line each with the step that failed: printed last, where a CI
/// system that keeps only a log's tail shows them (the cluster's report is printed with the
/// failure itself, mid-run).
pub fn failures(outcomes: &[Outcome]) -> String {
    outcomes
        .iter()
        .filter_map(|o| {
            let failure = o.failure.as_deref()?;
            let first = failure.lines().next().unwrap_or_default();
            Some(format!(
                "failed: {} ({}): {first}\n",
                o.scenario,
                test_name(&o.file)
            ))
        })
        .collect()
}

/// Runs the `selection` of the files' scenarios in one cucumber run, at most `concurrency` at
/// a time; returns whether anything failed, and each scenario's outcome.
pub fn run(files: &[&PathBuf], selection: &Selection, concurrency: usize) -> (bool, Vec<Outcome>) {
    // The operator's log lines, kept for the steps that check what it never says and for the
    // failure report.
    crate::log_capture::install();
    let chosen: Vec<PathBuf> = files.iter().map(|file| canonical(file)).collect();
    // cucumber reads a file, or every feature file under a directory (in path order).
    let input = match chosen.as_slice() {
        [] => return (false, Vec::new()),
        [only] => only.clone(),
        [first, ..] => first.parent().unwrap_or(Path::new(".")).to_path_buf(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let selection = selection.clone();
    let result = runtime.block_on(
        BarbicanWorld::cucumber()
            // The command line is the harness's (libtest's), not cucumber's.
            .with_default_cli()
            .fail_on_skipped()
            .max_concurrent_scenarios(concurrency)
            .before(before)
            .after(after)
            .filter_run(input, move |feature, rule, scenario| {
                feature
                    .path
                    .as_deref()
                    .is_some_and(|path| chosen.contains(&canonical(path)))
                    && selection.selects(feature, rule, scenario)
            }),
    );
    let outcomes = take_outcomes();
    // A scenario whose steps passed may still have failed after them (a refused request).
    let failed = result.execution_has_failed()
        || result.parsing_errors() > 0
        || outcomes.iter().any(|o| o.failure.is_some());
    (failed, outcomes)
}

/// The failure of a scenario in which the API server refused the operator `forbidden`
/// requests (`(verb, resource, count)`), naming each; `None` when it refused none.
pub fn forbidden_failure(forbidden: &[(String, String, f64)]) -> Option<String> {
    if forbidden.is_empty() {
        return None;
    }
    let named: Vec<String> = forbidden
        .iter()
        .map(|(verb, resource, count)| format!("{verb} {resource} ({count} times)"))
        .collect();
    Some(format!(
        "the API server refused the operator, the chart's ServiceAccount, with 403 Forbidden: {}; the chart's RBAC (deploy/helm/barbican-operator/templates/) does not grant it",
        named.join(", ")
    ))
}

/// A JUnit document per file: its test name and the document of its outcomes among `all`.
pub fn junit_by_file(files: &[&PathBuf], all: &[Outcome]) -> Vec<(String, String)> {
    files
        .iter()
        .map(|file| {
            let file = canonical(file);
            let of_file: Vec<Outcome> = all.iter().filter(|o| o.file == file).cloned().collect();
            (test_name(&file), junit(&test_name(&file), &of_file))
        })
        .collect()
}

/// A path as the file system resolves it (itself when it cannot be resolved), so that a
/// feature's path as cucumber read it and as [`feature_files`] listed it compare equal.
fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// One finished scenario.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The feature's file (as the file system resolves it).
    pub file: PathBuf,
    /// The feature's name.
    pub feature: String,
    /// The scenario's name.
    pub scenario: String,
    /// How long it took (wall time).
    pub took: Duration,
    /// The failure, if it failed.
    pub failure: Option<String>,
    /// What the cluster said when it failed (printed too; see [`crate::report::explain`]).
    pub report: Option<String>,
}

fn outcomes() -> &'static Mutex<Vec<Outcome>> {
    static OUTCOMES: OnceLock<Mutex<Vec<Outcome>>> = OnceLock::new();
    OUTCOMES.get_or_init(Mutex::default)
}

/// The outcomes recorded so far, and forgets them.
pub fn take_outcomes() -> Vec<Outcome> {
    std::mem::take(&mut *outcomes().lock().unwrap_or_else(|p| p.into_inner()))
}

/// cucumber's `before` hook: the scenario's clock starts.
pub fn before<'a>(
    _: &'a gherkin::Feature,
    _: Option<&'a gherkin::Rule>,
    _: &'a gherkin::Scenario,
    world: &'a mut BarbicanWorld,
) -> LocalBoxFuture<'a, ()> {
    world.started = Some(Instant::now());
    Box::pin(async {})
}

/// cucumber's `after` hook: records the outcome and, for a failure, prints what the cluster
/// says ([`crate::report::explain`]).
pub fn after<'a>(
    feature: &'a gherkin::Feature,
    _: Option<&'a gherkin::Rule>,
    scenario: &'a gherkin::Scenario,
    finished: &'a ScenarioFinished,
    world: Option<&'a mut BarbicanWorld>,
) -> LocalBoxFuture<'a, ()> {
    Box::pin(async move {
        let failure = match finished {
            ScenarioFinished::StepFailed(_, _, error) => Some(error.to_string()),
            ScenarioFinished::BeforeHookFailed(_) => Some("the before hook failed".into()),
            ScenarioFinished::StepPassed | ScenarioFinished::StepSkipped => None,
        };
        // On a real API server the operator runs as the chart's ServiceAccount under the
        // chart's RBAC: a request refused there is a rule the chart lacks, whatever the steps
        // saw (the operator may have gone around it).
        let forbidden = world
            .as_ref()
            .and_then(|w| w.env_opt())
            .filter(|env| env.on_real_cluster())
            .and_then(|env| {
                forbidden_failure(&crate::check_steps::forbidden_requests(
                    &env.metrics.render(),
                ))
            });
        if let Some(forbidden) = &forbidden {
            println!("\n  Scenario {:?}: {forbidden}", scenario.name);
        }
        // A step that failed for want of a permission says so too.
        let failure = match (failure, forbidden) {
            (Some(step), Some(forbidden)) => Some(format!("{step}\n{forbidden}")),
            (step, forbidden) => step.or(forbidden),
        };
        let took = world
            .as_ref()
            .and_then(|w| w.started)
            .map(|s| s.elapsed())
            .unwrap_or_default();
        let mut report = None;
        if failure.is_some()
            && let Some(env) = world.as_ref().and_then(|w| w.env_opt())
        {
            let explained = crate::report::explain(env).await;
            println!("\n  Scenario {:?} failed.{explained}", scenario.name);
            report = Some(explained);
        }
        // On a real API server the next scenario shares the cluster: what this one made goes.
        if let Some(env) = world.as_ref().and_then(|w| w.env_opt())
            && env.on_real_cluster()
            && let Err(e) = env.clean_up().await
        {
            println!("  cleaning up after {:?}: {e}", scenario.name);
        }
        outcomes()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Outcome {
                file: feature.path.as_deref().map(canonical).unwrap_or_default(),
                feature: feature.name.clone(),
                scenario: scenario.name.clone(),
                took,
                failure,
                report,
            });
    })
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The outcomes of one feature file as a JUnit `<testsuite>` document.
pub fn junit(suite: &str, outcomes: &[Outcome]) -> String {
    let failures = outcomes.iter().filter(|o| o.failure.is_some()).count();
    // An empty sum of f64 is -0.0; a report says 0.000.
    let total: f64 = outcomes.iter().map(|o| o.took.as_secs_f64()).sum::<f64>() + 0.0;
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" time=\"{total:.3}\">\n",
        escape(suite),
        outcomes.len()
    );
    for outcome in outcomes {
        xml.push_str(&format!(
            "  <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            escape(&outcome.feature),
            escape(&outcome.scenario),
            outcome.took.as_secs_f64()
        ));
        match &outcome.failure {
            None => xml.push_str("/>\n"),
            Some(failure) => xml.push_str(&format!(
                "><failure message=\"{}\"/></testcase>\n",
                escape(failure)
            )),
        }
    }
    xml.push_str("</testsuite>\n");
    xml
}

/// The distribution of scenario wall times: count, total, median, 90th percentile, slowest.
pub fn timings(outcomes: &[Outcome]) -> String {
    if outcomes.is_empty() {
        return "no scenario ran".into();
    }
    let mut sorted: Vec<&Outcome> = outcomes.iter().collect();
    sorted.sort_by_key(|o| o.took);
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize].took;
    let slowest = sorted[sorted.len() - 1];
    format!(
        "{} scenarios, {:.1}s of scenario time: median {:.2}s, p90 {:.2}s, slowest {:.2}s ({})",
        sorted.len(),
        outcomes.iter().map(|o| o.took.as_secs_f64()).sum::<f64>(),
        at(0.5).as_secs_f64(),
        at(0.9).as_secs_f64(),
        slowest.took.as_secs_f64(),
        slowest.scenario
    )
}
