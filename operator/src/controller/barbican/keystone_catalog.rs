//! The KeystoneCatalog step: `spec.keystone.catalog` kept true in Keystone's service catalog,
//! reported through KeystoneCatalogReady, and the registration's removal (block dropped, CR
//! deleted). What to write is [`super::catalog_plan`]'s; this module is the IO around it.
//!
//! The operator authenticates at `spec.keystoneEndpoint` as `spec.serviceUser` with the
//! password from its Secret, reaching Keystone from where the operator runs (through the
//! resolver seam). A registration that was verified is trusted for [`CATALOG_RECHECK`]
//! however often the pass runs, then checked again: an endpoint deleted by hand comes back.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;

use super::{
    catalog_plan::{self, Action, Desired, ServiceChoice},
    state::State,
};
use crate::{
    api::{
        conditions::{BarbicanConditionType as T, Reason},
        keystone::{CatalogStatus, SERVICE_DESCRIPTION, SERVICE_NAME, SERVICE_TYPE},
    },
    controller::{
        pipeline::{Outcome, StepFuture},
        status::Report,
        step_error::{StepError, api_error},
    },
    keystone::{Credentials, Error, Keystone, TIMEOUT},
    render::secrets::value,
};

/// How long a verified registration is trusted before Keystone is asked again.
pub const CATALOG_RECHECK: Duration = Duration::from_secs(5 * 60);
/// How soon a registration that failed is tried again.
pub const CATALOG_RETRY: Duration = Duration::from_secs(30);

/// The verification cache's key of a Barbican (beside its health probe's).
pub fn cache_key(namespace: &str, name: &str) -> String {
    format!("keystone-catalog/{namespace}/{name}")
}

/// The reason a Keystone failure is reported with.
pub fn reason_of(error: &Error) -> Reason {
    match error.code() {
        Some(401) => Reason::KeystoneAuthenticationFailed,
        Some(403) => Reason::CatalogRegistrationDenied,
        _ => Reason::KeystoneUnreachable,
    }
}

/// Why the catalog could not be brought to what is wanted.
#[derive(Debug)]
pub enum Failure {
    /// The service-user Secret lacks its key (the Secrets step reports it too).
    NoPassword(String),
    /// Keystone refused or failed a call; `doing` says which.
    Keystone {
        /// What the step was doing.
        doing: &'static str,
        /// Keystone's answer.
        error: Error,
    },
    /// The region does not exist.
    NoRegion(String),
    /// Another registration is in the way.
    Taken(catalog_plan::Taken),
    /// Reading the Secret failed.
    Api(StepError),
}

impl Failure {
    /// The condition for this failure.
    pub fn report(&self) -> Report {
        let t = T::KeystoneCatalogReady;
        match self {
            Failure::NoPassword(message) => {
                Report::not_ready(t, Reason::WaitingForServiceUserCredentials, message.clone())
            }
            Failure::Keystone { doing, error } => {
                let hint = match reason_of(error) {
                    Reason::CatalogRegistrationDenied => {
                        " (registering in the catalog needs the admin role on the service user's project)"
                    }
                    _ => "",
                };
                Report::not_ready(t, reason_of(error), format!("{doing}: {error}{hint}"))
            }
            Failure::NoRegion(region) => Report::not_ready(
                t,
                Reason::CatalogRegionNotFound,
                format!(
                    "region {region:?} does not exist in Keystone; create it, or name an existing one in spec.keystone.catalog.region"
                ),
            ),
            Failure::Taken(taken) => {
                Report::not_ready(t, Reason::CatalogEndpointTaken, taken.to_string())
            }
            Failure::Api(error) => {
                Report::not_ready(t, Reason::KeystoneUnreachable, error.what.clone())
            }
        }
    }
}

fn keystone(doing: &'static str) -> impl FnOnce(Error) -> Failure {
    move |error| Failure::Keystone { doing, error }
}

