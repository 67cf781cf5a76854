//! The full example with any JSON merged over its spec (RFC 7386): whatever both webhooks
//! admit renders faithfully. Starting from an admitted object keeps the fuzzer near the
//! renderer instead of the schema's first refusal.
#![no_main]

use barbican_operator::properties::admitted_barbicans_render_faithfully;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const FULL: &str = include_str!("../../deploy/examples/barbican-full.yaml");

fn merge(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(fields) => {
            if !target.is_object() {
                *target = Value::Object(Default::default());
            }
            for (key, value) in fields {
                if value.is_null() {
                    target.as_object_mut().unwrap().remove(key);
                } else {
                    merge(target.as_object_mut().unwrap().entry(key).or_insert(Value::Null), value);
                }
            }
        }
        other => *target = other.clone(),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(patch) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let mut object: Value = serde_saphyr::from_str(FULL).expect("the example parses");
    let spec = object["spec"].as_object_mut().expect("a spec");
    spec.remove("targetClusterRef");
    merge(&mut object["spec"], &patch);
    if let Err(violation) = admitted_barbicans_render_faithfully(&object) {
        panic!("{violation}");
    }
});
