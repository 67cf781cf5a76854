//! The checks of what a Barbican writes into barbican.conf itself: `spec.extraConfig` and
//! `spec.plugins`, their bounds, the INI syntax, the release catalog, and the rule of what no
//! tenant may set ([`config_ownership::untrusted`]).

use std::collections::BTreeMap;

use crate::{
    admission::{
        catalog,
        verdict::{Operation, Verdict},
    },
    api::config_grammar::{
        option_name_problem as key_problem, section_name_problem, value_problem,
    },
    api::{
        Barbican, config_ownership,
        paste::{
            MAX_EXTRA_CONFIG_SECTIONS, MAX_OPTION_VALUE_LENGTH, MAX_PLUGINS, MAX_SECTION_OPTIONS,
        },
    },
};

/// Plugin sections are written verbatim: section names, option names and values must survive
/// the INI syntax, no credential the operator keeps out of the file may come in this way, the
/// section must be one of barbican's plugin groups, and its options the release catalog's. The
/// catalog-backed rules re-run on update only when their inputs changed (as for extraConfig):
/// an unrelated edit, or the finalizer's, never refuses a CR admitted before; the renderer
/// still never renders what they refuse.
pub(super) fn check_plugins(
    verdict: &mut Verdict,
    operation: Operation,
    old: Option<&Barbican>,
    new: &Barbican,
) {
    let plugins = new.spec.plugins.as_deref().unwrap_or_default();
    if plugins.len() > MAX_PLUGINS as usize {
        verdict.require(
            "spec.plugins",
            format!("must have at most {MAX_PLUGINS} items"),
        );
    }
    let release = &new.spec.open_stack_release;
    let changed = match (operation, old) {
        (Operation::Update, Some(old)) => {
            old.spec.plugins != new.spec.plugins || old.spec.open_stack_release != *release
        }
        _ => true,
    };
    for (i, plugin) in plugins.iter().enumerate() {
        let section = &plugin.config_section;
        if let Some(config) = &plugin.config {
            check_section_bounds(verdict, &format!("spec.plugins[{i}].config"), config);
        }
        let field = format!("spec.plugins[{i}].configSection");
        if let Some(problem) = section_name_problem(section) {
            verdict.require(field, problem);
        } else if changed
            && let Some(problem) = config_ownership::plugin_section_problem(release, section)
        {
            verdict.reject(field, section, problem);
        } else if changed
            && let (Some(catalog), Some(config)) = (catalog::for_release(release), &plugin.config)
        {
            catalog::check_section(
                verdict,
                catalog,
                &format!("spec.plugins[{i}].config"),
                section,
                config,
            );
        }
        // A section or option name refused is refused alone: the checks below quote the names,
        // and a refused name may hold "; ", which separates violations in the message.
        if section_name_problem(section).is_some() {
            continue;
        }
        for (key, value) in plugin.config.iter().flatten() {
            if let Some(problem) = key_problem(key) {
                verdict.require(format!("spec.plugins[{i}].config"), problem);
                continue;
            }
            if let Some(problem) = value_problem(value) {
                verdict.require(format!("spec.plugins[{i}].config"), problem);
            }
            if let Some(problem) = config_ownership::value_problem(release, section, key, value) {
                verdict.require(format!("spec.plugins[{i}].config[{key}]"), problem);
            }
            refuse_untrusted(
                verdict,
                &format!("spec.plugins[{i}].config[{key}]"),
                (release, section, key),
                changed,
            );
        }
    }
}

/// The schema's bounds on one INI section (re-checked here, as for every schema rule).
fn check_section_bounds(verdict: &mut Verdict, field: &str, options: &BTreeMap<String, String>) {
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

/// Refuses `[section] key` of `release` at `field` when a tenant may not set it
/// ([`config_ownership::untrusted`]: a credential, an option naming a path barbican loads code
/// from or writes to). With `changed` false (an update that left the option's inputs as they
/// were) only the registry's own refusals apply, as they always have.
fn refuse_untrusted(
    verdict: &mut Verdict,
    field: &str,
    (release, section, key): (&str, &str, &str),
    changed: bool,
) {
    let why = if changed {
        config_ownership::untrusted(release, section, key)
    } else {
        config_ownership::rejected_owned(section, key)
    };
    if let Some(why) = why {
        verdict.require(field, why);
    }
}

/// Empty names, line breaks, the registry's rejected credential keys, and the catalog.
pub(super) fn check_extra_config(
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
            // A refused option name is refused alone (see the plugins' loop above).
            if let Some(problem) = key_problem(key) {
                verdict.require(format!("spec.extraConfig[{section}]"), problem);
                continue;
            }
            if let Some(problem) = value_problem(value) {
                verdict.require(format!("spec.extraConfig[{section}]"), problem);
            }
            let release = &new.spec.open_stack_release;
            if let Some(problem) = config_ownership::value_problem(release, section, key, value) {
                verdict.require(format!("spec.extraConfig[{section}][{key}]"), problem);
            }
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
    for (section, options) in extra {
        for key in options.keys() {
            refuse_untrusted(
                verdict,
                &format!("spec.extraConfig[{section}][{key}]"),
                (&new.spec.open_stack_release, section, key),
                inputs_changed,
            );
        }
    }
    if inputs_changed {
        catalog::check(verdict, &new.spec.open_stack_release, extra);
    }
}
