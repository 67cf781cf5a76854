//! Validation of a `Barbican`: every rule the spec lists that needs nothing but the object
//! (and the stored object on update).
//!
//! Still to come in this module (issue 3): requests ≤ limits, PriorityClass existence,
//! topology-spread selectors, the cron grammar, the extraConfig ownership registry and the
//! per-release option catalogs, and the two admission warnings.

use crate::api::{
    Barbican,
    barbican::TARGET_CLUSTER_REF_IMMUTABLE_MESSAGE,
    cache::CACHE_CLUSTER_REF_XOR_SERVERS_MESSAGE,
    database::{
        CredentialsMode, DATABASE_CLUSTER_REF_XOR_HOST_MESSAGE,
        DATABASE_DYNAMIC_REQUIRES_CLUSTER_REF_MESSAGE,
    },
    image::IMAGE_TAG_XOR_DIGEST_MESSAGE,
    logging::LogLevel,
    names::MAX_BARBICAN_NAME_LENGTH,
    policy::POLICY_RULES_OR_CONFIGMAP_MESSAGE,
};

use super::verdict::{Operation, Verdict, has_line_break};

/// Why `targetClusterRef` cannot change, appended to the schema rule's message.
pub const TARGET_CLUSTER_REF_IMMUTABLE_REASON: &str = "changing it would strand the children already created on the previously selected cluster; delete and recreate the Barbican instead";

