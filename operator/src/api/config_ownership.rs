//! The operator-owned keys of `barbican.conf`: one registry that both admission (which refuses
//! the `Rejected` ones in extraConfig) and the renderer (which reports the others through
//! `ExtraConfigHealthy`) read.
//!
//! Conditionally rendered keys are registered unconditionally: the registry records that a key
//! is not the user's to set, not that it is rendered right now.

/// One key the operator renders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnedKey {
    /// INI section.
    pub section: &'static str,
    /// Option name.
    pub key: &'static str,
    /// The field or mechanism that owns the value.
    pub owned_by: &'static str,
    /// Why an extraConfig override is refused outright; `None` for keys whose override is
    /// honoured and reported.
    pub rejected: Option<&'static str>,
}

const fn honoured(section: &'static str, key: &'static str, owned_by: &'static str) -> OwnedKey {
    OwnedKey {
        section,
        key,
        owned_by,
        rejected: None,
    }
}

/// Every owned key, in rendering order.
pub const OWNED_KEYS: &[OwnedKey] = &[
    honoured(
        "DEFAULT",
        "db_auto_create",
        "the operator (the schema is managed by db-sync)",
    ),
    honoured(
        "DEFAULT",
        "host_href",
        "spec.gateway.hostname or the Service URL",
    ),
    honoured(
        "database",
        "connection",
        "spec.database (delivered as OS_DATABASE__CONNECTION)",
    ),
    honoured(
        "keystone_authtoken",
        "auth_type",
        "the operator (password authentication)",
    ),
    honoured("keystone_authtoken", "auth_url", "spec.keystoneEndpoint"),
    honoured(
        "keystone_authtoken",
        "www_authenticate_uri",
        "spec.keystonePublicEndpoint",
    ),
    honoured(
        "keystone_authtoken",
        "username",
        "spec.serviceUser.username",
    ),
    honoured(
        "keystone_authtoken",
        "project_name",
        "spec.serviceUser.projectName",
    ),
    honoured(
        "keystone_authtoken",
        "user_domain_name",
        "spec.serviceUser.userDomainName",
    ),
    honoured(
        "keystone_authtoken",
        "project_domain_name",
        "spec.serviceUser.projectDomainName",
    ),
    honoured("keystone_authtoken", "region_name", "spec.region"),
    honoured("keystone_authtoken", "memcached_servers", "spec.cache"),
    OwnedKey {
        section: "keystone_authtoken",
        key: "password",
        owned_by: "spec.serviceUser.secretRef",
        rejected: Some(
            "the password reaches the pods as OS_KEYSTONE_AUTHTOKEN__PASSWORD, so a file value is inert and would only copy it into the config Secret every API pod mounts",
        ),
    },
    honoured(
        "secretstore",
        "enable_multiple_secret_stores",
        "the attached BarbicanSecretStores",
    ),
    honoured(
        "secretstore",
        "stores_lookup_suffix",
        "the attached BarbicanSecretStores",
    ),
    honoured("vault_plugin", "vault_url", "the default store's server"),
    honoured("vault_plugin", "use_ssl", "the default store's server"),
    honoured(
        "vault_plugin",
        "ssl_ca_crt_file",
        "the default store's CA bundle",
    ),
    honoured(
        "vault_plugin",
        "approle_role_id",
        "the default store's credentials Secret",
    ),
    honoured(
        "vault_plugin",
        "kv_mountpoint",
        "the default store's spec.openBao.kvMountpoint",
    ),
    honoured(
        "vault_plugin",
        "namespace",
        "the default store's spec.openBao.namespace",
    ),
    OwnedKey {
        section: "vault_plugin",
        key: "approle_secret_id",
        owned_by: "the store's credentials Secret",
        rejected: Some(
            "the secret ID reaches the pods as OS_VAULT_PLUGIN__APPROLE_SECRET_ID, and rendering it would copy the AppRole secret into the config Secret",
        ),
    },
    OwnedKey {
        section: "vault_plugin",
        key: "root_token_id",
        owned_by: "the operator (AppRole authentication)",
        rejected: Some(
            "the vault plugin prefers a root token over AppRole, so it would replace the mount-scoped AppRole with an unscoped credential in plain text",
        ),
    },
    honoured(
        "queue",
        "enable",
        "the operator (Barbican runs without a queue)",
    ),
    honoured("oslo_policy", "policy_file", "spec.policyOverrides"),
    honoured(
        "audit_middleware_notifications",
        "driver",
        "spec.audit.driver",
    ),
];

