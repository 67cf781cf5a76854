//! Tests of `barbican_sim::cluster::scale`.

use serde_json::json;

use barbican_sim::cluster::scale::*;

#[test]
fn a_structured_selector_reads_as_kubectl_writes_it() {
    let selector = json!({"matchLabels": {"app": "barbican"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["api", "worker"]},
                             {"key": "canary", "operator": "DoesNotExist"}]});
    assert_eq!(
        selector_string(&selector),
        "app=barbican,tier in (api,worker),!canary"
    );
}

#[test]
fn set_pointer_creates_the_path() {
    let mut object = json!({"metadata": {}});
    set_pointer(&mut object, "/spec/replicas", json!(3));
    assert_eq!(object["spec"]["replicas"], 3);
}
