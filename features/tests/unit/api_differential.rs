//! Tests of `barbican_features::api_differential` that need no API server: the corpus and the
//! allowlist parse and agree, and the normalisation and report work as documented. CI's run
//! on a control plane (ci/test.sh) sends the corpus.

use std::collections::BTreeMap;

use barbican_features::api_differential::*;
use serde_json::json;

#[test]
fn the_corpus_parses_its_names_are_unique_and_the_allowlist_names_its_cases() {
    let cases = cases().unwrap();
    assert!(cases.len() >= 40, "{}", cases.len());
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "two cases share a name");
    for case in &cases {
        assert!(
            ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&case.method.as_str()),
            "{}: {}",
            case.name,
            case.method
        );
        assert!(case.path.starts_with('/'), "{}", case.name);
    }
    for (name, reason) in allowlist().unwrap() {
        assert!(
            names.contains(&name.as_str()),
            "the allowlist names no case {name:?}"
        );
        assert!(reason.len() > 20, "{name}: say why the difference is kept");
    }
}

#[test]
fn server_made_values_and_generated_suffixes_are_normalised() {
    let answer = json!({"metadata": {"name": "gen-x7k2p", "generateName": "gen-",
        "uid": "u-1", "resourceVersion": "42", "creationTimestamp": "2026-01-01T00:00:00Z",
        "managedFields": [{"manager": "m", "time": "2026-01-01T00:00:00Z"}]},
        "items": [{"metadata": {"resourceVersion": "7", "name": "kept"}}],
        "continue": ""});
    assert_eq!(
        normalise(&answer),
        json!({"metadata": {"name": "gen-<suffix>", "generateName": "gen-",
            "uid": "<set>", "resourceVersion": "<set>", "creationTimestamp": "<set>",
            "managedFields": [{"manager": "m", "time": "<set>"}]},
            "items": [{"metadata": {"resourceVersion": "<set>", "name": "kept"}}],
            "continue": ""})
    );
}

#[test]
fn the_report_counts_and_fails_on_an_unexpected_difference_or_a_stale_entry() {
    let alike = Compared {
        name: "alike".into(),
        sim: (200, json!({"a": 1})),
        real: (200, json!({"a": 1})),
    };
    let differs = Compared {
        name: "differs".into(),
        sim: (200, json!({"a": 1})),
        real: (422, json!({"a": 2})),
    };
    let (text, failed) = report(&[alike.clone(), differs.clone()], &BTreeMap::new());
    assert!(failed);
    assert!(text.contains("DIFFERENT: differs"), "{text}");
    assert!(
        text.contains("2 requests, 1 answered alike, 0 allowed differences, 1 unexpected"),
        "{text}"
    );
    let allowed = BTreeMap::from([(
        "differs".to_string(),
        "the sim words it otherwise".to_string(),
    )]);
    let (text, failed) = report(&[alike.clone(), differs], &allowed);
    assert!(!failed, "{text}");
    assert!(
        text.contains("allowed: differs (the sim words it otherwise)"),
        "{text}"
    );
    // An entry for a case that no longer differs is stale.
    let (text, failed) = report(&[alike], &allowed);
    assert!(failed);
    assert!(text.contains("STALE allowlist entry: differs"), "{text}");
}

/// A uid in a message (a failed uid precondition names the stored object's) is a server-made
/// value: masked wherever it stands, and nothing else is.
#[test]
fn uids_in_messages_are_masked_and_nothing_else() {
    assert_eq!(
        mask_uids("the UID in record (ade75041-b633-48c2-a8a6-55f1fd4b61e7). The object"),
        "the UID in record (<uid>). The object"
    );
    assert_eq!(
        normalise(&json!({"message": "a 98c475f0-f066-49ce-8016-000000000016 é"})),
        json!({"message": "a <uid> é"})
    );
    for kept in [
        "no uid here",
        "98c475f0-f066-49ce-8016",
        "98c475f0f06649ce8016000000000016abcd",
        "zzc475f0-f066-49ce-8016-000000000016",
    ] {
        assert_eq!(mask_uids(kept), kept);
    }
}

/// A refused create names the name it generated (`gen.2hvwf`) in its message and details:
/// masked there, a prefix followed by anything else kept.
#[test]
fn a_generated_name_is_masked_wherever_it_is_named() {
    let answer = json!({"message": "ConfigMap \"gen.2hvwf\" is invalid: \"gen.\"", "details": {"name": "gen.2hvwf"}});
    assert_eq!(
        mask_generated(&answer, Some("gen.")),
        json!({"message": "ConfigMap \"gen.<suffix>\" is invalid: \"gen.\"", "details": {"name": "gen.<suffix>"}})
    );
    assert_eq!(mask_generated(&answer, None), answer);
    let kept = json!("gen.aaaaa and gen.2hv");
    assert_eq!(mask_generated(&kept, Some("gen.")), kept);
}
