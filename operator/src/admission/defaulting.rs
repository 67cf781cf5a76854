//! The mutating webhook's defaults, as pure functions over the typed specs.
//!
//! Each function completes a spec in place; [`patch_for`] turns the change into the JSON patch
//! the webhook answers with. Only what the spec says the webhook defaults is written:
//! `spec.dbClean` is left alone, so an unset knob keeps tracking the operator's default across
//! upgrades instead of freezing today's value into the stored object.

use std::collections::BTreeMap;

use k8s_openapi::{
    api::core::v1::ResourceRequirements, apimachinery::pkg::api::resource::Quantity,
};
use serde::Serialize;

use crate::api::{
    BarbicanSpec,
    api_server::{DEFAULT_UWSGI_PROCESSES, DEFAULT_UWSGI_THREADS},
    deployment::{
        DEFAULT_CPU_LIMIT, DEFAULT_CPU_REQUEST, DEFAULT_MEMORY_LIMIT, DEFAULT_MEMORY_REQUEST,
        DEFAULT_REPLICAS, DeploymentSpec,
    },
    logging::{LogFormat, LogLevel, LoggingSpec},
    memcached::DEFAULT_CACHE_BACKEND,
};

/// Service-user name written when unset.
pub const DEFAULT_SERVICE_USERNAME: &str = "barbican";
/// Service-user project written when unset.
pub const DEFAULT_SERVICE_PROJECT: &str = "service";
/// Domain of the service user and of its project, written when unset.
pub const DEFAULT_SERVICE_DOMAIN: &str = "Default";
/// Key of the service-user password Secret written when unset.
pub const DEFAULT_PASSWORD_KEY: &str = "password";

fn fill<T>(slot: &mut Option<T>, value: impl FnOnce() -> T) {
    if slot.is_none() {
        *slot = Some(value());
    }
}

fn fill_str(slot: &mut Option<String>, value: &str) {
    if slot.as_deref().is_none_or(str::is_empty) {
        *slot = Some(value.to_string());
    }
}

/// Completes a Barbican spec with the webhook's defaults.
pub fn default_barbican(spec: &mut BarbicanSpec) {
    let deployment = spec.deployment.get_or_insert_with(DeploymentSpec::default);
    fill(&mut deployment.replicas, || DEFAULT_REPLICAS);
    default_resources(
        deployment
            .resources
            .get_or_insert_with(ResourceRequirements::default),
    );

    fill_str(&mut spec.cache.backend, DEFAULT_CACHE_BACKEND);

    let logging = spec.logging.get_or_insert_with(LoggingSpec::default);
    fill(&mut logging.format, LogFormat::default);
    fill(&mut logging.level, LogLevel::default);
    fill(&mut logging.debug, || false);

    let user = &mut spec.service_user;
    fill_str(&mut user.username, DEFAULT_SERVICE_USERNAME);
    fill_str(&mut user.project_name, DEFAULT_SERVICE_PROJECT);
    fill_str(&mut user.user_domain_name, DEFAULT_SERVICE_DOMAIN);
    fill_str(&mut user.project_domain_name, DEFAULT_SERVICE_DOMAIN);
    fill_str(&mut user.secret_ref.key, DEFAULT_PASSWORD_KEY);

    // uWSGI sub-defaults only inside a block the user wrote; an absent block is resolved by the
    // reconciler to the same values.
    if let Some(uwsgi) = spec.api_server.as_mut().and_then(|a| a.uwsgi.as_mut()) {
        fill(&mut uwsgi.processes, || DEFAULT_UWSGI_PROCESSES);
        fill(&mut uwsgi.threads, || DEFAULT_UWSGI_THREADS);
        fill(&mut uwsgi.http_keep_alive, || true);
    }
}

