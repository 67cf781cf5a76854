//! Tests of `barbican_sim::strategic`.

use serde_json::Value;
use serde_json::json;

use barbican_sim::strategic::*;

fn patched(target: Value, patch: Value) -> Value {
    let mut target = target;
    apply(&mut target, &patch);
    target
}

#[test]
fn containers_merge_by_name_and_other_lists_are_replaced() {
    let deployment = json!({"spec": {"template": {"spec": {
        "containers": [{"name": "api", "image": "a:1", "env": [{"name": "A", "value": "1"}]}, {"name": "sidecar", "image": "s:1"}],
        "tolerations": [{"key": "x"}]
    }}}});
    let result = patched(
        deployment,
        json!({"spec": {"template": {"spec": {
            "containers": [{"name": "api", "image": "a:2", "env": [{"name": "B", "value": "2"}]}],
            "tolerations": [{"key": "y"}]
        }}}}),
    );
    let spec = &result["spec"]["template"]["spec"];
    assert_eq!(spec["containers"][0]["image"], "a:2");
    assert_eq!(
        spec["containers"][0]["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
    );
    assert_eq!(
        spec["containers"][1]["name"], "sidecar",
        "untouched items stay"
    );
    assert_eq!(
        spec["tolerations"],
        json!([{"key": "y"}]),
        "a list without a merge key is replaced"
    );
}

#[test]
fn directives_delete_replace_and_remove_from_primitive_lists() {
    let target = json!({"metadata": {"finalizers": ["a", "b"], "labels": {"x": "1", "y": "2"}},
        "spec": {"ports": [{"port": 80}, {"port": 443}]}});
    let result = patched(
        target,
        json!({
            "metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"], "labels": {"$patch": "replace", "z": "3"}},
            "spec": {"ports": [{"port": 80, "$patch": "delete"}], "$setElementOrder/ports": [{"port": 443}]}
        }),
    );
    assert_eq!(
        result["metadata"]["finalizers"],
        json!(["b", "c"]),
        "finalizers merge as a set"
    );
    assert_eq!(result["metadata"]["labels"], json!({"z": "3"}));
    assert_eq!(result["spec"]["ports"], json!([{"port": 443}]));
    assert!(result["spec"].get("$setElementOrder/ports").is_none());
}
