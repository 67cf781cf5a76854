//! Tests of `barbican_sim::controllers`.

use std::time::Duration;

use serde_json::json;

use barbican_sim::controllers::*;

#[test]
fn matches_name_globs_labels_and_images() {
    let job = json!({"metadata": {"name": "barbican-db-sync", "labels": {"app": "barbican"}},
        "spec": {"template": {"spec": {"containers": [{"image": "quay.io/barbican:2025.2"}]}}}});
    for (rule, expected) in [
        ("*", true),
        ("name=barbican-db-sync", true),
        ("name=*-db-sync", true),
        ("name=barbican-*-sync", true),
        ("name=*-db-clean", false),
        ("label=app=barbican", true),
        ("label=app=nova", false),
        ("image=barbican:2025.2", true),
        ("image=barbican:2026.1", false),
    ] {
        assert_eq!(
            rule.parse::<Match>().unwrap().matches(&job),
            expected,
            "{rule}"
        );
    }
}

#[test]
fn a_malformed_match_says_what_is_allowed() {
    for bad in ["", "name=", "colour=red", "label=novalue"] {
        let error = bad.parse::<Match>().unwrap_err();
        assert!(
            error.contains("name=") || error.contains("label="),
            "{error}"
        );
    }
}

#[test]
fn job_rules_parse_from_flags() {
    let rule: JobRule = "name=*-db-sync:fail:30s".parse().unwrap();
    assert_eq!(rule.matches, Match::Name("*-db-sync".into()));
    assert_eq!(rule.outcome, Outcome::Fail);
    assert_eq!(rule.duration, Some(Duration::from_secs(30)));
    assert_eq!("*:complete".parse::<JobRule>().unwrap().duration, None);
    for (bad, says) in [
        ("*:explode", "complete or fail"),
        ("colour=red:fail", "a match is"),
        ("*:fail:soon", "ms, s or m"),
        ("*:fail:1s:extra", "<match>:<complete|fail>"),
    ] {
        let error = bad.parse::<JobRule>().unwrap_err();
        assert!(error.contains(says), "{bad}: {error}");
    }
}

#[test]
fn the_first_matching_job_rule_wins() {
    let rules = JobRules {
        duration: Duration::from_secs(5),
        rules: vec![
            JobRule {
                matches: "name=*-db-sync".parse().unwrap(),
                outcome: Outcome::Fail,
                duration: Some(Duration::from_secs(30)),
            },
            JobRule {
                matches: Match::Any,
                outcome: Outcome::Complete,
                duration: None,
            },
        ],
    };
    let job = |name: &str| json!({"metadata": {"name": name}});
    assert_eq!(
        rules.rule_for(&job("b-db-sync")),
        (Outcome::Fail, Duration::from_secs(30))
    );
    assert_eq!(
        rules.rule_for(&job("b-db-clean")),
        (Outcome::Complete, Duration::from_secs(5))
    );
}

#[test]
fn conditions_keep_their_transition_time_while_the_status_holds() {
    let before = json!({"conditions": [{"type": "Available", "status": "True", "reason": "A",
        "lastTransitionTime": "T0", "lastUpdateTime": "T0"}]});
    let times = ["lastUpdateTime", "lastTransitionTime"];
    let same = condition(&before, "Available", "True", "A", "m", "T1", &times);
    assert_eq!(same["lastTransitionTime"], "T0");
    assert_eq!(same["lastUpdateTime"], "T0");
    let reason = condition(&before, "Available", "True", "B", "m", "T1", &times);
    assert_eq!(reason["lastTransitionTime"], "T0");
    assert_eq!(reason["lastUpdateTime"], "T1");
    let flipped = condition(&before, "Available", "False", "A", "m", "T1", &times);
    assert_eq!(flipped["lastTransitionTime"], "T1");
}
