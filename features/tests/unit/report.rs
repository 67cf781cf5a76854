//! Tests of `barbican_features::report`.

use std::time::Duration;

use serde_json::json;

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
    // No Deployment yet (its Secrets are missing), so no pods: the report says so.
    assert!(report.contains("    no pods\n"), "{report}");
}

#[test]
fn a_table_aligns_its_columns() {
    let rows = [["Ready".to_string(), "True".to_string()]];
    assert_eq!(
        table(&["condition", "status"], &rows),
        "      | condition | status |\n      | Ready     | True   |\n"
    );
}

/// A pod's row says whether it crash-loops (waiting, restarts, the last exit) or runs.
#[test]
fn pod_rows_tell_a_crash_loop_from_a_running_pod() {
    let pods = [
        json!({"metadata": {"namespace": "openstack", "name": "barbican-a"},
            "status": {"phase": "Running", "containerStatuses": [{"name": "api", "ready": false,
                "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"reason": "Error", "exitCode": 1}}}]}}),
        json!({"metadata": {"namespace": "openstack", "name": "barbican-b"},
            "status": {"phase": "Running", "containerStatuses": [{"name": "api", "ready": true,
                "restartCount": 0, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}}),
        json!({"metadata": {"namespace": "openstack", "name": "pending"}, "status": {"phase": "Pending"}}),
    ];
    let rows = pod_rows(&pods);
    assert_eq!(
        rows[0],
        [
            "openstack/barbican-a",
            "Running",
            "0/1",
            "3",
            "api: waiting CrashLoopBackOff (last: terminated Error, exit 1)"
        ]
        .map(String::from)
    );
    assert_eq!(
        rows[1],
        [
            "openstack/barbican-b",
            "Running",
            "1/1",
            "0",
            "api: running"
        ]
        .map(String::from)
    );
    assert_eq!(
        rows[2],
        ["openstack/pending", "Pending", "0/0", "0", ""].map(String::from)
    );
}
