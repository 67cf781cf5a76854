//! Tests of `barbican_features::backend`.

use barbican_features::backend::*;

fn matches(expression: &str, text: &str) -> bool {
    regex::Regex::new(&step_pattern(expression))
        .unwrap()
        .is_match(text)
}

#[test]
fn step_patterns_match_the_texts_of_their_steps() {
    assert!(matches("{int} minute(s) pass(es)", "5 minutes pass"));
    assert!(matches("{int} minute(s) pass(es)", "1 minute passes"));
    assert!(!matches("{int} minute(s) pass(es)", "many minutes pass"));
    assert!(matches(
        "the target cluster {string} is registered",
        "the target cluster \"edge-1\" is registered"
    ));
    assert!(!matches(
        "the target cluster {string} is registered",
        "the target cluster \"edge-1\" is registered for the namespaces \"a\""
    ));
    assert!(matches(
        "for {int} minute(s) the {word} condition of the {word} {string} in {string} never reads {word}",
        "for 3 minutes the Ready condition of the Barbican \"b\" in \"openstack\" never reads False"
    ));
    assert!(matches(
        "the API server's fault rules are cleared",
        "the API server's fault rules are cleared"
    ));
}

/// Every scenario that uses a step of [`SIM_ONLY_STEPS`] (itself or in its background) is
/// tagged [`SIM_ONLY`], on itself, its rule or its feature.
#[test]
fn every_scenario_that_needs_the_sim_says_so() {
    let untagged = untagged(SIM_ONLY_STEPS, SIM_ONLY);
    assert!(
        untagged.is_empty(),
        "these scenarios need the sim but are not tagged @{SIM_ONLY}:\n{}",
        untagged.join("\n")
    );
}

/// Every scenario that uses a step of [`IN_PROCESS_STEPS`] is tagged [`IN_PROCESS_OPERATOR`]
/// (or [`SIM_ONLY`], which a run against an installed operator leaves out as well).
#[test]
fn every_scenario_that_reaches_into_the_operators_process_says_so() {
    let untagged: Vec<String> = untagged(IN_PROCESS_STEPS, IN_PROCESS_OPERATOR)
        .into_iter()
        .filter(|s| untagged(IN_PROCESS_STEPS, SIM_ONLY).contains(s))
        .collect();
    assert!(
        untagged.is_empty(),
        "these scenarios reach into the operator's process but are not tagged @{IN_PROCESS_OPERATOR}:\n{}",
        untagged.join("\n")
    );
}

/// The scenarios of the feature files that use a step matching one of `expressions` without
/// carrying `tag` on themselves, their rule or their feature: `file: "scenario" (it says …)`.
fn untagged(expressions: &[&str], tag: &str) -> Vec<String> {
    use cucumber::gherkin::{Feature, GherkinEnv};
    let patterns: Vec<regex::Regex> = expressions
        .iter()
        .map(|e| regex::Regex::new(&step_pattern(e)).unwrap())
        .collect();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut untagged = Vec::new();
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "feature") {
            continue;
        }
        files += 1;
        let feature = Feature::parse_path(&path, GherkinEnv::default()).unwrap();
        let tagged = |tags: &[String]| tags.iter().any(|t| t == tag);
        let background: Vec<String> = feature
            .background
            .iter()
            .flat_map(|b| b.steps.iter().map(|s| s.value.clone()))
            .collect();
        let scenarios = feature.scenarios.iter().map(|s| (None, s)).chain(
            feature
                .rules
                .iter()
                .flat_map(|r| r.scenarios.iter().map(move |s| (Some(r), s))),
        );
        for (rule, scenario) in scenarios {
            let uses = background
                .iter()
                .chain(scenario.steps.iter().map(|s| &s.value))
                .find(|text| patterns.iter().any(|p| p.is_match(text)));
            let says_so = tagged(&feature.tags)
                || rule.is_some_and(|r| tagged(&r.tags))
                || tagged(&scenario.tags);
            if let Some(step) = uses
                && !says_so
            {
                untagged.push(format!(
                    "{}: \"{}\" (it says \"{step}\")",
                    path.file_name().unwrap().to_string_lossy(),
                    scenario.name
                ));
            }
        }
    }
    assert!(files > 10, "the feature files are found");
    untagged
}