/// Fills CPU and memory defaults for a resource the user named neither as request nor as limit.
///
/// A resource the user sized in either direction is left as written: writing the other half
/// from a fixed default could produce a request above the user's limit (or a limit below the
/// user's request), which the validating webhook would then refuse.
fn default_resources(resources: &mut ResourceRequirements) {
    for (name, request, limit) in [
        ("cpu", DEFAULT_CPU_REQUEST, DEFAULT_CPU_LIMIT),
        ("memory", DEFAULT_MEMORY_REQUEST, DEFAULT_MEMORY_LIMIT),
    ] {
        let named = |list: &Option<BTreeMap<String, Quantity>>| {
            list.as_ref().is_some_and(|l| l.contains_key(name))
        };
        if named(&resources.requests) || named(&resources.limits) {
            continue;
        }
        resources
            .requests
            .get_or_insert_with(BTreeMap::new)
            .insert(name.into(), Quantity(request.into()));
        resources
            .limits
            .get_or_insert_with(BTreeMap::new)
            .insert(name.into(), Quantity(limit.into()));
    }
}

/// The store's defaulting patch: `kvMountpoint: barbican` when `spec.openBao` has none.
///
/// Works on the raw object because only an *absent* mount is defaulted; an explicit empty
/// string is left for the schema's minLength to refuse, and a typed spec cannot tell the two
/// apart.
pub fn secret_store_patch(object: &serde_json::Value) -> json_patch::Patch {
    let open_bao = object.pointer("/spec/openBao");
    let needs_mount = open_bao.is_some_and(|o| o.is_object() && o.get("kvMountpoint").is_none());
    let mut after = object.clone();
    if needs_mount
        && let Some(open_bao) = after
            .pointer_mut("/spec/openBao")
            .and_then(|o| o.as_object_mut())
    {
        open_bao.insert(
            "kvMountpoint".into(),
            crate::api::secret_store::DEFAULT_KV_MOUNTPOINT.into(),
        );
    }
    json_patch::diff(object, &after)
}

