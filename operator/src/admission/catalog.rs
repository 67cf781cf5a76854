//! The admission check of option names against the per-release option catalogs
//! ([`crate::api::catalog`]).

use std::collections::BTreeMap;

use super::verdict::Verdict;
pub use crate::api::catalog::{
    Catalog, OptionFacts, SECRET_STORE_SECTION_PREFIX, Section, for_release, releases,
};
use crate::api::config_grammar::{option_name_problem as key_problem, section_name_problem};
use crate::api::config_ownership;

/// Checks every extraConfig option name against the release's catalog: unknown sections and
/// options are violations naming the release; deprecated names are admitted with a warning
/// naming the replacement; a release without a catalog is admitted with a warning.
pub fn check(
    verdict: &mut Verdict,
    release: &str,
    extra_config: &BTreeMap<String, BTreeMap<String, String>>,
) {
    let Some(catalog) = for_release(release) else {
        verdict.warn(format!(
            "no option catalog is embedded for OpenStack release {release}; spec.extraConfig option names are not checked (catalogs: {})",
            releases().collect::<Vec<_>>().join(", ")
        ));
        return;
    };
    for (section, options) in extra_config {
        // Names the INI syntax refuses are reported by the syntax guard; one report each.
        if section.starts_with(SECRET_STORE_SECTION_PREFIX)
            || section_name_problem(section).is_some()
        {
            continue;
        }
        let field = format!("spec.extraConfig[{section}]");
        check_section(verdict, catalog, &field, section, options);
    }
}

/// Checks the option names of the INI section `section` (written at `field`, each option at
/// `field[option]`) against `catalog`, as [`check`] describes.
pub fn check_section(
    verdict: &mut Verdict,
    catalog: &Catalog,
    field: &str,
    section: &str,
    options: &BTreeMap<String, String>,
) {
    let release = &catalog.release;
    // As oslo.config reads it: `[VAULT_PLUGIN]` is `[vault_plugin]`.
    let normalized = config_ownership::oslo_section(section);
    let name = normalized.as_str();
    let known = catalog.sections.get(name);
    for option in options.keys() {
        if key_problem(option).is_some() || config_ownership::owned(name, option).is_some() {
            continue;
        }
        match known {
            Some(s) if s.options.contains_key(option) => {}
            Some(s) => match s.deprecated.get(option) {
                Some(replacement) => verdict.warn(format!(
                    "{field}[{option}] is deprecated in OpenStack release {release}; use {replacement}"
                )),
                None => verdict.reject(
                    format!("{field}[{option}]"),
                    option,
                    format!("unknown option [{name}] {option} for OpenStack release {release} (barbican {})", catalog.barbican),
                ),
            },
            None => {
                verdict.reject(
                    field,
                    section,
                    format!("unknown section [{section}] for OpenStack release {release} (barbican {})", catalog.barbican),
                );
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extra(pairs: &[(&str, &str)]) -> BTreeMap<String, BTreeMap<String, String>> {
        let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (section, option) in pairs {
            out.entry(section.to_string())
                .or_default()
                .insert(option.to_string(), "x".into());
        }
        out
    }

    #[test]
    fn every_release_of_the_spec_has_a_catalog_generated_from_its_barbican() {
        for (release, barbican) in [
            ("2025.1", "20.0.0"),
            ("2025.2", "21.0.0"),
            ("2026.1", "22.0.0"),
            ("2026.2", "23.0.0"),
        ] {
            let catalog = for_release(release).unwrap();
            assert_eq!(catalog.release, release);
            assert_eq!(catalog.barbican, barbican);
            for section in [
                "DEFAULT",
                "database",
                "keystone_authtoken",
                "vault_plugin",
                "secretstore",
                "oslo_policy",
                "queue",
            ] {
                assert!(
                    catalog.sections.contains_key(section),
                    "{release} lacks [{section}]"
                );
            }
        }
    }

    #[test]
    fn known_options_pass_and_unknown_ones_name_the_release() {
        let mut verdict = Verdict::default();
        check(
            &mut verdict,
            "2025.2",
            &extra(&[
                ("DEFAULT", "debug"),
                ("database", "max_retries"),
                ("oslo_messaging_notifications", "driver"),
            ]),
        );
        assert!(
            verdict.allowed() && verdict.warnings.is_empty(),
            "{verdict:?}"
        );

        let mut verdict = Verdict::default();
        check(
            &mut verdict,
            "2025.2",
            &extra(&[("DEFAULT", "no_such_option"), ("no_such_section", "x")]),
        );
        let message = verdict.message();
        assert!(
            message
                .contains("unknown option [DEFAULT] no_such_option for OpenStack release 2025.2"),
            "{message}"
        );
        assert!(
            message.contains("unknown section [no_such_section] for OpenStack release 2025.2"),
            "{message}"
        );
    }

    #[test]
    fn deprecated_names_are_admitted_with_a_warning_naming_the_replacement() {
        let mut verdict = Verdict::default();
        check(
            &mut verdict,
            "2025.1",
            &extra(&[("keystone_authtoken", "memcache_servers")]),
        );
        assert!(verdict.allowed(), "{}", verdict.message());
        assert_eq!(
            verdict.warnings,
            [
                "spec.extraConfig[keystone_authtoken][memcache_servers] is deprecated in OpenStack release 2025.1; use [keystone_authtoken] memcached_servers"
            ]
        );
    }

    #[test]
    fn store_sections_are_exempt_and_unknown_releases_only_warn() {
        let mut verdict = Verdict::default();
        check(
            &mut verdict,
            "2025.1",
            &extra(&[("secretstore:openbao-primary", "anything")]),
        );
        assert!(verdict.allowed() && verdict.warnings.is_empty());
        let mut verdict = Verdict::default();
        check(
            &mut verdict,
            "2030.1",
            &extra(&[("DEFAULT", "no_such_option")]),
        );
        assert!(verdict.allowed());
        assert!(
            verdict.warnings[0]
                .contains("no option catalog is embedded for OpenStack release 2030.1")
        );
    }
}
