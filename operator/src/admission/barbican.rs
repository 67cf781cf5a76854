//! Validation of a `Barbican`: every rule of the spec's "Defaulting and validation", all
//! violations collected into one verdict, plus the two admission warnings.

use crate::api::config_grammar::{option_name_problem as key_problem, value_problem};
use crate::api::{
    Barbican,
    barbican::TARGET_CLUSTER_REF_IMMUTABLE_MESSAGE,
    database::{
        CredentialsMode, DATABASE_CLUSTER_REF_XOR_HOST_MESSAGE,
        DATABASE_DYNAMIC_REQUIRES_CLUSTER_REF_MESSAGE,
    },
    image::IMAGE_TAG_XOR_DIGEST_MESSAGE,
    logging::LogLevel,
    memcached::CACHE_CLUSTER_REF_XOR_SERVERS_MESSAGE,
    names::MAX_BARBICAN_NAME_LENGTH,
    policy::POLICY_RULES_OR_CONFIGMAP_MESSAGE,
};
use crate::render::paste::BUILT_IN_FILTERS;

use std::collections::{BTreeMap, BTreeSet};

use super::{
    cron,
    defaulting::default_barbican,
    lookups::Lookups,
    quantity,
    verdict::{Operation, Verdict, has_line_break},
};
use crate::api::{db_clean::DbCleanSpec, refs::is_dns1123_subdomain};

/// Why `targetClusterRef` cannot change, appended to the schema rule's message.
pub const TARGET_CLUSTER_REF_IMMUTABLE_REASON: &str = "changing it would strand the children already created on the previously selected cluster, so delete and recreate the Barbican instead";

/// Validates `new` (and the transition from `old` on update), collecting every violation:
/// one checker per section of the spec, in the order the spec lists them.
pub fn validate_barbican(
    operation: Operation,
    old: Option<&Barbican>,
    new: &Barbican,
    lookups: &dyn Lookups,
) -> Verdict {
    let mut verdict = Verdict::default();
    if finalizer_release(operation, old, new) {
        return verdict;
    }
    let v = &mut verdict;
    check_name(v, operation, new);
    check_replicas_and_image(v, new);
    check_database(v, new);
    check_cache(v, new);
    check_url(
        v,
        "spec.keystoneEndpoint",
        Some(&new.spec.keystone_endpoint),
    );
    check_url(
        v,
        "spec.keystonePublicEndpoint",
        new.spec.keystone_public_endpoint.as_deref(),
    );
    check_rendered_values(v, new);
    check_logging(v, new);
    check_termination(v, new);
    check_scaling(v, new);
    check_network_policy(v, new);
    check_gateway(v, new);
    check_retention(v, new);
    ceilings::check_ceilings(v, new);
    check_db_backup(v, new);
    check_policy_overrides(v, new);
    check_db_clean(v, operation, old, new);
    check_secret_store_ref(v, new);
    check_resources(v, new, lookups);
    config::check_extra_config(v, operation, old, new);
    config::check_plugins(v, operation, old, new);
    check_middleware(v, new);
    check_audit(v, new);
    check_keystone_catalog(v, new);
    tls::check_tls(v, new);
    check_target_cluster_ref(v, old, new);
    verdict
}

/// The update that removes the finalizer of a deleting CR must pass even when a rule would
/// now refuse the unchanged spec (a PriorityClass deleted since, a regenerated catalog):
/// refusing it would hold the CR in Terminating with nothing left to edit. The stored spec is
/// defaulted first, so a default added by a newer operator is no spec change.
fn finalizer_release(operation: Operation, old: Option<&Barbican>, new: &Barbican) -> bool {
    if operation == Operation::Update
        && new.metadata.deletion_timestamp.is_some()
        && let Some(old) = old
    {
        let mut stored = old.spec.clone();
        default_barbican(&mut stored);
        return stored == new.spec;
    }
    false
}

/// `metadata.name`: short enough for the longest child name.
fn check_name(verdict: &mut Verdict, operation: Operation, new: &Barbican) {
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
}

/// `spec.deployment.replicas` and `spec.image`.
fn check_replicas_and_image(verdict: &mut Verdict, new: &Barbican) {
    let spec = &new.spec;
    if let Some(replicas) = spec.deployment.as_ref().and_then(|d| d.replicas)
        && replicas < 1
    {
        verdict.reject("spec.deployment.replicas", replicas, "must be at least 1");
    }
    if spec.image.tag.is_some() == spec.image.digest.is_some() {
        verdict.require("spec.image", IMAGE_TAG_XOR_DIGEST_MESSAGE);
    }
}

/// `spec.database`: one of clusterRef and host; Dynamic credentials need a clusterRef.
fn check_database(verdict: &mut Verdict, new: &Barbican) {
    let database = &new.spec.database;
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
}

/// `spec.cache`: one of clusterRef and servers, each server one rendered host:port.
fn check_cache(verdict: &mut Verdict, new: &Barbican) {
    let cache = &new.spec.cache;
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
}

/// The strings rendered verbatim into barbican.conf.
fn check_rendered_values(verdict: &mut Verdict, new: &Barbican) {
    let spec = &new.spec;
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
}

/// `spec.logging.perLoggerLevels`.
fn check_logging(verdict: &mut Verdict, new: &Barbican) {
    if let Some(levels) = new
        .spec
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
}

/// `spec.networkPolicy`: fail-closed, so at least one ingress source.
fn check_network_policy(verdict: &mut Verdict, new: &Barbican) {
    if let Some(policy) = &new.spec.network_policy
        && policy.ingress.is_empty()
    {
        verdict.require(
            "spec.networkPolicy.ingress",
            "at least one ingress source is required (fail-closed)",
        );
    }
}