/// Validates `new` (and the transition from `old` on update), collecting every violation.
pub fn validate_barbican(operation: Operation, old: Option<&Barbican>, new: &Barbican) -> Verdict {
    let mut verdict = Verdict::default();
    let spec = &new.spec;

    if operation == Operation::Create
        && let Some(name) = new.metadata.name.as_deref()
        && name.len() > MAX_BARBICAN_NAME_LENGTH
    {
        verdict.reject(
            "metadata.name",
            name,
            format!("must be no more than {MAX_BARBICAN_NAME_LENGTH} characters, so the {{name}}-db-clean CronJob fits"),
        );
    }

    if let Some(replicas) = spec.deployment.as_ref().and_then(|d| d.replicas)
        && replicas < 1
    {
        verdict.reject("spec.deployment.replicas", replicas, "must be at least 1");
    }

    if spec.image.tag.is_some() == spec.image.digest.is_some() {
        verdict.require("spec.image", IMAGE_TAG_XOR_DIGEST_MESSAGE);
    }

    let database = &spec.database;
    if database.cluster_ref.is_some() == database.host.is_some() {
        verdict.require("spec.database", DATABASE_CLUSTER_REF_XOR_HOST_MESSAGE);
    }
    if database.credentials_mode == Some(CredentialsMode::Dynamic) && database.cluster_ref.is_none()
    {
        verdict.require(
            "spec.database.credentialsMode",
            DATABASE_DYNAMIC_REQUIRES_CLUSTER_REF_MESSAGE,
        );
    }

    let cache = &spec.cache;
    let servers = cache.servers.as_deref().unwrap_or_default();
    // Exactly one of the two: a violation when both or neither are given.
    if cache.cluster_ref.is_some() != servers.is_empty() {
        verdict.require("spec.cache", CACHE_CLUSTER_REF_XOR_SERVERS_MESSAGE);
    }
    if let Some(cluster_ref) = &cache.cluster_ref
        && has_line_break(&cluster_ref.name)
    {
        verdict.require(
            "spec.cache.clusterRef.name",
            "must not contain a newline or carriage return",
        );
    }
    for (i, server) in servers.iter().enumerate() {
        if has_line_break(server) {
            verdict.require(
                format!("spec.cache.servers[{i}]"),
                "must not contain a newline or carriage return",
            );
        }
    }

    check_url(
        &mut verdict,
        "spec.keystoneEndpoint",
        Some(&spec.keystone_endpoint),
    );
    check_url(
        &mut verdict,
        "spec.keystonePublicEndpoint",
        spec.keystone_public_endpoint.as_deref(),
    );

    let user = &spec.service_user;
    for (field, value) in [
        ("spec.region", spec.region.as_deref()),
        ("spec.serviceUser.username", user.username.as_deref()),
        ("spec.serviceUser.projectName", user.project_name.as_deref()),
        (
            "spec.serviceUser.userDomainName",
            user.user_domain_name.as_deref(),
        ),
        (
            "spec.serviceUser.projectDomainName",
            user.project_domain_name.as_deref(),
        ),
        (
            "spec.gateway.hostname",
            spec.gateway.as_ref().map(|g| g.hostname.as_str()),
        ),
    ] {
        if value.is_some_and(has_line_break) {
            verdict.require(field, "must not contain a newline or carriage return: it is rendered verbatim into barbican.conf");
        }
    }

    if let Some(levels) = spec
        .logging
        .as_ref()
        .and_then(|l| l.per_logger_levels.as_ref())
    {
        for (logger, level) in levels {
            if logger.is_empty() {
                verdict.require(
                    "spec.logging.perLoggerLevels",
                    "logger names must not be empty",
                );
            }
            if !LogLevel::ALL.contains(&level.as_str()) {
                verdict.reject(
                    format!("spec.logging.perLoggerLevels[{logger}]"),
                    level,
                    format!("must be one of {}", LogLevel::ALL.join(", ")),
                );
            }
        }
    }

    check_termination(&mut verdict, new);
    check_scaling(&mut verdict, new);

    if let Some(policy) = &spec.network_policy
        && policy.ingress.is_empty()
    {
        verdict.require(
            "spec.networkPolicy.ingress",
            "at least one ingress source is required (fail-closed)",
        );
    }

    if let Some(gateway) = &spec.gateway {
        if gateway.hostname.is_empty() {
            verdict.require("spec.gateway.hostname", "Required value");
        }
        if gateway.parent_ref.name.is_empty() {
            verdict.require("spec.gateway.parentRef.name", "Required value");
        }
    }

    if let Some(days) = spec.db_clean.as_ref().and_then(|d| d.retention_days)
        && days < 1
    {
        verdict.reject("spec.dbClean.retentionDays", days, "must be at least 1 day");
    }

    if let Some(policy) = &spec.policy_overrides {
        let rules = policy.rules.as_ref();
        if rules.is_none_or(|r| r.is_empty()) && policy.config_map_ref.is_none() {
            verdict.require("spec.policyOverrides", POLICY_RULES_OR_CONFIGMAP_MESSAGE);
        }
        for (name, rule) in rules.into_iter().flatten() {
            if name.is_empty() {
                verdict.require(
                    "spec.policyOverrides.rules",
                    "policy rule name must not be empty",
                );
            } else if rule.is_empty() {
                verdict.require(
                    format!("spec.policyOverrides.rules[{name}]"),
                    "policy rule value must not be empty",
                );
            }
        }
    }

    if let Some(old) = old {
        let before = old
            .spec
            .target_cluster_ref
            .as_ref()
            .map(|r| r.name.as_str());
        let after = spec.target_cluster_ref.as_ref().map(|r| r.name.as_str());
        if before != after {
            verdict.require(
                "spec.targetClusterRef",
                format!(
                    "{TARGET_CLUSTER_REF_IMMUTABLE_MESSAGE}: {TARGET_CLUSTER_REF_IMMUTABLE_REASON}"
                ),
            );
        }
    }

    verdict
}

/// The host of an `http(s)://` URL, or why there is none.
fn url_host(url: &str) -> Result<&str, &'static str> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or("must start with http:// or https://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        let (host, port) = host_port.split_once(':').unwrap_or((host_port, ""));
        if !port.is_empty() && port.parse::<u16>().is_err() {
            return Err("must carry a numeric port");
        }
        host
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("must name a host");
    }
    Ok(host)
}

fn check_url(verdict: &mut Verdict, field: &str, url: Option<&str>) {
    if let Some(url) = url
        && let Err(why) = url_host(url)
    {
        verdict.reject(
            field,
            url,
            format!("{why} (an http:// or https:// URL with a host)"),
        );
    }
}

