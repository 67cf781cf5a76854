//! The Secrets and DBConnectionSecret steps, both reporting through SecretsReady.
//!
//! Secrets gates on the selected External Secrets store, then on the ESO-synced database and
//! service-user Secrets, and digests the service-user password. DBConnectionSecret assembles
//! the pymysql DSN into `{name}-db-connection` and digests it. Every wait requeues after 15 s.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{ByteString, api::core::v1::Secret};
use kube::api::{ApiResource, DynamicObject};

use super::{
    dsn,
    handoffs::{AuditTransportDigest, AuthtokenDigest, DbConnectionDigest},
    state::{State, owned_metadata},
};
use crate::{
    api::{
        conditions::{BarbicanConditionType as T, Reason},
        database::CredentialsMode,
        names::{DEFAULT_ESO_STORE, db_connection_secret_name},
        refs::SecretStoreKind,
    },
    controller::{
        pipeline::{Outcome, StepFuture},
        status::Report,
        status::condition_true,
        step_error::{ErrorKind, StepError, api_error},
    },
    render::secrets::{digest, value},
};

/// The ESO secret-gate polling interval.
pub const SECRETS_REQUEUE: Duration = Duration::from_secs(15);

/// An External Secrets kind.
pub fn eso(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "external-secrets.io".into(),
        version: "v1".into(),
        api_version: "external-secrets.io/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The ESO store a Barbican selects: its kind and name.
pub fn selected_store(state: &State) -> (SecretStoreKind, String) {
    match &state.barbican.spec.secret_store_ref {
        Some(r) => (r.kind, r.name.clone()),
        None => (
            SecretStoreKind::ClusterSecretStore,
            DEFAULT_ESO_STORE.to_string(),
        ),
    }
}

/// A dynamic object's read; a missing object or a kind that is not served reads as `None`.
fn unless_unserved(
    read: Result<Option<DynamicObject>, kube::Error>,
) -> Result<Option<DynamicObject>, StepError> {
    match read {
        Ok(found) => Ok(found),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
        Err(e) => Err(api_error("reading the External Secrets store", e)),
    }
}

/// Why a credential Secret is not usable yet, for the condition message. The same-named
/// ExternalSecret is read only when the Secret is absent, to say whether it exists and has
/// synced.
async fn waiting_message(
    state: &State,
    secret_name: &str,
    what: &str,
    secret: Option<&Secret>,
    keys: &[&str],
) -> Result<String, StepError> {
    if secret.is_some() {
        return Ok(format!(
            "{what} Secret {secret_name:?} is missing key(s) {}",
            missing(secret, keys).join(", ")
        ));
    }
    let external = unless_unserved(
        state
            .children
            .get_dynamic(&eso("ExternalSecret", "externalsecrets"), secret_name)
            .await,
    )?;
    Ok(match external {
        None => format!(
            "{what} Secret {secret_name:?} not found and no ExternalSecret {secret_name:?} exists"
        ),
        Some(_) => format!(
            "{what} Secret {secret_name:?} not found; waiting for ExternalSecret {secret_name:?} to sync"
        ),
    })
}

/// The keys of `wanted` that `secret` lacks (all of them when it is absent).
fn missing<'a>(secret: Option<&Secret>, wanted: &[&'a str]) -> Vec<&'a str> {
    wanted
        .iter()
        .copied()
        .filter(|k| secret.is_none_or(|s| value(s, k).is_none()))
        .collect()
}

async fn wait_for(
    state: &mut State,
    reason: Reason,
    name: &str,
    what: &str,
    secret: Option<&Secret>,
    keys: &[&str],
) -> Result<Outcome, StepError> {
    let message = waiting_message(state, name, what, secret, keys).await?;
    state.report(Report::not_ready(T::SecretsReady, reason, message));
    Ok(Outcome::Requeue(SECRETS_REQUEUE))
}

/// The Secrets step: the credential gate. On a target cluster it is the first to talk to that
/// cluster's API server, so an error there (a rejected token, a namespace outside the
/// registration's list) is recorded on SecretsReady in the API server's own words.
pub fn secrets(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let outcome = gate(state).await;
        if let (Err(error), Some(cluster)) = (&outcome, state.children.cluster()) {
            let message = format!("target cluster {cluster:?}: {}", error);
            state.report(Report::not_ready(
                T::SecretsReady,
                Reason::TargetClusterUnavailable,
                message,
            ));
        }
        outcome
    })
}

