//! The fake controllers on a sim cluster with a virtual clock, observed through kube::Client:
//! conditions after their delays, outages, slow teardowns, Secret materialization, the
//! OpenBaoCluster's CA and service account and registered name, route status, and barbican's
//! healthcheck stand-in.

use std::{future::Future, time::Duration};

use barbican_fakes::{
    barbican_api::{BarbicanApi, Health},
    crds,
    external_secrets::ExternalSecrets,
    gateway_api::GatewayApi,
    mariadb::MariaDbOperator,
    openbao_cluster::OpenBaoOperator,
};
use barbican_sim::{Cluster, clock::Clock};
use k8s_openapi::api::core::v1::{Secret, Service, ServiceAccount};
use kube::{
    Api, Client,
    api::{ApiResource, DeleteParams, DynamicObject, PostParams},
};
use serde_json::{Value, json};

/// A sim on a virtual clock serving every third-party CRD, and an administrator's client.
pub(crate) fn cluster() -> (Cluster, Client) {
    let cluster = Cluster::with_clock(Clock::virtual_time());
    for crd in crds::all() {
        cluster.install_crd(crd).unwrap();
    }
    let client = cluster.client();
    (cluster, client)
}

fn resource(api_version: &str, kind: &str, plural: &str) -> ApiResource {
    let (group, version) = api_version.split_once('/').unwrap();
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: api_version.into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The `default` namespace's objects of a kind.
fn api(client: &Client, api_version: &str, kind: &str, plural: &str) -> Api<DynamicObject> {
    Api::default_namespaced_with(client.clone(), &resource(api_version, kind, plural))
}

async fn create(api: &Api<DynamicObject>, object: Value) -> DynamicObject {
    api.create(
        &PostParams::default(),
        &serde_json::from_value(object).unwrap(),
    )
    .await
    .unwrap()
}

/// Polls (real time, bounded) until `check` holds.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    for _ in 0..500 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn condition(api: &Api<DynamicObject>, name: &str, type_: &str) -> Option<(String, String)> {
    let object = api.get_opt(name).await.ok()??;
    object.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or("").into(),
                c["reason"].as_str().unwrap_or("").into(),
            )
        })
}

fn is(status: &str, reason: &str) -> Option<(String, String)> {
    Some((status.into(), reason.into()))
}

/// Waits until a controller has set a timer on the virtual clock, then advances it.
async fn advance_once_waiting(clock: &Clock, by: Duration) {
    eventually("a timer on the virtual clock", || async {
        clock.pending() > 0
    })
    .await;
    clock.advance(by).await;
}

#[tokio::test]
async fn mariadb_objects_become_ready_after_their_delay_and_a_mariadb_can_be_held() {
    let (cluster, client) = cluster();
    let operator = MariaDbOperator::start(client.clone(), cluster.clock().clone());
    operator
        .databases
        .set_behaviour(|b| b.ready_after = Duration::from_secs(30));
    let mariadbs = api(&client, "k8s.mariadb.com/v1alpha1", "MariaDB", "mariadbs");
    let databases = api(&client, "k8s.mariadb.com/v1alpha1", "Database", "databases");
    create(
        &mariadbs,
        json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
        "metadata": {"name": "mariadb"}, "spec": {"replicas": 1}}),
    )
    .await;
    create(&databases, json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "Database",
        "metadata": {"name": "barbican"}, "spec": {"mariaDbRef": {"name": "mariadb"}, "name": "barbican"}})).await;
    eventually("the MariaDB Ready", || async {
        condition(&mariadbs, "mariadb", "Ready").await == is("True", "StatefulSetReady")
    })
    .await;

    advance_once_waiting(cluster.clock(), Duration::from_secs(29)).await;
    assert_eq!(condition(&databases, "barbican", "Ready").await, None);
    cluster.clock().advance(Duration::from_secs(1)).await;
    eventually("the Database Ready after 30 s", || async {
        condition(&databases, "barbican", "Ready").await == is("True", "Created")
    })
    .await;
    let database = databases.get("barbican").await.unwrap();
    assert_eq!(
        database.metadata.finalizers.unwrap(),
        ["database.k8s.mariadb.com/finalizer"]
    );

    operator
        .mariadbs
        .hold("default", "mariadb", "Unavailable", "the primary is down")
        .await;
    assert_eq!(
        condition(&mariadbs, "mariadb", "Ready").await,
        is("False", "Unavailable")
    );
    operator.mariadbs.release("default", "mariadb").await;
    assert_eq!(
        condition(&mariadbs, "mariadb", "Ready").await,
        is("True", "StatefulSetReady")
    );
}