/// The section oslo.config reads `section` as: it lowercases every group name but `DEFAULT`
/// with Python's `str.lower()` (so `[VAULT_PLUGIN]` is `[vault_plugin]`, and so is a name
/// spelled with the Kelvin sign, `'\u{212a}'.lower() == 'k'`), which Rust's Unicode
/// `to_lowercase` matches. `default` in any case is taken as `DEFAULT` here, one step
/// stricter than oslo.config (which reads `[default]` as a group of that name), so no
/// spelling of it escapes the registry.
pub fn oslo_section(section: &str) -> String {
    let folded = section.to_lowercase();
    if folded == "default" {
        "DEFAULT".to_string()
    } else {
        folded
    }
}

/// The option `key` names as this registry compares it: oslo.config registers an option's
/// `dest` with `-` turned into `_`, so both spellings are taken as one.
fn oslo_key(key: &str) -> String {
    key.replace('-', "_")
}

/// Why `[section] key` is refused when it is one of the registry's owned keys whose override
/// is refused outright (the three credentials), with the registry's reason.
pub fn rejected_owned(section: &str, key: &str) -> Option<String> {
    owned(section, key).and_then(refusal)
}

/// Why the override of `owned` is refused, when it is.
fn refusal(owned: &OwnedKey) -> Option<String> {
    owned.rejected.map(|why| {
        format!(
            "[{}] {} is managed through {} and must not be set in the config: {why}",
            owned.section, owned.key, owned.owned_by
        )
    })
}

/// An option no tenant sets, whatever its value: one that makes barbican load code from, or
/// write to, a path the value names ([`HOST_PATH_OPTIONS`]), or one that selects code by name
/// ([`CODE_BY_NAME_OPTIONS`]).
pub struct RefusedOption {
    /// INI section.
    pub section: &'static str,
    /// Option name.
    pub key: &'static str,
    /// What barbican does with the path.
    pub why: &'static str,
}

/// The options no catalog can mark (oslo.config has no type for "a path that runs code or
/// receives writes"): logging's file options and the PKCS#11 library. Held to by admission
/// and the renderer alike.
pub const HOST_PATH_OPTIONS: &[RefusedOption] = &[
    RefusedOption {
        section: "DEFAULT",
        key: "log_config_append",
        why: "oslo.log hands the file to logging.config.fileConfig, which evaluates its handler classes and arguments as Python",
    },
    RefusedOption {
        section: "DEFAULT",
        key: "log_dir",
        why: "barbican writes its log files into the directory",
    },
    RefusedOption {
        section: "DEFAULT",
        key: "log_file",
        why: "barbican writes its log to the file",
    },
    RefusedOption {
        section: "DEFAULT",
        key: "watch_log_file",
        why: "it reopens the log file named by log_file when the file moves",
    },
    RefusedOption {
        section: "oslo_reports",
        key: "log_dir",
        why: "oslo.reports writes its reports into the directory",
    },
    RefusedOption {
        section: "oslo_reports",
        key: "file_event_handler",
        why: "oslo.reports watches the file and writes a report when it changes",
    },
    RefusedOption {
        section: "p11_crypto_plugin",
        key: "library_path",
        why: "barbican loads the file as a shared library into every API process",
    },
    RefusedOption {
        section: "oslo_policy",
        key: "policy_dirs",
        why: "oslo.policy reads rules from every file in the directories, past spec.policyOverrides",
    },
];

