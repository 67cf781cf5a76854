//! The Config step: barbican.conf, the paste ini and policy.yaml rendered into an immutable,
//! content-hashed `{name}-config-<hash8>` Secret; the history pruned to three; the
//! ExtraConfigHealthy guard. It reports failures through SecretsReady (ConfigError).
//!
//! On an invalid projection it renders nothing and hands on the Secret the live Deployment
//! mounts, so the running pods keep the configuration they started with.

use std::collections::BTreeMap;

use k8s_openapi::{
    ByteString,
    api::{
        apps::v1::Deployment,
        core::v1::{ConfigMap, Secret},
    },
};
use kube::ResourceExt;

use super::{
    handoffs::ConfigSecret,
    projection::Projection,
    state::{State, owned_by, owned_metadata},
};
use crate::{
    api::conditions::EventReason,
    api::conditions::{BarbicanConditionType as T, Reason},
    api::names::mounted_config,
    controller::{
        events::Severity,
        pipeline::{Outcome, StepFuture},
        runtime::children::ChildError,
        status::Report,
        step_error::{StepError, api_error},
    },
    render::{self, Inputs, POLICY_YAML, Rendered},
};

/// The label every config Secret of a Barbican carries: `<name>-config`.
pub const CONFIG_BASE_LABEL: &str = "cobaltcore.c5c3.io/config-base";
/// Historical config Secrets kept beside the current one.
pub const HISTORY: usize = 3;
/// The config Secrets the pass sweeps: this Barbican's, other than those in `keep` (the current one
/// and the one the live Deployment mounts), beyond the newest [`HISTORY`] (newest by creation
/// time, ties broken by name, both descending).
///
/// The mounted one is kept even when it is older than the history: while a pass stops
/// before the Deployment step (the database waiting, say) renders can pile up, and deleting
/// what the running pods mount would leave a restarted pod without its configuration.
pub fn prunable(barbican: &str, keep: &[&str], mut owned: Vec<Secret>) -> Vec<String> {
    let prefix = format!("{barbican}-config-");
    owned.retain(|s| {
        let name = s.name_any();
        name.starts_with(&prefix) && !keep.contains(&name.as_str())
    });
    owned.sort_by(|a, b| {
        let created = |s: &Secret| s.metadata.creation_timestamp.clone().map(|t| t.0);
        created(b)
            .cmp(&created(a))
            .then_with(|| b.name_any().cmp(&a.name_any()))
    });
    owned
        .into_iter()
        .skip(HISTORY)
        .map(|s| s.name_any())
        .collect()
}

/// The ExtraConfigHealthy report for the overridden operator-owned keys.
pub fn extra_config_health(overridden: &[String]) -> Report {
    if overridden.is_empty() {
        Report::ready(
            T::ExtraConfigHealthy,
            Reason::NoOwnedKeysOverridden,
            "spec.extraConfig overrides no operator-owned key",
        )
    } else {
        Report::not_ready(
            T::ExtraConfigHealthy,
            Reason::OwnedKeysOverridden,
            format!(
                "spec.extraConfig overrides operator-owned keys: {}",
                overridden.join(", ")
            ),
        )
    }
}

fn config_error(state: &mut State, message: String) -> StepError {
    state.report(Report::not_ready(
        T::SecretsReady,
        Reason::ConfigError,
        message.clone(),
    ));
    StepError::invalid_input(message)
}

async fn policy_from_config_map(state: &mut State) -> Result<BTreeMap<String, String>, StepError> {
    let Some(reference) = state
        .barbican
        .spec
        .policy_overrides
        .as_ref()
        .and_then(|p| p.config_map_ref.clone())
    else {
        return Ok(BTreeMap::new());
    };
    let map = state
        .children
        .get::<ConfigMap>(&reference.name)
        .await
        .map_err(|e| api_error("reading the policy ConfigMap", e))?;
    let text = map
        .as_ref()
        .and_then(|m| m.data.as_ref())
        .and_then(|d| d.get(POLICY_YAML).cloned());
    let Some(text) = text else {
        return Err(config_error(
            state,
            format!(
                "spec.policyOverrides.configMapRef: ConfigMap {:?} has no {POLICY_YAML} key",
                reference.name
            ),
        ));
    };
    serde_saphyr::from_str(&text).map_err(|e| {
        config_error(
            state,
            format!(
                "spec.policyOverrides.configMapRef: {POLICY_YAML} of ConfigMap {:?} is not a map of rule names to rules: {e}",
                reference.name
            ),
        )
    })
}

async fn write(state: &mut State, rendered: &Rendered) -> Result<String, StepError> {
    let name = rendered.secret_name(&state.name());
    let base = format!("{}-config", state.name());
    // The name is the content's hash: a Secret of this owner under it already holds it.
    if state
        .children
        .own::<Secret>(&name)
        .await
        .map_err(|e| api_error("reading the config Secret", e))?
        .is_some()
    {
        return Ok(name);
    }
    let mut metadata = owned_metadata(state, &name);
    metadata
        .labels
        .get_or_insert_default()
        .insert(CONFIG_BASE_LABEL.to_string(), base);
    let secret = Secret {
        metadata,
        immutable: Some(true),
        type_: Some("Opaque".into()),
        data: Some(
            rendered
                .files
                .iter()
                .map(|(k, v)| (k.clone(), ByteString(v.clone().into_bytes())))
                .collect(),
        ),
        ..Secret::default()
    };
    state
        .children
        .create(&secret)
        .await
        .map_err(|e| api_error("creating the config Secret", e))?;
    Ok(name)
}