/// `spec.gateway`: a hostname and a parent Gateway.
fn check_gateway(verdict: &mut Verdict, new: &Barbican) {
    if let Some(gateway) = &new.spec.gateway {
        if gateway.hostname.is_empty() {
            verdict.require("spec.gateway.hostname", "Required value");
        }
        if gateway.parent_ref.name.is_empty() {
            verdict.require("spec.gateway.parentRef.name", "Required value");
        }
    }
}

/// `spec.dbBackup`: a claim by its name, how many dumps (1 to 100), an image reference.
fn check_db_backup(verdict: &mut Verdict, new: &Barbican) {
    use crate::api::db_backup::MAX_KEEP;
    let Some(backup) = &new.spec.db_backup else {
        return;
    };
    let claim = &backup.persistent_volume_claim.claim_name;
    if !is_dns1123_subdomain(claim) {
        verdict.reject(
            "spec.dbBackup.persistentVolumeClaim.claimName",
            claim,
            "must be a DNS-1123 subdomain (a PersistentVolumeClaim's name)",
        );
    }
    if let Some(keep) = backup.keep
        && !(1..=MAX_KEEP).contains(&keep)
    {
        verdict.reject(
            "spec.dbBackup.keep",
            keep,
            format!("keeps from 1 to {MAX_KEEP} dumps"),
        );
    }
    if let Some(image) = &backup.image
        && (image.is_empty() || image.chars().any(|c| c.is_whitespace() || c.is_control()))
    {
        verdict.reject(
            "spec.dbBackup.image",
            image,
            "must be an image reference, without whitespace",
        );
    }
}

/// `spec.dbClean.retentionDays`.
fn check_retention(verdict: &mut Verdict, new: &Barbican) {
    if let Some(days) = new.spec.db_clean.as_ref().and_then(|d| d.retention_days)
        && days < 1
    {
        verdict.reject("spec.dbClean.retentionDays", days, "must be at least 1 day");
    }
}

/// `spec.policyOverrides`: rules or a ConfigMap, no empty names or values.
fn check_policy_overrides(verdict: &mut Verdict, new: &Barbican) {
    if let Some(policy) = &new.spec.policy_overrides {
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
}

/// `spec.targetClusterRef` is immutable.
fn check_target_cluster_ref(verdict: &mut Verdict, old: Option<&Barbican>, new: &Barbican) {
    if let Some(old) = old {
        let before = old
            .spec
            .target_cluster_ref
            .as_ref()
            .map(|r| r.name.as_str());
        let after = new
            .spec
            .target_cluster_ref
            .as_ref()
            .map(|r| r.name.as_str());
        if before != after {
            verdict.require(
                "spec.targetClusterRef",
                format!(
                    "{TARGET_CLUSTER_REF_IMMUTABLE_MESSAGE}: {TARGET_CLUSTER_REF_IMMUTABLE_REASON}"
                ),
            );
        }
    }
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
    // Refused without quoting the URL: its userinfo is a credential.
    if url.is_some_and(crate::api::secret_store::url_has_userinfo) {
        verdict.require(field, crate::api::secret_store::USERINFO_REFUSED);
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

/// `spec.audit`: the messaging driver names its transport URL's Secret; no other driver does.
fn check_audit(verdict: &mut Verdict, new: &Barbican) {
    use crate::api::audit::{AUDIT_TRANSPORT_MESSAGE, AuditDriver};
    let Some(audit) = &new.spec.audit else {
        return;
    };
    let messaging = audit.effective_driver() == AuditDriver::Messaging;
    if messaging != audit.transport_url_secret_ref.is_some() {
        verdict.require("spec.audit.transportUrlSecretRef", AUDIT_TRANSPORT_MESSAGE);
    }
}

/// `spec.keystone.catalog`: two endpoint URLs of the same shape as `keystoneEndpoint`, and a
/// region (its own, else `spec.region`) that is one Keystone region id: it reaches Keystone's
/// API in a path.
fn check_keystone_catalog(verdict: &mut Verdict, new: &Barbican) {
    let Some(catalog) = new.spec.keystone.as_ref().and_then(|k| k.catalog.as_ref()) else {
        return;
    };
    check_url(
        verdict,
        "spec.keystone.catalog.publicUrl",
        catalog.public_url.as_deref(),
    );
    check_url(
        verdict,
        "spec.keystone.catalog.internalUrl",
        catalog.internal_url.as_deref(),
    );
    let region = match catalog.region.as_deref() {
        Some(region) => Some(("spec.keystone.catalog.region", region)),
        None => new
            .spec
            .region
            .as_deref()
            .filter(|r| !r.is_empty())
            .map(|r| ("spec.region", r)),
    };
    if let Some((field, region)) = region
        && !crate::api::keystone::is_region_id(region)
    {
        verdict.reject(
            field,
            region,
            "must be a Keystone region id of letters, digits, '-', '_' and '.' (at most 255) to register spec.keystone.catalog in",
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
            if key == "paste.filter_factory" || key == "use" {
                verdict.require(
                    format!("spec.middleware[{i}].config"),
                    format!("{key} is set from filterFactory"),
                );
            } else if let Some(problem) = key_problem(key).or_else(|| value_problem(value)) {
                verdict.require(format!("spec.middleware[{i}].config"), problem);
            }
        }
    }
}

mod ceilings;
mod config;
#[cfg(test)]
mod tests;
mod tls;
