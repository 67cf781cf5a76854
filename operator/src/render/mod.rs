//! Rendering: `barbican.conf`, `barbican-api-paste.ini` and `policy.yaml` as pure functions of
//! the spec and the inputs the reconciler resolved, with a content hash and a report of the
//! operator-owned keys extraConfig overrode.
//!
//! Every byte is deterministic (sorted sections, keys and stores), every user string is checked
//! against the INI syntax before it is written (the same predicates admission uses), and no
//! credential is ever an input: passwords, the DSN and the AppRole secret ID travel as
//! environment variables ([`secrets`]).

pub mod barbican_conf;
pub mod ini;
pub mod paste;
pub mod policy;
pub mod secrets;

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

pub use barbican_conf::{ProjectedStore, endpoint};

use crate::api::{BarbicanSpec, config_grammar};

/// A value that cannot be rendered, named by where it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct RenderError {
    /// The spec field (or store field) the value came from.
    pub field: String,
    /// What is wrong and what is allowed.
    pub problem: String,
}

/// The checks of every name and value rendered from a tenant's input: the grammar of
/// [`config_grammar`], which is stricter than the INI structure ([`ini`]) and what the webhook
/// and the CRD schema hold the same fields to.
pub(crate) fn check_section(field: &str, name: &str) -> Result<(), RenderError> {
    problem(field, config_grammar::section_name_problem(name))
}

pub(crate) fn check_key(field: &str, key: &str) -> Result<(), RenderError> {
    problem(field, config_grammar::option_name_problem(key))
}

pub(crate) fn check_value(field: &str, value: &str) -> Result<(), RenderError> {
    problem(field, config_grammar::value_problem(value))
}

fn problem(field: &str, problem: Option<String>) -> Result<(), RenderError> {
    problem.map_or(Ok(()), |problem| {
        Err(RenderError {
            field: field.into(),
            problem,
        })
    })
}

/// File names inside the config Secret.
pub const BARBICAN_CONF: &str = "barbican.conf";
/// See [`BARBICAN_CONF`].
pub const PASTE_INI: &str = "barbican-api-paste.ini";
/// See [`BARBICAN_CONF`].
pub const POLICY_YAML: &str = "policy.yaml";
/// Hex characters of the content hash in the config Secret's name.
pub const HASH_PREFIX_LEN: usize = 8;

/// Everything rendering reads besides the spec.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The Barbican's name.
    pub name: String,
    /// The Barbican's namespace.
    pub namespace: String,
    /// The credential-ready stores of a valid projection (any order).
    pub stores: Vec<ProjectedStore>,
    /// The rules of the `policy.yaml` key of `spec.policyOverrides.configMapRef`.
    pub config_map_policy: BTreeMap<String, String>,
}

/// The rendered config Secret content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rendered {
    /// File name to content.
    pub files: BTreeMap<String, String>,
    /// Lowercase hex SHA-256 over the files (see [`content_hash`]).
    pub hash: String,
    /// The operator-owned keys extraConfig overrides, as `[section] key`.
    pub overridden_keys: Vec<String>,
}

impl Rendered {
    /// `{name}-config-<first 8 hex of the hash>`.
    pub fn secret_name(&self, barbican: &str) -> String {
        format!("{barbican}-config-{}", &self.hash[..HASH_PREFIX_LEN])
    }
}

/// SHA-256 over the files in key order, each as `<len(k)>:<k>=<len(v)>:<v>\n`: lengths make
/// the framing unambiguous, so no two different file sets hash alike by concatenation.
pub fn content_hash(files: &BTreeMap<String, String>) -> String {
    let mut hasher = Sha256::new();
    for (name, content) in files {
        hasher.update(format!("{}:{name}={}:", name.len(), content.len()));
        hasher.update(content.as_bytes());
        hasher.update(b"\n");
    }
    secrets::hex(&hasher.finalize())
}

