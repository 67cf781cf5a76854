//! Steps that use barbican's REST API as a cloud user does (the `@real-barbican` scenarios):
//! a token from Keystone for a user with a role on a project, a secret stored with
//! `POST /v1/secrets` and read back with `GET /v1/secrets/<id>/payload`, and what the store
//! behind it holds. Requests go where the Barbican's Service sends them (the sim's service
//! registry, which the kubelet points at a ready pod).

use std::{net::SocketAddr, time::Duration};

use barbican_fakes::keystone::User;
use cucumber::{given, then, when};
use serde_json::{Value, json};

use crate::{
    http::{request, request_over},
    sim_env::SimEnv,
    world::{BarbicanWorld, ok},
};

/// barbican's API port.
const API_PORT: u16 = 9311;

/// Where the scenario's Keystone listens.
fn keystone(env: &SimEnv) -> Result<SocketAddr, String> {
    Ok(env.here().keystone.addr())
}

/// A project-scoped token for `user` (password authentication in the Default domain).
pub async fn token(
    env: &SimEnv,
    user: &str,
    password: &str,
    project: &str,
) -> Result<String, String> {
    authenticate(env, user, password, project)
        .await
        .map(|(token, _)| token)
}

/// The token document Keystone answers a project-scoped authentication of `user` with: its
/// roles and its service catalog, where clients find the key manager.
pub async fn token_document(
    env: &SimEnv,
    user: &str,
    password: &str,
    project: &str,
) -> Result<Value, String> {
    authenticate(env, user, password, project)
        .await
        .map(|(_, document)| document)
}

async fn authenticate(
    env: &SimEnv,
    user: &str,
    password: &str,
    project: &str,
) -> Result<(String, Value), String> {
    let body = json!({"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": user, "domain": {"name": "Default"}, "password": password}}},
        "scope": {"project": {"name": project, "domain": {"name": "Default"}}},
    }});
    let answer = request(
        keystone(env)?,
        "keystone.openstack.svc",
        "POST",
        "/v3/auth/tokens",
        &[("content-type", "application/json")],
        Some(body.to_string()),
    )
    .await?;
    match (answer.status, answer.subject_token) {
        (201, Some(token)) => {
            let document = serde_json::from_str(&answer.body)
                .map_err(|e| format!("Keystone's token answer is not JSON: {e}"))?;
            Ok((token, document))
        }
        (status, _) => Err(format!(
            "Keystone refused {user} on {project}: {status} {}",
            answer.body
        )),
    }
}

/// Where the Barbican `namespace/name`'s Service sends a request now, as which host, and
/// (with `spec.tls`) the CA its certificate must chain to: the TLS Secret's `ca.crt`.
async fn barbican(env: &SimEnv, namespace: &str, name: &str) -> Result<Endpoint, String> {
    let host = format!("{name}.{namespace}.svc");
    let addr = env
        .here()
        .cluster
        .services()
        .resolve(&host, API_PORT)
        .ok_or_else(|| format!("the Service {namespace}/{name} reaches no ready pod"))?;
    let cr = env
        .get("Barbican", namespace, name)
        .await?
        .ok_or_else(|| format!("no Barbican {namespace}/{name}"))?;
    let tls: Option<barbican_operator::api::tls::TlsSpec> =
        serde_json::from_value(cr.data["spec"]["tls"].clone()).map_err(|e| e.to_string())?;
    let ca = match tls {
        None => None,
        Some(tls) => {
            let secret = tls.secret(name);
            let found = kube::Api::<k8s_openapi::api::core::v1::Secret>::namespaced(
                env.scenario_client(),
                namespace,
            )
            .get_opt(&secret)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("no TLS Secret {namespace}/{secret}"))?;
            let ca = found
                .data
                .and_then(|d| d.get("ca.crt").cloned())
                .ok_or_else(|| format!("the TLS Secret {namespace}/{secret} has no ca.crt"))?;
            Some(ca.0)
        }
    };
    Ok(Endpoint { addr, host, ca })
}

/// Where a request to a Barbican goes.
struct Endpoint {
    addr: SocketAddr,
    host: String,
    ca: Option<Vec<u8>>,
}