/// The service user's credentials, the password read from its Secret where the children
/// live (the Secrets step gates on the same key).
async fn credentials(state: &State) -> Result<Credentials, Failure> {
    let user = &state.barbican.spec.service_user;
    let key = user.secret_ref.key.as_deref().unwrap_or("password");
    let secret = state
        .children
        .get::<Secret>(&user.secret_ref.name)
        .await
        .map_err(|e| Failure::Api(api_error("reading the service-user Secret", e)))?;
    let password = secret
        .as_ref()
        .and_then(|s| value(s, key))
        .and_then(|p| std::str::from_utf8(p).ok())
        .ok_or_else(|| {
            Failure::NoPassword(format!(
                "waiting for key {key:?} of the service-user Secret {:?}",
                user.secret_ref.name
            ))
        })?;
    Ok(Credentials {
        username: user.effective_username().to_string(),
        user_domain_name: user.effective_user_domain_name().to_string(),
        project_name: user.effective_project_name().to_string(),
        project_domain_name: user.effective_project_domain_name().to_string(),
        password: password.to_string(),
    })
}

/// Logs in as the service user.
async fn login(state: &State) -> Result<Keystone, Failure> {
    let credentials = credentials(state).await?;
    Keystone::login(
        &state.barbican.spec.keystone_endpoint,
        &credentials,
        state.env.resolver.as_ref(),
        TIMEOUT,
    )
    .await
    .map_err(keystone("authenticating as the service user"))
}

/// Brings the catalog to `desired`; the record of what is registered afterwards.
async fn register(
    client: &Keystone,
    desired: &Desired,
    recorded: Option<&CatalogStatus>,
) -> Result<CatalogStatus, Failure> {
    let services = client
        .services(SERVICE_TYPE)
        .await
        .map_err(keystone("listing the key-manager services"))?;
    let (service, created) = match catalog_plan::choose_service(recorded, &services) {
        ServiceChoice::Use { service, created } => (service, created),
        ServiceChoice::Create => {
            if !client
                .region_exists(&desired.region)
                .await
                .map_err(keystone("reading the region"))?
            {
                return Err(Failure::NoRegion(desired.region.clone()));
            }
            let service = client
                .create_service(SERVICE_TYPE, SERVICE_NAME, SERVICE_DESCRIPTION)
                .await
                .map_err(keystone("creating the key-manager service"))?;
            (service, true)
        }
    };
    let live = client
        .endpoints(&service.id)
        .await
        .map_err(keystone("listing the service's endpoints"))?;
    let actions = catalog_plan::plan_endpoints(desired, &service.id, recorded, &live)
        .map_err(Failure::Taken)?;
    if actions.iter().any(|a| matches!(a, Action::Create { .. }))
        && !client
            .region_exists(&desired.region)
            .await
            .map_err(keystone("reading the region"))?
    {
        return Err(Failure::NoRegion(desired.region.clone()));
    }
    let mut after = live;
    for action in actions {
        match action {
            Action::Create { interface, url } => {
                let endpoint = client
                    .create_endpoint(&service.id, &interface, &desired.region, &url)
                    .await
                    .map_err(keystone("registering an endpoint"))?;
                after.push(endpoint);
            }
            Action::Update { id, url, .. } => {
                let endpoint = client
                    .update_endpoint(&id, &url)
                    .await
                    .map_err(keystone("updating an endpoint"))?;
                after.retain(|e| e.id != id);
                after.push(endpoint);
            }
            Action::Delete { id } => {
                client
                    .delete_endpoint(&id)
                    .await
                    .map_err(keystone("deregistering an endpoint"))?;
                after.retain(|e| e.id != id);
            }
        }
    }
    Ok(catalog_plan::record(&service, created, desired, &after))
}

/// Deregisters what `recorded` holds: its endpoints Keystone still lists, then the service
/// when this Barbican created it and no endpoint is left on it.
pub async fn deregister(state: &State, recorded: &CatalogStatus) -> Result<(), Failure> {
    let client = login(state).await?;
    let outcome = deregister_with(&client, recorded).await;
    client.revoke().await;
    outcome
}