#[tokio::test]
async fn a_user_is_deleted_after_its_slow_teardown_and_its_schema_is_enforced() {
    let (cluster, client) = cluster();
    let operator = MariaDbOperator::start(client.clone(), cluster.clock().clone());
    operator
        .users
        .set_behaviour(|b| b.teardown = Duration::from_secs(60));
    let users = api(&client, "k8s.mariadb.com/v1alpha1", "User", "users");
    let user = |name: &str, connections: i64| {
        json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "User", "metadata": {"name": name},
            "spec": {"mariaDbRef": {"name": "mariadb"}, "maxUserConnections": connections,
                "passwordSecretKeyRef": {"name": "barbican-db", "key": "password"}}})
    };
    let refused = users
        .create(
            &PostParams::default(),
            &serde_json::from_value(user("bad", -1)).unwrap(),
        )
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("maxUserConnections"),
        "{refused}"
    );
    create(&users, user("barbican", 100)).await;
    eventually("the finalizer", || async {
        users
            .get("barbican")
            .await
            .is_ok_and(|u| u.metadata.finalizers.is_some())
    })
    .await;
    users
        .delete("barbican", &DeleteParams::default())
        .await
        .unwrap();
    advance_once_waiting(cluster.clock(), Duration::from_secs(59)).await;
    let terminating = users.get("barbican").await.unwrap();
    assert!(terminating.metadata.deletion_timestamp.is_some());
    cluster.clock().advance(Duration::from_secs(1)).await;
    eventually("the user gone after 60 s", || async {
        users.get_opt("barbican").await.unwrap().is_none()
    })
    .await;
}

#[tokio::test]
async fn external_secrets_materialize_and_stores_can_be_flipped() {
    let (cluster, client) = cluster();
    let eso = ExternalSecrets::start(client.clone(), cluster.clock().clone());
    eso.set_remote("openstack/barbican", "password", "s3cr3t");
    let stores: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &resource(
            "external-secrets.io/v1",
            "ClusterSecretStore",
            "clustersecretstores",
        ),
    );
    create(
        &stores,
        json!({"apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
        "metadata": {"name": "openbao-cluster-store"}, "spec": {"provider": {"vault": {}}}}),
    )
    .await;
    eventually("the store Ready", || async {
        condition(&stores, "openbao-cluster-store", "Ready").await == is("True", "Valid")
    })
    .await;
    eso.cluster_stores
        .hold(
            "",
            "openbao-cluster-store",
            "InvalidProviderConfig",
            "unable to log in",
        )
        .await;
    assert_eq!(
        condition(&stores, "openbao-cluster-store", "Ready").await,
        is("False", "InvalidProviderConfig")
    );

    let externals = api(
        &client,
        "external-secrets.io/v1",
        "ExternalSecret",
        "externalsecrets",
    );
    create(&externals, json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
        "metadata": {"name": "barbican-keystone"},
        "spec": {"secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao-cluster-store"},
            "target": {"name": "barbican-service-user"},
            "data": [{"secretKey": "password", "remoteRef": {"key": "openstack/barbican", "property": "password"}}]}})).await;
    let secrets: Api<Secret> = Api::default_namespaced(client.clone());
    eventually("the materialized Secret", || async {
        secrets
            .get_opt("barbican-service-user")
            .await
            .unwrap()
            .is_some()
    })
    .await;
    let secret = secrets.get("barbican-service-user").await.unwrap();
    assert_eq!(secret.data.unwrap()["password"].0, b"s3cr3t");
    assert_eq!(
        secret.metadata.owner_references.unwrap()[0].kind,
        "ExternalSecret"
    );
    assert_eq!(
        condition(&externals, "barbican-keystone", "Ready").await,
        is("True", "SecretSynced")
    );
}

