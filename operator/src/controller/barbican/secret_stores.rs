//! The SecretStores step: the attached, credential-ready BarbicanSecretStores become the
//! secret-store sections of barbican.conf.
//!
//! It never short-circuits: every waiting state returns `Done`, so a first install proceeds to
//! the steps that report what is missing. A valid projection is recorded in
//! `status.projectedSecretStores` and `status.projectedSecretStoreHosts`; an invalid one leaves
//! that last-good record alone.

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;

use super::{
    projection::{Projection, attached, sources},
    state::State,
};
use crate::{
    api::conditions::EventReason,
    api::{
        conditions::{BarbicanConditionType as T, Reason, StoreConditionType},
        names::instance_url,
        secret_store::BarbicanSecretStore,
    },
    controller::{
        events::Severity,
        pipeline::{Outcome, StepFuture},
        status::Report,
        step_error::{ErrorKind, StepError, api_error},
    },
    render::{
        barbican_conf::{ProjectedStore, SECRET_STORE_CA_FILE},
        secrets::{digest, value},
    },
};

/// One attached store as the decision sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The store's name.
    pub name: String,
    /// `spec.default`.
    pub is_default: bool,
    /// CredentialsReady is True (the aggregate Ready is never consulted: it waits for us).
    pub credentials_ready: bool,
    /// Being deleted: skipped.
    pub deleting: bool,
    /// Why CredentialsReady is not True, when the store says so in a reason of the operator's
    /// vocabulary (a status edited by hand is not echoed).
    pub waiting: Option<Reason>,
}

/// Why a projection is not valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The SecretStoresReady reason.
    pub reason: Reason,
    /// What the user has to do.
    pub message: String,
}