async fn deregister_with(client: &Keystone, recorded: &CatalogStatus) -> Result<(), Failure> {
    let live = match client.endpoints(&recorded.service_id).await {
        Ok(live) => live,
        // The service is gone, and its endpoints with it.
        Err(e) if e.code() == Some(404) => return Ok(()),
        Err(e) => return Err(keystone("listing the service's endpoints")(e)),
    };
    let ours = catalog_plan::deregistration(recorded, &live);
    for id in &ours {
        client
            .delete_endpoint(id)
            .await
            .map_err(keystone("deregistering an endpoint"))?;
    }
    let others_left = live.iter().any(|e| !ours.contains(&e.id));
    if recorded.service_created && !others_left {
        match client.delete_service(&recorded.service_id).await {
            Err(e) if e.code() != Some(404) => {
                return Err(keystone("deleting the key-manager service")(e));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The KeystoneCatalog step.
pub fn keystone_catalog(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let (name, namespace) = (state.name(), state.namespace());
        let key = cache_key(&namespace, &name);
        let wanted = state
            .barbican
            .spec
            .keystone
            .as_ref()
            .and_then(|k| k.catalog.clone());
        let Some(catalog) = wanted else {
            state.env.probes.evict(&key);
            if let Some(recorded) = state.status.catalog.clone() {
                if let Err(failure) = deregister(state, &recorded).await {
                    state.report(failure.report());
                    return Ok(Outcome::Requeue(CATALOG_RETRY));
                }
                state.status.catalog = None;
            }
            state.report(Report::ready(
                T::KeystoneCatalogReady,
                Reason::CatalogNotRequired,
                "spec.keystone.catalog is not set",
            ));
            return Ok(Outcome::Done);
        };
        let desired = catalog_plan::desired(&name, &namespace, &state.barbican.spec, &catalog);
        let fingerprint = format!(
            "{}|{}|{}",
            desired.fingerprint(),
            state.barbican.spec.keystone_endpoint,
            state.barbican.spec.service_user.effective_username()
        );
        let uid = state.barbican.uid().unwrap_or_default();
        let now = state.env.clock.now();
        let registered_now = state
            .condition(T::KeystoneCatalogReady.as_str())
            .is_some_and(|c| c.status == "True" && c.reason == Reason::CatalogRegistered.as_str());
        if registered_now
            && state.status.catalog.is_some()
            && let Some(left) =
                state
                    .env
                    .probes
                    .left_of(&key, &uid, &fingerprint, now, CATALOG_RECHECK)
        {
            return Ok(Outcome::Requeue(left));
        }
        let outcome = match login(state).await {
            Ok(client) => {
                let outcome = register(&client, &desired, state.status.catalog.as_ref()).await;
                client.revoke().await;
                outcome
            }
            Err(failure) => Err(failure),
        };
        match outcome {
            Ok(record) => {
                state.report(Report::ready(
                    T::KeystoneCatalogReady,
                    Reason::CatalogRegistered,
                    format!(
                        "the {SERVICE_TYPE} service has its public endpoint {} and internal endpoint {} in region {:?}",
                        desired.urls[0], desired.urls[1], desired.region
                    ),
                ));
                state.status.catalog = Some(record);
                state.env.probes.record(&key, &uid, &fingerprint, now);
                Ok(Outcome::Requeue(CATALOG_RECHECK))
            }
            Err(failure) => {
                state.env.probes.evict(&key);
                state.report(failure.report());
                Ok(Outcome::Requeue(CATALOG_RETRY))
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> Error {
        Error::Status {
            code,
            message: "no".into(),
        }
    }

    #[test]
    fn each_keystone_failure_has_its_reason() {
        assert_eq!(
            reason_of(&status(401)),
            Reason::KeystoneAuthenticationFailed
        );
        assert_eq!(reason_of(&status(403)), Reason::CatalogRegistrationDenied);
        assert_eq!(reason_of(&status(500)), Reason::KeystoneUnreachable);
        assert_eq!(
            reason_of(&Error::Unreachable("refused".into())),
            Reason::KeystoneUnreachable
        );
    }

    #[test]
    fn a_denial_says_which_role_is_missing() {
        let report = Failure::Keystone {
            doing: "creating the key-manager service",
            error: status(403),
        }
        .report();
        assert_eq!(report.reason, Reason::CatalogRegistrationDenied);
        assert!(report.message.contains("admin role"), "{}", report.message);
    }
}
