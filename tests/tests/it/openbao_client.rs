//! The operator's OpenBao client against the fake OpenBao over real TLS: it trusts only the CA
//! it is given, sends the namespace header, is bounded by its timeout, and classifies answers
//! into what the store conditions need.

use std::{net::SocketAddr, time::Duration};

use barbican_fakes::openbao::{FakeOpenBao, SelfInit};
use barbican_operator::{
    openbao::{Error, OpenBao, TIMEOUT, Target, Token, missing_capabilities},
    resolve::Resolve,
};
use barbican_sim::clock::Clock;

/// Resolves one in-cluster name to the fake.
struct Named(&'static str, SocketAddr);

impl Resolve for Named {
    fn resolve(&self, host: &str, _port: u16) -> Option<SocketAddr> {
        (host == self.0).then_some(self.1)
    }
}

const HOST: &str = "bao.openstack.svc";

fn target(ca: &str, namespace: Option<&str>) -> Target {
    Target {
        url: format!("https://{HOST}:8200"),
        ca_pem: Some(ca.as_bytes().to_vec()),
        namespace: namespace.map(String::from),
    }
}

async fn fake() -> FakeOpenBao {
    let fake = FakeOpenBao::start(Clock::virtual_time()).await.unwrap();
    fake.self_init("bao", "openstack", SelfInit::COMPLETE);
    fake
}

#[tokio::test]
async fn logins_provisioning_reads_and_mints_are_answered_and_classified() {
    let fake = fake().await;
    let resolver = Named(HOST, fake.addr());
    let client = OpenBao::connect(&target(&fake.ca_pem(), None), &resolver, TIMEOUT).unwrap();
    let (role_id, secret_id) = fake.approle_credentials("barbican").unwrap();

    let session = client.with_token(client.approle_login(&role_id, &secret_id).await.unwrap());
    let held = session
        .capabilities_self("barbican/data/probe")
        .await
        .unwrap();
    assert!(missing_capabilities(&held).is_empty(), "{held:?}");
    session.revoke_self().await;

    let rejected = client
        .approle_login(&role_id, "not-the-secret")
        .await
        .unwrap_err();
    assert!(rejected.rejects_credentials(), "{rejected:?}");

    let root = client.with_token(Token::new(fake.root_token()));
    assert!(root.mount_exists("barbican").await.unwrap());
    assert!(!root.mount_exists("elsewhere").await.unwrap());
    assert_eq!(
        root.role_id("barbican").await.unwrap(),
        Some(role_id.clone())
    );
    assert_eq!(root.role_id("ghost").await.unwrap(), None);
    let minted = root.mint_secret_id("barbican").await.unwrap();
    assert_eq!(minted.ttl_seconds, 720 * 3600, "the role's own TTL");
    assert!(
        !format!("{minted:?}").contains(&minted.value),
        "Debug hides the secret ID"
    );
    client.approle_login(&role_id, &minted.value).await.unwrap();

    let mint = fake
        .requests()
        .into_iter()
        .find(|r| r.path == "auth/approle/role/barbican/secret-id" && r.status == 200)
        .unwrap();
    assert_eq!(
        (mint.method.as_str(), &mint.body),
        ("PUT", &serde_json::Value::Null),
        "no body, no TTL asked for"
    );
}

#[tokio::test]
async fn a_server_signed_by_another_ca_is_unreachable() {
    let (fake, stranger) = (fake().await, fake().await);
    let resolver = Named(HOST, fake.addr());
    let client = OpenBao::connect(&target(&stranger.ca_pem(), None), &resolver, TIMEOUT).unwrap();
    let error = client.approle_login("r", "s").await.unwrap_err();
    assert!(
        matches!(&error, Error::Unreachable(m) if m.to_lowercase().contains("certificate")),
        "{error:?}"
    );
}

#[tokio::test]
async fn the_namespace_rides_on_every_request_and_the_timeout_bounds_each() {
    let fake = fake().await;
    let resolver = Named(HOST, fake.addr());
    let client = OpenBao::connect(
        &target(&fake.ca_pem(), Some("tenant-a")),
        &resolver,
        TIMEOUT,
    )
    .unwrap();
    let _ = client.approle_login("r", "s").await;
    let logged = fake.requests();
    assert!(
        !logged.is_empty() && logged.iter().all(|r| r.namespace == "tenant-a"),
        "{logged:?}"
    );

    fake.set_latency(Duration::from_secs(3));
    let impatient = OpenBao::connect(
        &target(&fake.ca_pem(), None),
        &resolver,
        Duration::from_millis(200),
    )
    .unwrap();
    let error = impatient.approle_login("r", "s").await.unwrap_err();
    assert!(matches!(error, Error::Unreachable(_)), "{error:?}");
}
