//! Validation of a `Barbican`: every rule of the spec's "Defaulting and validation", all
//! violations collected into one verdict, plus the two admission warnings.

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
use crate::render::{
    ini::{key_problem, section_name_problem, value_problem},
    paste::BUILT_IN_FILTERS,
};

use std::collections::{BTreeMap, BTreeSet};

use super::{
    catalog, cron,
    defaulting::default_barbican,
    lookups::Lookups,
    quantity,
    verdict::{Operation, Verdict, has_line_break},
};
use crate::api::{
    config_ownership,
    db_clean::DbCleanSpec,
    paste::{MAX_EXTRA_CONFIG_SECTIONS, MAX_OPTION_VALUE_LENGTH, MAX_PLUGINS, MAX_SECTION_OPTIONS},
    refs::is_dns1123_subdomain,
};

/// Why `targetClusterRef` cannot change, appended to the schema rule's message.
pub const TARGET_CLUSTER_REF_IMMUTABLE_REASON: &str = "changing it would strand the children already created on the previously selected cluster, so delete and recreate the Barbican instead";

/// Validates `new` (and the transition from `old` on update), collecting every violation.
pub fn validate_barbican(
    operation: Operation,
    old: Option<&Barbican>,
    new: &Barbican,
    lookups: &dyn Lookups,
) -> Verdict {
    let mut verdict = Verdict::default();
    let spec = &new.spec;

    // The update that removes the finalizer of a deleting CR must pass even when a rule would
    // now refuse the unchanged spec (a PriorityClass deleted since, a regenerated catalog):
    // refusing it would hold the CR in Terminating with nothing left to edit. The stored spec
    // is defaulted first, so a default added by a newer operator is no spec change.
    if operation == Operation::Update
        && new.metadata.deletion_timestamp.is_some()
        && let Some(old) = old
    {
        let mut stored = old.spec.clone();
        default_barbican(&mut stored);
        if stored == new.spec {
            return verdict;
        }
    }

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
        if value_problem(server).is_some() || server.contains(',') {
            verdict.require(
                format!("spec.cache.servers[{i}]"),
                "must be one host:port without a newline, carriage return, comma or surrounding whitespace",
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
        if let Some(problem) = value.and_then(value_problem) {
            verdict.require(
                field,
                format!("{problem}: it is rendered verbatim into barbican.conf"),
            );
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
                continue;
            }
            // Logger names end up in oslo.log's default_log_levels line once logging is rendered.
            if has_line_break(logger) {
                verdict.require(
                    "spec.logging.perLoggerLevels",
                    "logger names must not contain a newline or carriage return",
                );
                continue;
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

    check_db_clean(&mut verdict, operation, old, new);
    check_secret_store_ref(&mut verdict, new);
    check_resources(&mut verdict, new, lookups);
    check_extra_config(&mut verdict, operation, old, new);
    check_plugins(&mut verdict, new);
    check_middleware(&mut verdict, new);

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
    if let Some(problem) = url.and_then(value_problem) {
        verdict.require(field, problem);
        return;
    }
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
        && i64::from(harakiri) >= grace.saturating_sub(pre_stop)
    {
        verdict.reject(
            "spec.apiServer.uwsgi.harakiri",
            harakiri,
            format!(
                "must be less than terminationGracePeriodSeconds - preStopSleepSeconds ({grace} - {pre_stop} = {})",
                grace.saturating_sub(pre_stop)
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

/// retentionDays floor, the cron grammar, and the two warnings about what a clean-up deletes.
fn check_db_clean(
    verdict: &mut Verdict,
    operation: Operation,
    old: Option<&Barbican>,
    new: &Barbican,
) {
    let spec = &new.spec;
    if let Some(schedule) = spec.db_clean.as_ref().and_then(|d| d.schedule.as_deref())
        && !schedule.is_empty()
        && let Err(why) = cron::check(schedule)
    {
        verdict.reject(
            "spec.dbClean.schedule",
            schedule,
            format!("not a Kubernetes CronJob schedule: {why}"),
        );
    }
    let effective = DbCleanSpec::effective(spec.db_clean.as_ref());
    match (operation, old) {
        (Operation::Update, Some(old)) => {
            let before = DbCleanSpec::effective(old.spec.db_clean.as_ref()).retention_days;
            if effective.retention_days < before {
                verdict.warn(format!(
                    "spec.dbClean.retentionDays drops from {before} to {}: the next clean-up hard-deletes every soft-deleted row older than {} days, which cannot be undone",
                    effective.retention_days, effective.retention_days
                ));
            }
        }
        (Operation::Create, _) if spec.database.host.is_some() && !effective.suspend => {
            verdict.warn(format!(
                "brownfield database (spec.database.host) without spec.dbClean.suspend: the first clean-up applies the {}-day retention window to a backlog that has never been cleaned; set spec.dbClean.suspend: true to stage it",
                effective.retention_days
            ));
        }
        _ => {}
    }
}

fn check_secret_store_ref(verdict: &mut Verdict, new: &Barbican) {
    if let Some(store) = &new.spec.secret_store_ref
        && !is_dns1123_subdomain(&store.name)
    {
        verdict.reject(
            "spec.secretStoreRef.name",
            &store.name,
            "must be a non-empty DNS-1123 subdomain (lowercase alphanumerics, '-' and '.')",
        );
    }
}

/// Requests within limits, an existing PriorityClass, and topology-spread selectors that select
/// this Barbican's API pods.
fn check_resources(verdict: &mut Verdict, new: &Barbican, lookups: &dyn Lookups) {
    let Some(deployment) = &new.spec.deployment else {
        return;
    };
    if let Some(resources) = &deployment.resources {
        let limits = resources.limits.clone().unwrap_or_default();
        for (name, request) in resources.requests.iter().flatten() {
            let Some(limit) = limits.get(name) else {
                continue;
            };
            match (quantity::parse(&request.0), quantity::parse(&limit.0)) {
                (Some(r), Some(l)) if r > l => verdict.reject(
                    format!("spec.deployment.resources.requests.{name}"),
                    &request.0,
                    format!("must not exceed the {name} limit ({})", limit.0),
                ),
                (None, _) => verdict.reject(
                    format!("spec.deployment.resources.requests.{name}"),
                    &request.0,
                    "must be a quantity",
                ),
                (_, None) => verdict.reject(
                    format!("spec.deployment.resources.limits.{name}"),
                    &limit.0,
                    "must be a quantity",
                ),
                _ => {}
            }
        }
    }
    if let Some(class) = &deployment.priority_class_name {
        match lookups.priority_class_exists(class) {
            Ok(true) => {}
            Ok(false) => verdict.reject(
                "spec.deployment.priorityClassName",
                class,
                "no PriorityClass of that name exists",
            ),
            Err(e) => verdict.reject(
                "spec.deployment.priorityClassName",
                class,
                format!("could not check that the PriorityClass exists: {e}"),
            ),
        }
    }
    let name = new.metadata.name.clone().unwrap_or_default();
    let pod_labels: BTreeMap<String, String> = [
        ("app.kubernetes.io/name", "barbican"),
        ("app.kubernetes.io/instance", name.as_str()),
        ("app.kubernetes.io/component", "api"),
        ("app.kubernetes.io/managed-by", "barbican-operator"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (i, constraint) in deployment
        .topology_spread_constraints
        .iter()
        .flatten()
        .enumerate()
    {
        let field = format!("spec.deployment.topologySpreadConstraints[{i}].labelSelector");
        let allowed = format!(
            "must select this Barbican's API pods: matchLabels app.kubernetes.io/name=barbican and app.kubernetes.io/instance={name}"
        );
        let Some(selector) = &constraint.label_selector else {
            verdict.require(field, allowed);
            continue;
        };
        let match_labels = selector.match_labels.clone().unwrap_or_default();
        let names_both = match_labels
            .get("app.kubernetes.io/name")
            .map(String::as_str)
            == Some("barbican")
            && match_labels.get("app.kubernetes.io/instance") == Some(&name);
        if !names_both || !selects(selector, &pod_labels) {
            verdict.require(field, allowed);
        }
    }
}

/// Whether a LabelSelector selects a pod with `labels`.
fn selects(
    selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    labels: &BTreeMap<String, String>,
) -> bool {
    let by_labels = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let by_expressions = selector.match_expressions.iter().flatten().all(|e| {
        let values = e.values.clone().unwrap_or_default();
        let value = labels.get(&e.key);
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    by_labels && by_expressions
}

/// Plugin sections are written verbatim: section names, option names and values must survive
/// the INI syntax, and no credential the operator keeps out of the file may come in this way.
fn check_plugins(verdict: &mut Verdict, new: &Barbican) {
    let plugins = new.spec.plugins.as_deref().unwrap_or_default();
    if plugins.len() > MAX_PLUGINS as usize {
        verdict.require(
            "spec.plugins",
            format!("must have at most {MAX_PLUGINS} items"),
        );
    }
    for (i, plugin) in plugins.iter().enumerate() {
        let section = &plugin.config_section;
        if let Some(config) = &plugin.config {
            check_section_bounds(verdict, &format!("spec.plugins[{i}].config"), config);
        }
        if let Some(problem) = section_name_problem(section) {
            verdict.require(format!("spec.plugins[{i}].configSection"), problem);
        }
        for (key, value) in plugin.config.iter().flatten() {
            if let Some(problem) = key_problem(key).or_else(|| value_problem(value)) {
                verdict.require(format!("spec.plugins[{i}].config"), problem);
            }
            refuse_credential(
                verdict,
                &format!("spec.plugins[{i}].config[{key}]"),
                section,
                key,
            );
        }
    }
}

/// The schema's bounds on one INI section (re-checked here, as for every schema rule).
fn check_section_bounds(
    verdict: &mut Verdict,
    field: &str,
    options: &std::collections::BTreeMap<String, String>,
) {
    if options.len() > MAX_SECTION_OPTIONS as usize {
        verdict.require(
            field,
            format!("must have at most {MAX_SECTION_OPTIONS} options"),
        );
    }
    for (key, value) in options {
        if value.chars().count() > MAX_OPTION_VALUE_LENGTH as usize {
            verdict.require(
                format!("{field}[{key}]"),
                format!("must be at most {MAX_OPTION_VALUE_LENGTH} characters"),
            );
        }
    }
}

/// Refuses `[section] key` at `field` when it is one of the credentials the registry keeps out
/// of the file, the section compared as oslo.config reads it (`[VAULT_PLUGIN]` is
/// `[vault_plugin]`), whatever the release.
fn refuse_credential(verdict: &mut Verdict, field: &str, section: &str, key: &str) {
    if let Some(owned) = config_ownership::owned(section, key)
        && let Some(why) = owned.rejected
    {
        verdict.require(
            field,
            format!(
                "[{}] {} is managed through {} and must not be set in the config: {why}",
                owned.section, owned.key, owned.owned_by
            ),
        );
    }
}

/// A middleware name is one token of a space-separated pipeline and the name of its own
/// `[filter:<name>]` section: a single word, not a built-in filter, not used twice.
fn check_middleware(verdict: &mut Verdict, new: &Barbican) {
    let mut seen = BTreeSet::new();
    for (i, middleware) in new.spec.middleware.iter().flatten().enumerate() {
        let name = &middleware.name;
        let field = format!("spec.middleware[{i}].name");
        let token = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !token {
            verdict.require(
                field,
                "must be one word of letters, digits, '-', '_' or '.'",
            );
        } else if BUILT_IN_FILTERS.contains(&name.as_str()) {
            verdict.reject(
                field,
                name,
                format!(
                    "is a filter barbican ships (built in: {})",
                    BUILT_IN_FILTERS.join(", ")
                ),
            );
        } else if !seen.insert(name.as_str()) {
            verdict.reject(field, name, "is used by an earlier middleware");
        }
        if let Some(problem) = value_problem(&middleware.filter_factory) {
            verdict.require(format!("spec.middleware[{i}].filterFactory"), problem);
        }
        for (key, value) in middleware.config.iter().flatten() {
            if let Some(problem) = key_problem(key).or_else(|| value_problem(value)) {
                verdict.require(format!("spec.middleware[{i}].config"), problem);
            } else if key == "paste.filter_factory" || key == "use" {
                verdict.require(
                    format!("spec.middleware[{i}].config"),
                    format!("{key} is set from filterFactory"),
                );
            }
        }
    }
}

/// Empty names, line breaks, the registry's rejected credential keys, and the catalog.
fn check_extra_config(
    verdict: &mut Verdict,
    operation: Operation,
    old: Option<&Barbican>,
    new: &Barbican,
) {
    let Some(extra) = &new.spec.extra_config else {
        return;
    };
    if extra.len() > MAX_EXTRA_CONFIG_SECTIONS as usize {
        verdict.require(
            "spec.extraConfig",
            format!("must have at most {MAX_EXTRA_CONFIG_SECTIONS} sections"),
        );
    }
    for (section, options) in extra {
        check_section_bounds(verdict, &format!("spec.extraConfig[{section}]"), options);
        if let Some(problem) = section_name_problem(section) {
            verdict.require("spec.extraConfig", problem);
            continue;
        }
        for (key, value) in options {
            if let Some(problem) = key_problem(key).or_else(|| value_problem(value)) {
                verdict.require(format!("spec.extraConfig[{section}]"), problem);
            }
        }
    }
    for (section, options) in extra {
        for key in options.keys() {
            refuse_credential(
                verdict,
                &format!("spec.extraConfig[{section}][{key}]"),
                section,
                key,
            );
        }
    }
    // On update the catalog re-runs only when one of its inputs changed, so an unrelated edit
    // cannot retroactively refuse a CR a regenerated catalog has since invalidated.
    let inputs_changed = match (operation, old) {
        (Operation::Update, Some(old)) => {
            old.spec.extra_config != new.spec.extra_config
                || old.spec.open_stack_release != new.spec.open_stack_release
        }
        _ => true,
    };
    if inputs_changed {
        catalog::check(verdict, &new.spec.open_stack_release, extra);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::{
        admission::lookups::KnownState,
        api::fixtures::{minimal_barbican, with_spec},
    };

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
            let verdict = validate_barbican(
                Operation::Create,
                None,
                &barbican(patch.clone()),
                &KnownState::default(),
            );
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
        assert!(
            validate_barbican(
                Operation::Create,
                None,
                &barbican(json!({})),
                &KnownState::default()
            )
            .allowed()
        );
    }

    #[test]
    fn five_independent_mistakes_are_all_named_at_once() {
        let verdict = validate_barbican(
            Operation::Create,
            None,
            &barbican(json!({
                "image": {"digest": format!("sha256:{}", "0".repeat(64))},
                "database": {"host": "db.example.com", "clusterRef": {"name": "db"}},
                "keystoneEndpoint": "https://",
                "region": "RegionOne\n[DEFAULT]\nhost_href = evil",
                "deployment": {"preStopSleepSeconds": 40}
            })),
            &KnownState::default(),
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
        let created = validate_barbican(Operation::Create, None, &long, &KnownState::default());
        assert_eq!(fields(&created), ["metadata.name"]);
        let updated = validate_barbican(
            Operation::Update,
            Some(&long),
            &long,
            &KnownState::default(),
        );
        assert!(updated.allowed(), "{}", updated.message());
        long.metadata.name = Some("b".repeat(43));
        assert!(
            validate_barbican(Operation::Create, None, &long, &KnownState::default()).allowed()
        );
    }

    #[test]
    fn target_cluster_ref_is_immutable_with_the_reason_appended() {
        let local = barbican(json!({}));
        let east = barbican(json!({"targetClusterRef": {"name": "east"}}));
        let west = barbican(json!({"targetClusterRef": {"name": "west"}}));
        assert!(
            validate_barbican(
                Operation::Update,
                Some(&east),
                &east,
                &KnownState::default()
            )
            .allowed()
        );
        for (old, new) in [(&local, &east), (&east, &local), (&east, &west)] {
            let verdict =
                validate_barbican(Operation::Update, Some(old), new, &KnownState::default());
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

    fn with_lookups(patch: Value, lookups: &KnownState) -> Verdict {
        validate_barbican(Operation::Create, None, &barbican(patch), lookups)
    }

    #[test]
    fn db_clean_schedule_uses_the_kubernetes_cron_grammar() {
        check(&[
            (json!({"dbClean": {"schedule": "@daily"}}), &[]),
            (json!({"dbClean": {"schedule": "30 2 * * SUN"}}), &[]),
            (
                json!({"dbClean": {"schedule": "0 0 * * * *"}}),
                &["spec.dbClean.schedule"],
            ),
            (
                json!({"dbClean": {"schedule": "0 0 L * *"}}),
                &["spec.dbClean.schedule"],
            ),
        ]);
    }

    #[test]
    fn secret_store_ref_names_a_dns_subdomain() {
        check(&[
            (
                json!({"secretStoreRef": {"name": "openbao-cluster-store"}}),
                &[],
            ),
            (
                json!({"secretStoreRef": {"kind": "SecretStore", "name": "Tenant_Store"}}),
                &["spec.secretStoreRef.name"],
            ),
            (
                json!({"secretStoreRef": {"name": ""}}),
                &["spec.secretStoreRef.name"],
            ),
        ]);
    }

    #[test]
    fn requests_may_not_exceed_limits() {
        check(&[
            (
                json!({"deployment": {"resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}}}),
                &[],
            ),
            (
                json!({"deployment": {"resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "512Mi"}}}}),
                &["spec.deployment.resources.requests.memory"],
            ),
            (
                json!({"deployment": {"resources": {"requests": {"cpu": "2"}}}}),
                &[],
            ),
        ]);
    }

    #[test]
    fn the_priority_class_must_exist() {
        let known = KnownState {
            priority_classes: vec!["openstack-control-plane".into()],
            ..Default::default()
        };
        let patch = |name: &str| json!({"deployment": {"priorityClassName": name}});
        assert!(with_lookups(patch("openstack-control-plane"), &known).allowed());
        let missing = with_lookups(patch("openstack-contrl-plane"), &known);
        assert_eq!(fields(&missing), ["spec.deployment.priorityClassName"]);
        assert!(
            missing
                .message()
                .contains("no PriorityClass of that name exists")
        );
        let down = KnownState {
            unavailable: Some("the server is unavailable".into()),
            ..Default::default()
        };
        let unknown = with_lookups(patch("openstack-control-plane"), &down);
        assert!(
            unknown.message().contains(
                "could not check that the PriorityClass exists: the server is unavailable"
            )
        );
    }

    #[test]
    fn topology_spread_selectors_must_select_this_barbicans_api_pods() {
        let constraint = |selector: Value| {
            let mut c = json!({"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"});
            if !selector.is_null() {
                c["labelSelector"] = selector;
            }
            json!({"deployment": {"topologySpreadConstraints": [c]}})
        };
        let field: &[&str] = &["spec.deployment.topologySpreadConstraints[0].labelSelector"];
        check(&[
            (
                constraint(
                    json!({"matchLabels": {"app.kubernetes.io/name": "barbican", "app.kubernetes.io/instance": "barbican"}}),
                ),
                &[],
            ),
            (
                constraint(
                    json!({"matchLabels": {"app.kubernetes.io/name": "barbican", "app.kubernetes.io/instance": "barbican"},
                    "matchExpressions": [{"key": "app.kubernetes.io/component", "operator": "In", "values": ["api"]}]}),
                ),
                &[],
            ),
            (
                constraint(json!({"matchLabels": {"app.kubernetes.io/name": "barbican"}})),
                field,
            ),
            (
                constraint(
                    json!({"matchLabels": {"app.kubernetes.io/name": "barbican", "app.kubernetes.io/instance": "other"}}),
                ),
                field,
            ),
            (
                constraint(
                    json!({"matchLabels": {"app.kubernetes.io/name": "barbican", "app.kubernetes.io/instance": "barbican"},
                    "matchExpressions": [{"key": "app.kubernetes.io/component", "operator": "In", "values": ["db-clean"]}]}),
                ),
                field,
            ),
            (constraint(Value::Null), field),
            (
                json!({"deployment": {"topologySpreadConstraints": []}}),
                &[],
            ),
        ]);
    }

    #[test]
    fn extra_config_guards_names_line_breaks_and_the_three_credentials() {
        check(&[
            (json!({"extraConfig": {"DEFAULT": {"debug": "true"}}}), &[]),
            (
                json!({"extraConfig": {"": {"debug": "true"}}}),
                &["spec.extraConfig"],
            ),
            (
                json!({"extraConfig": {"DEFAULT": {"": "true"}}}),
                &["spec.extraConfig[DEFAULT]"],
            ),
            (
                json!({"extraConfig": {"DEFAULT\n[x]": {"debug": "true"}}}),
                &["spec.extraConfig"],
            ),
            (
                json!({"extraConfig": {"DEFAULT": {"debug": "true\nhost_href = x"}}}),
                &["spec.extraConfig[DEFAULT]"],
            ),
            (
                json!({"extraConfig": {"keystone_authtoken": {"password": "hunter2"}}}),
                &["spec.extraConfig[keystone_authtoken][password]"],
            ),
            (
                json!({"extraConfig": {"vault_plugin": {"approle_secret_id": "x"}}}),
                &["spec.extraConfig[vault_plugin][approle_secret_id]"],
            ),
            (
                json!({"extraConfig": {"vault_plugin": {"root_token_id": "x"}}}),
                &["spec.extraConfig[vault_plugin][root_token_id]"],
            ),
            // Other owned keys are honoured (and reported by the controller), not refused.
            (
                json!({"extraConfig": {"database": {"connection": "mysql+pymysql://x"}, "DEFAULT": {"host_href": "https://x"}}}),
                &[],
            ),
            (
                json!({"extraConfig": {"DEFAULT": {"no_such_option": "1"}}}),
                &["spec.extraConfig[DEFAULT][no_such_option]"],
            ),
            (
                json!({"extraConfig": {"secretstore:openbao-primary": {"anything": "1"}}}),
                &[],
            ),
        ]);
        let verdict = validate_barbican(
            Operation::Create,
            None,
            &barbican(json!({"extraConfig": {"keystone_authtoken": {"password": "hunter2"}}})),
            &KnownState::default(),
        );
        assert!(
            !verdict.message().contains("hunter2"),
            "a credential is never echoed"
        );
        assert!(
            verdict
                .message()
                .contains("OS_KEYSTONE_AUTHTOKEN__PASSWORD"),
            "{}",
            verdict.message()
        );
    }

    #[test]
    fn plugins_and_extra_config_are_bounded_as_the_schema_bounds_them() {
        let many = |n: usize| {
            (0..n)
                .map(|i| (format!("o{i}"), json!("v")))
                .collect::<serde_json::Map<_, _>>()
        };
        let sections = (0..65)
            .map(|i| (format!("section_{i}"), json!({})))
            .collect::<serde_json::Map<_, _>>();
        let plugins: Vec<Value> = (0..33)
            .map(|i| json!({"name": "p", "configSection": format!("p{i}")}))
            .collect();
        check(&[
            (
                json!({"extraConfig": {"DEFAULT": {"debug": "x".repeat(4096)}}}),
                &[],
            ),
            (
                json!({"extraConfig": {"DEFAULT": {"debug": "x".repeat(4097)}}}),
                &["spec.extraConfig[DEFAULT][debug]"],
            ),
            (
                // A store's section: the catalog leaves its option names alone.
                json!({"extraConfig": {"secretstore:bounded": many(129)}}),
                &["spec.extraConfig[secretstore:bounded]"],
            ),
            (json!({"extraConfig": sections}), &["spec.extraConfig"]),
            (json!({"plugins": plugins}), &["spec.plugins"]),
            (
                json!({"plugins": [{"name": "p", "configSection": "s", "config": many(129)}]}),
                &["spec.plugins[0].config"],
            ),
        ]);
    }

    #[test]
    fn the_catalog_re_runs_on_update_only_when_its_inputs_change() {
        let stale = barbican(json!({"extraConfig": {"DEFAULT": {"no_such_option": "1"}}}));
        let mut scaled = stale.clone();
        scaled.spec.deployment = Some(serde_json::from_value(json!({"replicas": 5})).unwrap());
        assert!(
            validate_barbican(
                Operation::Update,
                Some(&stale),
                &scaled,
                &KnownState::default()
            )
            .allowed()
        );
        let mut bumped = scaled.clone();
        bumped.spec.open_stack_release = "2026.1".into();
        bumped.spec.image.tag = Some("2026.1".into());
        let verdict = validate_barbican(
            Operation::Update,
            Some(&stale),
            &bumped,
            &KnownState::default(),
        );
        assert_eq!(
            fields(&verdict),
            ["spec.extraConfig[DEFAULT][no_such_option]"]
        );
    }

    #[test]
    fn an_unknown_release_is_admitted_with_a_warning() {
        let verdict = with_lookups(
            json!({"openStackRelease": "2030.1", "extraConfig": {"DEFAULT": {"x": "1"}}}),
            &KnownState::default(),
        );
        assert!(verdict.allowed(), "{}", verdict.message());
        assert!(
            verdict
                .warnings
                .iter()
                .any(|w| w.contains("no option catalog is embedded for OpenStack release 2030.1"))
        );
    }

    #[test]
    fn warnings_name_what_a_clean_up_deletes() {
        let brownfield =
            barbican(json!({"database": {"clusterRef": null, "host": "db.example.com"}}));
        let created =
            validate_barbican(Operation::Create, None, &brownfield, &KnownState::default());
        assert!(created.allowed());
        assert_eq!(created.warnings.len(), 1);
        assert!(
            created.warnings[0].contains("brownfield database"),
            "{:?}",
            created.warnings
        );
        let staged = barbican(
            json!({"database": {"clusterRef": null, "host": "db"}, "dbClean": {"suspend": true}}),
        );
        assert!(
            validate_barbican(Operation::Create, None, &staged, &KnownState::default())
                .warnings
                .is_empty()
        );
        assert!(
            validate_barbican(
                Operation::Create,
                None,
                &barbican(json!({})),
                &KnownState::default()
            )
            .warnings
            .is_empty()
        );

        let before = barbican(json!({}));
        let lowered = barbican(json!({"dbClean": {"retentionDays": 30}}));
        let update = validate_barbican(
            Operation::Update,
            Some(&before),
            &lowered,
            &KnownState::default(),
        );
        assert!(update.allowed());
        assert_eq!(update.warnings.len(), 1);
        assert!(
            update.warnings[0].contains("drops from 90 to 30"),
            "{:?}",
            update.warnings
        );
        let raised = validate_barbican(
            Operation::Update,
            Some(&lowered),
            &before,
            &KnownState::default(),
        );
        assert!(raised.warnings.is_empty());
    }

    #[test]
    fn the_finalizer_release_of_a_deleting_barbican_is_admitted() {
        let known = KnownState::default();
        // Admitted while its PriorityClass existed; the class is gone now.
        let old = barbican(json!({"deployment": {"priorityClassName": "gone"}}));
        let mut releasing = old.clone();
        default_barbican(&mut releasing.spec);
        releasing.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Default::default()),
        );
        assert!(validate_barbican(Operation::Update, Some(&old), &releasing, &known).allowed());
        // A deleting CR whose spec changes is still validated.
        let mut edited = releasing.clone();
        edited.spec.region = Some("RegionTwo".into());
        assert_eq!(
            fields(&validate_barbican(
                Operation::Update,
                Some(&old),
                &edited,
                &known
            )),
            ["spec.deployment.priorityClassName"]
        );
    }
}
