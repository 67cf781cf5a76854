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
];

/// The section oslo.config reads `section` as: it lowercases every group name but `DEFAULT`
/// (so `[VAULT_PLUGIN]` is `[vault_plugin]`). `default` in any case is taken as `DEFAULT`
/// here, one step stricter than oslo.config (which reads `[default]` as a group of that name),
/// so no spelling of it escapes the registry. Option names oslo.config compares exactly.
pub fn oslo_section(section: &str) -> String {
    if section.eq_ignore_ascii_case("DEFAULT") {
        "DEFAULT".to_string()
    } else {
        section.to_ascii_lowercase()
    }
}

/// The registry entry for `[section] key`, if the operator owns it, with `section` compared
/// as oslo.config reads it ([`oslo_section`]).
pub fn owned(section: &str, key: &str) -> Option<&'static OwnedKey> {
    let section = oslo_section(section);
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
        // Option names it compares exactly.
        assert!(owned("vault_plugin", "ROOT_TOKEN_ID").is_none());
        assert!(owned("database", "max_retries").is_none());
        assert!(owned("DEFAULT", "debug").is_none());
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
