//! The fake OpenBao through real clients: vaultrs, and raw HTTPS for the error shapes and the
//! endpoints vaultrs does not cover. TLS is verified everywhere against the fake's CA, for the
//! in-cluster name or `localhost`.

use std::{sync::Arc, time::Duration};

use barbican_fakes::openbao::{FakeOpenBao, KubeTokenReviewer, Outage, SelfInit};
use barbican_sim::{Cluster, clock::Clock};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::{Api, api::PostParams};
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use serde_json::{Value, json};
use vaultrs::client::{Client as _, VaultClient, VaultClientSettingsBuilder};

const NAME: &str = "openbao.openbao.svc";

async fn fake() -> FakeOpenBao {
    let fake = FakeOpenBao::start(Clock::virtual_time()).await.unwrap();
    fake.self_init("openbao", "openbao", SelfInit::COMPLETE);
    fake
}

/// An HTTP/1.1 connection to the fake over TLS, verifying its certificate for the in-cluster
/// name against the fake's CA.
async fn connect(fake: &FakeOpenBao) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(fake.ca_pem().as_bytes()).unwrap())
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(fake.addr()).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from(NAME).unwrap(), tcp)
        .await
        .unwrap();
    let (sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
            .await
            .unwrap();
    tokio::spawn(connection);
    sender
}