/// What the gate finds: the ESO store, then the two credential Secrets.
async fn gate(state: &mut State) -> Result<Outcome, StepError> {
    // The first read on a target cluster outside its registered namespaces fails there.
    if let Some(refusal) = state.children.namespace_refusal() {
        return Err(StepError::new(ErrorKind::Placement, refusal));
    }
    let (kind, name) = selected_store(state);
    let children = &state.children;
    let store = unless_unserved(match kind {
        SecretStoreKind::ClusterSecretStore => {
            let resource = eso("ClusterSecretStore", "clustersecretstores");
            children.get_cluster_scoped(&resource, &name).await
        }
        SecretStoreKind::SecretStore => {
            let resource = eso("SecretStore", "secretstores");
            children.get_dynamic(&resource, &name).await
        }
    })?;
    let ready = store.is_some_and(|s| condition_true(&s.data, "Ready"));
    if !ready {
        state.report(Report::not_ready(
            T::SecretsReady,
            Reason::SecretStoreNotReady,
            format!(
                "{} {name:?} is not ready; upstream secret backend unreachable",
                kind.as_str()
            ),
        ));
        return Ok(Outcome::Requeue(SECRETS_REQUEUE));
    }

    if let Err(wait) = database_credentials(state).await? {
        return Ok(wait);
    }
    let user_ref = state.barbican.spec.service_user.secret_ref.clone();
    let key = user_ref.key.as_deref().unwrap_or("password").to_string();
    let user = state
        .children
        .get::<Secret>(&user_ref.name)
        .await
        .map_err(|e| api_error("reading the service-user Secret", e))?;
    let Some(password) = user.as_ref().and_then(|s| value(s, &key)) else {
        return wait_for(
            state,
            Reason::WaitingForServiceUserCredentials,
            &user_ref.name,
            "service-user credentials",
            user.as_ref(),
            &[key.as_str()],
        )
        .await;
    };
    state.handoffs.give(AuthtokenDigest(digest(password)));
    let audit_transport = match state
        .barbican
        .spec
        .audit
        .as_ref()
        .and_then(|a| a.transport_url_source())
    {
        None => None,
        Some((name, key)) => {
            let secret = state
                .children
                .get::<Secret>(&name)
                .await
                .map_err(|e| api_error("reading the audit transport URL Secret", e))?;
            let Some(url) = secret.as_ref().and_then(|s| value(s, &key)) else {
                return wait_for(
                    state,
                    Reason::WaitingForAuditTransport,
                    &name,
                    "audit transport URL",
                    secret.as_ref(),
                    &[key.as_str()],
                )
                .await;
            };
            digest(url)
        }
    };
    state.handoffs.give(AuditTransportDigest(audit_transport));
    state.report(Report::ready(
        T::SecretsReady,
        Reason::SecretsAvailable,
        "the database and service-user credentials are available",
    ));
    Ok(Outcome::Done)
}

/// The DSN for `state`'s Barbican from the database Secret's values.
pub fn connection(state: &State, username: &str, password: &str) -> String {
    let spec = &state.barbican.spec.database;
    let managed_static = spec.cluster_ref.is_some()
        && spec.credentials_mode.unwrap_or_default() == CredentialsMode::Static;
    let user = if managed_static {
        state.name()
    } else {
        username.to_string()
    };
    dsn::dsn(
        &user,
        password,
        &dsn::address(spec, &state.namespace()),
        &spec.database,
        spec.tls.as_ref().map(|t| t.mode),
    )
}

/// The database Secret's `username` and `password`, or the wait (reported on SecretsReady)
/// while either is missing.
async fn database_credentials(
    state: &mut State,
) -> Result<Result<(String, String), Outcome>, StepError> {
    let db_name = state.barbican.spec.database.secret_ref.name.clone();
    let db = state
        .children
        .get::<Secret>(&db_name)
        .await
        .map_err(|e| api_error("reading the database Secret", e))?;
    let text = |key: &str| {
        db.as_ref()
            .and_then(|s| value(s, key))
            .map(|v| String::from_utf8_lossy(v).into_owned())
    };
    if let (Some(username), Some(password)) = (text("username"), text("password")) {
        return Ok(Ok((username, password)));
    }
    let keys = ["username", "password"];
    let what = "database credentials";
    let wait = wait_for(
        state,
        Reason::WaitingForDBCredentials,
        &db_name,
        what,
        db.as_ref(),
        &keys,
    );
    Ok(Err(wait.await?))
}

/// The DBConnectionSecret step.
pub fn db_connection(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let (username, password) = match database_credentials(state).await? {
            Ok(credentials) => credentials,
            Err(wait) => return Ok(wait),
        };
        let dsn = connection(state, &username, &password);
        let name = db_connection_secret_name(&state.name());
        let desired = Secret {
            metadata: owned_metadata(state, &name),
            type_: Some("Opaque".into()),
            data: Some(BTreeMap::from([(
                crate::api::names::CONNECTION_KEY.to_string(),
                ByteString(dsn.clone().into_bytes()),
            )])),
            ..Secret::default()
        };
        state
            .children
            .ensure(&desired)
            .await
            .map_err(|e| api_error("writing the database connection Secret", e))?;
        state
            .handoffs
            .give(DbConnectionDigest(digest(dsn.as_bytes())));
        Ok(Outcome::Done)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(data: &[(&str, &str)]) -> Secret {
        Secret {
            data: Some(
                data.iter()
                    .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                    .collect(),
            ),
            ..Secret::default()
        }
    }

    #[test]
    fn a_key_that_is_absent_or_empty_is_missing() {
        let s = secret(&[("username", "barbican"), ("password", "")]);
        assert_eq!(missing(Some(&s), &["username", "password"]), ["password"]);
        assert_eq!(
            missing(None, &["username", "password"]),
            ["username", "password"]
        );
        assert!(missing(Some(&secret(&[("password", "x")])), &["password"]).is_empty());
    }
}