#[tokio::test]
async fn an_openbao_cluster_publishes_its_ca_account_and_name() {
    let (cluster, client) = cluster();
    let operator =
        OpenBaoOperator::start(client.clone(), cluster.clock().clone(), cluster.services());
    let clusters = api(
        &client,
        "openbao.org/v1alpha1",
        "OpenBaoCluster",
        "openbaoclusters",
    );
    create(
        &clusters,
        json!({"apiVersion": "openbao.org/v1alpha1", "kind": "OpenBaoCluster",
        "metadata": {"name": "openbao"}, "spec": {"replicas": 3}}),
    )
    .await;
    eventually("the instance Available", || async {
        condition(&clusters, "openbao", "Available").await == is("True", "ClusterReady")
    })
    .await;
    let secrets: Api<Secret> = Api::default_namespaced(client.clone());
    eventually("the CA Secret", || async {
        secrets.get_opt("openbao-tls-ca").await.unwrap().is_some()
    })
    .await;
    let fake = operator.instance("default", "openbao").unwrap();
    let ca = secrets.get("openbao-tls-ca").await.unwrap().data.unwrap()["ca.crt"]
        .0
        .clone();
    assert_eq!(String::from_utf8(ca).unwrap(), fake.ca_pem());
    let accounts: Api<ServiceAccount> = Api::default_namespaced(client.clone());
    eventually("the provisioner ServiceAccount", || async {
        accounts
            .get_opt("openbao-provisioner")
            .await
            .unwrap()
            .is_some()
    })
    .await;
    assert_eq!(
        cluster.services().resolve("openbao.default.svc", 8200),
        Some(fake.addr())
    );
    // The provisioner's projected token logs in through the sim's TokenReview.
    let token = accounts
        .create_token_request(
            "openbao-provisioner",
            &PostParams::default(),
            &serde_json::from_value(
                json!({"spec": {"audiences": ["openbao"], "expirationSeconds": 600}}),
            )
            .unwrap(),
        )
        .await
        .unwrap()
        .status
        .unwrap()
        .token
        .unwrap();
    // The reviewer blocks its caller (it serves wiremock's synchronous responders), so it is
    // called off this runtime, which must stay free to drive the in-process client.
    let reviewer = barbican_fakes::openbao::KubeTokenReviewer(client.clone());
    let review = tokio::task::spawn_blocking(move || {
        barbican_fakes::openbao::TokenReviewer::review(&reviewer, &token, &["openbao".to_string()])
    })
    .await
    .unwrap();
    assert_eq!(review.unwrap().name, "openbao-provisioner");
}

#[tokio::test]
async fn http_routes_are_accepted_or_refused_per_parent() {
    let (cluster, client) = cluster();
    let gateway = GatewayApi::start(client.clone(), cluster.clock().clone());
    let routes = api(
        &client,
        "gateway.networking.k8s.io/v1",
        "HTTPRoute",
        "httproutes",
    );
    create(&routes, json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
        "metadata": {"name": "barbican"},
        "spec": {"parentRefs": [{"name": "public", "namespace": "gateways"}], "hostnames": ["kms.example.com"]}})).await;
    let accepted = |routes: Api<DynamicObject>| async move {
        routes.get("barbican").await.ok().and_then(|r| {
            r.data["status"]["parents"][0]["conditions"]
                .as_array()?
                .iter()
                .find(|c| c["type"] == "Accepted")
                .map(|c| {
                    (
                        c["status"].as_str().unwrap().to_string(),
                        c["reason"].as_str().unwrap().to_string(),
                    )
                })
        })
    };
    eventually("the route accepted", || {
        let routes = routes.clone();
        async move { accepted(routes).await == is("True", "Accepted") }
    })
    .await;
    let route = routes.get("barbican").await.unwrap();
    assert_eq!(
        route.data["status"]["parents"][0]["parentRef"]["name"],
        "public"
    );
    gateway
        .set_refused("default", "barbican", Some("NotAllowedByListeners"))
        .await;
    assert_eq!(
        accepted(routes.clone()).await,
        is("False", "NotAllowedByListeners")
    );
}

