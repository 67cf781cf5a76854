//! How credentials reach the API pods: environment variables read from Secrets (never
//! rendered into config), and a digest of each in a pod-template annotation so a rotated value
//! rolls the Deployment. An empty digest (what a short-circuited pass produces) leaves its
//! annotation out, so such a pass causes no rollout.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, SecretKeySelector};

use crate::{
    api::names::{
        AUDIT_TRANSPORT_HASH_ANNOTATION, AUTHTOKEN_HASH_ANNOTATION, DB_CONNECTION_HASH_ANNOTATION,
        SECRET_STORE_CREDENTIALS_HASH_ANNOTATION, TLS_HASH_ANNOTATION, db_connection_secret_name,
    },
    render::secrets::{
        APPROLE_SECRET_ID_ENV, AUDIT_TRANSPORT_URL_ENV, DATABASE_CONNECTION_ENV,
        KEYSTONE_PASSWORD_ENV,
    },
};

/// Where each credential is read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sources {
    /// The service user's Secret and key.
    pub service_user: (String, String),
    /// The Secret holding the OpenBao store's AppRole `secret-id`, when an OpenBao store is
    /// projected.
    pub store_credentials: Option<String>,
    /// The Secret and key of the audit notifications' transport URL, with `spec.audit`'s
    /// messaging driver.
    pub audit_transport: Option<(String, String)>,
}

/// The digests of the three values, hex; `None` or empty while unknown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Digests {
    /// Of the DSN.
    pub db_connection: Option<String>,
    /// Of the service user's password.
    pub authtoken: Option<String>,
    /// Of the AppRole secret ID.
    pub secret_store_credentials: Option<String>,
    /// Of the audit notifications' transport URL.
    pub audit_transport: Option<String>,
    /// Of the API's TLS certificate and key.
    pub tls: Option<String>,
}

fn from_secret(name: &str, secret: &str, key: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: None,
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.to_string(),
                key: key.to_string(),
                optional: None,
            }),
            ..EnvVarSource::default()
        }),
    }
}

/// The API container's credential variables, in the reference's order.
pub fn env(barbican: &str, sources: &Sources) -> Vec<EnvVar> {
    let mut env = vec![
        from_secret(
            DATABASE_CONNECTION_ENV,
            &db_connection_secret_name(barbican),
            "connection",
        ),
        from_secret(
            KEYSTONE_PASSWORD_ENV,
            &sources.service_user.0,
            &sources.service_user.1,
        ),
    ];
    if let Some(secret) = &sources.store_credentials {
        env.push(from_secret(APPROLE_SECRET_ID_ENV, secret, "secret-id"));
    }
    if let Some((secret, key)) = &sources.audit_transport {
        env.push(from_secret(AUDIT_TRANSPORT_URL_ENV, secret, key));
    }
    env
}

/// The pod-template annotations, each omitted while its digest is empty.
pub fn annotations(digests: &Digests) -> BTreeMap<String, String> {
    [
        (DB_CONNECTION_HASH_ANNOTATION, &digests.db_connection),
        (AUTHTOKEN_HASH_ANNOTATION, &digests.authtoken),
        (
            SECRET_STORE_CREDENTIALS_HASH_ANNOTATION,
            &digests.secret_store_credentials,
        ),
        (AUDIT_TRANSPORT_HASH_ANNOTATION, &digests.audit_transport),
        (TLS_HASH_ANNOTATION, &digests.tls),
    ]
    .into_iter()
    .filter_map(|(key, digest)| {
        digest
            .as_ref()
            .filter(|d| !d.is_empty())
            .map(|d| (key.to_string(), d.clone()))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_come_from_secrets_in_order_and_never_as_values() {
        let sources = Sources {
            service_user: ("keystone-barbican".into(), "password".into()),
            store_credentials: Some("openbao-primary-approle".into()),
            audit_transport: None,
        };
        let env = env("barbican", &sources);
        let names: Vec<&str> = env.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "OS_DATABASE__CONNECTION",
                "OS_KEYSTONE_AUTHTOKEN__PASSWORD",
                "OS_VAULT_PLUGIN__APPROLE_SECRET_ID"
            ]
        );
        assert!(env.iter().all(|e| e.value.is_none()));
        let reference = |i: usize| secret_ref(&env[i]);
        assert_eq!(
            reference(0),
            ("barbican-db-connection".into(), "connection".into())
        );
        assert_eq!(
            reference(1),
            ("keystone-barbican".into(), "password".into())
        );
        assert_eq!(
            reference(2),
            ("openbao-primary-approle".into(), "secret-id".into())
        );
        let without_store = Sources {
            store_credentials: None,
            ..sources
        };
        assert_eq!(super::env("barbican", &without_store).len(), 2);
        let audited = Sources {
            audit_transport: Some(("rabbitmq-audit".into(), "url".into())),
            ..without_store
        };
        let env = super::env("barbican", &audited);
        let last = env.last().unwrap();
        assert_eq!(
            last.name,
            "OS_AUDIT_MIDDLEWARE_NOTIFICATIONS__TRANSPORT_URL"
        );
        assert!(
            last.value.is_none(),
            "the broker's password is never a value"
        );
        assert_eq!(secret_ref(last), ("rabbitmq-audit".into(), "url".into()));
    }

    /// The Secret and key a variable is read from.
    fn secret_ref(var: &EnvVar) -> (String, String) {
        let r = var
            .value_from
            .as_ref()
            .and_then(|v| v.secret_key_ref.as_ref())
            .expect("read from a Secret");
        (r.name.clone(), r.key.clone())
    }

    #[test]
    fn an_empty_digest_leaves_its_annotation_out() {
        let digests = Digests {
            db_connection: Some("ab12".into()),
            authtoken: Some(String::new()),
            secret_store_credentials: None,
            audit_transport: Some("cd34".into()),
            tls: Some("ef56".into()),
        };
        let annotations = annotations(&digests);
        assert_eq!(annotations.len(), 3);
        assert_eq!(annotations["barbican.c5c3.io/db-connection-hash"], "ab12");
        assert_eq!(annotations["barbican.c5c3.io/audit-transport-hash"], "cd34");
        assert_eq!(annotations["barbican.c5c3.io/tls-hash"], "ef56");
        assert!(super::annotations(&Digests::default()).is_empty());
    }
}
