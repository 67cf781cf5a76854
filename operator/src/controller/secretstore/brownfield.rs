//! A brownfield store (`server`): an OpenBao or Vault server provisioned elsewhere, which the
//! operator only validates against. It reads the referenced Secrets, logs in with the AppRole
//! pair, and checks the five capabilities barbican needs on the mount's data path. It never
//! creates a mount, a policy, an AppRole or secret material there.

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;

use super::{approle::REVALIDATE, managed::text, status::Findings, verified::Verified};
use crate::{
    api::{
        conditions::Reason,
        secret_store::{BarbicanSecretStore, CA_KEY, OpenBaoStoreSpec, ROLE_ID_KEY, SECRET_ID_KEY},
    },
    controller::{runtime::children::Children, runtime::env::Env},
    openbao::{self, OpenBao, Target, missing_capabilities},
};

use super::approle::RETRY;

/// The path whose capabilities are checked: a secret under the mount's data path.
pub fn probe_path(kv_mountpoint: &str) -> String {
    format!("{}/data/probe", kv_mountpoint.trim_matches('/'))
}

fn failed(reason: Reason, message: impl Into<String>) -> Findings {
    Findings::credentials_failed(false, reason, message, RETRY)
}

/// One pass over a brownfield store.
pub async fn pass(
    env: &Env,
    verified: &Verified,
    store: &BarbicanSecretStore,
    children: &Children,
    spec: &OpenBaoStoreSpec,
) -> Result<Findings, kube::Error> {
    let Some(server) = spec.server.as_ref() else {
        return Ok(failed(
            Reason::WaitingForCredentials,
            "spec.openBao names neither instanceRef nor server",
        ));
    };
    let credentials_name = &server.credentials_secret_ref.name;
    let credentials = children.get::<Secret>(credentials_name).await?;
    let role_id = text(credentials.as_ref(), ROLE_ID_KEY);
    let secret_id = text(credentials.as_ref(), SECRET_ID_KEY);
    let (Some(role_id), Some(secret_id)) = (role_id, secret_id) else {
        return Ok(failed(
            Reason::WaitingForCredentials,
            format!(
                "Secret {credentials_name:?} does not carry non-empty {ROLE_ID_KEY} and {SECRET_ID_KEY} yet"
            ),
        ));
    };
    let mut ca_version = None;
    let ca_pem = match &server.ca_bundle_secret_ref {
        None => None,
        Some(reference) => {
            let bundle = children.get::<Secret>(&reference.name).await?;
            ca_version = bundle.as_ref().and_then(|s| s.resource_version());
            match text(bundle.as_ref(), CA_KEY) {
                Some(pem) => Some(pem.into_bytes()),
                None => {
                    return Ok(failed(
                        Reason::WaitingForCredentials,
                        format!(
                            "Secret {:?} does not carry a non-empty {CA_KEY} yet",
                            reference.name
                        ),
                    ));
                }
            }
        }
    };
    let key = super::verified::key(store);
    let inputs = format!(
        "{:?}/{:?}/{:?}",
        store.metadata.generation,
        credentials.as_ref().and_then(|s| s.resource_version()),
        ca_version
    );
    let now = env.clock.now();
    if let Some(reused) = verified.reuse(&key, &inputs, now) {
        return Ok(reused);
    }
    let findings = validate(env, spec, &server.url, &role_id, &secret_id, ca_pem).await;
    verified.record(&key, inputs, &findings, env.clock.now());
    Ok(findings)
}

/// Logs in and checks the capabilities.
async fn validate(
    env: &Env,
    spec: &OpenBaoStoreSpec,
    url: &str,
    role_id: &str,
    secret_id: &str,
    ca_pem: Option<Vec<u8>>,
) -> Findings {
    let target = Target {
        url: url.to_string(),
        ca_pem,
        namespace: spec.namespace.clone(),
    };
    let client = match OpenBao::connect(&target, env.resolver.as_ref(), openbao::TIMEOUT) {
        Ok(client) => client,
        Err(e) => return failed(Reason::OpenBaoUnreachable, e.to_string()),
    };
    let session = match client.approle_login(role_id, secret_id).await {
        Ok(token) => client.with_token(token),
        Err(e) if e.rejects_credentials() => {
            return failed(
                Reason::InvalidCredentials,
                format!("the server rejects the AppRole login: {e}"),
            );
        }
        Err(e) => {
            return failed(
                Reason::OpenBaoUnreachable,
                format!("the AppRole login failed: {e}"),
            );
        }
    };
    let path = probe_path(&spec.kv_mountpoint);
    let held = session.capabilities_self(&path).await;
    session.revoke_self().await;
    match held {
        Ok(held) => {
            let missing = missing_capabilities(&held);
            if missing.is_empty() {
                Findings::available(
                    false,
                    format!(
                        "the AppRole logs in and holds create, read, update, delete, list on {path}"
                    ),
                    REVALIDATE,
                )
            } else {
                failed(
                    Reason::InsufficientCapabilities,
                    format!(
                        "the AppRole's policy lacks {} on {path} (holds: {})",
                        missing.join(", "),
                        if held.is_empty() {
                            "none".to_string()
                        } else {
                            held.join(", ")
                        }
                    ),
                )
            }
        }
        Err(e) if e.is_denied() => failed(
            Reason::InsufficientCapabilities,
            format!("the AppRole may not read its own capabilities on {path}: {e}"),
        ),
        Err(e) => failed(
            Reason::OpenBaoUnreachable,
            format!("reading the capabilities failed: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_path_is_under_the_mounts_data_path() {
        assert_eq!(probe_path("secret-barbican"), "secret-barbican/data/probe");
        assert_eq!(probe_path("/kv/"), "kv/data/probe");
    }
}