#[tokio::test]
async fn barbicans_healthcheck_answers_as_the_scenario_says() {
    let (cluster, client) = cluster();
    let api = BarbicanApi::start(client.clone(), cluster.services());
    let services: Api<Service> = Api::default_namespaced(client.clone());
    services
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "barbican"},
                "spec": {"ports": [{"name": "barbican-api", "port": 9311}]}}))
            .unwrap(),
        )
        .await
        .unwrap();
    eventually("the stand-in", || async {
        api.addr("default", "barbican").is_some()
    })
    .await;
    let addr = cluster
        .services()
        .resolve("barbican.default.svc", 9311)
        .unwrap();
    assert_eq!(Some(addr), api.addr("default", "barbican"));
    let probe = |addr: std::net::SocketAddr| async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| e.kind())?;
        stream
            .write_all(b"GET /healthcheck HTTP/1.1\r\nHost: barbican\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        Ok::<u16, std::io::ErrorKind>(answer[9..12].parse().unwrap())
    };
    assert_eq!(probe(addr).await, Ok(200));
    api.set_health("default", "barbican", Health::Unhealthy);
    assert_eq!(probe(addr).await, Ok(503));
    api.set_health(
        "default",
        "barbican",
        Health::Slow(Duration::from_millis(200)),
    );
    let started = std::time::Instant::now();
    assert_eq!(probe(addr).await, Ok(200));
    assert!(started.elapsed() >= Duration::from_millis(200));
    api.set_health("default", "barbican", Health::Refusing);
    eventually("connections refused", || async {
        probe(addr).await == Err(std::io::ErrorKind::ConnectionRefused)
    })
    .await;
    api.set_health("default", "barbican", Health::Healthy);
    eventually("serving again", || async { probe(addr).await == Ok(200) }).await;
    assert!(!api.set_health("default", "nothing", Health::Healthy));
}

/// Counts realizations; never fails.
struct Counting(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl barbican_fakes::controller::Realizer for Counting {
    fn realize(&self, _: DynamicObject) -> futures::future::BoxFuture<'static, Result<(), String>> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async { Ok(()) })
    }
    fn remove(&self, _: DynamicObject) -> futures::future::BoxFuture<'static, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn an_object_is_realized_once_per_generation_not_again_for_its_own_condition() {
    let (cluster, client) = cluster();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let _databases = barbican_fakes::controller::FakeController::start_realizing(
        client.clone(),
        cluster.clock().clone(),
        resource("k8s.mariadb.com/v1alpha1", "Database", "databases"),
        barbican_fakes::controller::Behaviour::ready("Ready", "Created"),
        None,
        Some(std::sync::Arc::new(Counting(count.clone()))),
    );
    let databases = api(&client, "k8s.mariadb.com/v1alpha1", "Database", "databases");
    create(
        &databases,
        json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "Database",
        "metadata": {"name": "kms"}, "spec": {"mariaDbRef": {"name": "mariadb"}, "name": "kms"}}),
    )
    .await;
    eventually("the Database Ready", || async {
        condition(&databases, "kms", "Ready").await == is("True", "Created")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        count.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the Ready write is no change"
    );
    databases
        .patch(
            "kms",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"name": "kms2"}})),
        )
        .await
        .unwrap();
    eventually("a second realization for the new spec", || async {
        count.load(std::sync::atomic::Ordering::SeqCst) == 2
    })
    .await;
}
