//! Replays `tests/corpus/admission/*.yaml` through the webhook's AdmissionReview handling and
//! checks that every rule has at least one accepted and one rejected case.

use std::{collections::BTreeMap, path::PathBuf};

use barbican_operator::{
    admission::{
        lookups::KnownState,
        review::{Endpoint, answer},
    },
    api::fixtures::{admission_review, managed_store, minimal_barbican, with_spec},
};
use serde_json::{Value, json};

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/admission")
}

/// Every rule the corpus must cover, by kind.
const BARBICAN_RULES: &[&str] = &[
    "name-length",
    "replicas",
    "image-tag-xor-digest",
    "database-exclusivity",
    "dynamic-requires-cluster-ref",
    "cache-exclusivity",
    "cache-control-characters",
    "secret-store-ref",
    "keystone-endpoint-url",
    "keystone-public-endpoint-url",
    "identity-line-breaks",
    "region-line-break",
    "gateway-hostname-line-break",
    "logging-enums",
    "logging-per-logger-levels",
    "pre-stop-within-grace",
    "harakiri-within-drain-window",
    "keepalive-timeout-pairing",
    "recreate-without-rolling-update",
    "autoscaling-targets",
    "autoscaling-bounds",
    "network-policy-ingress",
    "gateway-names",
    "requests-within-limits",
    "priority-class-exists",
    "topology-spread-selectors",
    "policy-rules",
    "db-clean-retention",
    "db-clean-schedule",
    "target-cluster-ref-immutable",
    "extra-config-names",
    "extra-config-syntax",
    "plugin-sections",
    "middleware-filters",
    "extra-config-line-breaks",
    "extra-config-rejected-keys",
    "extra-config-catalog",
    "extra-config-catalog-on-update",
    "deleting-finalizer-release",
];
const STORE_RULES: &[&str] = &[
    "store-name-length",
    "store-reserved-names",
    "store-type-union",
    "store-mode-union",
    "store-managed-pin",
    "store-https-url",
    "store-extra-options-pattern",
    "store-extra-options-denylist",
    "store-extra-options-values",
    "store-single-default",
    "store-single-openbao",
];
/// Rules whose proof is a warning or a patch rather than a refusal.
const ADMITTED_ONLY: &[&str] = &[
    "barbican-defaults",
    "store-kv-mountpoint-default",
    "warning-retention-reduction",
    "warning-brownfield-first-run",
    "extra-config-deprecated-option",
    "extra-config-release-without-catalog",
];

fn minimal(kind: &str) -> Value {
    match kind {
        "Barbican" => minimal_barbican(),
        "BarbicanSecretStore" => managed_store(),
        other => panic!("unknown kind {other}"),
    }
}

fn object(kind: &str, metadata: Option<&Value>, spec: Option<&Value>) -> Value {
    let mut object = with_spec(minimal(kind), spec.unwrap_or(&json!({})));
    if let Some(metadata) = metadata {
        json_patch::merge(&mut object["metadata"], metadata);
    }
    object
}

