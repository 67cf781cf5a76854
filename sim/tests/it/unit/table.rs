//! Tests of `barbican_sim::table`.

use serde_json::json;

use barbican_sim::table::*;

#[test]
fn printer_column_paths() {
    let o = json!({"status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}], "endpoint": "http://x"}, "spec": {"list": ["a", "b"]}});
    assert_eq!(
        json_path(&o, ".status.conditions[?(@.type=='Ready')].status"),
        vec![json!("True")]
    );
    assert_eq!(json_path(&o, ".status.endpoint"), vec![json!("http://x")]);
    assert_eq!(json_path(&o, ".spec.list[1]"), vec![json!("b")]);
    assert!(json_path(&o, ".status.missing").is_empty());
}
