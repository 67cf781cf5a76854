//! The fake Keystone over HTTP, with the requests keystonemiddleware and keystoneauth send
//! (`ci/conformance/keystone.py` runs the real keystonemiddleware against it).

use std::time::Duration;

use barbican_fakes::keystone::{FakeKeystone, User, id_of};
use barbican_sim::clock::Clock;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::{Value, json};

const SERVICE_PASSWORD: &str = "service-pass-9f3";
const USER_PASSWORD: &str = "user-pass-4c1";

async fn fake(clock: Clock) -> FakeKeystone {
    let fake = FakeKeystone::start(clock).await.unwrap();
    fake.add_user(User {
        name: "barbican".into(),
        password: SERVICE_PASSWORD.into(),
        project: "service".into(),
        roles: vec!["service".into(), "admin".into()],
    });
    fake.add_user(User {
        name: "alice".into(),
        password: USER_PASSWORD.into(),
        project: "demo".into(),
        roles: vec!["creator".into()],
    });
    fake
}

struct Answer {
    status: u16,
    subject: Option<String>,
    text: String,
    body: Value,
}

async fn send(
    fake: &FakeKeystone,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> Answer {
    let tcp = tokio::net::TcpStream::connect(fake.addr()).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
            .await
            .unwrap();
    tokio::spawn(connection);
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "keystone.openstack.svc")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
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
    let subject = response
        .headers()
        .get("x-subject-token")
        .map(|v| v.to_str().unwrap().to_string());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes).to_string();
    Answer {
        status,
        subject,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
    }
}

/// The status of a bodyless request.
async fn status(fake: &FakeKeystone, method: &str, path: &str, headers: &[(&str, &str)]) -> u16 {
    send(fake, method, path, headers, Value::Null).await.status
}