/// The options that choose which code barbican runs by a name or open a door into the
/// process: the entry-point groups barbican loads its plugins from, and oslo.service's
/// eventlet backdoor (a Python shell). No catalog marks them; they are refused like the paths.
pub const CODE_BY_NAME_OPTIONS: &[RefusedOption] = &[
    RefusedOption {
        section: "secretstore",
        key: "namespace",
        why: "barbican loads its secret-store plugins from the Python entry-point group the value names, so it would choose the code barbican imports",
    },
    RefusedOption {
        section: "crypto",
        key: "namespace",
        why: "barbican loads its crypto plugins from the Python entry-point group the value names, so it would choose the code barbican imports",
    },
    RefusedOption {
        section: "DEFAULT",
        key: "backdoor_port",
        why: "oslo.service opens an eventlet backdoor, an unauthenticated Python shell inside the API process, on the port",
    },
    RefusedOption {
        section: "DEFAULT",
        key: "backdoor_socket",
        why: "oslo.service opens an eventlet backdoor, an unauthenticated Python shell inside the API process, on the socket",
    },
];

/// The sections whose credential the operator delivers to the pods itself: the service
/// user's password (`OS_KEYSTONE_AUTHTOKEN__PASSWORD`) and the default store's AppRole secret
/// ID (`OS_VAULT_PLUGIN__APPROLE_SECRET_ID`).
pub const CREDENTIAL_SECTIONS: &[&str] = &["keystone_authtoken", "vault_plugin"];

/// The value types barbican's definitions give an address: where a value of one sends what
/// the section sends.
const ADDRESS_TYPES: &[&str] = &[
    "URI",
    "OptionalURI",
    "HostAddress",
    "HostDomain",
    "Hostname",
    "IPAddress",
    "Port",
];

/// Whether `[section] key` (with its catalog facts, when a catalog knows it) decides where a
/// credential the operator delivers in `section` goes, or whether its peer is trusted: an
/// option of an address type, one named as an address (`*_url`, `*_uri`, `host`, `*_port`;
/// keystoneauth and keystonemiddleware declare their URLs as plain strings), one of the
/// transport's trust (`insecure`, CA, certificate and key files, `ssl`/`tls` switches), or
/// one that tells keystoneauth where to take its authentication from (`auth_section`,
/// `auth_type`).
pub fn decides_destination(
    section: &str,
    key: &str,
    facts: Option<&super::catalog::OptionFacts>,
) -> bool {
    if !CREDENTIAL_SECTIONS.contains(&section) {
        return false;
    }
    let typed = facts.is_some_and(|f| ADDRESS_TYPES.contains(&f.value_type.as_str()));
    let words: Vec<&str> = key.split('_').collect();
    let last = words.last().copied().unwrap_or_default();
    let named_address = matches!(last, "url" | "uri" | "host" | "hosts" | "port" | "endpoint");
    let trust = key == "insecure"
        || words.iter().any(|w| {
            matches!(
                *w,
                "cafile" | "certfile" | "keyfile" | "ssl" | "tls" | "crt" | "cert" | "certs"
            )
        });
    let auth_source = matches!(key, "auth_section" | "auth_type" | "auth_plugin");
    typed || named_address || trust || auth_source
}

/// Why a tenant's `value` of `[section] key` cannot be set although the option can: a
/// URL-valued option (by the catalog's value type or its name) whose value carries
/// `user:password@`, a credential in the clear in the config every pod mounts, which the
/// typed URL fields refuse too. `None` for an option [`untrusted`] refuses already (one
/// refusal per option).
pub fn value_problem(release: &str, section: &str, key: &str, value: &str) -> Option<String> {
    if untrusted(release, section, key).is_some() {
        return None;
    }
    let (section, key) = (oslo_section(section), oslo_key(key));
    let typed = catalog_facts(release, &section, &key)
        .iter()
        .any(|o| matches!(o.value_type.as_str(), "URI" | "OptionalURI"));
    let url_valued = typed || key.ends_with("_url") || key.ends_with("_uri");
    if url_valued && super::secret_store::url_has_userinfo(value) {
        return Some(format!(
            "[{section}] {key}: {}",
            super::secret_store::USERINFO_REFUSED
        ));
    }
    let credential = |name: &str| {
        let name = oslo_key(name);
        OWNED_KEYS
            .iter()
            .any(|k| k.rejected.is_some() && k.key == name)
            || super::catalog::all().values().any(|catalog| {
                catalog
                    .sections
                    .values()
                    .any(|s| s.options.get(&name).is_some_and(|o| o.secret))
            })
    };
    substitutions(value)
        .into_iter()
        .find(|reference| credential(reference.rsplit('.').next().unwrap_or(reference)))
        .map(|reference| {
            format!(
                "[{section}] {key} must not refer to ${reference}: oslo.config substitutes it with the credential's value, which would then sit wherever barbican shows this option (host_href is in every secret's reference)"
            )
        })
}

