//! Validation of a `BarbicanSecretStore`: the schema re-checks, the name guards, the
//! extraOptions escape hatch, and the two sibling rules.

use super::{
    lookups::Lookups,
    verdict::{Operation, Verdict},
};
use crate::api::config_grammar::value_problem;
use crate::api::{
    BarbicanSecretStore, SecretStoreType,
    config_ownership::is_denied_option,
    names::MAX_SECRET_STORE_NAME_LENGTH,
    secret_store::{
        DEFAULT_KV_MOUNTPOINT, OPENBAO_MANAGED_PIN_MESSAGE, OPENBAO_MODE_UNION_MESSAGE,
        TYPE_UNION_MESSAGE, check_path, url_has_userinfo,
    },
};

/// Section names of barbican.conf a store name may not take: its `[secretstore:<name>]` suffix
/// resolves against the one flat section namespace of the file. Compared case-insensitively.
pub const RESERVED_SECTION_NAMES: &[&str] = &[
    "default",
    "database",
    "keystone_authtoken",
    "secretstore",
    "vault_plugin",
    "queue",
    "oslo_policy",
    "oslo_middleware",
    "healthcheck",
];

fn is_option_name(key: &str) -> bool {
    !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Validates `new` (and the transition from `old`), collecting every violation.
pub fn validate_secret_store(
    operation: Operation,
    old: Option<&BarbicanSecretStore>,
    new: &BarbicanSecretStore,
    lookups: &dyn Lookups,
) -> Verdict {
    let mut verdict = Verdict::default();
    // As for a Barbican: the unchanged update of a deleting store (a finalizer release) passes.
    if operation == Operation::Update
        && new.metadata.deletion_timestamp.is_some()
        && old.is_some_and(|old| old.spec == new.spec)
    {
        return verdict;
    }
    let name = new.metadata.name.clone().unwrap_or_default();
    let spec = &new.spec;

    if operation == Operation::Create && name.len() > MAX_SECRET_STORE_NAME_LENGTH {
        verdict.reject(
            "metadata.name",
            &name,
            format!("must be no more than {MAX_SECRET_STORE_NAME_LENGTH} characters, so the {{name}}-approle Secret fits 63"),
        );
    }
    if let Some(reserved) = RESERVED_SECTION_NAMES
        .iter()
        .find(|r| r.eq_ignore_ascii_case(&name))
    {
        verdict.reject(
            "metadata.name",
            &name,
            format!(
                "collides with the reserved barbican.conf section [{reserved}] (reserved, case-insensitive: {})",
                RESERVED_SECTION_NAMES.join(", ")
            ),
        );
    }

    match (spec.store_type, &spec.open_bao) {
        (SecretStoreType::OpenBao, None) => verdict.require("spec.openBao", TYPE_UNION_MESSAGE),
        (SecretStoreType::OpenBao, Some(open_bao)) => {
            if open_bao.instance_ref.is_some() == open_bao.server.is_some() {
                verdict.require("spec.openBao", OPENBAO_MODE_UNION_MESSAGE);
            }
            if open_bao.instance_ref.is_some()
                && (open_bao.kv_mountpoint != DEFAULT_KV_MOUNTPOINT || open_bao.namespace.is_some())
            {
                verdict.require("spec.openBao", OPENBAO_MANAGED_PIN_MESSAGE);
            }
            if let Some(server) = &open_bao.server {
                // A URL with userinfo is never echoed: it carries a password.
                if url_has_userinfo(&server.url) {
                    verdict.require(
                        "spec.openBao.server.url",
                        "must not carry credentials (user:password@ before the host): the AppRole credentials come from credentialsSecretRef",
                    );
                } else if !server.url.starts_with("https://") {
                    verdict.reject(
                        "spec.openBao.server.url",
                        &server.url,
                        "must start with https://: TLS is mandatory",
                    );
                } else if server
                    .url
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control())
                {
                    verdict.require(
                        "spec.openBao.server.url",
                        "must not contain spaces or control characters",
                    );
                }
            }
            if let Err(allowed) = check_path(&open_bao.kv_mountpoint) {
                verdict.require("spec.openBao.kvMountpoint", allowed);
            }
            if let Some(namespace) = open_bao.namespace.as_deref().filter(|n| !n.is_empty())
                && let Err(allowed) = check_path(namespace)
            {
                verdict.require("spec.openBao.namespace", allowed);
            }
        }
    }

    for (key, value) in spec.extra_options.iter().flatten() {
        let field = format!("spec.extraOptions[{key}]");
        // The character check runs first, so an embedded newline or a trailing space cannot
        // slip a denied key past the exact-match denylist.
        if !is_option_name(key) {
            verdict.require(
                "spec.extraOptions",
                "keys must match ^[A-Za-z0-9_]+$ (vault plugin option names)",
            );
        } else if is_denied_option(key) {
            verdict.require(
                field.clone(),
                "is set by the operator from the typed store spec or the store wiring (allowed: any other vault_plugin option)",
            );
        }
        if let Some(problem) = value_problem(value) {
            verdict.require(field, problem);
        }
    }

    check_siblings(&mut verdict, new, lookups);
    verdict
}

