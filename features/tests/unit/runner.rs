//! Tests of `barbican_features::runner`.

use std::path::PathBuf;
use std::time::Duration;

use cucumber::gherkin;

use barbican_features::runner::*;
use barbican_features::world::BarbicanWorld;

fn parsed(text: &str) -> gherkin::Feature {
    gherkin::Feature::parse(text, gherkin::GherkinEnv::default()).unwrap()
}

const FEATURE: &str = "@secretstore\nFeature: f\n\n  Scenario: plain one\n    Given x\n\n  @slow\n  Scenario: slow one\n    Given x\n\n  @explained-failure\n  Scenario: broken one\n    Given x\n";

fn chosen(selection: &Selection) -> Vec<String> {
    let feature = parsed(FEATURE);
    feature
        .scenarios
        .iter()
        .filter(|s| selection.selects(&feature, None, s))
        .map(|s| s.name.clone())
        .collect()
}

#[test]
fn shards_split_the_files_between_them_and_a_bad_spec_is_named() {
    let files: Vec<PathBuf> = ["a", "b", "c", "d", "e"].map(PathBuf::from).into();
    let names = |spec: &str| -> Vec<String> {
        shard(&files, spec)
            .unwrap()
            .iter()
            .map(|f| f.display().to_string())
            .collect()
    };
    assert_eq!(names("1/2"), ["a", "c", "e"]);
    assert_eq!(names("2/2"), ["b", "d"]);
    assert_eq!(names("1/1"), ["a", "b", "c", "d", "e"]);
    for bad in ["0/2", "3/2", "1/0", "2", "x/y", ""] {
        let error = shard(&files, bad).unwrap_err();
        assert!(
            error.contains(SHARD_VAR) && error.contains("k/n"),
            "{bad:?}: {error}"
        );
    }
}

#[test]
fn tags_names_and_the_explained_failure_choose_the_scenarios() {
    let none = |_: &str| None;
    let all = Selection::from(&[], none).unwrap();
    assert_eq!(
        chosen(&all),
        ["plain one", "slow one"],
        "the broken one stays out"
    );
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let fast = Selection::from(&args(&["--tags", "not @slow"]), none).unwrap();
    assert_eq!(chosen(&fast), ["plain one", "broken one"]);
    let broken = Selection::from(&[], |v: &str| {
        (v == "FEATURES_TAGS").then(|| "@explained-failure".to_string())
    })
    .unwrap();
    assert_eq!(chosen(&broken), ["broken one"]);
    let inherited = Selection::from(&args(&["--tags", "@secretstore"]), none).unwrap();
    assert_eq!(chosen(&inherited).len(), 3, "the feature's tag counts");
    let named = Selection::from(&args(&["--name", "slow"]), none).unwrap();
    assert_eq!(chosen(&named), ["slow one"]);
    assert!(
        Selection::from(&args(&["--tags", "@a and"]), none)
            .unwrap_err()
            .contains("is not a tag expression")
    );
}

#[test]
fn junit_and_timings_report_each_scenario() {
    let outcomes = [
        Outcome {
            file: PathBuf::new(),
            feature: "F".into(),
            scenario: "fast <one>".into(),
            took: Duration::from_millis(500),
            failure: None,
            report: None,
        },
        Outcome {
            file: PathBuf::new(),
            feature: "F".into(),
            scenario: "slow".into(),
            took: Duration::from_secs(3),
            failure: Some("step \"x\" failed".into()),
            report: None,
        },
    ];
    assert_eq!(
        failures(&outcomes),
        "failed: slow (): step \"x\" failed\n",
        "only the failed scenario, with its step"
    );
    let xml = junit("f", &outcomes);
    assert!(
        xml.contains("tests=\"2\" failures=\"1\" time=\"3.500\""),
        "{xml}"
    );
    assert!(
        xml.contains("name=\"fast &lt;one&gt;\" time=\"0.500\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("<failure message=\"step &quot;x&quot; failed\"/>"),
        "{xml}"
    );
    assert!(
        junit("none", &[]).contains("tests=\"0\" failures=\"0\" time=\"0.000\""),
        "{}",
        junit("none", &[])
    );
    let figures = timings(&outcomes);
    assert!(figures.starts_with("2 scenarios, 3.5s"), "{figures}");
    assert!(figures.ends_with("slowest 3.00s (slow)"), "{figures}");
}