/// Stores `payload` (text/plain) with `POST /v1/secrets` as the holder of `token`, where the
/// Barbican `namespace/name`'s Service sends it; returns the secret's reference.
pub async fn store(
    env: &SimEnv,
    token: &str,
    namespace: &str,
    name: &str,
    payload: &str,
) -> Result<String, String> {
    let to = barbican(env, namespace, name).await?;
    let body = json!({"name": payload, "payload": payload,
        "payload_content_type": "text/plain", "secret_type": "opaque"});
    let answer = request_over(
        to.addr,
        &to.host,
        to.ca.as_deref(),
        "POST",
        "/v1/secrets",
        &[
            ("content-type", "application/json"),
            ("x-auth-token", token),
        ],
        Some(body.to_string()),
    )
    .await?;
    if answer.status != 201 {
        return Err(format!(
            "POST /v1/secrets answered {}: {}",
            answer.status, answer.body
        ));
    }
    let stored: Value = serde_json::from_str(&answer.body).map_err(|e| e.to_string())?;
    stored["secret_ref"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("no secret_ref in {}", answer.body))
}

/// The payload of the secret `reference` (`GET <path>/payload`, text/plain), read as the
/// holder of `token` where the Barbican `namespace/name`'s Service sends it.
pub async fn read_payload(
    env: &SimEnv,
    token: &str,
    namespace: &str,
    name: &str,
    reference: &str,
) -> Result<String, String> {
    // The reference names the endpoint barbican advertises (host_href); its path is what the
    // Service is asked for.
    let path = reference
        .find("/v1/")
        .map(|at| &reference[at..])
        .ok_or_else(|| format!("{reference} has no /v1/ path"))?;
    let to = barbican(env, namespace, name).await?;
    let answer = request_over(
        to.addr,
        &to.host,
        to.ca.as_deref(),
        "GET",
        &format!("{path}/payload"),
        &[("accept", "text/plain"), ("x-auth-token", token)],
        None,
    )
    .await?;
    if answer.status == 200 {
        Ok(answer.body)
    } else {
        Err(format!(
            "GET {path}/payload answered {}: {:?}",
            answer.status, answer.body
        ))
    }
}

/// The note a stored secret's reference is kept under.
fn note_of(payload: &str) -> String {
    format!("secret-ref:{payload}")
}

/// The reference the scenario kept for the secret `payload`.
fn reference_of(env: &SimEnv, payload: &str) -> Result<String, String> {
    env.remembered(&note_of(payload))
        .ok_or_else(|| format!("no secret {payload:?} was stored in this scenario"))
}

/// The secret `payload` a user of a project reads, as (its reference, the user's token).
async fn secret_and_token(
    env: &SimEnv,
    payload: &str,
    (user, password, project): (&str, &str, &str),
) -> Result<(String, String), String> {
    let reference = reference_of(env, payload)?;
    Ok((reference, token(env, user, password, project).await?))
}

#[given(
    expr = "the Keystone user {string} with the password {string} has the role(s) {string} on the project {string}"
)]
#[when(
    expr = "the Keystone user {string} with the password {string} has the role(s) {string} on the project {string}"
)]
async fn keystone_user(
    world: &mut BarbicanWorld,
    user: String,
    password: String,
    roles: String,
    project: String,
) {
    world.env().here().keystone.add_user(User {
        name: user,
        password,
        project,
        roles: roles.split(',').map(|r| r.trim().to_string()).collect(),
    });
}

#[when(
    expr = "the user {string} with the password {string} of the project {string} stores the secret {string} in the Barbican {string} in {string}"
)]
async fn store_secret(
    world: &mut BarbicanWorld,
    user: String,
    password: String,
    project: String,
    payload: String,
    name: String,
    namespace: String,
) {
    let env = world.env();
    let result = async {
        let token = token(env, &user, &password, &project).await?;
        let reference = store(env, &token, &namespace, &name, &payload).await?;
        env.remember(&note_of(&payload), reference);
        Ok::<(), String>(())
    }
    .await;
    if let Err(e) = result {
        let selector = format!("app.kubernetes.io/instance={name}");
        let tails = crate::pod_steps::log_tails(world, &namespace, &selector, 40).await;
        panic!("{e}{tails}");
    }
}

#[then(
    expr = "the user {string} with the password {string} of the project {string} reads the secret {string} back from the Barbican {string} in {string}"
)]
async fn read_secret(
    world: &mut BarbicanWorld,
    user: String,
    password: String,
    project: String,
    payload: String,
    name: String,
    namespace: String,
) {
    let env = world.env();
    let result = async {
        let (reference, token) =
            secret_and_token(env, &payload, (&user, &password, &project)).await?;
        // A rollout may be replacing the pods: the read is retried for a while.
        let (namespace, name, payload, reference) = (&namespace, &name, &payload, &reference);
        env.eventually(Duration::from_secs(120), || {
            let token = token.clone();
            async move {
                let read = read_payload(env, &token, namespace, name, reference).await?;
                if read == *payload {
                    Ok(())
                } else {
                    Err(format!("the payload read back is {read:?}"))
                }
            }
        })
        .await
    }
    .await;
    ok(result);
}

