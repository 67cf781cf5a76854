//! The fake mariadb-operator on a real `mariadbd` (installed by `ci/install-mariadb.sh`):
//! Database, User and Grant exist in the server before they turn Ready, follow their specs,
//! and are dropped before their finalizers go; a stopped server keeps them not-ready until it
//! is back.

use std::{future::Future, sync::Arc, time::Duration};

use barbican_fakes::{
    crds,
    mariadb::MariaDbOperator,
    mariadb_server::{MariaDbServer, identifier, literal},
};
use barbican_sim::{Cluster, clock::Clock};
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, Client,
    api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// A password with every character SQL quoting must get right.
const PASSWORD: &str = "p'a\\ss\";wo`rd --";

async fn server(test: &str) -> Arc<Mutex<MariaDbServer>> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mariadb-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    let server = MariaDbServer::start(&dir)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    Arc::new(Mutex::new(server))
}

fn api(client: &Client, kind: &str, plural: &str) -> Api<DynamicObject> {
    let resource = ApiResource {
        group: "k8s.mariadb.com".into(),
        version: "v1alpha1".into(),
        api_version: "k8s.mariadb.com/v1alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
    };
    Api::default_namespaced_with(client.clone(), &resource)
}

async fn create(api: &Api<DynamicObject>, kind: &str, name: &str, spec: Value) {
    let object = json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": kind,
        "metadata": {"name": name}, "spec": spec});
    api.create(
        &PostParams::default(),
        &serde_json::from_value(object).unwrap(),
    )
    .await
    .unwrap();
}

/// Polls (real time, bounded) until `check` holds. The server answers in milliseconds, but the
/// fake operator runs the `mariadb` client as a process per statement, and beside the rest of
/// the suite on two cores that took longer than the 6 s this once allowed (CI of f235f72: "timed
/// out waiting for the Database Failed"); 30 s is a bound on liveness, not a speed assertion.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..1500 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn ready(api: &Api<DynamicObject>, name: &str) -> Option<(String, String)> {
    let object = api.get_opt(name).await.ok()??;
    let condition = object.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")?
        .clone();
    Some((
        condition["status"].as_str()?.to_string(),
        condition["message"].as_str().unwrap_or("").to_string(),
    ))
}

async fn root(server: &Arc<Mutex<MariaDbServer>>, sql: &str) -> String {
    server.lock().await.execute(sql).await.unwrap()
}

fn cluster() -> (Cluster, Client, Clock) {
    let clock = Clock::virtual_time();
    let cluster = Cluster::with_clock(clock.clone());
    for crd in crds::all() {
        cluster.install_crd(crd).unwrap();
    }
    let client = cluster.client();
    (cluster, client, clock)
}

#[test]
fn names_and_values_are_quoted_for_sql() {
    assert_eq!(identifier("a`b").unwrap(), "`a``b`");
    assert!(identifier("").is_err() && identifier("a\0").is_err());
    assert_eq!(literal("it's \\ here").unwrap(), "'it''s \\\\ here'");
    assert!(literal("nul\0").is_err());
}