/// One default and one OpenBao store per Barbican, among siblings that are not Terminating.
fn check_siblings(verdict: &mut Verdict, new: &BarbicanSecretStore, lookups: &dyn Lookups) {
    let namespace = new.metadata.namespace.clone().unwrap_or_default();
    let name = new.metadata.name.clone().unwrap_or_default();
    let siblings = match lookups.secret_stores(&namespace) {
        Ok(stores) => stores,
        Err(e) => {
            verdict.require(
                "spec.barbicanRef",
                format!("could not list the other stores of this Barbican: {e}"),
            );
            return;
        }
    };
    let siblings: Vec<_> = siblings
        .into_iter()
        .filter(|s| s.metadata.name.as_deref() != Some(name.as_str()))
        .filter(|s| s.metadata.deletion_timestamp.is_none())
        .filter(|s| s.spec.barbican_ref.name == new.spec.barbican_ref.name)
        .collect();
    let barbican = &new.spec.barbican_ref.name;
    if new.spec.is_default
        && let Some(other) = siblings.iter().find(|s| s.spec.is_default)
    {
        verdict.require(
            "spec.isDefault",
            format!(
                "BarbicanSecretStore {} is already the default of Barbican {barbican}, and a Barbican has one default",
                other.metadata.name.clone().unwrap_or_default()
            ),
        );
    }
    if new.spec.store_type == SecretStoreType::OpenBao
        && let Some(other) = siblings
            .iter()
            .find(|s| s.spec.store_type == SecretStoreType::OpenBao)
    {
        verdict.require(
            "spec.type",
            format!(
                "BarbicanSecretStore {} already attaches an OpenBao store to Barbican {barbican}: [vault_plugin] is process-global, so a Barbican has one OpenBao store",
                other.metadata.name.clone().unwrap_or_default()
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::{
        admission::lookups::KnownState,
        api::fixtures::{managed_store, with_spec},
    };

    fn store(name: &str, spec_patch: Value) -> BarbicanSecretStore {
        let mut object = with_spec(managed_store(), &spec_patch);
        object["metadata"]["name"] = json!(name);
        serde_json::from_value(object).unwrap()
    }

    fn fields(verdict: &Verdict) -> Vec<&str> {
        verdict
            .violations
            .iter()
            .map(|v| v.field.as_str())
            .collect()
    }

    fn create(new: &BarbicanSecretStore, lookups: &KnownState) -> Verdict {
        validate_secret_store(Operation::Create, None, new, lookups)
    }

    #[test]
    fn the_spec_example_is_admitted() {
        assert!(create(&store("openbao-primary", json!({})), &KnownState::default()).allowed());
    }

    #[test]
    fn names_are_bounded_on_create_and_may_not_take_a_reserved_section() {
        let long = store(&"s".repeat(56), json!({}));
        assert_eq!(
            fields(&create(&long, &KnownState::default())),
            ["metadata.name"]
        );
        assert!(
            validate_secret_store(
                Operation::Update,
                Some(&long),
                &long,
                &KnownState::default()
            )
            .allowed()
        );
        assert!(create(&store(&"s".repeat(55), json!({})), &KnownState::default()).allowed());
        for reserved in [
            "DEFAULT",
            "default",
            "database",
            "Vault_Plugin",
            "healthcheck",
        ] {
            let verdict = create(&store(reserved, json!({})), &KnownState::default());
            assert_eq!(fields(&verdict), ["metadata.name"], "{reserved}");
        }
    }

    #[test]
    fn the_unions_and_the_managed_pin_are_re_checked() {
        let server =
            json!({"url": "https://vault.example.com", "credentialsSecretRef": {"name": "c"}});
        for (patch, expected) in [
            (json!({"openBao": null}), vec!["spec.openBao"]),
            (json!({"openBao": {"server": server}}), vec!["spec.openBao"]),
            (
                json!({"openBao": {"kvMountpoint": "kv"}}),
                vec!["spec.openBao"],
            ),
            (
                json!({"openBao": {"namespace": "tenant"}}),
                vec!["spec.openBao"],
            ),
            (
                json!({"openBao": {"instanceRef": null, "server": {"url": "http://vault", "credentialsSecretRef": {"name": "c"}}}}),
                vec!["spec.openBao.server.url"],
            ),
            (
                json!({"openBao": {"instanceRef": null, "server": server, "kvMountpoint": "kv", "namespace": "t"}}),
                vec![],
            ),
        ] {
            let verdict = create(&store("s", patch.clone()), &KnownState::default());
            assert_eq!(fields(&verdict), expected, "{patch}: {}", verdict.message());
        }
    }

    #[test]
    fn extra_options_pattern_runs_before_the_denylist() {
        for (options, expected) in [
            (json!({"timeout": "60"}), vec![]),
            (
                json!({"vault_url": "https://elsewhere"}),
                vec!["spec.extraOptions[vault_url]"],
            ),
            (
                json!({"root_token_id": "s.xyz"}),
                vec!["spec.extraOptions[root_token_id]"],
            ),
            (
                json!({"global_default": "True"}),
                vec!["spec.extraOptions[global_default]"],
            ),
            (
                json!({"root_token_id ": "s.xyz"}),
                vec!["spec.extraOptions"],
            ),
            (
                json!({"timeout\nroot_token_id": "x"}),
                vec!["spec.extraOptions"],
            ),
            (
                json!({"timeout": "60\nroot_token_id = x"}),
                vec!["spec.extraOptions[timeout]"],
            ),
        ] {
            let verdict = create(
                &store("s", json!({"extraOptions": options})),
                &KnownState::default(),
            );
            assert_eq!(
                fields(&verdict),
                expected,
                "{options}: {}",
                verdict.message()
            );
            assert!(
                !verdict.message().contains("s.xyz"),
                "values are never echoed"
            );
        }
    }

    #[test]
    fn one_default_and_one_openbao_store_per_barbican_among_live_siblings() {
        let existing = store("openbao-primary", json!({}));
        let lookups = KnownState {
            secret_stores: vec![existing.clone()],
            ..Default::default()
        };
        let second = store("openbao-secondary", json!({}));
        assert_eq!(
            fields(&create(&second, &lookups)),
            ["spec.isDefault", "spec.type"]
        );
        let second_not_default = store("openbao-secondary", json!({"isDefault": false}));
        assert_eq!(
            fields(&create(&second_not_default, &lookups)),
            ["spec.type"]
        );
        // Self, Terminating siblings and other Barbicans' stores do not count.
        assert!(
            validate_secret_store(Operation::Update, Some(&existing), &existing, &lookups)
                .allowed()
        );
        let mut terminating = existing.clone();
        terminating.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Default::default()),
        );
        let lookups_terminating = KnownState {
            secret_stores: vec![terminating],
            ..Default::default()
        };
        assert!(create(&second, &lookups_terminating).allowed());
        let other_parent = store("other", json!({"barbicanRef": {"name": "barbican-two"}}));
        let lookups_other = KnownState {
            secret_stores: vec![other_parent],
            ..Default::default()
        };
        assert!(create(&second, &lookups_other).allowed());
    }

    #[test]
    fn an_unanswerable_sibling_lookup_fails_closed() {
        let lookups = KnownState {
            unavailable: Some("connection refused".into()),
            ..Default::default()
        };
        let verdict = create(&store("s", json!({})), &lookups);
        assert_eq!(fields(&verdict), ["spec.barbicanRef"]);
        assert!(verdict.message().contains("connection refused"));
    }
}