#[then(
    expr = "the user {string} with the password {string} of the project {string} finds the secret {string} gone from the Barbican {string} in {string}"
)]
async fn secret_gone(
    world: &mut BarbicanWorld,
    user: String,
    password: String,
    project: String,
    payload: String,
    name: String,
    namespace: String,
) {
    let env = world.env();
    let result = async {
        let (reference, token) =
            secret_and_token(env, &payload, (&user, &password, &project)).await?;
        match read_payload(env, &token, &namespace, &name, &reference).await {
            Ok(read) => Err(format!("the secret still reads back: {read:?}")),
            Err(e) if e.contains("answered 404") => Ok(()),
            Err(e) => Err(format!("not a 404: {e}")),
        }
    }
    .await;
    ok(result);
}

#[then(expr = "the reference barbican gave the secret {string} starts with {string}")]
async fn reference_starts(world: &mut BarbicanWorld, payload: String, prefix: String) {
    let reference = reference_of(world.env(), &payload).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        reference.starts_with(&prefix),
        "barbican referenced the secret as {reference}, not under {prefix}"
    );
}

#[then(
    expr = "the OpenBao of {string} in {string} holds the secret {string} under the mount {string}, written after a login with the secret ID of the store {string}"
)]
async fn openbao_holds(
    world: &mut BarbicanWorld,
    instance: String,
    namespace: String,
    payload: String,
    mount: String,
    store: String,
) {
    let env = world.env();
    let fake = env
        .here()
        .openbao
        .instance(&namespace, &instance)
        .unwrap_or_else(|| panic!("no OpenBao runs for OpenBaoCluster {namespace}/{instance}"));
    let secret_id =
        crate::store_steps::secret_value(env, &namespace, &format!("{store}-approle"), "secret-id")
            .await;
    let requests = fake.requests();
    let logged_in = requests.iter().any(|r| {
        r.path.ends_with("auth/approle/login")
            && r.status == 200
            && r.body["secret_id"].as_str() == Some(secret_id.as_str())
    });
    assert!(
        logged_in,
        "nobody logged in to the OpenBao of {namespace}/{instance} with the secret ID of {store}"
    );
    let wrote = requests.iter().any(|r| {
        r.path.starts_with(&format!("{mount}/data/"))
            && matches!(r.method.as_str(), "POST" | "PUT")
            && r.status < 300
    });
    assert!(wrote, "nothing was written under {mount}/data/");
    // castellan keeps hex of what barbican hands it (the payload, or its base64).
    let hex = |text: &str| text.bytes().map(|b| format!("{b:02x}")).collect::<String>();
    let base64 = barbican_sim::tokens::base64(payload.as_bytes());
    let encodings = [payload.clone(), hex(&payload), hex(&base64), base64];
    let held = fake.with_state(|state| {
        state.spaces.values().any(|space| {
            space.kv.iter().any(|((m, _), versions)| {
                m == &mount
                    && versions.iter().any(|v| {
                        v.data.as_ref().is_some_and(|d| {
                            let text = d.to_string();
                            encodings.iter().any(|e| text.contains(e.as_str()))
                        })
                    })
            })
        })
    });
    assert!(
        held,
        "no version under the mount {mount} holds {payload:?} (plain, hex or base64)"
    );
}

#[then(
    expr = "within {int} minute(s) the Barbican {string} in {string} answers {string} with {string}"
)]
async fn answers(
    world: &mut BarbicanWorld,
    minutes: u64,
    name: String,
    namespace: String,
    path: String,
    text: String,
) {
    let env = world.env();
    let (name, namespace, path, text) = (&name, &namespace, &path, &text);
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || async move {
            let to = barbican(env, namespace, name).await?;
            let answer =
                request_over(to.addr, &to.host, to.ca.as_deref(), "GET", path, &[], None).await?;
            if answer.status == 200 && answer.body.contains(text.as_str()) {
                Ok(())
            } else {
                Err(format!(
                    "GET {path} answered {}: {:?}",
                    answer.status, answer.body
                ))
            }
        })
        .await);
}