/// The options a value refers to through oslo.config's substitution (`string.Template` with
/// dotted names: `$name`, `${name}`, `$group.name`, `${group.name}`; `$$` is a literal `$`).
pub fn substitutions(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        let after = &rest[at..];
        let tail = after.get(1..).unwrap_or_default();
        if let Some(literal) = tail.strip_prefix('$') {
            rest = literal;
            continue;
        }
        let (braced, body) = match tail.strip_prefix('{') {
            Some(body) => (true, body),
            None => (false, tail),
        };
        let name: String = body
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        if !name.is_empty() && (!braced || body[name.len()..].starts_with('}')) {
            out.push(name.to_ascii_lowercase());
        }
        rest = tail;
    }
    out
}

/// Why a tenant may not set `[section] key` in `spec.extraConfig` or `spec.plugins` for
/// `release`: a credential the registry keeps out of the file, an option that loads code from
/// or writes to a path ([`HOST_PATH_OPTIONS`]) or selects code by name
/// ([`CODE_BY_NAME_OPTIONS`]), or an option barbican's own definitions mark
/// `secret` (any catalog's, for a release without one). `None`: it may be set (an owned key
/// the registry honours is the renderer's to report). Section and key are compared as
/// oslo.config reads them. Admission refuses what this names, and the renderer never renders
/// it, so a CR that reached etcd without the webhook is held to the same rule.
pub fn untrusted(release: &str, section: &str, key: &str) -> Option<String> {
    let (section, key) = (oslo_section(section), oslo_key(key));
    if let Some(owned) = owned(&section, &key) {
        return refusal(owned);
    }
    if let Some(path) = HOST_PATH_OPTIONS
        .iter()
        .find(|p| p.section == section && p.key == key)
    {
        return Some(format!(
            "[{section}] {key} names a path in the pod and cannot be set: {}",
            path.why
        ));
    }
    if let Some(code) = CODE_BY_NAME_OPTIONS
        .iter()
        .find(|p| p.section == section && p.key == key)
    {
        return Some(format!(
            "[{section}] {key} selects the code barbican runs and cannot be set: {}",
            code.why
        ));
    }
    let facts = catalog_facts(release, &section, &key);
    if owned(&section, &key).is_none()
        && decides_destination(&section, &key, facts.first().copied())
    {
        return Some(format!(
            "[{section}] {key} decides where the credential the operator delivers for [{section}] is sent, or whether its peer is trusted, and cannot be set: the operator chooses the destination from the typed spec"
        ));
    }
    facts.iter().any(|o| o.secret).then(|| {
        format!(
            "[{section}] {key} is a credential (barbican's option definitions mark it secret) and cannot be set in the config, where it would sit in plain text in the Secret every API pod mounts"
        )
    })
}

/// What the catalogs speaking for `release` ([`super::catalog::speaking_for`]) say of
/// `[section] key`, both already read as oslo.config reads them: one entry per catalog that
/// knows the option.
fn catalog_facts(
    release: &str,
    section: &str,
    key: &str,
) -> Vec<&'static super::catalog::OptionFacts> {
    super::catalog::speaking_for(release)
        .into_iter()
        .filter_map(|c| c.sections.get(section).and_then(|s| s.options.get(key)))
        .collect()
}