/// preStopSleepSeconds < terminationGracePeriodSeconds, and harakiri inside the drain window;
/// the keep-alive pairing; Recreate without rollingUpdate.
fn check_termination(verdict: &mut Verdict, barbican: &Barbican) {
    let spec = &barbican.spec;
    let deployment = spec.deployment.clone().unwrap_or_default();
    let grace = deployment.effective_termination_grace_period_seconds();
    let pre_stop = deployment.effective_pre_stop_sleep_seconds();
    if pre_stop >= grace {
        verdict.reject(
            "spec.deployment.preStopSleepSeconds",
            pre_stop,
            format!("must be less than terminationGracePeriodSeconds ({grace})"),
        );
    }
    let uwsgi = spec.api_server.as_ref().and_then(|a| a.uwsgi.as_ref());
    if let Some(harakiri) = uwsgi.and_then(|u| u.harakiri)
        && i64::from(harakiri) >= grace - pre_stop
    {
        verdict.reject(
            "spec.apiServer.uwsgi.harakiri",
            harakiri,
            format!(
                "must be less than terminationGracePeriodSeconds - preStopSleepSeconds ({grace} - {pre_stop} = {})",
                grace - pre_stop
            ),
        );
    }
    if let Some(uwsgi) = uwsgi
        && uwsgi.http_keep_alive_timeout.is_some()
        && uwsgi.http_keep_alive == Some(false)
    {
        verdict.require(
            "spec.apiServer.uwsgi.httpKeepAliveTimeout",
            crate::api::api_server::UWSGI_KEEPALIVE_TIMEOUT_MESSAGE,
        );
    }
    if let Some(strategy) = &deployment.strategy
        && strategy.type_.as_deref() == Some("Recreate")
        && strategy.rolling_update.is_some()
    {
        verdict.require(
            "spec.deployment.strategy.rollingUpdate",
            "must not be set when type is Recreate",
        );
    }
}