/// The config Secret the Barbican's Deployment mounts now; empty without one. A foreign
/// Deployment under its name mounts nothing of this Barbican's (the Deployment step reports
/// it as NameTaken), so it counts as none here.
async fn mounted_now(state: &State) -> Result<String, StepError> {
    match state.children.own::<Deployment>(&state.name()).await {
        Ok(live) => Ok(live.as_ref().and_then(mounted_config).unwrap_or_default()),
        Err(ChildError::NameTaken(_)) => Ok(String::new()),
        Err(e) => Err(api_error("reading the Deployment", e)),
    }
}

/// Keeps the config Secrets the pass must not sweep: `current`, the one the live Deployment
/// mounts, and the newest [`HISTORY`] others; the pass sweeps the rest ([`prunable`]).
async fn keep_history(state: &State, current: &str) -> Result<(), StepError> {
    let selector = format!("{CONFIG_BASE_LABEL}={}-config", state.name());
    let owned: Vec<Secret> = state
        .children
        .list::<Secret>(&selector)
        .await
        .map_err(|e| api_error("listing the config Secrets", e))?
        .into_iter()
        .filter(|s| owned_by(s, &state.barbican))
        .collect();
    let mounted = mounted_now(state).await?;
    let prunable = prunable(&state.name(), &[current, &mounted], owned.clone());
    for secret in owned {
        let name = secret.name_any();
        if !prunable.contains(&name) {
            state.children.keep::<Secret>(&name);
        }
    }
    state.children.keep::<Secret>(&mounted);
    Ok(())
}

/// The Config step.
pub fn config(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let projection = state.handoffs.need::<Projection>()?;
        if !projection.valid {
            let mounted = mounted_now(state).await?;
            keep_history(state, &mounted).await?;
            state.handoffs.give(ConfigSecret(mounted));
            return Ok(Outcome::Done);
        }
        let stores = projection.stores.clone();
        let inputs = Inputs {
            name: state.name(),
            namespace: state.namespace(),
            stores,
            config_map_policy: policy_from_config_map(state).await?,
        };
        let rendered = render::render(&state.barbican.spec, &inputs)
            .map_err(|e| config_error(state, e.to_string()))?;
        let name = write(state, &rendered).await?;
        keep_history(state, &name).await?;

        let health = extra_config_health(&rendered.overridden_keys);
        let changed = state
            .condition(T::ExtraConfigHealthy.as_str())
            .is_none_or(|c| c.message != health.message);
        if !health.ready && changed {
            state
                .event(
                    Severity::Warning,
                    EventReason::ExtraConfigOwnedKeyOverride,
                    &health.message,
                )
                .await;
        }
        state.report(health);
        state.handoffs.give(ConfigSecret(name));
        Ok(Outcome::Done)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    fn secret(name: &str, second: i64) -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some(name.into()),
                creation_timestamp: Some(Time(
                    jiff::Timestamp::from_second(1_800_000_000 + second).unwrap(),
                )),
                ..ObjectMeta::default()
            },
            ..Secret::default()
        }
    }

    #[test]
    fn the_newest_three_besides_the_current_one_are_kept() {
        let owned = vec![
            secret("kms-config-00000001", 1),
            secret("kms-config-00000002", 2),
            secret("kms-config-00000003", 3),
            secret("kms-config-00000004", 4),
            secret("kms-config-00000005", 5),
            secret("kms-config-current", 0),
            secret("other-config-00000009", 0),
        ];
        assert_eq!(
            prunable("kms", &["kms-config-current"], owned),
            ["kms-config-00000002", "kms-config-00000001"]
        );
    }

    #[test]
    fn the_config_the_deployment_mounts_is_kept_however_old() {
        let owned = vec![
            secret("kms-config-00000001", 1),
            secret("kms-config-00000002", 2),
            secret("kms-config-00000003", 3),
            secret("kms-config-00000004", 4),
            secret("kms-config-00000005", 5),
            secret("kms-config-current", 0),
        ];
        assert_eq!(
            prunable("kms", &["kms-config-current", "kms-config-00000001"], owned),
            ["kms-config-00000002"]
        );
    }

    #[test]
    fn creation_ties_are_broken_by_name_descending() {
        let owned = vec![
            secret("kms-config-a", 1),
            secret("kms-config-b", 1),
            secret("kms-config-c", 1),
            secret("kms-config-d", 1),
        ];
        assert_eq!(prunable("kms", &["x"], owned), ["kms-config-a"]);
    }

    #[test]
    fn extra_config_health_names_each_overridden_key() {
        let ok = extra_config_health(&[]);
        assert!(ok.ready);
        assert_eq!(ok.reason, Reason::NoOwnedKeysOverridden);
        let bad = extra_config_health(&["[DEFAULT] host_href".into(), "[queue] enable".into()]);
        assert!(!bad.ready);
        assert_eq!(bad.reason, Reason::OwnedKeysOverridden);
        assert!(bad.message.contains("[DEFAULT] host_href, [queue] enable"));
    }

    #[test]
    fn the_mounted_config_is_the_config_volumes_secret() {
        let deployment: Deployment = serde_json::from_value(serde_json::json!({
            "spec": {"selector": {}, "template": {"spec": {"containers": [], "volumes": [
                {"name": "secret-store-ca", "secret": {"secretName": "ca"}},
                {"name": "config", "secret": {"secretName": "barbican-config-0123abcd"}},
            ]}}}
        }))
        .unwrap();
        assert_eq!(
            mounted_config(&deployment).as_deref(),
            Some("barbican-config-0123abcd")
        );
        assert_eq!(mounted_config(&Deployment::default()), None);
    }
}
