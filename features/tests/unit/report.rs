//! Tests of `barbican_features::report`.

use std::time::Duration;

use barbican_features::report::*;
use barbican_features::sim_env::SimEnv;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_shows_the_conditions_the_object_and_the_events() {
    let env = SimEnv::start(false).await.unwrap();
    env.apply_yaml(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: openstack}\n---\n\
         apiVersion: barbican.openstack.c5c3.io/v1alpha1\nkind: Barbican\n\
         metadata: {name: kms, namespace: openstack}\n\
         spec:\n  openStackRelease: \"2025.2\"\n  image: {repository: r, tag: \"2025.2\"}\n\
         \x20 database: {clusterRef: {name: db}, database: barbican, secretRef: {name: kms-db}}\n\
         \x20 cache: {clusterRef: {name: mc}}\n  keystoneEndpoint: http://keystone:5000/v3\n\
         \x20 serviceUser: {secretRef: {name: kms-keystone}}\n",
    )
    .await
    .unwrap();
    env.eventually(Duration::from_secs(60), || async {
        let conditions = env.conditions("Barbican", "openstack", "kms").await?;
        if conditions.iter().any(|c| c.type_ == "SecretsReady") {
            Ok(())
        } else {
            Err("no SecretsReady yet".to_string())
        }
    })
    .await
    .unwrap();
    let report = explain(&env).await;
    assert!(report.contains("Barbican openstack/kms:"), "{report}");
    assert!(
        report.contains("| condition    | status | reason"),
        "a condition table: {report}"
    );
    assert!(report.contains("SecretsReady | False"), "{report}");
    assert!(
        report.contains("kind: Barbican"),
        "the object as YAML: {report}"
    );
    assert!(!report.contains("managedFields"), "{report}");
    assert!(
        report.contains("no events yet") || report.contains("the newest events:"),
        "{report}"
    );
    assert!(report.contains("about openstack/kms"), "{report}");
}

#[test]
fn a_table_aligns_its_columns() {
    let rows = [["Ready".to_string(), "True".to_string()]];
    assert_eq!(
        table(&["condition", "status"], &rows),
        "      | condition | status |\n      | Ready     | True   |\n"
    );
}
