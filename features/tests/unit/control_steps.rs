//! Tests of `barbican_features::control_steps`.

use serde_json::json;

use barbican_features::control_steps::*;

#[test]
fn a_table_of_fields_builds_nested_maps_with_yaml_scalars() {
    let mut object = json!({"metadata": {"name": "x"}});
    set_path(&mut object, "spec.deployment.replicas", scalar("2")).unwrap();
    set_path(&mut object, "spec.region", scalar("RegionOne")).unwrap();
    set_path(&mut object, "spec.flags", scalar("[a, b]")).unwrap();
    assert_eq!(
        object,
        json!({"metadata": {"name": "x"}, "spec": {"deployment": {"replicas": 2},
            "region": "RegionOne", "flags": ["a", "b"]}})
    );
    assert!(set_path(&mut object, "spec.region.deeper", json!(1)).is_err());
    assert!(set_path(&mut object, "spec..x", json!(1)).is_err());
}