/// The suffix barbican's plugin groups carry (`[vault_plugin]`, `[p11_crypto_plugin]`).
pub const PLUGIN_SECTION_SUFFIX: &str = "_plugin";

/// Why `section` cannot be a `spec.plugins[].configSection` for `release`: a plugin section
/// is one of barbican's plugin groups that the release's catalog knows (any catalog's, for a
/// release without one). Anything else (`[DEFAULT]`, `[handlers]`, a per-store section)
/// would let a plugin entry write options no catalog check sees.
pub fn plugin_section_problem(release: &str, section: &str) -> Option<String> {
    let folded = oslo_section(section);
    let catalogs = super::catalog::speaking_for(release);
    let known = |name: &str| {
        name.ends_with(PLUGIN_SECTION_SUFFIX)
            && catalogs.iter().any(|c| c.sections.contains_key(name))
    };
    if known(&folded) {
        return None;
    }
    let mut sections: Vec<&str> = catalogs
        .iter()
        .flat_map(|c| c.sections.keys())
        .map(String::as_str)
        .filter(|s| known(s))
        .collect();
    sections.sort_unstable();
    sections.dedup();
    Some(format!(
        "must be one of barbican's plugin sections for OpenStack release {release}: {}",
        sections.join(", ")
    ))
}

/// The registry entry for `[section] key`, if the operator owns it, with `section` and `key`
/// compared as oslo.config reads them ([`oslo_section`]).
pub fn owned(section: &str, key: &str) -> Option<&'static OwnedKey> {
    let (section, key) = (oslo_section(section), oslo_key(key));
    OWNED_KEYS
        .iter()
        .find(|k| k.section == section && k.key == key)
}

/// extraOptions keys derived from the typed store spec.
pub const DENIED_TYPED_OPTIONS: &[&str] = &[
    "vault_url",
    "use_ssl",
    "ssl_ca_crt_file",
    "approle_role_id",
    "approle_secret_id",
    "root_token_id",
    "kv_mountpoint",
    "namespace",
];

/// extraOptions keys of the structural secret-store wiring.
pub const DENIED_WIRING_OPTIONS: &[&str] =
    &["secret_store_plugin", "crypto_plugin", "global_default"];

