//! Tests of `barbican_features::chart_identity`.

use barbican_features::chart_identity::*;

#[test]
fn each_granted_namespace_gets_a_role_naming_its_instances_provisioners() {
    let mut grants = grant("openstack", "openbao-instance");
    grants
        .entry("tenant-a".into())
        .or_default()
        .extend(["b".to_string(), "a".to_string()]);
    let objects = objects(&grants).unwrap();
    let roles: Vec<(&str, &str, Vec<&str>)> = objects
        .iter()
        .filter(|o| {
            o["kind"] == "Role" && o["metadata"]["name"] != "barbican-operator-leader-election"
        })
        .map(|o| {
            (
                o["metadata"]["namespace"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap(),
                o["rules"][0]["resourceNames"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        roles,
        vec![
            (
                "openstack",
                "barbican-operator-provisioner-tokens",
                vec!["openbao-instance-provisioner"]
            ),
            (
                "tenant-a",
                "barbican-operator-provisioner-tokens",
                vec!["a-provisioner", "b-provisioner"]
            ),
        ]
    );
    let bindings = objects
        .iter()
        .filter(|o| o["kind"] == "RoleBinding")
        .filter(|o| o["metadata"]["name"] == "barbican-operator-provisioner-tokens")
        .count();
    assert_eq!(bindings, 2);
    assert!(
        !serde_json::to_string(&objects)
            .unwrap()
            .contains("HARNESS-"),
        "every placeholder is filled in"
    );
}

#[test]
fn without_grants_only_the_fixed_objects_remain() {
    let kinds: Vec<String> = objects(&StoreGrants::new())
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding"
        ]
    );
}
