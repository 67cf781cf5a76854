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