/// Whether an extraOptions key is one the projection owns. The renderer consults the same
/// predicate, so a store that reached etcd without the webhook still cannot set them.
pub fn is_denied_option(key: &str) -> bool {
    DENIED_TYPED_OPTIONS.contains(&key) || DENIED_WIRING_OPTIONS.contains(&key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_the_three_credentials_are_rejected() {
        let rejected: Vec<_> = OWNED_KEYS
            .iter()
            .filter(|k| k.rejected.is_some())
            .map(|k| (k.section, k.key))
            .collect();
        assert_eq!(
            rejected,
            [
                ("keystone_authtoken", "password"),
                ("vault_plugin", "approle_secret_id"),
                ("vault_plugin", "root_token_id")
            ]
        );
    }

    #[test]
    fn lookups_find_owned_keys_only() {
        assert_eq!(
            owned("database", "connection").unwrap().owned_by,
            "spec.database (delivered as OS_DATABASE__CONNECTION)"
        );
        assert!(owned("default", "host_href").is_some());
        // oslo.config lowercases group names: every spelling of a section is the same one.
        assert_eq!(
            owned("VAULT_PLUGIN", "root_token_id").map(|k| k.key),
            Some("root_token_id")
        );
        assert!(owned("Keystone_AuthToken", "password").is_some());
        // As Python's str.lower() folds it: the Kelvin sign is a `k`.
        assert!(owned("\u{212a}EYSTONE_AUTHTOKEN", "password").is_some());
        assert!(
            owned("d\u{212a}fault", "host_href").is_none(),
            "not DEFAULT"
        );
        // Option names it compares exactly, `-` and `_` alike.
        assert!(owned("vault_plugin", "ROOT_TOKEN_ID").is_none());
        assert!(owned("vault_plugin", "root-token-id").is_some());
        assert!(owned("database", "max_retries").is_none());
        assert!(owned("DEFAULT", "debug").is_none());
    }

    #[test]
    fn credentials_come_from_the_catalogs_secret_marks_and_paths_from_the_registry() {
        // Marked secret by barbican's own option definitions, not on any hand list.
        for (section, key) in [
            ("simple_crypto_plugin", "kek"),
            ("kmip_plugin", "password"),
            ("p11_crypto_plugin", "login"),
            ("DEFAULT", "transport_url"),
            ("keystone_authtoken", "memcache_secret_key"),
            ("oslo_messaging_notifications", "transport_url"),
        ] {
            for release in ["2025.1", "2026.2", "2031.1"] {
                let why = untrusted(release, section, key)
                    .unwrap_or_else(|| panic!("[{section}] {key} in {release}"));
                assert!(why.contains("mark it secret"), "{why}");
            }
        }
        // The registry's three keep their own reasons.
        assert!(
            untrusted("2025.2", "VAULT_PLUGIN", "root_token_id")
                .unwrap()
                .contains("prefers a root token over AppRole")
        );
        // Owned keys the registry honours are reported by the renderer, not refused here.
        assert_eq!(untrusted("2025.2", "database", "connection"), None);
        assert_eq!(untrusted("2025.2", "vault_plugin", "approle_role_id"), None);
        // Code and files: every spelling.
        for (section, key) in [
            ("DEFAULT", "log_config_append"),
            ("default", "log-config-append"),
            ("DEFAULT", "log_dir"),
            ("DEFAULT", "log_file"),
            ("P11_CRYPTO_PLUGIN", "library_path"),
            ("oslo_policy", "policy_dirs"),
        ] {
            let why = untrusted("2026.1", section, key).unwrap_or_else(|| panic!("{key}"));
            assert!(why.contains("names a path in the pod"), "{why}");
        }
        assert!(
            untrusted("2026.1", "DEFAULT", "log_config_append")
                .unwrap()
                .contains("logging.config.fileConfig")
        );
        // Everyday options pass.
        for (section, key) in [
            ("DEFAULT", "debug"),
            ("vault_plugin", "timeout"),
            ("oslo_messaging_notifications", "driver"),
        ] {
            assert_eq!(untrusted("2026.1", section, key), None, "[{section}] {key}");
        }
    }

    #[test]
    fn options_that_select_code_by_name_are_refused_in_every_spelling_and_release() {
        for release in ["2025.1", "2026.2", "2030.1"] {
            for (section, key) in [
                ("secretstore", "namespace"),
                ("SECRETSTORE", "namespace"),
                ("crypto", "namespace"),
                ("DEFAULT", "backdoor_port"),
                ("default", "backdoor-socket"),
            ] {
                let why = untrusted(release, section, key).unwrap_or_default();
                assert!(
                    why.contains("selects the code"),
                    "{release} [{section}] {key}: {why:?}"
                );
            }
            // The plugins a namespace offers are still the tenant's to choose.
            assert_eq!(
                untrusted(release, "secretstore", "enabled_secretstore_plugins"),
                None
            );
        }
    }

    #[test]
    fn where_a_delivered_credential_goes_is_never_the_tenants_to_choose() {
        for release in ["2025.1", "2026.2", "2030.1"] {
            for (section, key) in [
                ("keystone_authtoken", "insecure"),
                ("keystone_authtoken", "cafile"),
                ("keystone_authtoken", "certfile"),
                ("keystone_authtoken", "keyfile"),
                ("keystone_authtoken", "auth_section"),
                ("keystone_authtoken", "memcache_tls_cafile"),
                ("Keystone_AuthToken", "memcache_tls_enabled"),
                ("vault_plugin", "kv_url"),
            ] {
                let why = untrusted(release, section, key).unwrap_or_default();
                assert!(
                    why.contains("decides where"),
                    "{release} [{section}] {key}: {why:?}"
                );
            }
            // Honoured and reported, as the spec has the owned keys (and not refused).
            for (section, key) in [
                ("keystone_authtoken", "auth_url"),
                ("keystone_authtoken", "www_authenticate_uri"),
                ("vault_plugin", "vault_url"),
            ] {
                assert_eq!(untrusted(release, section, key), None, "{section} {key}");
            }
            // What does not steer a credential stays the tenant's.
            for (section, key) in [
                ("keystone_authtoken", "http_connect_timeout"),
                ("keystone_authtoken", "service_token_roles"),
                ("vault_plugin", "kv_version"),
                ("kmip_plugin", "host"),
            ] {
                assert_eq!(untrusted(release, section, key), None, "{section} {key}");
            }
        }
        // The catalog's value type alone marks an address.
        let port = crate::api::catalog::for_release("2026.2").unwrap().sections["kmip_plugin"]
            .options
            .get("port");
        assert!(!decides_destination("kmip_plugin", "port", port));
        let url = crate::api::catalog::for_release("2026.2").unwrap().sections["vault_plugin"]
            .options
            .get("vault_url");
        assert!(decides_destination("vault_plugin", "vault_url", url));
    }

    #[test]
    fn a_url_valued_option_never_carries_userinfo() {
        for (section, key) in [
            ("keystone_authtoken", "www_authenticate_uri"),
            ("vault_plugin", "vault_url"),
            ("DEFAULT", "host_href"),
            ("anything", "callback_url"),
        ] {
            let why = value_problem("2026.2", section, key, "https://u:planted@host/v3")
                .unwrap_or_default();
            assert!(why.contains("user:password@"), "{section} {key}: {why}");
            assert!(!why.contains("planted"));
            assert_eq!(
                value_problem("2026.2", section, key, "https://host/v3"),
                None
            );
        }
        assert_eq!(
            value_problem("2026.2", "DEFAULT", "debug", "https://u:p@host"),
            None,
            "not a URL option"
        );
    }

    #[test]
    fn a_value_never_pulls_a_credential_in_through_substitution() {
        for value in [
            "https://$keystone_authtoken.password/v1",
            "https://${keystone_authtoken.password}",
            "x-${vault_plugin.approle_secret_id}",
            "$memcache_secret_key",
            "${simple_crypto_plugin.kek}",
        ] {
            let why = value_problem("2026.2", "DEFAULT", "host_href", value).unwrap_or_default();
            assert!(why.contains("must not refer to"), "{value}: {why}");
        }
        for value in ["$state_path/lock", "cost: $$5", "${host}", "$"] {
            assert_eq!(
                value_problem("2026.2", "DEFAULT", "host_href", value),
                None,
                "{value}"
            );
        }
        assert_eq!(
            substitutions("a $b ${c.d} $$e ${f"),
            vec!["b".to_string(), "c.d".to_string()]
        );
    }

    #[test]
    fn a_plugin_section_is_one_of_the_catalogs_plugin_groups() {
        for section in [
            "vault_plugin",
            "VAULT_PLUGIN",
            "simple_crypto_plugin",
            "p11_crypto_plugin",
        ] {
            assert_eq!(plugin_section_problem("2025.2", section), None, "{section}");
        }
        for section in [
            "DEFAULT",
            "formatters",
            "handler_h",
            "keystone_authtoken",
            "secretstore:openbao-primary",
            "my_plugin",
        ] {
            let problem = plugin_section_problem("2025.2", section).unwrap();
            assert!(
                problem.contains("plugin sections for OpenStack release 2025.2")
                    && problem.contains("vault_plugin"),
                "{problem}"
            );
        }
        // A release without a catalog is held to what any catalog knows.
        assert_eq!(plugin_section_problem("2031.1", "kmip_plugin"), None);
        assert!(plugin_section_problem("2031.1", "handlers").is_some());
    }

    #[test]
    fn no_key_is_registered_twice() {
        for (i, a) in OWNED_KEYS.iter().enumerate() {
            assert!(
                !OWNED_KEYS[..i]
                    .iter()
                    .any(|b| b.section == a.section && b.key == a.key),
                "{a:?}"
            );
        }
    }
}