/// One HTTPS request to the fake by its in-cluster name; returns the status and the JSON body.
async fn call(
    fake: &FakeOpenBao,
    method: &str,
    path: &str,
    token: Option<&str>,
    namespace: Option<&str>,
    body: Value,
) -> (u16, Value) {
    let mut sender = connect(fake).await;
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(format!("/v1/{path}"))
        .header("host", format!("{NAME}:8200"));
    if let Some(token) = token {
        request = request.header("x-vault-token", token);
    }
    if let Some(namespace) = namespace {
        request = request.header("x-vault-namespace", namespace);
    }
    let body = if body.is_null() {
        Bytes::new()
    } else {
        Bytes::from(body.to_string())
    };
    let response = sender
        .send_request(request.body(Full::new(body)).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn vault(fake: &FakeOpenBao, token: &str, namespace: Option<&str>) -> VaultClient {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let ca = std::env::temp_dir().join(format!(
        "fake-openbao-{}-ca-{}.crt",
        std::process::id(),
        fake.addr().port()
    ));
    std::fs::write(&ca, fake.ca_pem()).unwrap();
    let mut settings = VaultClientSettingsBuilder::default();
    settings
        .address(format!("https://localhost:{}", fake.addr().port()))
        .token(token)
        .ca_certs(vec![ca.to_string_lossy().into_owned()]);
    if let Some(namespace) = namespace {
        settings.namespace(Some(namespace.to_string()));
    }
    let client = VaultClient::new(settings.build().unwrap()).unwrap();
    // The client read the CA when it was built; a test run leaves nothing behind.
    let _ = std::fs::remove_file(&ca);
    client
}

/// Mints AppRole credentials for `barbican` with the root token; returns (role_id, secret_id).
async fn credentials(fake: &FakeOpenBao) -> (String, String) {
    let root = vault(fake, fake.root_token(), None);
    let role_id = vaultrs::auth::approle::role::read_id(&root, "approle", "barbican")
        .await
        .unwrap()
        .role_id;
    let secret = vaultrs::auth::approle::role::secret::generate(&root, "approle", "barbican", None)
        .await
        .unwrap();
    (role_id, secret.secret_id)
}

#[tokio::test]
async fn vaultrs_mints_logs_in_and_stores_reads_lists_and_deletes_secrets() {
    let fake = fake().await;
    let (role_id, secret_id) = credentials(&fake).await;
    let login =
        vaultrs::auth::approle::login(&vault(&fake, "", None), "approle", &role_id, &secret_id)
            .await
            .unwrap();
    assert!(login.policies.contains(&"barbican-secretstore".to_string()));
    assert_eq!(login.metadata.unwrap()["role_name"], "barbican");
    let client = vault(&fake, &login.client_token, None);

    let secret = json!({"payload": "c2VjcmV0", "content_type": "application/octet-stream"});
    vaultrs::kv2::set(&client, "barbican", "project/abc", &secret)
        .await
        .unwrap();
    let read: Value = vaultrs::kv2::read(&client, "barbican", "project/abc")
        .await
        .unwrap();
    assert_eq!(read, secret);
    let keys = vaultrs::kv2::list(&client, "barbican", "project")
        .await
        .unwrap();
    assert_eq!(keys, ["abc"]);
    let metadata = vaultrs::kv2::read_metadata(&client, "barbican", "project/abc")
        .await
        .unwrap();
    assert_eq!(metadata.current_version, 1);
    vaultrs::kv2::delete_latest(&client, "barbican", "project/abc")
        .await
        .unwrap();
    assert!(
        vaultrs::kv2::read::<Value>(&client, "barbican", "project/abc")
            .await
            .is_err()
    );

    let mounts = vaultrs::sys::mount::list(&client).await;
    assert!(
        mounts.is_err(),
        "the barbican policy does not read sys/mounts"
    );
    let mounts = vaultrs::sys::mount::list(&vault(&fake, fake.root_token(), None))
        .await
        .unwrap();
    let kv = &mounts["barbican/"];
    assert_eq!(kv.mount_type, "kv");
    assert_eq!(kv.options.as_ref().unwrap()["version"], "2");
    let one = vaultrs::sys::mount::get_configuration_of_a_secret_engine(
        &vault(&fake, fake.root_token(), None),
        "barbican",
    )
    .await
    .unwrap();
    assert_eq!(
        (one.mount_type.as_str(), one.accessor.as_str()),
        ("kv", kv.accessor.as_str())
    );
    vaultrs::token::revoke_self(&client).await.unwrap();
    assert!(client.lookup().await.is_err(), "a revoked token is gone");
}

#[tokio::test]
async fn errors_are_shaped_as_openbao_shapes_them() {
    let fake = fake().await;
    let (role_id, secret_id) = credentials(&fake).await;
    let root = Some(fake.root_token());
    let login = |role: &str, secret: &str| json!({"role_id": role, "secret_id": secret});

    let (status, body) = call(
        &fake,
        "POST",
        "auth/approle/login",
        None,
        None,
        login(&role_id, "wrong"),
    )
    .await;
    assert_eq!(
        (status, body),
        (400, json!({"errors": ["invalid role or secret ID"]}))
    );
    let (status, _) = call(
        &fake,
        "POST",
        "auth/approle/login",
        None,
        None,
        login("wrong", &secret_id),
    )
    .await;
    assert_eq!(status, 400);
    let (status, body) = call(
        &fake,
        "PUT",
        "auth/approle/login",
        None,
        None,
        login(&role_id, &secret_id),
    )
    .await;
    assert_eq!(status, 200);
    let auth = &body["auth"];
    for field in [
        "client_token",
        "accessor",
        "policies",
        "token_policies",
        "metadata",
        "lease_duration",
        "renewable",
        "token_type",
    ] {
        assert!(!auth[field].is_null(), "auth.{field} in {auth}");
    }
    let token = auth["client_token"].as_str().unwrap().to_string();

    let (status, body) = call(
        &fake,
        "GET",
        "auth/approle/role/missing/role-id",
        root,
        None,
        Value::Null,
    )
    .await;
    assert_eq!((status, body), (404, json!({"errors": []})));
    let (status, _) = call(
        &fake,
        "PUT",
        "auth/approle/role/missing/secret-id",
        root,
        None,
        Value::Null,
    )
    .await;
    assert_eq!(status, 404);
    let (status, body) = call(
        &fake,
        "PUT",
        "auth/approle/role/barbican/secret-id",
        root,
        None,
        json!({"ttl": "60s"}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["secret_id_ttl"], 60);
    for field in ["secret_id", "secret_id_accessor", "secret_id_num_uses"] {
        assert!(!body["data"][field].is_null(), "{field}");
    }
    let (status, body) = call(
        &fake,
        "PUT",
        "auth/approle/role/barbican/secret-id",
        root,
        None,
        Value::Null,
    )
    .await;
    assert_eq!(
        (status, body["data"]["secret_id_ttl"].as_i64()),
        (200, Some(720 * 3600)),
        "the role's TTL"
    );

    let (status, body) = call(&fake, "GET", "barbican/data/x", None, None, Value::Null).await;
    assert_eq!(
        (status, body),
        (403, json!({"errors": ["permission denied"]}))
    );
    let (status, _) = call(
        &fake,
        "GET",
        "sys/mounts/barbican",
        Some(&token),
        None,
        Value::Null,
    )
    .await;
    assert_eq!(status, 403, "the barbican policy does not read mounts");
    let (status, body) = call(&fake, "GET", "sys/mounts/barbican", root, None, Value::Null).await;
    assert_eq!(
        (status, &body["type"], &body["options"]["version"]),
        (200, &json!("kv"), &json!("2"))
    );
    let (status, body) = call(
        &fake,
        "GET",
        "sys/mounts/elsewhere",
        root,
        None,
        Value::Null,
    )
    .await;
    assert_eq!(
        (status, body),
        (
            400,
            json!({"errors": ["No secret engine mount at elsewhere/"]})
        )
    );
    let (status, body) = call(
        &fake,
        "GET",
        "barbican/data/never-written",
        Some(&token),
        None,
        Value::Null,
    )
    .await;
    assert_eq!((status, body), (404, json!({"errors": []})));

    let (status, body) = call(
        &fake,
        "POST",
        "sys/capabilities-self",
        Some(&token),
        None,
        json!({"paths": ["barbican/data/probe", "barbican/metadata/probe", "sys/mounts"]}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body["barbican/data/probe"],
        json!(["create", "read", "update", "delete", "list"])
    );
    assert_eq!(
        body["barbican/metadata/probe"],
        json!(["create", "read", "update", "list"])
    );
    assert_eq!(body["sys/mounts"], json!(["deny"]));
    assert_eq!(body["capabilities"], body["barbican/data/probe"]);
    assert_eq!(body["data"]["sys/mounts"], json!(["deny"]));
    let (_, body) = call(
        &fake,
        "POST",
        "sys/capabilities-self",
        root,
        None,
        json!({"paths": ["anything"]}),
    )
    .await;
    assert_eq!(body["anything"], json!(["root"]));
}

#[tokio::test]
async fn kubernetes_logins_are_checked_with_the_sims_token_review() {
    let fake = fake().await;
    let cluster = Cluster::new();
    fake.review_tokens_with(KubeTokenReviewer(cluster.client()));
    let client = cluster.client();
    for (ns, name) in [("openbao", "openbao-provisioner"), ("openbao", "intruder")] {
        if ns != "default" {
            let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
            let _ = namespaces
                .create(
                    &PostParams::default(),
                    &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
                )
                .await;
        }
        let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
        accounts
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": name}})).unwrap(),
            )
            .await
            .unwrap();
    }
    let token_for = |name: &'static str, audience: &'static str| {
        let client = client.clone();
        async move {
            let accounts: Api<ServiceAccount> = Api::namespaced(client, "openbao");
            accounts
                .create_token_request(
                    name,
                    &PostParams::default(),
                    &serde_json::from_value(
                        json!({"spec": {"audiences": [audience], "expirationSeconds": 600}}),
                    )
                    .unwrap(),
                )
                .await
                .unwrap()
                .status
                .unwrap()
                .token
                .unwrap()
        }
    };
    let jwt = token_for("openbao-provisioner", "openbao").await;
    let (status, body) = call(
        &fake,
        "PUT",
        "auth/kubernetes/login",
        None,
        None,
        json!({"role": "provisioner", "jwt": jwt}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["auth"]["policies"]
            .as_array()
            .unwrap()
            .contains(&json!("provisioner"))
    );
    assert_eq!(
        body["auth"]["metadata"]["service_account_name"],
        "openbao-provisioner"
    );
    let provisioner = body["auth"]["client_token"].as_str().unwrap().to_string();
    let (status, body) = call(
        &fake,
        "GET",
        "auth/approle/role/barbican/role-id",
        Some(&provisioner),
        None,
        Value::Null,
    )
    .await;
    assert_eq!(status, 200);
    assert!(body["data"]["role_id"].is_string());
    let (status, _) = call(
        &fake,
        "PUT",
        "auth/approle/role/barbican/secret-id",
        Some(&provisioner),
        None,
        Value::Null,
    )
    .await;
    assert_eq!(status, 200, "the provisioner mints secret IDs");

    for (jwt, why) in [
        (
            token_for("intruder", "openbao").await,
            "a service account the role does not bind",
        ),
        (
            token_for("openbao-provisioner", "elsewhere").await,
            "another audience",
        ),
        ("not-a-jwt".to_string(), "garbage"),
    ] {
        let (status, body) = call(
            &fake,
            "PUT",
            "auth/kubernetes/login",
            None,
            None,
            json!({"role": "provisioner", "jwt": jwt}),
        )
        .await;
        assert_eq!(
            (status, body),
            (403, json!({"errors": ["permission denied"]})),
            "{why}"
        );
    }
    let (status, _) = call(
        &fake,
        "PUT",
        "auth/kubernetes/login",
        None,
        None,
        json!({"role": "nobody", "jwt": "x"}),
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn secret_ids_expire_on_the_virtual_clock_and_can_be_revoked() {
    let clock = Clock::virtual_time();
    let fake = FakeOpenBao::start(clock.clone()).await.unwrap();
    fake.self_init("openbao", "openbao", SelfInit::COMPLETE);
    let root = Some(fake.root_token());
    let (_, body) = call(
        &fake,
        "GET",
        "auth/approle/role/barbican/role-id",
        root,
        None,
        Value::Null,
    )
    .await;
    let role_id = body["data"]["role_id"].as_str().unwrap().to_string();
    let mint = |ttl: Value| {
        let fake = &fake;
        async move {
            let (_, body) = call(
                fake,
                "PUT",
                "auth/approle/role/barbican/secret-id",
                root,
                None,
                ttl,
            )
            .await;
            body["data"]["secret_id"].as_str().unwrap().to_string()
        }
    };
    let login = |secret: String| {
        let (fake, role_id) = (&fake, role_id.clone());
        async move {
            call(
                fake,
                "PUT",
                "auth/approle/login",
                None,
                None,
                json!({"role_id": role_id, "secret_id": secret}),
            )
            .await
            .0
        }
    };
    let short = mint(json!({"ttl": 60})).await;
    assert_eq!(login(short.clone()).await, 200);
    clock.advance(Duration::from_secs(61)).await;
    assert_eq!(login(short).await, 400, "expired after 60 virtual seconds");

    let revoked = mint(Value::Null).await;
    fake.revoke_secret_id(&revoked);
    assert_eq!(login(revoked).await, 400);
    let expired = mint(Value::Null).await;
    fake.expire_secret_id(&expired);
    assert_eq!(login(expired).await, 400);
    let fine = mint(Value::Null).await;
    fake.reject_logins(true);
    assert_eq!(login(fine.clone()).await, 400);
    fake.reject_logins(false);
    assert_eq!(login(fine).await, 200);
}

#[tokio::test]
async fn controls_deny_capabilities_take_it_down_slow_it_and_log_requests() {
    let fake = fake().await;
    let (role_id, secret_id) = credentials(&fake).await;
    let (_, body) = call(
        &fake,
        "PUT",
        "auth/approle/login",
        None,
        None,
        json!({"role_id": role_id, "secret_id": secret_id}),
    )
    .await;
    let token = body["auth"]["client_token"].as_str().unwrap().to_string();

    fake.deny("barbican/data/probe", "delete");
    let (_, body) = call(
        &fake,
        "POST",
        "sys/capabilities-self",
        Some(&token),
        None,
        json!({"paths": ["barbican/data/probe"]}),
    )
    .await;
    assert_eq!(
        body["barbican/data/probe"],
        json!(["create", "read", "update", "list"])
    );
    fake.deny("barbican/data/secret", "create");
    let (status, _) = call(
        &fake,
        "PUT",
        "barbican/data/secret",
        Some(&token),
        None,
        json!({"data": {"k": "v"}}),
    )
    .await;
    assert_eq!(status, 403);

    fake.set_outage(Outage::Unavailable);
    let (status, body) = call(
        &fake,
        "GET",
        "auth/token/lookup-self",
        Some(&token),
        None,
        Value::Null,
    )
    .await;
    assert_eq!(
        (status, body),
        (503, json!({"errors": ["Vault is sealed"]}))
    );
    fake.set_outage(Outage::Refused);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let refused = tokio::net::TcpStream::connect(fake.addr()).await;
    assert_eq!(
        refused.unwrap_err().kind(),
        std::io::ErrorKind::ConnectionRefused
    );
    fake.set_outage(Outage::None);
    let mut up = false;
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(fake.addr()).await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(up, "the same port is served again");

    fake.set_latency(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let (status, _) = call(
        &fake,
        "GET",
        "auth/token/lookup-self",
        Some(&token),
        None,
        Value::Null,
    )
    .await;
    assert_eq!(status, 200);
    assert!(started.elapsed() >= Duration::from_millis(200));

    let log = fake.requests();
    let logins: Vec<_> = log
        .iter()
        .filter(|r| r.path == "auth/approle/login")
        .collect();
    assert_eq!(logins.len(), 1);
    assert_eq!(
        (
            logins[0].method.as_str(),
            logins[0].status,
            logins[0].with_token
        ),
        ("PUT", 200, false)
    );
    assert_eq!(log.last().unwrap().path, "auth/token/lookup-self");
}

#[tokio::test]
async fn namespaces_isolate_and_self_init_can_be_partial() {
    let fake = FakeOpenBao::start(Clock::virtual_time()).await.unwrap();
    fake.self_init("openbao", "openbao", SelfInit::NONE);
    let root = Some(fake.root_token());
    let (status, _) = call(&fake, "GET", "sys/mounts/barbican", root, None, Value::Null).await;
    assert_eq!(status, 400, "no barbican/ mount");
    let (status, _) = call(
        &fake,
        "GET",
        "auth/approle/role/barbican/role-id",
        root,
        None,
        Value::Null,
    )
    .await;
    assert_eq!(status, 404, "approle auth is not enabled");

    fake.self_init(
        "openbao",
        "openbao",
        SelfInit {
            barbican_role: false,
            ..SelfInit::COMPLETE
        },
    );
    let (status, _) = call(&fake, "GET", "sys/mounts/barbican", root, None, Value::Null).await;
    assert_eq!(status, 200);
    let (status, _) = call(
        &fake,
        "GET",
        "auth/approle/role/barbican/role-id",
        root,
        None,
        Value::Null,
    )
    .await;
    assert_eq!(status, 404, "no barbican role");

    // A tenant namespace with its own mount; the root token reaches it, its data stays there.
    fake.with_state(|s| {
        s.space("tenant-a").mounts.insert(
            "kv".into(),
            (
                "kv".into(),
                [("version".to_string(), "2".to_string())].into(),
            ),
        );
    });
    let (status, _) = call(
        &fake,
        "PUT",
        "kv/data/x",
        root,
        Some("tenant-a"),
        json!({"data": {"v": 1}}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = call(
        &fake,
        "GET",
        "kv/data/x",
        root,
        Some("tenant-a/"),
        Value::Null,
    )
    .await;
    assert_eq!((status, &body["data"]["data"]), (200, &json!({"v": 1})));
    let (status, _) = call(&fake, "GET", "kv/data/x", root, None, Value::Null).await;
    assert_eq!(status, 404, "the root namespace has no kv/ mount");
    let (status, _) = call(
        &fake,
        "GET",
        "kv/data/x",
        root,
        Some("tenant-b"),
        Value::Null,
    )
    .await;
    assert_eq!(status, 400, "an unknown namespace");
}

#[tokio::test]
async fn bearer_tokens_metadata_deletes_namespaced_vaultrs_and_rejected_kubernetes_logins() {
    let fake = fake().await;
    let root = fake.root_token().to_string();
    // `Authorization: Bearer` works as `X-Vault-Token` does.
    let mut sender = connect(&fake).await;
    let response = sender
        .send_request(
            hyper::Request::get("/v1/auth/token/lookup-self")
                .header("host", NAME)
                .header("authorization", format!("Bearer {root}"))
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    // Deleting the metadata removes every version, and the key leaves the listing.
    let client = vault(&fake, &root, None);
    vaultrs::kv2::set(&client, "barbican", "gone", &json!({"k": "v"}))
        .await
        .unwrap();
    vaultrs::kv2::delete_metadata(&client, "barbican", "gone")
        .await
        .unwrap();
    let (status, _) = call(
        &fake,
        "GET",
        "barbican/metadata/gone",
        Some(&root),
        None,
        Value::Null,
    )
    .await;
    assert_eq!(status, 404);

    // vaultrs sends X-Vault-Namespace when told to.
    fake.with_state(|s| {
        s.space("tenant").mounts.insert(
            "kv".into(),
            (
                "kv".into(),
                [("version".to_string(), "2".to_string())].into(),
            ),
        );
    });
    let tenant = vault(&fake, &root, Some("tenant"));
    vaultrs::kv2::set(&tenant, "kv", "x", &json!({"in": "tenant"}))
        .await
        .unwrap();
    let (status, body) = call(
        &fake,
        "GET",
        "kv/data/x",
        Some(&root),
        Some("tenant"),
        Value::Null,
    )
    .await;
    assert_eq!(
        (status, &body["data"]["data"]["in"]),
        (200, &json!("tenant"))
    );

    // Rejecting logins rejects Kubernetes logins before the JWT is even reviewed.
    fake.reject_logins(true);
    let (status, body) = call(
        &fake,
        "PUT",
        "auth/kubernetes/login",
        None,
        None,
        json!({"role": "provisioner", "jwt": "anything"}),
    )
    .await;
    assert_eq!(
        (status, body),
        (403, json!({"errors": ["permission denied"]}))
    );
}

/// Dropping a fake inside a tokio task whose cooperative budget is spent completes.
/// wiremock's `MockServer` drop blocks on a tokio lock with `futures::executor::block_on`,
/// which spins for ever once the budget is gone (the edit soak hung there); the fake drops
/// it on a thread of its own. The runtime runs on a thread of the test's so that the old
/// behaviour fails the test instead of hanging it.
#[test]
fn a_fake_dropped_with_the_task_budget_spent_does_not_hang() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let fake = fake().await;
            let mut spent = 0usize;
            while futures::FutureExt::now_or_never(tokio::task::consume_budget()).is_some() {
                spent += 1;
            }
            assert!(spent > 0, "the task had a budget to spend");
            drop(fake);
        });
        let _ = done.send(());
    });
    assert!(
        finished.recv_timeout(Duration::from_secs(120)).is_ok(),
        "dropping the fake with the budget spent did not return"
    );
}
