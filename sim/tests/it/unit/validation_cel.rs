//! Tests of `barbican_sim::validation`.

use kube::core::cel::compile_schema;
use kube::core::cel::{CompiledSchema, Validator};
use serde_json::Value;
use serde_json::json;

use barbican_sim::validation::*;

fn schema() -> CompiledSchema {
    compile_schema(&json!({"type": "object", "properties": {
        "metadata": {"type": "object"},
        "spec": {"type": "object", "properties": {
            "image": {"type": "object",
                "x-kubernetes-validations": [{"rule": "has(self.tag) != has(self.digest)",
                    "message": "tag or digest"}],
                "properties": {"tag": {"type": "string"}, "digest": {"type": "string"}}},
            "ports": {"type": "array", "items": {"type": "integer",
                "x-kubernetes-validations": [{"rule": "self > 0"}]}},
            "ref": {"type": "object",
                "x-kubernetes-validations": [{"rule": "self.name != 'bad'",
                    "fieldPath": ".name", "message": "no bad names"}],
                "properties": {"name": {"type": "string"}}},
            "counter": {"type": "object",
                "x-kubernetes-validations": [{"rule": "oldSelf.n < self.n",
                    "message": "n must grow"}],
                "properties": {"n": {"type": "integer"}}}}},
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}}}}))
}

fn errors(object: &Value, old: Option<&Value>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    cel_rules(&Validator::new(), &schema(), object, old, "", &mut found);
    let mut found: Vec<_> = found
        .into_iter()
        .map(|e| (e.field_path, e.message))
        .collect();
    found.sort();
    found
}

/// On a create the rules are decided as kube-cel's whole walk decides them, with the
/// field paths it gives (`spec.image`, `spec.ports[1]`).
#[test]
fn a_create_is_decided_as_the_whole_walk_decides_it() {
    let object = json!({"metadata": {"name": "x"},
        "spec": {"image": {"tag": "1", "digest": "sha256:a"}, "ports": [1, 0],
            "ref": {"name": "bad"}}});
    let whole = Validator::new()
        .validate_compiled(&schema(), &object, None)
        .unwrap_err();
    let mut expected: Vec<_> = whole
        .into_vec()
        .into_iter()
        .map(|e| (e.field_path, e.message))
        .collect();
    expected.sort();
    assert_eq!(errors(&object, None), expected);
    assert_eq!(
        expected.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
        ["spec.image", "spec.ports[1]", "spec.ref.name"]
    );
}

/// kube-apiserver 1.33 ratchets CEL rules: an update that leaves an invalid value as it
/// was is admitted (a status write to an object stored before a rule existed); an update
/// that changes the value is refused.
#[test]
fn an_unchanged_value_is_ratcheted_and_a_changed_one_is_not() {
    let stored = json!({"metadata": {"name": "x"},
        "spec": {"image": {"tag": "1", "digest": "sha256:a"}}});
    let mut status_write = stored.clone();
    status_write["status"] = json!({"phase": "Ready"});
    assert_eq!(errors(&status_write, Some(&stored)), vec![]);
    let mut changed = stored.clone();
    changed["spec"]["image"]["tag"] = json!("2");
    assert_eq!(
        errors(&changed, Some(&stored)),
        vec![("spec.image".to_string(), "tag or digest".to_string())]
    );
}

/// A transition rule is never ratcheted: on an unchanged value it is still evaluated.
#[test]
fn a_transition_rule_runs_on_an_unchanged_value() {
    let stored = json!({"metadata": {"name": "x"}, "spec": {"counter": {"n": 1}}});
    let mut status_write = stored.clone();
    status_write["status"] = json!({"phase": "Ready"});
    assert_eq!(
        errors(&status_write, Some(&stored)),
        vec![("spec.counter".to_string(), "n must grow".to_string())]
    );
}
