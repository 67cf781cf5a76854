//! Tests of `barbican_sim::selectors`.

use serde_json::Value;
use serde_json::json;

use barbican_sim::selectors::*;

use super::builtin_type;

fn object(labels: Value) -> Value {
    json!({"metadata": {"name": "a", "namespace": "n", "labels": labels}, "spec": {"x": {"y": "z"}}})
}

#[test]
fn label_selector_operators() {
    let o = object(json!({"app": "barbican", "tier": "api"}));
    for (selector, expected) in [
        ("app=barbican", true),
        ("app==barbican,tier=api", true),
        ("app!=barbican", false),
        ("tier in (api, db)", true),
        ("tier notin (api)", false),
        ("app,tier", true),
        ("!missing", true),
        ("!app", false),
        ("missing", false),
        ("missing notin (x)", true),
        ("", true),
    ] {
        assert_eq!(
            LabelSelector::parse(selector).unwrap().matches(&o),
            expected,
            "{selector}"
        );
    }
    assert!(LabelSelector::parse("tier in api").is_err());
}

#[test]
fn field_selector_paths() {
    let o = object(json!({}));
    assert!(
        FieldSelector::parse("metadata.name=a,metadata.namespace==n")
            .unwrap()
            .matches(&o)
    );
    assert!(
        !FieldSelector::parse("metadata.name!=a")
            .unwrap()
            .matches(&o)
    );
    assert!(FieldSelector::parse("spec.x.y=z").unwrap().matches(&o));
    assert!(FieldSelector::parse("spec.missing=").unwrap().matches(&o));
}

/// kube-apiserver refuses a field selector on a field the kind does not offer.
#[test]
fn only_selectable_fields_are_supported() {
    let bogus = FieldSelector::parse("bogus.field=x").unwrap();
    let refused = bogus
        .check_supported(&builtin_type("configmaps"))
        .unwrap_err();
    assert_eq!(refused.code, 400);
    // A kind without field conversions of its own: apimachinery's default words.
    assert_eq!(
        refused.message,
        "\"bogus.field\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    );
    // A kind with its own (pods): the kind's conversion function's words.
    let refused = bogus.check_supported(&builtin_type("pods")).unwrap_err();
    assert_eq!(refused.message, "field label not supported: bogus.field");
    let name = FieldSelector::parse("metadata.name=a,metadata.namespace=b").unwrap();
    assert!(name.check_supported(&builtin_type("configmaps")).is_ok());
    let phase = FieldSelector::parse("status.phase=Running").unwrap();
    assert!(phase.check_supported(&builtin_type("pods")).is_ok());
    assert!(phase.check_supported(&builtin_type("configmaps")).is_err());
    let kind = FieldSelector::parse("involvedObject.kind=Barbican").unwrap();
    assert!(kind.check_supported(&builtin_type("events")).is_ok());
}

/// `kubectl get nodes --field-selector spec.unschedulable==false` lists the nodes that
/// never set the field: kube-apiserver compares `fmt.Sprint` of the Go boolean.
#[test]
fn an_unset_boolean_field_reads_false() {
    let schedulable = FieldSelector::parse("spec.unschedulable==false").unwrap();
    assert!(schedulable.matches(&serde_json::json!({"spec": {}})));
    assert!(!schedulable.matches(&serde_json::json!({"spec": {"unschedulable": true}})));
    let host = FieldSelector::parse("spec.hostNetwork=false").unwrap();
    assert!(host.matches(&serde_json::json!({"spec": {"containers": []}})));
    // Other missing fields still read as "".
    let node = FieldSelector::parse("spec.nodeName=").unwrap();
    assert!(node.matches(&serde_json::json!({"spec": {}})));
}

/// kube-apiserver's label selector grammar, its refusals word for word (each checked against a
/// real kube-apiserver by the API differential, tests/corpus/api/requests.yaml).
#[test]
fn a_label_selector_is_refused_in_kube_apiservers_words() {
    let refusal = |text: &str| {
        let error = LabelSelector::parse(text).unwrap_err();
        assert_eq!(error.code, 400, "{text}");
        error.message
    };
    assert_eq!(
        refusal("tier===a"),
        "unable to parse requirement: found '=', expected: identifier"
    );
    assert_eq!(refusal("tier,"), "found '', expected: identifier after ','");
    assert_eq!(
        refusal(",tier"),
        "found ',', expected: !, identifier, or 'end of string'"
    );
    assert_eq!(
        refusal("tier=a b"),
        "found 'b', expected: ',' or 'end of string'"
    );
    assert_eq!(
        refusal("tier in (a"),
        "unable to parse requirement: found '', expected: ',' or ')'"
    );
    assert_eq!(
        refusal("n>x"),
        "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
    );
    assert!(refusal("-bad-key").starts_with(
        "unable to parse requirement: <nil>: Invalid value: \"-bad-key\": name part must consist of"
    ),);
    assert!(
        refusal("tier=-bad").starts_with("unable to parse requirement: values[0][tier]: Invalid value: \"-bad\": a valid label must be"),
    );
    assert_eq!(
        refusal("tier<>a"),
        "unable to parse requirement: found '>', expected: identifier"
    );
}

/// `in` is a value where values stand; `>` and `<` compare integers; `!` asks for absence.
#[test]
fn a_label_selector_matches_as_kube_apiserver_matches() {
    let selector = LabelSelector::parse("tier in (in,a),n>1,m<5,!gone").unwrap();
    let object = |labels: serde_json::Value| serde_json::json!({"metadata": {"labels": labels}});
    assert!(selector.matches(&object(
        serde_json::json!({"tier": "in", "n": "2", "m": "4"})
    )));
    assert!(!selector.matches(&object(
        serde_json::json!({"tier": "a", "n": "1", "m": "4"})
    )));
    assert!(!selector.matches(&object(
        serde_json::json!({"tier": "a", "n": "x", "m": "4"})
    )));
    assert!(!selector.matches(&object(serde_json::json!({"tier": "a", "n": "2"}))));
    assert!(!selector.matches(&object(
        serde_json::json!({"tier": "a", "n": "2", "m": "4", "gone": ""})
    )));
    // An empty set and an empty value are values too; spaces around operators do not matter.
    let empty = LabelSelector::parse("tier in ( ), k = ").unwrap();
    assert!(empty.matches(&object(serde_json::json!({"tier": "", "k": ""}))));
}