fn known_state(lookups: Option<&Value>) -> KnownState {
    let Some(lookups) = lookups else {
        return KnownState::default();
    };
    let strings = |key: &str| -> Vec<String> {
        lookups[key]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let secret_stores = lookups["secretStores"]
        .as_array()
        .map(|stores| {
            stores
                .iter()
                .map(|s| {
                    let mut store = object("BarbicanSecretStore", None, s.get("spec"));
                    store["metadata"]["name"] = s["name"].clone();
                    if s["deleting"] == true {
                        store["metadata"]["deletionTimestamp"] = json!("2026-11-29T00:00:00Z");
                    }
                    serde_json::from_value(store).unwrap()
                })
                .collect()
        })
        .unwrap_or_default();
    KnownState {
        priority_classes: strings("priorityClasses"),
        secret_stores,
        unavailable: lookups["unavailable"].as_str().map(String::from),
    }
}

/// Replays one case; returns a description of every mismatch.
fn replay(kind: &str, case: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let endpoint = match (kind, case["endpoint"].as_str().unwrap_or("validate")) {
        ("Barbican", "validate") => Endpoint::ValidateBarbican,
        ("Barbican", "mutate") => Endpoint::MutateBarbican,
        ("BarbicanSecretStore", "validate") => Endpoint::ValidateSecretStore,
        ("BarbicanSecretStore", "mutate") => Endpoint::MutateSecretStore,
        other => panic!("unknown endpoint {other:?}"),
    };
    let operation = case["operation"].as_str().unwrap_or("CREATE");
    let mut new = object(kind, case.get("metadata"), case.get("spec"));
    if case["deleting"] == true {
        new["metadata"]["deletionTimestamp"] = json!("2026-11-29T00:00:00Z");
    }
    let old =
        (operation == "UPDATE").then(|| object(kind, case.get("metadata"), case.get("oldSpec")));
    let body = admission_review(kind, operation, &new, old.as_ref());
    let response = serde_json::to_value(answer(endpoint, &body, &known_state(case.get("lookups"))))
        .unwrap()["response"]
        .clone();

    let allowed = response["allowed"].as_bool().unwrap();
    let expected_allowed = case["allowed"]
        .as_bool()
        .expect("every case says whether it is allowed");
    let message = response["status"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    if allowed != expected_allowed {
        problems.push(format!(
            "allowed is {allowed}, expected {expected_allowed} ({message})"
        ));
    }
    if let Some(fields) = case["fields"].as_array() {
        // Field paths are the prefixes of the "; "-joined violations, before ": ".
        let got: Vec<&str> = if message.is_empty() {
            vec![]
        } else {
            message
                .split("; ")
                .map(|v| v.split(": ").next().unwrap())
                .collect()
        };
        let want: Vec<&str> = fields.iter().map(|f| f.as_str().unwrap()).collect();
        if got != want {
            problems.push(format!("fields {got:?}, expected {want:?}"));
        }
    }
    for fragment in case["messages"].as_array().into_iter().flatten() {
        if !message.contains(fragment.as_str().unwrap()) {
            problems.push(format!("denial lacks {fragment}: {message}"));
        }
    }
    let warnings: Vec<String> = response["warnings"]
        .as_array()
        .map(|w| w.iter().map(|w| w.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    for fragment in case["warnings"].as_array().into_iter().flatten() {
        if !warnings
            .iter()
            .any(|w| w.contains(fragment.as_str().unwrap()))
        {
            problems.push(format!("no warning contains {fragment}: {warnings:?}"));
        }
    }
    if case.get("warnings").is_none() && !warnings.is_empty() && expected_allowed {
        problems.push(format!("unexpected warnings {warnings:?}"));
    }
    if let Some(expected_patch) = case.get("patch") {
        let bytes: Vec<u8> = response["patch"]
            .as_array()
            .map(|a| a.iter().map(|b| b.as_u64().unwrap() as u8).collect())
            .unwrap_or_else(|| b"[]".to_vec());
        let got: Value = serde_json::from_slice(&bytes).unwrap();
        if &got != expected_patch {
            problems.push(format!("patch {got}, expected {expected_patch}"));
        }
    }
    problems
}

#[test]
fn the_corpus_replays_and_covers_every_rule() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut total = 0;
    let mut failures = Vec::new();
    // rule -> (accepted cases, rejected cases)
    let mut coverage: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let doc: Value =
            serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let kind = doc["kind"].as_str().expect("a kind");
        for case in doc["cases"].as_array().expect("cases") {
            total += 1;
            let name = format!(
                "{} / {}",
                file.file_name().unwrap().to_string_lossy(),
                case["name"].as_str().expect("a name")
            );
            let rule = case["rule"]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: no rule"))
                .to_string();
            let entry = coverage.entry(rule).or_default();
            if case["allowed"] == true {
                entry.0 += 1
            } else {
                entry.1 += 1
            }
            for problem in replay(kind, case) {
                failures.push(format!("{name}: {problem}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        total >= 70,
        "the corpus holds {total} cases; at least 70 are required"
    );
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
    let unknown: Vec<_> = coverage
        .keys()
        .filter(|r| !known.contains(&r.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "cases name rules the test does not list: {unknown:?}"
    );
}