/// The scenario that fails on purpose fails, and its failure explains itself: the expected
/// and actual tables in the step's message, the CR as a table and as YAML in the report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_explained_failure_explains_itself() {
    use cucumber::World as _;
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("explained-failure.feature");
    let selection = Selection::from(&[], |v: &str| {
        (v == "FEATURES_TAGS").then(|| format!("@{EXPLAINED_FAILURE}"))
    })
    .unwrap();
    BarbicanWorld::cucumber()
        .with_default_cli()
        .before(before)
        .after(after)
        .filter_run(file, move |f, r, s| selection.selects(f, r, s))
        .await;
    let outcomes: Vec<Outcome> = take_outcomes()
        .into_iter()
        .filter(|o| o.feature.contains("fails on purpose"))
        .collect();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    let failure = outcomes[0].failure.clone().expect("it fails");
    assert!(
        failure.contains("expected:") && failure.contains("actual:"),
        "{failure}"
    );
    assert!(failure.contains("WaitingForDBCredentials"), "{failure}");
    let report = outcomes[0].report.clone().expect("a report");
    for part in [
        "Barbican openstack/barbican:",
        "| condition    | status | reason",
        "kind: Barbican",
        "the operator",
    ] {
        assert!(report.contains(part), "{part:?} missing from:\n{report}");
    }
}

/// The chosen files' scenarios run in one run, the other files of their directory not at all,
/// and each chosen file gets a JUnit document of its own scenarios.
#[test]
fn one_run_takes_the_chosen_files_and_reports_each_on_its_own() {
    let dir = std::env::temp_dir().join(format!("runner-one-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, scenarios: &[&str]| {
        let path = dir.join(format!("{name}.feature"));
        let body: String = scenarios
            .iter()
            .map(|s| format!("\n  Scenario: {s}\n"))
            .collect();
        std::fs::write(&path, format!("Feature: {name}\n{body}")).unwrap();
        path
    };
    let a = file("a", &["a one", "a two"]);
    let b = file("b", &["b one"]);
    let _c = file("c", &["c one"]);
    let selection = Selection::default();

    let (failed, outcomes) = run(&[&a, &b], &selection, 2);
    assert!(!failed);
    let mut ran: Vec<&str> = outcomes.iter().map(|o| o.scenario.as_str()).collect();
    ran.sort();
    assert_eq!(ran, ["a one", "a two", "b one"]);

    let reports = junit_by_file(&[&a, &b], &outcomes);
    let names: Vec<&str> = reports.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert!(reports[0].1.contains("tests=\"2\""), "{}", reports[0].1);
    assert!(reports[1].1.contains("tests=\"1\""), "{}", reports[1].1);
    assert!(reports[1].1.contains("name=\"b one\""), "{}", reports[1].1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_refused_request_fails_the_scenario_naming_verb_and_resource() {
    assert_eq!(forbidden_failure(&[]), None);
    let failure = forbidden_failure(&[
        (
            "list".into(),
            "horizontalpodautoscalers.autoscaling".into(),
            2.0,
        ),
        ("create".into(), "events.events.k8s.io".into(), 1.0),
    ])
    .unwrap();
    assert!(failure.contains("403 Forbidden"), "{failure}");
    assert!(
        failure.contains("list horizontalpodautoscalers.autoscaling (2 times)"),
        "{failure}"
    );
    assert!(
        failure.contains("create events.events.k8s.io (1 times)"),
        "{failure}"
    );
}
