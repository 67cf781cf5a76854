//! `barbican.conf`: the operator's sections, the projected secret stores, plugin sections and
//! extraConfig, merged plugins < operator defaults < extraConfig.

use std::collections::BTreeMap;

use super::{RenderError, ini::Ini, policy::POLICY_FILE_PATH};
use crate::{
    api::config_ownership::is_denied_option,
    api::{BarbicanSpec, config_ownership, names::API_PORT, secret_store::DEFAULT_KV_MOUNTPOINT},
};

/// A secret store the SecretStores step found credential-ready, resolved to what the config
/// needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectedStore {
    /// The store's name: its section suffix.
    pub name: String,
    /// Whether it is the default (`global_default = True`).
    pub is_default: bool,
    /// The OpenBao/Vault API URL.
    pub url: String,
    /// The AppRole role ID (not a secret; the secret ID travels as an env var).
    pub role_id: String,
    /// Where the CA bundle is mounted in the pod, when the store has one.
    pub ca_file: Option<String>,
    /// The KV v2 mount.
    pub kv_mountpoint: String,
    /// The OpenBao/Vault namespace (brownfield only).
    pub namespace: Option<String>,
    /// The store's extraOptions, as written.
    pub extra_options: BTreeMap<String, String>,
}

impl ProjectedStore {
    /// A managed store on `https://<instance>.<namespace>.svc:8200` with its CA mounted.
    pub fn managed(
        name: &str,
        instance: &str,
        namespace: &str,
        role_id: &str,
        is_default: bool,
    ) -> Self {
        Self {
            name: name.to_string(),
            is_default,
            url: format!("https://{instance}.{namespace}.svc:8200"),
            role_id: role_id.to_string(),
            ca_file: Some(SECRET_STORE_CA_FILE.to_string()),
            kv_mountpoint: DEFAULT_KV_MOUNTPOINT.to_string(),
            namespace: None,
            extra_options: BTreeMap::new(),
        }
    }
}

/// Where the API pods mount a store's CA bundle (`ssl_ca_crt_file`).
pub const SECRET_STORE_CA_FILE: &str = "/etc/barbican-secret-store-ca/ca.crt";
/// The placeholder DSN: the real one arrives as `OS_DATABASE__CONNECTION`.
pub const DATABASE_CONNECTION_PLACEHOLDER: &str = "mysql+pymysql://placeholder";
/// memcached's port for a managed cache reached by its cluster name.
pub const MEMCACHED_PORT: u16 = 11211;

/// `[DEFAULT] host_href` and `status.endpoint`: `https://<gateway hostname>` with a gateway,
/// else the cluster-local Service URL, `https://` when the API serves TLS (`spec.tls`).
pub fn endpoint(name: &str, namespace: &str, spec: &BarbicanSpec) -> String {
    match &spec.gateway {
        Some(gateway) => format!("https://{}", gateway.hostname),
        None => service_url(name, namespace, spec),
    }
}

/// The cluster-local Service URL of the API: `http://` or, with `spec.tls`, `https://`
/// `{name}.{namespace}.svc.cluster.local:9311`.
pub fn service_url(name: &str, namespace: &str, spec: &BarbicanSpec) -> String {
    format!(
        "{}://{name}.{namespace}.svc.cluster.local:{API_PORT}",
        api_scheme(spec)
    )
}

/// The scheme the API pods serve: `https` with `spec.tls`, else `http`.
pub fn api_scheme(spec: &BarbicanSpec) -> &'static str {
    if spec.tls.is_some() { "https" } else { "http" }
}

/// `[keystone_authtoken] memcached_servers`: the brownfield list, comma-joined, or the managed
/// cluster's name on memcached's port; `None` when neither is set.
pub fn memcached_servers(spec: &BarbicanSpec) -> Option<String> {
    let servers = spec.cache.servers.as_deref().unwrap_or_default();
    if !servers.is_empty() {
        return Some(servers.join(","));
    }
    spec.cache
        .cluster_ref
        .as_ref()
        .map(|c| format!("{}:{MEMCACHED_PORT}", c.name))
}

/// What the operator itself renders (no plugins, no extraConfig).
pub fn operator_sections(
    endpoint: &str,
    spec: &BarbicanSpec,
    stores: &[ProjectedStore],
    policy_rendered: bool,
) -> Result<Ini, RenderError> {
    let mut ini = Ini::new();
    ini.set("DEFAULT", "db_auto_create", "false");
    ini.set("DEFAULT", "host_href", endpoint);

    ini.set("database", "max_retries", "-1");
    ini.set("database", "connection_recycle_time", "600");
    ini.set("database", "connection", DATABASE_CONNECTION_PLACEHOLDER);

    let user = &spec.service_user;
    let auth = "keystone_authtoken";
    ini.set(auth, "auth_type", "password");
    ini.set(auth, "auth_url", &spec.keystone_endpoint);
    ini.set(
        auth,
        "www_authenticate_uri",
        spec.effective_keystone_public_endpoint(),
    );
    ini.set(auth, "username", user.effective_username());
    ini.set(auth, "project_name", user.effective_project_name());
    ini.set(auth, "user_domain_name", user.effective_user_domain_name());
    ini.set(
        auth,
        "project_domain_name",
        user.effective_project_domain_name(),
    );
    if let Some(region) = spec.region.as_deref().filter(|r| !r.is_empty()) {
        ini.set(auth, "region_name", region);
    }
    if let Some(servers) = memcached_servers(spec) {
        ini.set(auth, "memcached_servers", servers);
    }

    ini.set("queue", "enable", "false");
    if let Some(audit) = &spec.audit {
        // The audit filter's own group: barbican's own notifications are left as they are.
        ini.set(
            "audit_middleware_notifications",
            "driver",
            audit.effective_driver().as_str(),
        );
    }
    if policy_rendered {
        ini.set("oslo_policy", "policy_file", POLICY_FILE_PATH);
    }

    let mut stores: Vec<&ProjectedStore> = stores.iter().collect();
    // Sorted by name, so the sections and the content hash are stable across passes.
    stores.sort_by(|a, b| a.name.cmp(&b.name));
    ini.set("secretstore", "enable_multiple_secret_stores", "true");
    ini.set(
        "secretstore",
        "stores_lookup_suffix",
        stores
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(","),
    );
    for store in &stores {
        let section = format!("secretstore:{}", store.name);
        ini.set(&section, "secret_store_plugin", "vault_plugin");
        if store.is_default {
            ini.set(&section, "global_default", "True");
        }
    }
    // [vault_plugin] is process-global: the default store alone contributes to it.
    if let Some(store) = stores.iter().find(|s| s.is_default) {
        vault_plugin(&mut ini, store)?;
    }
    Ok(ini)
}

