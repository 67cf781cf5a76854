//! Tests of `barbican_sim::schema`.

use serde_json::Value;
use serde_json::json;

use barbican_sim::schema::*;

fn messages(schema: Value, value: Value) -> Vec<String> {
    validate(&schema, &value, "")
        .into_iter()
        .map(|e| e.to_string())
        .collect()
}

#[test]
fn accepts_a_matching_object() {
    let schema = json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "integer", "minimum": 1}}});
    assert!(messages(schema, json!({"a": 2})).is_empty());
}

#[test]
fn reports_required_type_and_bounds_at_once() {
    let schema = json!({"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "integer", "minimum": 1},
        "b": {"type": "string"},
        "c": {"type": "string", "pattern": "^x", "maxLength": 3}
    }});
    let got = messages(schema, json!({"a": 0, "c": "yyyy"}));
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(got.iter().any(|m| m == "b: Required value"));
    assert!(
        got.iter()
            .any(|m| m.starts_with("a: Invalid value: 0")
                && m.contains("greater than or equal to 1"))
    );
    assert!(
        got.iter()
            .any(|m| m.contains("c in body should match '^x'"))
    );
    assert!(
        got.iter()
            .any(|m| m == "c: Too long: may not be more than 3 bytes")
    );
}

#[test]
fn rejects_unknown_fields_unless_preserved() {
    let strict = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    assert_eq!(
        messages(strict, json!({"b": "x"})),
        vec!["b: unknown field \"b\""]
    );
    let preserved = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    assert!(messages(preserved, json!({"b": "x"})).is_empty());
}

#[test]
fn enforces_enums_maps_and_nullability() {
    let schema = json!({"type": "object", "properties": {
        "e": {"type": "string", "enum": ["A", "B"]},
        "m": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
        "n": {"type": "string", "nullable": true},
        "s": {"type": "string"}
    }});
    let got = messages(
        schema,
        json!({"e": "C", "m": {"x": "1", "y": 2}, "n": null, "s": null}),
    );
    assert!(
        got.iter()
            .any(|m| m == "e: Unsupported value: \"C\": supported values: \"A\", \"B\""),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|m| m == "m: Too many: 2: must have at most 1 items"),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|m| m.starts_with("m.y: Invalid value: \"integer\"")),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|m| m.starts_with("s: Invalid value: \"null\"")),
        "{got:?}"
    );
    assert_eq!(got.len(), 4, "{got:?}");
}

#[test]
fn list_map_keys_must_be_unique() {
    let schema = json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
        "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "string"}}}});
    let got = messages(schema, json!([{"k": "a", "v": "1"}, {"k": "a", "v": "2"}]));
    assert_eq!(
        got,
        vec!["[1]: Duplicate value: map[string]interface {}{\"k\":\"a\"}"]
    );
}

#[test]
fn the_root_object_meta_is_left_to_the_api_server() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object"}}});
    let object = json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "x"}, "spec": {}});
    assert!(messages(schema.clone(), object).is_empty());
    assert_eq!(
        messages(schema, json!({"extra": 1})),
        vec!["extra: unknown field \"extra\""]
    );
}

#[test]
fn defaults_fill_missing_fields_inside_present_objects_only() {
    let schema = json!({"type": "object", "properties": {
        "present": {"type": "object", "nullable": true, "properties": {"mount": {"type": "string", "default": "barbican"}}},
        "absent": {"type": "object", "properties": {"mount": {"type": "string", "default": "barbican"}}},
        "list": {"type": "array", "items": {"type": "object", "properties": {"p": {"type": "integer", "default": 1}}}},
        "kind": {"type": "string", "default": "ClusterSecretStore"}
    }});
    let mut value = json!({"present": {}, "list": [{}, {"p": 2}], "kind": "SecretStore"});
    apply_defaults(&schema, &mut value);
    assert_eq!(
        value,
        json!({"present": {"mount": "barbican"}, "list": [{"p": 1}, {"p": 2}], "kind": "SecretStore"})
    );
}

#[test]
fn pruning_drops_undeclared_fields_but_keeps_preserved_ones() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "known": {"type": "string"},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}}
        }}
    }});
    let mut value = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}, "top": 1,
        "spec": {"known": "k", "unknown": "u", "free": {"any": {"thing": 1}}, "map": {"a": {"v": "1", "w": "2"}}}});
    prune(&schema, &mut value);
    assert_eq!(
        value,
        json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"},
        "spec": {"known": "k", "free": {"any": {"thing": 1}}, "map": {"a": {"v": "1"}}}})
    );
}

#[test]
fn int_or_string_takes_both() {
    let schema = json!({"x-kubernetes-int-or-string": true});
    assert!(messages(schema.clone(), json!(1)).is_empty());
    assert!(messages(schema.clone(), json!("50%")).is_empty());
    assert_eq!(messages(schema, json!(true)).len(), 1);
}