/// Renders the three files for `spec`.
pub fn render(spec: &BarbicanSpec, inputs: &Inputs) -> Result<Rendered, RenderError> {
    let endpoint = endpoint(&inputs.name, &inputs.namespace, spec);
    check_value("spec.gateway.hostname", &endpoint)?;
    for (field, value) in [
        (
            "spec.keystoneEndpoint",
            Some(spec.keystone_endpoint.as_str()),
        ),
        (
            "spec.keystonePublicEndpoint",
            spec.keystone_public_endpoint.as_deref(),
        ),
        ("spec.region", spec.region.as_deref()),
        (
            "spec.serviceUser.username",
            spec.service_user.username.as_deref(),
        ),
        (
            "spec.serviceUser.projectName",
            spec.service_user.project_name.as_deref(),
        ),
        (
            "spec.serviceUser.userDomainName",
            spec.service_user.user_domain_name.as_deref(),
        ),
        (
            "spec.serviceUser.projectDomainName",
            spec.service_user.project_domain_name.as_deref(),
        ),
    ] {
        if let Some(value) = value {
            check_value(field, value)?;
        }
    }
    for (field, url) in [
        (
            "spec.keystoneEndpoint",
            Some(spec.keystone_endpoint.as_str()),
        ),
        (
            "spec.keystonePublicEndpoint",
            spec.keystone_public_endpoint.as_deref(),
        ),
    ] {
        if url.is_some_and(crate::api::secret_store::url_has_userinfo) {
            return Err(RenderError {
                field: field.to_string(),
                problem: crate::api::secret_store::USERINFO_REFUSED.to_string(),
            });
        }
    }
    if let Some(servers) = barbican_conf::memcached_servers(spec) {
        check_value("spec.cache", &servers)?;
    }
    for store in &inputs.stores {
        let field = |what: &str| format!("BarbicanSecretStore {} {what}", store.name);
        check_section(
            &field("metadata.name"),
            &format!("secretstore:{}", store.name),
        )?;
        check_value(&field("url"), &store.url)?;
        check_value(&field("role-id"), &store.role_id)?;
        check_value(&field("kvMountpoint"), &store.kv_mountpoint)?;
        if let Some(namespace) = &store.namespace {
            check_value(&field("namespace"), namespace)?;
        }
    }

    let policy = policy::render(&policy::merged_rules(
        spec.policy_overrides
            .as_ref()
            .and_then(|p| p.rules.as_ref()),
        &inputs.config_map_policy,
    ));
    let mut conf = barbican_conf::plugin_sections(spec)?;
    conf.overlay(&barbican_conf::operator_sections(
        &endpoint,
        spec,
        &inputs.stores,
        policy.is_some(),
    )?);
    let (extra, overridden_keys) = barbican_conf::extra_config(spec)?;
    conf.overlay(&extra);

    let internal = |e: ini::SyntaxError| RenderError {
        field: "rendered file".into(),
        problem: e.to_string(),
    };
    let mut files = BTreeMap::new();
    files.insert(BARBICAN_CONF.to_string(), conf.render().map_err(internal)?);
    files.insert(
        PASTE_INI.to_string(),
        paste::render(spec)?.render().map_err(internal)?,
    );
    if let Some(policy) = policy {
        files.insert(POLICY_YAML.to_string(), policy);
    }
    if spec.audit.is_some() {
        files.insert(
            paste::AUDIT_MAP.to_string(),
            paste::AUDIT_MAP_CONTENT.to_string(),
        );
    }
    let hash = content_hash(&files);
    Ok(Rendered {
        files,
        hash,
        overridden_keys,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::fixtures::{minimal_barbican, with_spec};

    fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_hash_frames_each_file_so_shifted_bytes_differ() {
        assert_ne!(
            content_hash(&files(&[("a", "bc")])),
            content_hash(&files(&[("ab", "c")]))
        );
        assert_ne!(
            content_hash(&files(&[("a", "b\n1:c=0:")])),
            content_hash(&files(&[("a", "b"), ("c", "")]))
        );
        assert_eq!(
            content_hash(&files(&[("a", "b"), ("c", "d")])),
            content_hash(&files(&[("c", "d"), ("a", "b")]))
        );
    }

    #[test]
    fn the_secret_name_carries_eight_hex_characters_of_the_hash() {
        let spec: BarbicanSpec =
            serde_json::from_value(minimal_barbican()["spec"].clone()).unwrap();
        let rendered = render(
            &spec,
            &Inputs {
                name: "barbican".into(),
                namespace: "openstack".into(),
                ..Default::default()
            },
        )
        .unwrap();
        let name = rendered.secret_name("barbican");
        assert_eq!(name, format!("barbican-config-{}", &rendered.hash[..8]));
        assert!(
            name["barbican-config-".len()..]
                .chars()
                .all(|c| c.is_ascii_hexdigit())
        );
    }

    /// spec.audit routes `/v1` through the audit pipeline, after authtoken and context and with
    /// spec.middleware where it goes in the plain one, sets the filter's driver, and ships the
    /// map beside the paste file; without it, the shipped routing and no map.
    #[test]
    fn audit_routes_v1_through_the_audit_filter_and_ships_its_map() {
        let render_with = |patch: serde_json::Value| {
            let spec: BarbicanSpec =
                serde_json::from_value(with_spec(minimal_barbican(), &patch)["spec"].clone())
                    .unwrap();
            render(&spec, &Inputs::default()).unwrap()
        };
        let middleware =
            json!([{"name": "rate", "filterFactory": "rl:factory", "position": "after"}]);
        let audited = render_with(json!({"audit": {}, "middleware": middleware}));
        let paste = &audited.files[PASTE_INI];
        assert!(
            paste.contains("/v1 = barbican-api-keystone-audit\n"),
            "{paste}"
        );
        assert!(
            paste.contains("[pipeline:barbican-api-keystone-audit]\npipeline = cors http_proxy_to_wsgi authtoken context microversion audit rate apiapp\n"),
            "{paste}"
        );
        assert!(
            paste.contains("audit_map_file = %(here)s/api_audit_map.conf\n"),
            "{paste}"
        );
        assert!(
            audited.files[BARBICAN_CONF]
                .contains("[audit_middleware_notifications]\ndriver = log\n")
        );
        assert_eq!(
            audited.files.get(paste::AUDIT_MAP).map(String::as_str),
            Some(paste::AUDIT_MAP_CONTENT)
        );
        assert!(
            paste::AUDIT_MAP_CONTENT
                .contains("[service_endpoints]\nkey-manager = service/security/keymanager\n")
        );

        let plain = render_with(json!({"middleware": middleware}));
        let paste = &plain.files[PASTE_INI];
        assert!(paste.contains("/v1 = barbican-api-keystone\n"), "{paste}");
        assert!(!paste.contains("%(here)s"), "{paste}");
        assert!(!plain.files.contains_key(paste::AUDIT_MAP));
        assert!(!plain.files[BARBICAN_CONF].contains("audit_middleware_notifications"));
        assert_ne!(audited.hash, plain.hash, "switching audit rolls the pods");
    }

    /// A CR that reached etcd without the webhook (an install without it, or one the
    /// webhook admitted before a catalog marked an option) is held to the same rules: nothing
    /// that runs code, writes a path or carries a credential is rendered, and the error names
    /// the field, never the value.
    #[test]
    fn what_admission_refuses_is_never_rendered() {
        let render_with = |patch: serde_json::Value| {
            let spec: BarbicanSpec =
                serde_json::from_value(with_spec(minimal_barbican(), &patch)["spec"].clone())
                    .unwrap();
            render(&spec, &Inputs::default())
        };
        for (patch, field, problem) in [
            (
                json!({"extraConfig": {"DEFAULT": {"log_config_append": "/etc/barbican/barbican.conf"}}}),
                "spec.extraConfig[DEFAULT][log_config_append]",
                "logging.config.fileConfig",
            ),
            (
                json!({"plugins": [{"name": "h", "configSection": "handler_h", "config": {"class": "__import__('os')"}}]}),
                "spec.plugins[0].configSection",
                "plugin sections",
            ),
            (
                json!({"plugins": [{"name": "s", "configSection": "simple_crypto_plugin", "config": {"kek": "planted-kek"}}]}),
                "spec.plugins[0].config[kek]",
                "mark it secret",
            ),
            (
                // A name oslo.config reads as another (it lowercases the Kelvin sign to 'k')
                // is outside the grammar before any registry is asked.
                json!({"extraConfig": {"\u{212a}EYSTONE_AUTHTOKEN": {"memcache_secret_key": "planted"}}}),
                "spec.extraConfig[\u{212a}EYSTONE_AUTHTOKEN]",
                "section names must be",
            ),
            (
                // Python's strip() drops U+001F, Rust's trim() keeps it.
                json!({"extraConfig": {"DEFAULT": {"log_config_append\u{1f}": "/etc/barbican/barbican.conf"}}}),
                "spec.extraConfig[DEFAULT][log_config_append\u{1f}]",
                "option names must be",
            ),
            (
                json!({"plugins": [{"name": "p", "configSection": "p11_crypto_plugin", "config": {"\u{1c}library_path": "/tmp/planted.so"}}]}),
                "spec.plugins[0].config[\u{1c}library_path]",
                "option names must be",
            ),
            (
                json!({"keystonePublicEndpoint": "https://u:planted-pw@keystone.example.com/v3"}),
                "spec.keystonePublicEndpoint",
                "must not carry credentials",
            ),
        ] {
            let error = render_with(patch.clone()).unwrap_err();
            assert_eq!(error.field, field, "{patch}");
            assert!(
                error.problem.contains(problem),
                "{patch}: {}",
                error.problem
            );
            assert!(!error.to_string().contains("planted"), "{error}");
        }
    }

    #[test]
    fn the_endpoint_follows_the_gateway() {
        let plain: BarbicanSpec =
            serde_json::from_value(minimal_barbican()["spec"].clone()).unwrap();
        assert_eq!(
            endpoint("barbican", "openstack", &plain),
            "http://barbican.openstack.svc.cluster.local:9311"
        );
        let exposed: BarbicanSpec = serde_json::from_value(
            with_spec(
                minimal_barbican(),
                &json!({"gateway": {"hostname": "kms.example.com", "parentRef": {"name": "gw"}}}),
            )["spec"]
                .clone(),
        )
        .unwrap();
        assert_eq!(
            endpoint("barbican", "openstack", &exposed),
            "https://kms.example.com"
        );
        let served_tls: BarbicanSpec = serde_json::from_value(
            with_spec(
                minimal_barbican(),
                &json!({"tls": {"issuerRef": {"name": "ca"}}}),
            )["spec"]
                .clone(),
        )
        .unwrap();
        assert_eq!(
            endpoint("barbican", "openstack", &served_tls),
            "https://barbican.openstack.svc.cluster.local:9311"
        );
    }

    #[test]
    fn policy_overrides_add_the_file_and_point_oslo_policy_at_it() {
        let spec: BarbicanSpec = serde_json::from_value(
            with_spec(
                minimal_barbican(),
                &json!({"policyOverrides": {"rules": {"secrets:get": "role:admin"}}}),
            )["spec"]
                .clone(),
        )
        .unwrap();
        let rendered = render(&spec, &Inputs::default()).unwrap();
        assert_eq!(
            rendered.files[POLICY_YAML],
            "\"secrets:get\": \"role:admin\"\n"
        );
        assert!(
            rendered.files[BARBICAN_CONF]
                .contains("[oslo_policy]\npolicy_file = /etc/barbican/policy.yaml\n")
        );
    }
}
