//! Tests of `barbican_sim::wire_order`.

use serde_json::json;

use barbican_sim::wire_order::*;

/// kube-apiserver's NotFound, byte for byte as it writes it.
#[test]
fn a_status_is_written_in_its_struct_order() {
    let status = json!({"apiVersion": "v1", "code": 404, "details": {"kind": "pods", "name": "x"},
        "kind": "Status", "message": "pods \"x\" not found", "metadata": {}, "reason": "NotFound",
        "status": "Failure"});
    assert_eq!(
        to_string(&status),
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"pods"},"code":404}"#
    );
}

/// A built-in object: kind first, metadata in ObjectMeta's order, status last; deeper
/// maps sorted. A list orders its items likewise.
#[test]
fn a_built_in_object_and_list_are_written_kind_first() {
    let cm = json!({"apiVersion": "v1", "data": {"b": "1", "a": "2"}, "kind": "ConfigMap",
        "metadata": {"resourceVersion": "3", "name": "c", "namespace": "n"}});
    assert_eq!(
        to_string(&cm),
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"n","resourceVersion":"3"},"data":{"a":"2","b":"1"}}"#
    );
    let deploy = json!({"status": {}, "spec": {}, "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {}});
    assert_eq!(
        to_string(&deploy),
        r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{},"spec":{},"status":{}}"#
    );
    let list = json!({"apiVersion": "v1", "items": [cm], "kind": "ConfigMapList", "metadata": {"resourceVersion": "9"}});
    assert!(to_string(&list).starts_with(
        r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[{"kind":"ConfigMap","#
    ));
}

/// An answer's body ends in a newline, as Go's `json.Encoder` writes one.
#[test]
fn a_body_ends_with_a_newline() {
    assert_eq!(body(&serde_json::json!({"a": 1})), "{\"a\":1}\n");
}

/// A custom resource is a map to kube-apiserver, written sorted.
#[test]
fn a_custom_resource_keeps_the_sorted_order() {
    let cr = json!({"kind": "Barbican", "apiVersion": "openstack.c5c3.io/v1alpha1",
        "metadata": {"namespace": "n", "name": "b"}, "spec": {}});
    assert_eq!(to_string(&cr), cr.to_string());
}

/// A watch event: type, then the object in its own order.
#[test]
fn a_watch_event_is_type_then_object() {
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
    assert_eq!(
        event("ADDED", &pod),
        r#"{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}}"#
    );
}