fn vault_plugin(ini: &mut Ini, store: &ProjectedStore) -> Result<(), RenderError> {
    let section = "vault_plugin";
    ini.set(section, "vault_url", &store.url);
    ini.set(
        section,
        "use_ssl",
        if store.url.starts_with("https://") {
            "true"
        } else {
            "false"
        },
    );
    ini.set(section, "approle_role_id", &store.role_id);
    ini.set(section, "kv_mountpoint", &store.kv_mountpoint);
    if let Some(ca) = &store.ca_file {
        ini.set(section, "ssl_ca_crt_file", ca);
    }
    if let Some(namespace) = store.namespace.as_deref().filter(|n| !n.is_empty()) {
        ini.set(section, "namespace", namespace);
    }
    for (key, value) in &store.extra_options {
        // The denylist predicate the webhook uses, so a store that reached etcd without the
        // webhook still cannot set a root token or re-point the plugin.
        if is_denied_option(key) || config_ownership::owned(section, key).is_some() {
            continue;
        }
        let field = format!(
            "BarbicanSecretStore {} spec.extraOptions[{key}]",
            store.name
        );
        super::check_key(&field, key)?;
        super::check_value(&field, value)?;
        ini.set(section, key, value);
    }
    Ok(())
}

/// The plugin sections, as written in `spec.plugins`.
pub fn plugin_sections(spec: &BarbicanSpec) -> Result<Ini, RenderError> {
    let mut ini = Ini::new();
    for (i, plugin) in spec.plugins.iter().flatten().enumerate() {
        let field = format!("spec.plugins[{i}]");
        super::check_section(&format!("{field}.configSection"), &plugin.config_section)?;
        let release = &spec.open_stack_release;
        if let Some(problem) =
            config_ownership::plugin_section_problem(release, &plugin.config_section)
        {
            return Err(RenderError {
                field: format!("{field}.configSection"),
                problem,
            });
        }
        ini.ensure_section(&plugin.config_section);
        for (key, value) in plugin.config.iter().flatten() {
            let field = format!("{field}.config[{key}]");
            super::check_key(&field, key)?;
            super::check_value(&field, value)?;
            never_rendered(&field, release, &plugin.config_section, key)?;
            unsafe_value(&field, release, &plugin.config_section, key, value)?;
            ini.set(&plugin.config_section, key, value);
        }
    }
    Ok(ini)
}

/// `spec.extraConfig` as a document, and the operator-owned keys it overrides.
pub fn extra_config(spec: &BarbicanSpec) -> Result<(Ini, Vec<String>), RenderError> {
    let mut ini = Ini::new();
    let mut overridden = Vec::new();
    for (section, options) in spec.extra_config.iter().flatten() {
        super::check_section(&format!("spec.extraConfig[{section}]"), section)?;
        ini.ensure_section(section);
        for (key, value) in options {
            let field = format!("spec.extraConfig[{section}][{key}]");
            super::check_key(&field, key)?;
            super::check_value(&field, value)?;
            never_rendered(&field, &spec.open_stack_release, section, key)?;
            unsafe_value(&field, &spec.open_stack_release, section, key, value)?;
            if let Some(owned) = config_ownership::owned(section, key) {
                overridden.push(format!("[{}] {key}", owned.section));
            }
            ini.set(section, key, value);
        }
    }
    Ok((ini, overridden))
}

/// Refuses `[section] key` at `field` when a tenant may not set it
/// ([`config_ownership::untrusted`]): refused at admission, so a CR that bypassed it (in
/// `extraConfig` or `plugins`, in any spelling of the section) still never renders one, and
/// the pods keep the last config rendered before it.
fn never_rendered(field: &str, release: &str, section: &str, key: &str) -> Result<(), RenderError> {
    match config_ownership::untrusted(release, section, key) {
        Some(why) => Err(RenderError {
            field: field.to_string(),
            problem: format!("is never rendered: {why}"),
        }),
        None => Ok(()),
    }
}

/// Refuses a value of `[section] key` at `field` that no tenant may set although the option is
/// theirs ([`config_ownership::value_problem`]: credentials in a URL), as admission does.
fn unsafe_value(
    field: &str,
    release: &str,
    section: &str,
    key: &str,
    value: &str,
) -> Result<(), RenderError> {
    match config_ownership::value_problem(release, section, key, value) {
        Some(why) => Err(RenderError {
            field: field.to_string(),
            problem: format!("is never rendered: {why}"),
        }),
        None => Ok(()),
    }
}