/// Autoscaling bounds, with minReplicas defaulting to the deployment's replicas.
fn check_scaling(verdict: &mut Verdict, barbican: &Barbican) {
    let spec = &barbican.spec;
    let Some(autoscaling) = &spec.autoscaling else {
        return;
    };
    if autoscaling.target_cpu_utilization.is_none()
        && autoscaling.target_memory_utilization.is_none()
    {
        verdict.require(
            "spec.autoscaling",
            "at least one of targetCPUUtilization or targetMemoryUtilization is required",
        );
    }
    let replicas = spec
        .deployment
        .as_ref()
        .map(|d| d.effective_replicas())
        .unwrap_or(crate::api::deployment::DEFAULT_REPLICAS);
    let (min, field) = match autoscaling.min_replicas {
        Some(min) => (min, "spec.autoscaling.minReplicas"),
        None => (
            replicas,
            "spec.autoscaling.minReplicas (defaulted from spec.deployment.replicas)",
        ),
    };
    if min > autoscaling.max_replicas {
        verdict.reject(
            field,
            min,
            format!("must not exceed maxReplicas ({})", autoscaling.max_replicas),
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::api::fixtures::{minimal_barbican, with_spec};

    fn barbican(spec_patch: Value) -> Barbican {
        serde_json::from_value(with_spec(minimal_barbican(), &spec_patch)).unwrap()
    }

    fn fields(verdict: &Verdict) -> Vec<&str> {
        verdict
            .violations
            .iter()
            .map(|v| v.field.as_str())
            .collect()
    }

    /// One row: a spec patch and the field paths it must be refused on (empty: admitted).
    fn check(rows: &[(Value, &[&str])]) {
        for (patch, expected) in rows {
            let verdict = validate_barbican(Operation::Create, None, &barbican(patch.clone()));
            assert_eq!(
                fields(&verdict),
                *expected,
                "{patch}: {}",
                verdict.message()
            );
        }
    }

    #[test]
    fn the_minimal_barbican_is_admitted() {
        assert!(validate_barbican(Operation::Create, None, &barbican(json!({}))).allowed());
    }

    #[test]
    fn five_independent_mistakes_are_all_named_at_once() {
        let verdict = validate_barbican(
            Operation::Create,
            None,
            &barbican(json!({
                "image": {"digest": format!("sha256:{}", "0".repeat(64))},
                "database": {"host": "db.example.com"},
                "keystoneEndpoint": "https://",
                "region": "RegionOne\n[DEFAULT]\nhost_href = evil",
                "deployment": {"preStopSleepSeconds": 40}
            })),
        );
        assert_eq!(
            fields(&verdict),
            [
                "spec.image",
                "spec.database",
                "spec.keystoneEndpoint",
                "spec.region",
                "spec.deployment.preStopSleepSeconds"
            ],
            "{}",
            verdict.message()
        );
        assert!(
            !verdict.message().contains("evil"),
            "an injected line is never echoed back"
        );
    }

    #[test]
    fn shape_rules() {
        check(&[
            (
                json!({"deployment": {"replicas": 0}}),
                &["spec.deployment.replicas"],
            ),
            (json!({"image": {"tag": null}}), &["spec.image"]),
            (json!({"database": {"clusterRef": null, "host": "db"}}), &[]),
            (
                json!({"database": {"clusterRef": null, "host": "db", "credentialsMode": "Dynamic"}}),
                &["spec.database.credentialsMode"],
            ),
            (
                json!({"cache": {"clusterRef": null, "servers": ["mc:11211"]}}),
                &[],
            ),
            (
                json!({"cache": {"clusterRef": null, "servers": []}}),
                &["spec.cache"],
            ),
            (
                json!({"cache": {"clusterRef": null, "servers": ["mc:11211\nx"]}}),
                &["spec.cache.servers[0]"],
            ),
            (
                json!({"cache": {"clusterRef": {"name": "mc\r"}}}),
                &["spec.cache.clusterRef.name"],
            ),
            (
                json!({"networkPolicy": {"ingress": []}}),
                &["spec.networkPolicy.ingress"],
            ),
            (
                json!({"gateway": {"hostname": "", "parentRef": {"name": ""}}}),
                &["spec.gateway.hostname", "spec.gateway.parentRef.name"],
            ),
            (
                json!({"gateway": {"hostname": "b.example.com\n", "parentRef": {"name": "gw"}}}),
                &["spec.gateway.hostname"],
            ),
            (
                json!({"dbClean": {"retentionDays": 0}}),
                &["spec.dbClean.retentionDays"],
            ),
            (json!({"dbClean": {"retentionDays": 1}}), &[]),
        ]);
    }

    #[test]
    fn keystone_urls_need_a_scheme_and_a_host() {
        check(&[
            (
                json!({"keystoneEndpoint": "https://keystone.example.com"}),
                &[],
            ),
            (json!({"keystoneEndpoint": "http://[fd00::1]:5000/v3"}), &[]),
            (
                json!({"keystoneEndpoint": "keystone:5000"}),
                &["spec.keystoneEndpoint"],
            ),
            (
                json!({"keystoneEndpoint": "http://:5000/v3"}),
                &["spec.keystoneEndpoint"],
            ),
            (
                json!({"keystoneEndpoint": "http://keystone:port/v3"}),
                &["spec.keystoneEndpoint"],
            ),
            (
                json!({"keystonePublicEndpoint": "https://"}),
                &["spec.keystonePublicEndpoint"],
            ),
        ]);
    }

    #[test]
    fn identity_fields_refuse_line_breaks() {
        check(&[
            (
                json!({"serviceUser": {"username": "a\nb"}}),
                &["spec.serviceUser.username"],
            ),
            (
                json!({"serviceUser": {"projectName": "a\rb"}}),
                &["spec.serviceUser.projectName"],
            ),
            (
                json!({"serviceUser": {"userDomainName": "a\nb"}}),
                &["spec.serviceUser.userDomainName"],
            ),
            (
                json!({"serviceUser": {"projectDomainName": "a\nb"}}),
                &["spec.serviceUser.projectDomainName"],
            ),
            (
                json!({"serviceUser": {"username": "key-manager"}, "region": "RegionTwo"}),
                &[],
            ),
        ]);
    }

    #[test]
    fn logging_levels_per_logger() {
        check(&[
            (
                json!({"logging": {"perLoggerLevels": {"sqlalchemy": "WARNING"}}}),
                &[],
            ),
            (
                json!({"logging": {"perLoggerLevels": {"sqlalchemy": "LOUD"}}}),
                &["spec.logging.perLoggerLevels[sqlalchemy]"],
            ),
            (
                json!({"logging": {"perLoggerLevels": {"": "INFO"}}}),
                &["spec.logging.perLoggerLevels"],
            ),
        ]);
    }

    #[test]
    fn graceful_termination_arithmetic() {
        check(&[
            (json!({"deployment": {"preStopSleepSeconds": 29}}), &[]),
            (
                json!({"deployment": {"preStopSleepSeconds": 30}}),
                &["spec.deployment.preStopSleepSeconds"],
            ),
            (
                json!({"deployment": {"terminationGracePeriodSeconds": 5}}),
                &["spec.deployment.preStopSleepSeconds"],
            ),
            (json!({"apiServer": {"uwsgi": {"harakiri": 24}}}), &[]),
            (
                json!({"apiServer": {"uwsgi": {"harakiri": 25}}}),
                &["spec.apiServer.uwsgi.harakiri"],
            ),
            (
                json!({"deployment": {"terminationGracePeriodSeconds": 60, "preStopSleepSeconds": 10}, "apiServer": {"uwsgi": {"harakiri": 49}}}),
                &[],
            ),
        ]);
    }

    #[test]
    fn keepalive_and_strategy_pairings() {
        check(&[
            (
                json!({"apiServer": {"uwsgi": {"httpKeepAliveTimeout": 10}}}),
                &[],
            ),
            (
                json!({"apiServer": {"uwsgi": {"httpKeepAlive": false, "httpKeepAliveTimeout": 10}}}),
                &["spec.apiServer.uwsgi.httpKeepAliveTimeout"],
            ),
            (
                json!({"deployment": {"strategy": {"type": "Recreate"}}}),
                &[],
            ),
            (
                json!({"deployment": {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}}),
                &["spec.deployment.strategy.rollingUpdate"],
            ),
        ]);
    }

    #[test]
    fn autoscaling_bounds_use_the_implicit_min_replicas() {
        check(&[
            (
                json!({"autoscaling": {"maxReplicas": 5, "targetCPUUtilization": 80}}),
                &[],
            ),
            (
                json!({"autoscaling": {"maxReplicas": 5}}),
                &["spec.autoscaling"],
            ),
            (
                json!({"autoscaling": {"minReplicas": 6, "maxReplicas": 5, "targetCPUUtilization": 80}}),
                &["spec.autoscaling.minReplicas"],
            ),
            // deployment.replicas defaults to 3, above maxReplicas 2.
            (
                json!({"autoscaling": {"maxReplicas": 2, "targetMemoryUtilization": 80}}),
                &["spec.autoscaling.minReplicas (defaulted from spec.deployment.replicas)"],
            ),
        ]);
    }

    #[test]
    fn policy_rules_need_names_and_values() {
        check(&[
            (
                json!({"policyOverrides": {"rules": {"secrets:get": "role:admin"}}}),
                &[],
            ),
            (json!({"policyOverrides": {}}), &["spec.policyOverrides"]),
            (
                json!({"policyOverrides": {"rules": {"secrets:get": ""}}}),
                &["spec.policyOverrides.rules[secrets:get]"],
            ),
            (
                json!({"policyOverrides": {"rules": {"": "role:admin"}}}),
                &["spec.policyOverrides.rules"],
            ),
        ]);
    }

    #[test]
    fn the_name_bound_applies_on_create_only() {
        let mut long = barbican(json!({}));
        long.metadata.name = Some("b".repeat(44));
        let created = validate_barbican(Operation::Create, None, &long);
        assert_eq!(fields(&created), ["metadata.name"]);
        let updated = validate_barbican(Operation::Update, Some(&long), &long);
        assert!(updated.allowed(), "{}", updated.message());
        long.metadata.name = Some("b".repeat(43));
        assert!(validate_barbican(Operation::Create, None, &long).allowed());
    }

    #[test]
    fn target_cluster_ref_is_immutable_with_the_reason_appended() {
        let local = barbican(json!({}));
        let east = barbican(json!({"targetClusterRef": {"name": "east"}}));
        let west = barbican(json!({"targetClusterRef": {"name": "west"}}));
        assert!(validate_barbican(Operation::Update, Some(&east), &east).allowed());
        for (old, new) in [(&local, &east), (&east, &local), (&east, &west)] {
            let verdict = validate_barbican(Operation::Update, Some(old), new);
            assert_eq!(fields(&verdict), ["spec.targetClusterRef"]);
            assert!(
                verdict
                    .message()
                    .contains("targetClusterRef is immutable: changing it would strand"),
                "{}",
                verdict.message()
            );
        }
    }
}