/// The JSON patch from `before` to `after`, rooted at `/spec`, as the webhook answers it.
pub fn patch_for<T: Serialize>(
    before: &T,
    after: &T,
) -> Result<json_patch::Patch, serde_json::Error> {
    let before = serde_json::json!({ "spec": serde_json::to_value(before)? });
    let after = serde_json::json!({ "spec": serde_json::to_value(after)? });
    Ok(json_patch::diff(&before, &after))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn minimal() -> BarbicanSpec {
        serde_json::from_value(crate::api::fixtures::minimal_barbican()["spec"].clone()).unwrap()
    }

    #[test]
    fn a_minimal_barbican_gets_every_documented_default() {
        let mut spec = minimal();
        default_barbican(&mut spec);
        let value = serde_json::to_value(&spec).unwrap();
        assert_eq!(value["deployment"]["replicas"], 3);
        assert_eq!(
            value["deployment"]["resources"],
            json!({"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}})
        );
        assert_eq!(value["cache"]["backend"], "dogpile.cache.pymemcache");
        assert_eq!(
            value["logging"],
            json!({"format": "text", "level": "INFO", "debug": false})
        );
        assert_eq!(
            value["serviceUser"],
            json!({"username": "barbican", "projectName": "service", "userDomainName": "Default",
                   "projectDomainName": "Default", "secretRef": {"name": "barbican-keystone", "key": "password"}})
        );
        assert!(
            value.get("apiServer").is_none(),
            "no uwsgi block is invented"
        );
        assert!(
            value.get("dbClean").is_none(),
            "dbClean is resolved at reconcile time, never defaulted"
        );
    }

    #[test]
    fn user_values_are_kept() {
        let mut spec = minimal();
        spec.deployment = Some(DeploymentSpec {
            replicas: Some(5),
            ..Default::default()
        });
        spec.cache.backend = Some("oslo_cache.memcache_pool".into());
        spec.service_user.username = Some("key-manager".into());
        spec.logging = Some(LoggingSpec {
            level: Some(LogLevel::Debug),
            ..Default::default()
        });
        default_barbican(&mut spec);
        assert_eq!(spec.deployment.as_ref().unwrap().replicas, Some(5));
        assert_eq!(
            spec.cache.backend.as_deref(),
            Some("oslo_cache.memcache_pool")
        );
        assert_eq!(spec.service_user.username.as_deref(), Some("key-manager"));
        let logging = spec.logging.unwrap();
        assert_eq!(logging.level, Some(LogLevel::Debug));
        assert_eq!(logging.format, Some(LogFormat::Text));
    }

    #[test]
    fn a_resource_the_user_sized_either_way_is_left_alone() {
        let mut spec = minimal();
        spec.deployment =
            Some(serde_json::from_value(json!({"resources": {"limits": {"cpu": "50m"}}})).unwrap());
        default_barbican(&mut spec);
        let resources = serde_json::to_value(&spec.deployment.unwrap().resources).unwrap();
        assert_eq!(
            resources,
            json!({"limits": {"cpu": "50m", "memory": "512Mi"}, "requests": {"memory": "256Mi"}})
        );
    }

    #[test]
    fn uwsgi_sub_defaults_only_fill_a_present_block() {
        let mut spec = minimal();
        spec.api_server = Some(
            serde_json::from_value(json!({"uwsgi": {"httpKeepAlive": false, "harakiri": 20}}))
                .unwrap(),
        );
        default_barbican(&mut spec);
        assert_eq!(
            serde_json::to_value(&spec.api_server).unwrap(),
            json!({"uwsgi": {"processes": 2, "threads": 1, "httpKeepAlive": false, "harakiri": 20}})
        );
        let mut empty_api_server = minimal();
        empty_api_server.api_server = Some(Default::default());
        default_barbican(&mut empty_api_server);
        assert_eq!(
            serde_json::to_value(&empty_api_server.api_server).unwrap(),
            json!({})
        );
    }

    #[test]
    fn defaulting_is_idempotent_and_the_second_patch_is_empty() {
        let mut once = minimal();
        default_barbican(&mut once);
        let mut twice = once.clone();
        default_barbican(&mut twice);
        assert_eq!(once, twice);
        assert!(patch_for(&once, &twice).unwrap().0.is_empty());
    }

    #[test]
    fn the_patch_adds_defaults_under_spec() {
        let before = minimal();
        let mut after = before.clone();
        default_barbican(&mut after);
        let patch = serde_json::to_value(patch_for(&before, &after).unwrap()).unwrap();
        let ops = patch.as_array().unwrap();
        assert!(
            ops.iter()
                .all(|op| op["op"] == "add" && op["path"].as_str().unwrap().starts_with("/spec/")),
            "{patch}"
        );
        let mut object = json!({"spec": serde_json::to_value(&before).unwrap()});
        json_patch::patch(&mut object, &patch_for(&before, &after).unwrap()).unwrap();
        assert_eq!(object["spec"], serde_json::to_value(&after).unwrap());
    }

    #[test]
    fn a_store_without_a_mount_gets_barbican_and_an_explicit_value_is_kept() {
        let managed = json!({"spec": {"barbicanRef": {"name": "b"}, "type": "OpenBao", "openBao": {"instanceRef": {"name": "bao"}}}});
        let patch = serde_json::to_value(secret_store_patch(&managed)).unwrap();
        assert_eq!(
            patch,
            json!([{"op": "add", "path": "/spec/openBao/kvMountpoint", "value": "barbican"}])
        );
        for mount in ["kv", ""] {
            let explicit = json!({"spec": {"type": "OpenBao", "openBao": {"server": {}, "kvMountpoint": mount}}});
            assert!(
                secret_store_patch(&explicit).0.is_empty(),
                "{mount:?} must be left to the schema"
            );
        }
        let no_block = json!({"spec": {"type": "OpenBao"}});
        assert!(secret_store_patch(&no_block).0.is_empty());
    }
}
