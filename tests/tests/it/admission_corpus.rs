//! Replays the admission corpus through the webhook's AdmissionReview handling (the pure
//! admission functions), and checks that every rule has an accepted and a rejected case.

use barbican_operator::{
    admission::review::{Endpoint, answer},
    api::fixtures::admission_review,
};
use barbican_tests::corpus::{
    ADMITTED_ONLY, BARBICAN_RULES, Case, Layer, Outcome, STORE_RULES, assert_outcomes, coverage,
    load,
};
use serde_json::{Value, json};

fn replay(case: &Case) -> Outcome {
    let endpoint = match (case.kind.as_str(), case.endpoint()) {
        ("Barbican", "validate") => Endpoint::ValidateBarbican,
        ("Barbican", "mutate") => Endpoint::MutateBarbican,
        ("BarbicanSecretStore", "validate") => Endpoint::ValidateSecretStore,
        ("BarbicanSecretStore", "mutate") => Endpoint::MutateSecretStore,
        other => panic!("unknown endpoint {other:?}"),
    };
    let mut new = case.object();
    if case.deleting() {
        new["metadata"]["deletionTimestamp"] = json!("2026-11-29T00:00:00Z");
    }
    let body = admission_review(&case.kind, case.operation(), &new, case.old().as_ref());
    let response =
        serde_json::to_value(answer(endpoint, &body, &case.known_state())).unwrap()["response"]
            .clone();
    let patch = response["patch"].as_array().map(|bytes| {
        let bytes: Vec<u8> = bytes.iter().map(|b| b.as_u64().unwrap() as u8).collect();
        serde_json::from_slice::<Value>(&bytes).unwrap()
    });
    Outcome {
        refused_by_api_server: false,
        allowed: response["allowed"].as_bool().unwrap(),
        message: response["status"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        warnings: response["warnings"]
            .as_array()
            .map(|w| w.iter().map(|w| w.as_str().unwrap().to_string()).collect())
            .unwrap_or_default(),
        // A mutate case that expects a patch expects `[]` when none is answered.
        patch: patch.or_else(|| case.expected_patch().map(|_| json!([]))),
    }
}

#[test]
fn the_corpus_replays_through_the_pure_admission_functions() {
    let cases = load();
    assert!(
        cases.len() >= 70,
        "the corpus holds {} cases; at least 70 are required",
        cases.len()
    );
    assert_outcomes(
        Layer::Webhook,
        cases.iter().map(|case| (case, replay(case))),
    );
}

#[test]
fn every_rule_has_an_accepted_and_a_rejected_case() {
    let coverage = coverage(&load());
    for rule in BARBICAN_RULES.iter().chain(STORE_RULES) {
        let (accepted, rejected) = coverage.get(*rule).copied().unwrap_or_default();
        assert!(
            accepted >= 1 && rejected >= 1,
            "rule {rule}: {accepted} accepted and {rejected} rejected cases"
        );
    }
    for rule in ADMITTED_ONLY {
        assert!(
            coverage.get(*rule).is_some_and(|c| c.0 >= 1),
            "rule {rule} has no case"
        );
    }
    let known: Vec<&str> = BARBICAN_RULES
        .iter()
        .chain(STORE_RULES)
        .chain(ADMITTED_ONLY)
        .copied()
        .collect();
    let unknown: Vec<&String> = coverage
        .keys()
        .filter(|r| !known.contains(&r.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "cases name rules the test does not list: {unknown:?}"
    );
}

/// A violation whose own text holds "; " (kube-apiserver's note that rules were not checked)
/// stays one violation; "; " before a field path separates two.
#[test]
fn violations_split_where_a_field_path_follows() {
    let message = "spec.a: Too long: may not be more than 4096 bytes; <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";
    assert_eq!(
        barbican_tests::corpus::violations(message),
        [
            "spec.a: Too long: may not be more than 4096 bytes",
            "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
        ]
    );
    assert!(barbican_tests::corpus::violations("").is_empty());
}