#[tokio::test]
async fn a_real_server_gets_the_database_user_and_grant_and_loses_them_on_deletion() {
    let server = server("lifecycle").await;
    let (_cluster, client, clock) = cluster();
    let _operator =
        MariaDbOperator::start_real(client.clone(), clock, server.clone(), Default::default());
    let secret: Secret = serde_json::from_value(json!({"metadata": {"name": "kms-db"},
        "stringData": {"password": PASSWORD}}))
    .unwrap();
    Api::<Secret>::default_namespaced(client.clone())
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let (databases, users, grants) = (
        api(&client, "Database", "databases"),
        api(&client, "User", "users"),
        api(&client, "Grant", "grants"),
    );
    let mariadb_ref = json!({"name": "mariadb"});
    create(
        &databases,
        "Database",
        "kms",
        json!({"mariaDbRef": mariadb_ref, "name": "kms-db",
        "characterSet": "utf8", "collate": "utf8_general_ci"}),
    )
    .await;
    create(
        &users,
        "User",
        "kms",
        json!({"mariaDbRef": mariadb_ref, "maxUserConnections": 7,
        "passwordSecretKeyRef": {"name": "kms-db", "key": "password"}}),
    )
    .await;
    for (api, what) in [(&databases, "Database"), (&users, "User")] {
        eventually(what, || async {
            ready(api, "kms").await.is_some_and(|r| r.0 == "True")
        })
        .await;
    }
    assert!(
        root(&server, "SHOW DATABASES")
            .await
            .lines()
            .any(|l| l == "kms-db")
    );
    assert_eq!(
        root(
            &server,
            "SELECT max_user_connections FROM mysql.user WHERE User = 'kms'"
        )
        .await
        .trim(),
        "7"
    );
    let as_user = |sql: &'static str| {
        let server = server.clone();
        async move { server.lock().await.execute_as("kms", PASSWORD, sql).await }
    };
    assert!(
        as_user("CREATE TABLE `kms-db`.t (id INT)").await.is_err(),
        "no grant yet"
    );

    create(
        &grants,
        "Grant",
        "kms",
        json!({"mariaDbRef": mariadb_ref,
        "privileges": ["ALL PRIVILEGES"], "database": "kms-db", "table": "*", "username": "kms"}),
    )
    .await;
    eventually("the Grant", || async {
        ready(&grants, "kms").await.is_some_and(|r| r.0 == "True")
    })
    .await;
    as_user("CREATE TABLE `kms-db`.t (id INT)").await.unwrap();
    let wrong = server
        .lock()
        .await
        .execute_as("kms", "not-the-password", "SELECT 1")
        .await;
    assert!(wrong.is_err(), "the password is the Secret's");

    // A spec change reaches the server.
    users
        .patch(
            "kms",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"maxUserConnections": 9}})),
        )
        .await
        .unwrap();
    eventually("max_user_connections 9", || async {
        root(
            &server,
            "SELECT max_user_connections FROM mysql.user WHERE User = 'kms'",
        )
        .await
        .trim()
            == "9"
    })
    .await;

    for api in [&grants, &users, &databases] {
        api.delete("kms", &DeleteParams::default()).await.unwrap();
    }
    for api in [&grants, &users, &databases] {
        eventually("the finalizer released", || async {
            api.get_opt("kms").await.unwrap().is_none()
        })
        .await;
    }
    assert!(
        !root(&server, "SHOW DATABASES")
            .await
            .lines()
            .any(|l| l == "kms-db")
    );
    assert_eq!(
        root(
            &server,
            "SELECT COUNT(*) FROM mysql.user WHERE User = 'kms'"
        )
        .await
        .trim(),
        "0"
    );
}

#[tokio::test]
async fn a_stopped_server_keeps_a_database_failed_until_it_is_back() {
    let server = server("outage").await;
    let (_cluster, client, clock) = cluster();
    let _operator = MariaDbOperator::start_real(
        client.clone(),
        clock.clone(),
        server.clone(),
        Default::default(),
    );
    server.lock().await.stop().await;
    let databases = api(&client, "Database", "databases");
    create(
        &databases,
        "Database",
        "kms",
        json!({"mariaDbRef": {"name": "mariadb"}, "name": "kms"}),
    )
    .await;
    eventually("the Database Failed", || async {
        ready(&databases, "kms")
            .await
            .is_some_and(|(status, message)| status == "False" && message.contains("Can't connect"))
    })
    .await;
    server.lock().await.resume().await.unwrap();
    eventually("the Database Ready once the retry runs", || async {
        if clock.pending() > 0 {
            clock
                .advance(barbican_fakes::controller::REALIZE_RETRY)
                .await;
        }
        ready(&databases, "kms")
            .await
            .is_some_and(|r| r.0 == "True")
    })
    .await;
    assert!(
        root(&server, "SHOW DATABASES")
            .await
            .lines()
            .any(|l| l == "kms")
    );
}