/// The ready stores of a valid projection, sorted by name, or why there is none. Every store is
/// an OpenBao store, so "at most one OpenBao store" means at most one ready store.
pub fn select(mut candidates: Vec<Candidate>) -> Result<Vec<Candidate>, Invalid> {
    // The defaults that wait, named with their cause: "no default" alone would send the user
    // looking for a store that is there.
    let waiting: Vec<String> = candidates
        .iter()
        .filter(|c| c.is_default && !c.credentials_ready && !c.deleting)
        .map(|c| match c.waiting {
            Some(reason) => format!("{} ({reason})", c.name),
            None => c.name.clone(),
        })
        .collect();
    candidates.retain(|c| c.credentials_ready && !c.deleting);
    candidates.sort_by(|a, b| a.name.cmp(&b.name));
    let defaults: Vec<&str> = candidates
        .iter()
        .filter(|c| c.is_default)
        .map(|c| c.name.as_str())
        .collect();
    if defaults.len() != 1 {
        return Err(Invalid {
            reason: Reason::NoDefaultSecretStore,
            message: if defaults.is_empty() && waiting.is_empty() {
                "no attached, credential-ready BarbicanSecretStore is marked default".into()
            } else if defaults.is_empty() {
                format!(
                    "no attached, credential-ready BarbicanSecretStore is marked default; the default is not credential-ready: {}",
                    waiting.join(", ")
                )
            } else {
                format!(
                    "several credential-ready stores are marked default ({}); exactly one may be",
                    defaults.join(", ")
                )
            },
        });
    }
    if candidates.len() > 1 {
        return Err(Invalid {
            reason: Reason::MultipleOpenBaoStores,
            message: format!(
                "at most one OpenBao store may be projected; credential-ready: {}",
                candidates
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    Ok(candidates)
}

fn candidate(store: &BarbicanSecretStore) -> Candidate {
    let credentials = store.status.as_ref().and_then(|s| {
        s.conditions
            .iter()
            .find(|c| c.type_ == StoreConditionType::CredentialsReady.as_str())
    });
    let credentials_ready = credentials.is_some_and(|c| c.status == "True");
    Candidate {
        name: store.name_any(),
        is_default: store.spec.is_default,
        credentials_ready,
        deleting: store.metadata.deletion_timestamp.is_some(),
        waiting: credentials
            .filter(|_| !credentials_ready)
            .and_then(|c| Reason::parse(&c.reason)),
    }
}

fn projected(store: &BarbicanSecretStore, role_id: &str, has_ca: bool) -> ProjectedStore {
    let open_bao = store.spec.open_bao.as_ref();
    let namespace = store.namespace().unwrap_or_default();
    let url = match (
        open_bao.and_then(|o| o.instance_ref.as_ref()),
        open_bao.and_then(|o| o.server.as_ref()),
    ) {
        (Some(instance), _) => instance_url(&instance.name, &namespace),
        (None, Some(server)) => server.url.clone(),
        (None, None) => String::new(),
    };
    ProjectedStore {
        name: store.name_any(),
        is_default: store.spec.is_default,
        url,
        role_id: role_id.to_string(),
        ca_file: has_ca.then(|| SECRET_STORE_CA_FILE.to_string()),
        kv_mountpoint: open_bao
            .map(|o| o.kv_mountpoint.clone())
            .unwrap_or_default(),
        namespace: open_bao
            .and_then(|o| o.namespace.clone())
            .filter(|n| !n.is_empty()),
        extra_options: store.spec.extra_options.clone().unwrap_or_default(),
    }
}

/// The first assembled option of `store` carrying a control character (a tab, a newline, an
/// escape), by name: such a value would break or inject into the INI document.
pub fn control_character(store: &ProjectedStore) -> Option<String> {
    let bad = |v: &str| v.chars().any(char::is_control);
    let typed = [
        ("vault_url", store.url.as_str()),
        ("approle_role_id", store.role_id.as_str()),
        ("kv_mountpoint", store.kv_mountpoint.as_str()),
        ("namespace", store.namespace.as_deref().unwrap_or_default()),
    ];
    typed
        .iter()
        .find(|(_, v)| bad(v))
        .map(|(k, _)| k.to_string())
        .or_else(|| {
            store
                .extra_options
                .iter()
                .find(|(k, v)| bad(k) || bad(v))
                .map(|(k, _)| k.escape_debug().to_string())
        })
}

/// A store's section, assembled from its spec and its credentials Secret, with the secret ID
/// the pods get by env var; or why the store cannot be projected this pass (the Secret is
/// missing or incomplete, or an assembled option carries a control character).
pub fn assemble(
    store: &BarbicanSecretStore,
    credentials: Option<&Secret>,
    has_ca: bool,
) -> Result<(ProjectedStore, Vec<u8>), String> {
    let (role_id, secret_id) = match (
        credentials.and_then(|s| value(s, "role-id")),
        credentials.and_then(|s| value(s, "secret-id")),
    ) {
        (Some(role_id), Some(secret_id)) => (role_id, secret_id),
        _ => {
            let (name, _) = sources(store);
            return Err(format!(
                "the credentials Secret {name:?} of store {:?} is missing or lacks role-id/secret-id",
                store.name_any()
            ));
        }
    };
    let section = projected(store, &String::from_utf8_lossy(role_id), has_ca);
    if let Some(option) = control_character(&section) {
        return Err(format!(
            "the [vault_plugin] option {option} assembled from store {:?} carries a control character",
            store.name_any()
        ));
    }
    Ok((section, secret_id.to_vec()))
}

/// A store this pass cannot project: the last-good configuration stays, the Barbican says
/// why, and a BarbicanSecretStoreSkipped Warning names the store. No requeue: the store's
/// status flip or its Secret's change re-enqueues the parent.
async fn skip(state: &mut State, message: String) -> Result<Outcome, StepError> {
    // Raised when the skip begins, not on every pass that finds it still in place.
    let repeated = state
        .condition(T::SecretStoresReady.as_str())
        .is_some_and(|c| c.status == "False" && c.message == message);
    state.handoffs.give(Projection::default());
    state.report(Report::not_ready(
        T::SecretStoresReady,
        Reason::WaitingForSecretStores,
        message.clone(),
    ));
    if !repeated {
        state
            .event(
                Severity::Warning,
                EventReason::BarbicanSecretStoreSkipped,
                &message,
            )
            .await;
    }
    Ok(Outcome::Done)
}

/// The stores of the last valid projection that this valid projection no longer has.
pub fn detached(previous: &[String], projected: &[String]) -> Vec<String> {
    previous
        .iter()
        .filter(|p| !projected.contains(p))
        .cloned()
        .collect()
}

/// The SecretStores step.
pub fn secret_stores(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let (name, namespace) = (state.name(), state.namespace());
        // Until the cache holds its first full list, "no stores" would be a guess.
        state.env.stores.wait_until_ready().await.map_err(|e| {
            StepError::new(
                ErrorKind::DependencyNotReady,
                format!("the BarbicanSecretStore cache: {e}"),
            )
        })?;
        let mut attached: Vec<BarbicanSecretStore> =
            attached(&state.env.stores.state(), &namespace, &name);
        attached.sort_by_key(|s| s.name_any());
        let chosen = match select(attached.iter().map(candidate).collect()) {
            Ok(chosen) => chosen,
            Err(invalid) => {
                state.handoffs.give(Projection::default());
                state.report(Report::not_ready(
                    T::SecretStoresReady,
                    invalid.reason,
                    invalid.message,
                ));
                return Ok(Outcome::Done);
            }
        };
        let mut projection = Projection {
            valid: true,
            ..Projection::default()
        };
        for pick in chosen {
            let Some(store) = attached.iter().find(|s| s.name_any() == pick.name) else {
                continue;
            };
            let (credentials, ca) = sources(store);
            let secret = state
                .children
                .get::<Secret>(&credentials)
                .await
                .map_err(|e| api_error("reading a store's credentials Secret", e))?;
            let (section, secret_id) = match assemble(store, secret.as_ref(), ca.is_some()) {
                Ok(assembled) => assembled,
                Err(message) => return skip(state, message).await,
            };
            projection.credentials_digest = digest(&secret_id);
            projection.stores.push(section);
            projection.credentials_secret = Some(credentials);
            projection.ca_secret = ca;
        }
        let projected: Vec<String> = projection.stores.iter().map(|s| s.name.clone()).collect();
        for store in detached(&state.status.projected_secret_stores, &projected) {
            let message = format!(
                "BarbicanSecretStore {store:?} is no longer projected: secrets stored through it stop resolving, since barbican reads each secret through the store it was written to"
            );
            state
                .event(
                    Severity::Warning,
                    EventReason::SecretStoreDetached,
                    &message,
                )
                .await;
        }
        state.status.projected_secret_stores = projected;
        state.status.projected_secret_store_hosts =
            projection.stores.iter().map(|s| s.url.clone()).collect();
        state.report(Report::ready(
            T::SecretStoresReady,
            Reason::AllStoresProjected,
            format!(
                "projected: {}",
                state.status.projected_secret_stores.join(", ")
            ),
        ));
        state.handoffs.give(projection);
        Ok(Outcome::Done)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(name: &str, is_default: bool, ready: bool) -> Candidate {
        Candidate {
            name: name.into(),
            is_default,
            credentials_ready: ready,
            deleting: false,
            waiting: None,
        }
    }

    #[test]
    fn a_default_that_waits_is_named_with_its_cause() {
        let mut unreachable = store("openbao-primary", true, false);
        unreachable.waiting = Some(Reason::OpenBaoUnreachable);
        let invalid = select(vec![unreachable, store("other", false, false)]).unwrap_err();
        assert_eq!(invalid.reason, Reason::NoDefaultSecretStore);
        assert!(
            invalid.message.ends_with(
                "the default is not credential-ready: openbao-primary (OpenBaoUnreachable)"
            ),
            "{}",
            invalid.message
        );
        let none = select(vec![store("other", false, false)]).unwrap_err();
        assert_eq!(
            none.message,
            "no attached, credential-ready BarbicanSecretStore is marked default"
        );
    }

    #[test]
    fn one_ready_default_is_a_valid_projection_and_unready_stores_do_not_count() {
        let chosen = select(vec![store("b", false, false), store("a", true, true)]).unwrap();
        assert_eq!(chosen, [store("a", true, true)]);
    }

    #[test]
    fn no_default_several_defaults_and_several_stores_are_each_named() {
        let none = select(vec![store("a", false, true)]).unwrap_err();
        assert_eq!(none.reason, Reason::NoDefaultSecretStore);
        assert!(select(vec![]).is_err());
        let two = select(vec![store("a", true, true), store("b", true, true)]).unwrap_err();
        assert_eq!(two.reason, Reason::NoDefaultSecretStore);
        assert!(two.message.contains("a, b"), "{}", two.message);
        let many = select(vec![store("a", true, true), store("b", false, true)]).unwrap_err();
        assert_eq!(many.reason, Reason::MultipleOpenBaoStores);
    }

    #[test]
    fn a_store_missing_from_the_new_projection_is_detached() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(detached(&names(&["a"]), &names(&["b"])), ["a"]);
        assert!(detached(&names(&["a"]), &names(&["a"])).is_empty());
        assert!(
            detached(&[], &names(&["a"])).is_empty(),
            "a first projection detaches nothing"
        );
    }

    #[test]
    fn a_store_is_assembled_from_its_secret_or_skipped_with_the_reason() {
        let store: BarbicanSecretStore =
            serde_json::from_value(crate::api::fixtures::managed_store()).unwrap();
        let secret = |pairs: &[(&str, &str)]| Secret {
            data: Some(
                pairs
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.to_string(),
                            k8s_openapi::ByteString(v.as_bytes().to_vec()),
                        )
                    })
                    .collect(),
            ),
            ..Secret::default()
        };
        let missing = assemble(&store, None, true).unwrap_err();
        assert!(missing.contains("openbao-primary-approle"), "{missing}");
        let partial = assemble(&store, Some(&secret(&[("role-id", "r")])), true).unwrap_err();
        assert!(partial.contains("lacks role-id/secret-id"), "{partial}");
        let (section, secret_id) = assemble(
            &store,
            Some(&secret(&[("role-id", "r"), ("secret-id", "s")])),
            true,
        )
        .unwrap();
        assert_eq!(
            (section.role_id.as_str(), secret_id.as_slice()),
            ("r", b"s".as_slice())
        );
        let bad = assemble(
            &store,
            Some(&secret(&[("role-id", "r\n"), ("secret-id", "s")])),
            true,
        )
        .unwrap_err();
        assert!(
            bad.contains("approle_role_id") && bad.contains("control character"),
            "{bad}"
        );
    }

    #[test]
    fn a_control_character_in_any_assembled_option_is_named() {
        let clean = ProjectedStore {
            name: "a".into(),
            is_default: true,
            url: "https://bao.ns.svc:8200".into(),
            role_id: "role".into(),
            ca_file: None,
            kv_mountpoint: "barbican".into(),
            namespace: None,
            extra_options: [("kv_version".to_string(), "2".to_string())].into(),
        };
        assert_eq!(control_character(&clean), None);
        let role = ProjectedStore {
            role_id: "role\t".into(),
            ..clean.clone()
        };
        assert_eq!(control_character(&role).as_deref(), Some("approle_role_id"));
        let extra = ProjectedStore {
            extra_options: [("timeout".to_string(), "5\u{7}".to_string())].into(),
            ..clean
        };
        assert_eq!(control_character(&extra).as_deref(), Some("timeout"));
    }

    #[test]
    fn a_deleting_store_is_skipped() {
        let mut deleting = store("a", true, true);
        deleting.deleting = true;
        assert_eq!(
            select(vec![deleting]).unwrap_err().reason,
            Reason::NoDefaultSecretStore
        );
    }
}