fn password_auth(user: &str, password: &str, project: Option<&str>) -> Value {
    let mut auth = json!({"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"name": "Default"}, "password": password}}}});
    if let Some(project) = project {
        auth["scope"] = json!({"project": {"name": project, "domain": {"id": "default"}}});
    }
    json!({ "auth": auth })
}

async fn token(fake: &FakeKeystone, user: &str, password: &str, project: Option<&str>) -> String {
    let answer = send(
        fake,
        "POST",
        "/v3/auth/tokens",
        &[],
        password_auth(user, password, project),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.text);
    answer.subject.expect("a token in X-Subject-Token")
}

#[tokio::test]
async fn version_discovery_names_v3_at_the_public_url() {
    let fake = fake(Clock::virtual_time()).await;
    fake.set_public_url("http://keystone.openstack.svc:5000/");
    let root = send(&fake, "GET", "/", &[], Value::Null).await;
    assert_eq!(root.status, 300);
    let v3 = &root.body["versions"]["values"][0];
    assert_eq!(v3["status"], "stable");
    assert_eq!(
        v3["links"][0]["href"],
        "http://keystone.openstack.svc:5000/v3/"
    );
    let version = send(&fake, "GET", "/v3", &[], Value::Null).await;
    assert_eq!(version.status, 200);
    assert!(
        version.body["version"]["id"]
            .as_str()
            .unwrap()
            .starts_with("v3.")
    );
}

#[tokio::test]
async fn a_scoped_password_token_carries_project_roles_and_the_identity_endpoint() {
    let fake = fake(Clock::virtual_time()).await;
    let answer = send(
        &fake,
        "POST",
        "/v3/auth/tokens",
        &[],
        password_auth("alice", USER_PASSWORD, Some("demo")),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.text);
    let token = answer.subject.unwrap();
    assert!(
        !answer.text.contains(&token),
        "the body never repeats the token"
    );
    assert!(!answer.text.contains(USER_PASSWORD));
    let t = &answer.body["token"];
    assert_eq!(t["user"]["name"], "alice");
    assert_eq!(t["user"]["id"], id_of("user", "alice"));
    assert_eq!(t["project"]["name"], "demo");
    assert_eq!(t["project"]["id"], id_of("project", "demo"));
    assert_eq!(t["roles"][0]["name"], "creator");
    let identity = &t["catalog"][0];
    assert_eq!(identity["type"], "identity");
    let urls: Vec<&str> = identity["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls, vec![format!("{}/v3", fake.url()); 3]);
    assert!(t["expires_at"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test]
async fn the_wrong_password_another_project_or_an_unknown_user_is_refused() {
    let fake = fake(Clock::virtual_time()).await;
    for (user, password, project) in [
        ("alice", "not-her-password", Some("demo")),
        ("alice", USER_PASSWORD, Some("service")),
        ("mallory", USER_PASSWORD, None),
    ] {
        let answer = send(
            &fake,
            "POST",
            "/v3/auth/tokens",
            &[],
            password_auth(user, password, project),
        )
        .await;
        assert_eq!(answer.status, 401, "{user} {project:?}: {}", answer.text);
        assert_eq!(answer.body["error"]["code"], 401);
        assert!(answer.subject.is_none());
        assert!(
            !answer.text.contains(password),
            "an answer never echoes a password"
        );
    }
    let garbage = send(&fake, "POST", "/v3/auth/tokens", &[], json!("not an auth")).await;
    assert_eq!(garbage.status, 401);
}

#[tokio::test]
async fn the_service_validates_a_user_token_and_sees_its_roles() {
    let fake = fake(Clock::virtual_time()).await;
    let service = token(&fake, "barbican", SERVICE_PASSWORD, Some("service")).await;
    let user = token(&fake, "alice", USER_PASSWORD, Some("demo")).await;
    let headers = [
        ("x-auth-token", service.as_str()),
        ("x-subject-token", user.as_str()),
    ];
    let answer = send(
        &fake,
        "GET",
        "/v3/auth/tokens?nocatalog",
        &headers,
        Value::Null,
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(answer.body["token"]["project"]["name"], "demo");
    assert_eq!(answer.body["token"]["roles"][0]["name"], "creator");
    assert!(
        answer.body["token"].get("catalog").is_none(),
        "nocatalog leaves the catalog out"
    );
    assert_eq!(
        status(&fake, "HEAD", "/v3/auth/tokens", &headers).await,
        200
    );
    assert_eq!(fake.validations(), 2);

    let unknown = [
        ("x-auth-token", service.as_str()),
        ("x-subject-token", "gAAAAAforged"),
    ];
    let answer = send(&fake, "GET", "/v3/auth/tokens", &unknown, Value::Null).await;
    assert_eq!(answer.status, 404);
    assert!(
        !answer.text.contains("forged"),
        "an answer never echoes a token"
    );
    let no_caller = [("x-subject-token", user.as_str())];
    assert_eq!(
        status(&fake, "GET", "/v3/auth/tokens", &no_caller).await,
        401
    );
}

#[tokio::test]
async fn a_user_without_a_service_role_validates_only_its_own_token() {
    let fake = fake(Clock::virtual_time()).await;
    let service = token(&fake, "barbican", SERVICE_PASSWORD, Some("service")).await;
    let user = token(&fake, "alice", USER_PASSWORD, Some("demo")).await;
    let other = [
        ("x-auth-token", user.as_str()),
        ("x-subject-token", service.as_str()),
    ];
    assert_eq!(status(&fake, "GET", "/v3/auth/tokens", &other).await, 403);
    let own = [
        ("x-auth-token", user.as_str()),
        ("x-subject-token", user.as_str()),
    ];
    assert_eq!(status(&fake, "GET", "/v3/auth/tokens", &own).await, 200);
}

#[tokio::test]
async fn an_unscoped_token_has_no_project_or_roles() {
    let fake = fake(Clock::virtual_time()).await;
    let answer = send(
        &fake,
        "POST",
        "/v3/auth/tokens",
        &[],
        password_auth("alice", USER_PASSWORD, None),
    )
    .await;
    assert_eq!(answer.status, 201);
    assert!(answer.body["token"].get("project").is_none());
    assert!(answer.body["token"].get("roles").is_none());
}

#[tokio::test]
async fn tokens_expire_on_the_fakes_clock() {
    let clock = Clock::virtual_time();
    let fake = fake(clock.clone()).await;
    fake.set_token_lifetime(Duration::from_secs(600));
    let service = token(&fake, "barbican", SERVICE_PASSWORD, Some("service")).await;
    let user = token(&fake, "alice", USER_PASSWORD, Some("demo")).await;
    clock.advance(Duration::from_secs(300)).await;
    let fresh_service = token(&fake, "barbican", SERVICE_PASSWORD, Some("service")).await;
    let headers = [
        ("x-auth-token", fresh_service.as_str()),
        ("x-subject-token", user.as_str()),
    ];
    assert_eq!(status(&fake, "GET", "/v3/auth/tokens", &headers).await, 200);
    clock.advance(Duration::from_secs(301)).await;
    assert_eq!(status(&fake, "GET", "/v3/auth/tokens", &headers).await, 404);
    let expired_caller = [
        ("x-auth-token", service.as_str()),
        ("x-subject-token", fresh_service.as_str()),
    ];
    assert_eq!(
        send(
            &fake,
            "GET",
            "/v3/auth/tokens",
            &expired_caller,
            Value::Null
        )
        .await
        .status,
        401
    );
}
