//! Every schema-level CEL rule, evaluated with kube's client-side CEL against the generated CRD
//! schema: for each, at least one accepted and one rejected object with the exact message,
//! transition rules (`oldSelf`) included. Also checks that every rule compiles and stays inside
//! the API server's cost budget.

use kube::core::cel::{
    ErrorKind, ScopeContext, Validator, WarningKind, analyze_rule, compile_schema,
};
use serde_json::{Value, json};

use crate::crd::open_api_schema;

use super::{
    Barbican, BarbicanSecretStore,
    api_server::*,
    audit::{AUDIT_TRANSPORT_MESSAGE, AUDIT_TRANSPORT_RULE},
    barbican::*,
    config_grammar::{self, OPTION_NAMES_RULE, SECTION_NAMES_RULE},
    database::*,
    fixtures::{managed_store, minimal_barbican, with_spec},
    image::*,
    memcached::*,
    policy::*,
    secret_store::*,
    tls::{TLS_DNS_NAMES_MESSAGE, TLS_DNS_NAMES_RULE, TLS_SOURCE_MESSAGE, TLS_SOURCE_RULE},
};

fn barbican(spec_patch: Value) -> Value {
    with_spec(minimal_barbican(), &spec_patch)
}

fn store(spec_patch: Value) -> Value {
    with_spec(managed_store(), &spec_patch)
}

fn brownfield() -> Value {
    json!({"openBao": {"instanceRef": null, "server": {
        "url": "https://vault.example.com:8200",
        "credentialsSecretRef": {"name": "vault-approle"}
    }}})
}

/// The CEL failures of `object` (and `old` for an update) as `(fieldPath, message)` pairs.
fn cel_failures(schema: &Value, object: &Value, old: Option<&Value>) -> Vec<(String, String)> {
    match Validator::new().validate(schema, object, old) {
        Ok(()) => vec![],
        Err(errors) => errors
            .into_vec()
            .into_iter()
            .map(|e| {
                assert_eq!(
                    e.kind,
                    ErrorKind::ValidationFailure,
                    "rule did not evaluate cleanly: {e:?}"
                );
                (e.field_path, e.message)
            })
            .collect(),
    }
}

fn assert_accepted(schema: &Value, object: &Value, old: Option<&Value>) {
    let failures = cel_failures(schema, object, old);
    assert!(failures.is_empty(), "expected acceptance, got {failures:?}");
}

fn assert_rejected(schema: &Value, object: &Value, old: Option<&Value>, message: &str) {
    let failures = cel_failures(schema, object, old);
    assert!(
        failures.iter().any(|(_, m)| m == message),
        "expected rejection with {message:?}, got {failures:?}"
    );
    assert_eq!(
        failures.len(),
        1,
        "expected exactly one failure, got {failures:?}"
    );
}

fn barbican_schema() -> Value {
    open_api_schema::<Barbican>()
}

fn store_schema() -> Value {
    open_api_schema::<BarbicanSecretStore>()
}

#[test]
fn the_minimal_examples_pass_every_rule() {
    assert_accepted(&barbican_schema(), &barbican(json!({})), None);
    assert_accepted(&store_schema(), &store(json!({})), None);
    assert_accepted(&store_schema(), &store(brownfield()), None);
}

#[test]
fn image_needs_exactly_one_of_tag_and_digest() {
    let s = barbican_schema();
    let digest = format!("sha256:{}", "0".repeat(64));
    assert_accepted(
        &s,
        &barbican(json!({"image": {"tag": null, "digest": digest}})),
        None,
    );
    assert_rejected(
        &s,
        &barbican(json!({"image": {"digest": digest}})),
        None,
        IMAGE_TAG_XOR_DIGEST_MESSAGE,
    );
    assert_rejected(
        &s,
        &barbican(json!({"image": {"tag": null}})),
        None,
        IMAGE_TAG_XOR_DIGEST_MESSAGE,
    );
}

#[test]
fn the_messaging_audit_driver_and_only_it_names_its_transport() {
    let s = barbican_schema();
    let reference = json!({"name": "rabbitmq-audit"});
    assert_accepted(&s, &barbican(json!({"audit": {}})), None);
    assert_accepted(
        &s,
        &barbican(json!({"audit": {"driver": "messaging", "transportUrlSecretRef": reference}})),
        None,
    );
    for audit in [
        json!({"driver": "messaging"}),
        json!({"transportUrlSecretRef": reference}),
        json!({"driver": "log", "transportUrlSecretRef": reference}),
    ] {
        assert_rejected(
            &s,
            &barbican(json!({"audit": audit})),
            None,
            AUDIT_TRANSPORT_MESSAGE,
        );
    }
}

#[test]
fn tls_takes_its_certificate_from_exactly_one_place_and_extra_names_only_when_requesting() {
    let s = barbican_schema();
    let issuer = json!({"name": "cloud-ca", "kind": "ClusterIssuer"});
    assert_accepted(
        &s,
        &barbican(json!({"tls": {"secretName": "kms-cert"}})),
        None,
    );
    assert_accepted(
        &s,
        &barbican(json!({"tls": {"issuerRef": issuer, "dnsNames": ["kms.example.com"]}})),
        None,
    );
    for tls in [
        json!({}),
        json!({"secretName": "kms-cert", "issuerRef": issuer}),
    ] {
        assert_rejected(&s, &barbican(json!({"tls": tls})), None, TLS_SOURCE_MESSAGE);
    }
    assert_rejected(
        &s,
        &barbican(json!({"tls": {"secretName": "kms-cert", "dnsNames": ["kms.example.com"]}})),
        None,
        TLS_DNS_NAMES_MESSAGE,
    );
}

#[test]
fn database_needs_exactly_one_of_cluster_ref_and_host() {
    let s = barbican_schema();
    assert_accepted(
        &s,
        &barbican(json!({"database": {"clusterRef": null, "host": "db.example.com"}})),
        None,
    );
    assert_rejected(
        &s,
        &barbican(json!({"database": {"host": "db.example.com"}})),
        None,
        DATABASE_CLUSTER_REF_XOR_HOST_MESSAGE,
    );
    assert_rejected(
        &s,
        &barbican(json!({"database": {"clusterRef": null}})),
        None,
        DATABASE_CLUSTER_REF_XOR_HOST_MESSAGE,
    );
}

#[test]
fn dynamic_credentials_require_a_cluster_ref() {
    let s = barbican_schema();
    assert_accepted(
        &s,
        &barbican(json!({"database": {"credentialsMode": "Dynamic"}})),
        None,
    );
    assert_accepted(
        &s,
        &barbican(
            json!({"database": {"clusterRef": null, "host": "db", "credentialsMode": "Static"}}),
        ),
        None,
    );
    assert_rejected(
        &s,
        &barbican(
            json!({"database": {"clusterRef": null, "host": "db", "credentialsMode": "Dynamic"}}),
        ),
        None,
        DATABASE_DYNAMIC_REQUIRES_CLUSTER_REF_MESSAGE,
    );
}

#[test]
fn cache_needs_exactly_one_of_cluster_ref_and_servers() {
    let s = barbican_schema();
    assert_accepted(
        &s,
        &barbican(json!({"cache": {"clusterRef": null, "servers": ["mc-0:11211"]}})),
        None,
    );
    assert_rejected(
        &s,
        &barbican(json!({"cache": {"servers": ["mc-0:11211"]}})),
        None,
        CACHE_CLUSTER_REF_XOR_SERVERS_MESSAGE,
    );
    assert_rejected(
        &s,
        &barbican(json!({"cache": {"clusterRef": null, "servers": []}})),
        None,
        CACHE_CLUSTER_REF_XOR_SERVERS_MESSAGE,
    );
}

#[test]
fn keepalive_timeout_needs_keepalive_on() {
    let s = barbican_schema();
    let uwsgi = |v: Value| barbican(json!({"apiServer": {"uwsgi": v}}));
    assert_accepted(&s, &uwsgi(json!({"httpKeepAliveTimeout": 30})), None);
    assert_accepted(
        &s,
        &uwsgi(json!({"httpKeepAlive": true, "httpKeepAliveTimeout": 30})),
        None,
    );
    assert_accepted(&s, &uwsgi(json!({"httpKeepAlive": false})), None);
    assert_rejected(
        &s,
        &uwsgi(json!({"httpKeepAlive": false, "httpKeepAliveTimeout": 30})),
        None,
        UWSGI_KEEPALIVE_TIMEOUT_MESSAGE,
    );
}

#[test]
fn policy_overrides_need_rules_or_a_configmap() {
    let s = barbican_schema();
    assert_accepted(
        &s,
        &barbican(json!({"policyOverrides": {"rules": {"secrets:get": "role:admin"}}})),
        None,
    );
    assert_accepted(
        &s,
        &barbican(json!({"policyOverrides": {"configMapRef": {"name": "barbican-policy"}}})),
        None,
    );
    assert_rejected(
        &s,
        &barbican(json!({"policyOverrides": {}})),
        None,
        POLICY_RULES_OR_CONFIGMAP_MESSAGE,
    );
    assert_rejected(
        &s,
        &barbican(json!({"policyOverrides": {"rules": {}}})),
        None,
        POLICY_RULES_OR_CONFIGMAP_MESSAGE,
    );
}

#[test]
fn target_cluster_ref_cannot_be_added_removed_or_renamed() {
    let s = barbican_schema();
    let local = barbican(json!({}));
    let east = barbican(json!({"targetClusterRef": {"name": "east"}}));
    let west = barbican(json!({"targetClusterRef": {"name": "west"}}));
    // Creation with or without a ref, and updates that keep it, pass.
    assert_accepted(&s, &east, None);
    assert_accepted(&s, &east, Some(&east));
    assert_accepted(
        &s,
        &barbican(json!({"targetClusterRef": {"name": "east"}, "region": "RegionTwo"})),
        Some(&east),
    );
    assert_accepted(&s, &barbican(json!({"region": "RegionTwo"})), Some(&local));
    // Adding, removing and renaming are refused with the spec's message.
    assert_rejected(
        &s,
        &east,
        Some(&local),
        TARGET_CLUSTER_REF_IMMUTABLE_MESSAGE,
    );
    assert_rejected(
        &s,
        &local,
        Some(&east),
        TARGET_CLUSTER_REF_IMMUTABLE_MESSAGE,
    );
    assert_rejected(&s, &west, Some(&east), TARGET_CLUSTER_REF_IMMUTABLE_MESSAGE);
}

#[test]
fn store_barbican_ref_is_immutable() {
    let s = store_schema();
    let old = store(json!({}));
    assert_accepted(&s, &store(json!({"isDefault": false})), Some(&old));
    assert_rejected(
        &s,
        &store(json!({"barbicanRef": {"name": "other"}})),
        Some(&old),
        BARBICAN_REF_IMMUTABLE_MESSAGE,
    );
}

#[test]
fn store_type_is_immutable() {
    // OpenBao is the only enum value, so a type change can only be shown against a stored
    // object that predates the enum (or bypassed it); the transition rule still holds.
    let s = store_schema();
    let mut old = store(json!({}));
    old["spec"]["type"] = json!("Vault");
    assert_accepted(&s, &store(json!({})), Some(&store(json!({}))));
    let failures = cel_failures(&s, &store(json!({})), Some(&old));
    assert!(
        failures.iter().any(|(_, m)| m == TYPE_IMMUTABLE_MESSAGE),
        "{failures:?}"
    );
}

#[test]
fn store_type_and_block_form_a_union() {
    let s = store_schema();
    assert_rejected(
        &s,
        &store(json!({"openBao": null})),
        None,
        TYPE_UNION_MESSAGE,
    );
}

#[test]
fn openbao_needs_exactly_one_of_instance_ref_and_server() {
    let s = store_schema();
    let both = store(
        json!({"openBao": {"server": {"url": "https://vault.example.com", "credentialsSecretRef": {"name": "x"}}}}),
    );
    assert_rejected(&s, &both, None, OPENBAO_MODE_UNION_MESSAGE);
    assert_rejected(
        &s,
        &store(json!({"openBao": {"instanceRef": null}})),
        None,
        OPENBAO_MODE_UNION_MESSAGE,
    );
}

#[test]
fn managed_stores_are_pinned_to_the_barbican_mount_at_the_root_namespace() {
    let s = store_schema();
    assert_accepted(
        &s,
        &store(json!({"openBao": {"kvMountpoint": "barbican"}})),
        None,
    );
    assert_rejected(
        &s,
        &store(json!({"openBao": {"kvMountpoint": "kv"}})),
        None,
        OPENBAO_MANAGED_PIN_MESSAGE,
    );
    assert_rejected(
        &s,
        &store(json!({"openBao": {"namespace": "tenant-a"}})),
        None,
        OPENBAO_MANAGED_PIN_MESSAGE,
    );
    // Brownfield stores name whatever mount and namespace their server has.
    let custom = with_spec(
        store(brownfield()),
        &json!({"openBao": {"kvMountpoint": "kv", "namespace": "tenant-a"}}),
    );
    assert_accepted(&s, &custom, None);
}

#[test]
fn kv_mountpoint_is_immutable_and_defaulted_before_the_rule_runs() {
    let s = store_schema();
    let old = with_spec(
        store(brownfield()),
        &json!({"openBao": {"kvMountpoint": "kv"}}),
    );
    let same = with_spec(old.clone(), &json!({"isDefault": false}));
    assert_accepted(&s, &same, Some(&old));
    let moved = with_spec(old.clone(), &json!({"openBao": {"kvMountpoint": "kv2"}}));
    assert_rejected(&s, &moved, Some(&old), KV_MOUNTPOINT_IMMUTABLE_MESSAGE);
    // An absent mount is the default `barbican`, so dropping an explicit `kv` is a change too.
    let dropped = with_spec(old.clone(), &json!({"openBao": {"kvMountpoint": null}}));
    assert_rejected(&s, &dropped, Some(&old), KV_MOUNTPOINT_IMMUTABLE_MESSAGE);
}

#[test]
fn a_brownfield_url_edit_keeps_the_mount_and_is_accepted() {
    let s = store_schema();
    let old = with_spec(
        store(brownfield()),
        &json!({"openBao": {"kvMountpoint": "secret-barbican", "namespace": "tenant-a"}}),
    );
    let edited = with_spec(
        old.clone(),
        &json!({"openBao": {"server": {"url": "https://vault.example.com:9999"}}}),
    );
    assert_accepted(&s, &edited, Some(&old));
    let compiled = compile_schema(&s);
    let r = Validator::new().validate_compiled(&compiled, &edited, Some(&old));
    assert!(r.is_ok(), "compiled: {r:?}");
}

#[test]
fn the_store_mode_is_frozen() {
    let s = store_schema();
    let managed = store(json!({}));
    let brown = store(brownfield());
    assert_accepted(&s, &brown, Some(&brown));
    assert_rejected(&s, &brown, Some(&managed), OPENBAO_MODE_FROZEN_MESSAGE);
    assert_rejected(&s, &managed, Some(&brown), OPENBAO_MODE_FROZEN_MESSAGE);
}

#[test]
fn extra_options_keys_and_values_are_bounded() {
    let s = store_schema();
    let ok = store(json!({"extraOptions": {"timeout": "60"}}));
    assert_accepted(&s, &ok, None);
    let long_key = store(json!({"extraOptions": {"k".repeat(257): "v"}}));
    assert_rejected(&s, &long_key, None, EXTRA_OPTIONS_BOUNDS_MESSAGE);
    let long_value = store(json!({"extraOptions": {"timeout": "9".repeat(1025)}}));
    assert_rejected(&s, &long_value, None, EXTRA_OPTIONS_BOUNDS_MESSAGE);
}

/// Every `x-kubernetes-validations` rule in a schema, with the schema node it sits on.
fn rules_with_nodes(node: &Value, out: &mut Vec<(String, Value)>) {
    if let Some(rules) = node
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
    {
        for rule in rules {
            out.push((rule["rule"].as_str().unwrap().to_string(), node.clone()));
        }
    }
    match node {
        Value::Object(map) => map.values().for_each(|v| rules_with_nodes(v, out)),
        Value::Array(items) => items.iter().for_each(|v| rules_with_nodes(v, out)),
        _ => {}
    }
}

/// Variables a rule binds through a comprehension macro (`all`, `exists`, `map`, ...).
fn comprehension_variables(rule: &str) -> Vec<String> {
    ["all(", "exists(", "exists_one(", "map(", "filter("]
        .iter()
        .flat_map(|m| {
            rule.match_indices(m)
                .map(move |(i, _)| &rule[i + m.len()..])
        })
        .filter_map(|rest| rest.split(',').next().map(|v| v.trim().to_string()))
        .collect()
}

#[test]
fn every_rule_compiles_uses_only_crd_variables_and_fits_the_cost_budget() {
    for schema in [barbican_schema(), store_schema()] {
        let compiled = compile_schema(&schema);
        assert!(
            !compiled.has_errors(),
            "{:?}",
            compiled.compilation_errors()
        );
        let mut rules = Vec::new();
        rules_with_nodes(&schema, &mut rules);
        assert!(!rules.is_empty());
        for (rule, node) in rules {
            let bound = comprehension_variables(&rule);
            let warnings = analyze_rule(&rule, &compile_schema(&node), ScopeContext::CrdValidation);
            let serious: Vec<_> = warnings
                .iter()
                .filter(|w| match w.kind {
                    WarningKind::CostExceeded => true,
                    // The analyzer does not know macro-bound variables (`self.all(k, ...)`).
                    WarningKind::WrongScope => !bound
                        .iter()
                        .any(|v| w.message.contains(&format!("variable '{v}'"))),
                    _ => false,
                })
                .collect();
            assert!(serious.is_empty(), "{rule}: {serious:?}");
        }
    }
}

#[test]
fn the_crds_carry_the_rules_the_spec_calls_schema_level() {
    let mut rules = Vec::new();
    rules_with_nodes(&barbican_schema(), &mut rules);
    rules_with_nodes(&store_schema(), &mut rules);
    let rules: Vec<String> = rules.into_iter().map(|(r, _)| r).collect();
    for expected in [
        IMAGE_TAG_XOR_DIGEST_RULE,
        DATABASE_CLUSTER_REF_XOR_HOST_RULE,
        DATABASE_DYNAMIC_REQUIRES_CLUSTER_REF_RULE,
        CACHE_CLUSTER_REF_XOR_SERVERS_RULE,
        UWSGI_KEEPALIVE_TIMEOUT_RULE,
        TARGET_CLUSTER_REF_IMMUTABLE_RULE,
        POLICY_RULES_OR_CONFIGMAP_RULE,
        BARBICAN_REF_IMMUTABLE_RULE,
        TYPE_IMMUTABLE_RULE,
        TYPE_UNION_RULE,
        EXTRA_OPTIONS_BOUNDS_RULE,
        OPENBAO_MODE_UNION_RULE,
        OPENBAO_MANAGED_PIN_RULE,
        KV_MOUNTPOINT_IMMUTABLE_RULE,
        OPENBAO_MODE_FROZEN_RULE,
        AUDIT_TRANSPORT_RULE,
        TLS_SOURCE_RULE,
        TLS_DNS_NAMES_RULE,
        OPTION_NAMES_RULE,
        SECTION_NAMES_RULE,
    ] {
        assert!(
            rules.iter().any(|r| r == expected),
            "missing rule {expected}"
        );
    }
    // The option-name rule sits on every INI section's schema: the plugins' config and each
    // extraConfig section. Values are held by a pattern (below), not a rule.
    assert_eq!(
        rules.len(),
        21,
        "a rule was added without a test: {rules:?}"
    );
}

#[test]
fn the_cost_check_catches_an_unbounded_nested_comprehension() {
    // Without maxItems the estimator must assume the worst; a nested comprehension over an
    // unbounded list of unbounded strings is what the budget exists to refuse.
    let node = json!({"type": "array", "items": {"type": "string"}});
    let rule = "self.all(a, self.all(b, self.all(c, a + b + c != '')))";
    let warnings = analyze_rule(rule, &compile_schema(&node), ScopeContext::CrdValidation);
    assert!(
        warnings.iter().any(|w| w.kind == WarningKind::CostExceeded),
        "{warnings:?}"
    );
    // The same rule over a bounded list fits.
    let bounded =
        json!({"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 8}});
    let warnings = analyze_rule(rule, &compile_schema(&bounded), ScopeContext::CrdValidation);
    assert!(
        !warnings.iter().any(|w| w.kind == WarningKind::CostExceeded),
        "{warnings:?}"
    );
}

/// Names and values built around the code points that matter (every one below U+0250, and
/// every Unicode whitespace, separator and a few astral and look-alike ones), leading,
/// trailing, inside, and alone. The differential check against oslo.config itself
/// (tests/tests/it/oslo_grammar.rs) takes every code point.
fn grammar_probes() -> Vec<String> {
    let mut probes = Vec::new();
    let interesting = (0u32..0x250)
        .chain([
            0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0x212a, 0xfeff,
        ])
        .chain(0x2000..=0x200a)
        .chain([0x1_0000, 0x10_ffff])
        .filter_map(char::from_u32);
    for c in interesting {
        probes.push(format!("log_config_append{c}"));
        probes.push(format!("{c}log_config_append"));
        probes.push(format!("a{c}b"));
        probes.push(c.to_string());
    }
    probes.extend(
        [
            "\u{1c}\u{1d}x\u{1e}\u{1f}",
            "secretstore:a-b.c",
            "secretstore:A",
            "secretstore:",
        ]
        .map(String::from),
    );
    probes
}

#[test]
fn the_schemas_grammar_rules_admit_exactly_what_the_webhook_and_renderer_admit() {
    // spec.extraConfig's own schema, every probe as an option name, a value and a section
    // name: the rule's verdict must equal the Rust grammar's.
    let schema = barbican_schema()["properties"]["spec"]["properties"]["extraConfig"].clone();
    for probe in grammar_probes() {
        let checks = [
            (
                json!({"DEFAULT": {probe.clone(): "v"}}),
                config_grammar::option_name_problem(&probe),
                config_grammar::OPTION_NAMES_MESSAGE,
            ),
            (
                json!({probe.clone(): {"debug": "v"}}),
                config_grammar::section_name_problem(&probe),
                config_grammar::SECTION_NAMES_MESSAGE,
            ),
        ];
        for (object, rust, message) in checks {
            let refused = cel_failures(&schema, &object, None)
                .iter()
                .any(|(_, m)| m == message);
            assert_eq!(
                refused,
                rust.is_some(),
                "{probe:?}: the schema refuses it: {refused}, the webhook: {rust:?}"
            );
        }
    }
}

/// The value schemas of every INI section a tenant writes: the plugins' config, each
/// extraConfig section, the store's extraOptions.
fn option_value_schemas() -> Vec<(&'static str, Value)> {
    let barbican = barbican_schema()["properties"]["spec"]["properties"].clone();
    let store = store_schema()["properties"]["spec"]["properties"].clone();
    vec![
        (
            "spec.extraConfig.<section>.<option>",
            barbican["extraConfig"]["additionalProperties"]["additionalProperties"].clone(),
        ),
        (
            "spec.plugins[].config.<option>",
            barbican["plugins"]["items"]["properties"]["config"]["additionalProperties"].clone(),
        ),
        (
            "spec.extraOptions.<option>",
            store["extraOptions"]["additionalProperties"].clone(),
        ),
    ]
}

#[test]
fn the_schemas_value_pattern_admits_exactly_what_the_webhook_and_renderer_admit() {
    // A pattern, which the API server checks with RE2 and the sim with the regex crate (the
    // same syntax for these classes), on every value schema a tenant writes.
    for (field, schema) in option_value_schemas() {
        let pattern = schema["pattern"]
            .as_str()
            .unwrap_or_else(|| panic!("{field} has no pattern: {schema}"));
        assert_eq!(schema["type"], "string", "{field}");
        let pattern = regex::Regex::new(pattern).unwrap();
        for probe in grammar_probes() {
            let refused = !pattern.is_match(&probe);
            let rust = config_grammar::value_problem(&probe).filter(|p| p.contains("control"));
            assert_eq!(
                refused,
                rust.is_some(),
                "{field}: {probe:?}: the schema refuses it: {refused}, the webhook: {rust:?}"
            );
        }
    }
}

#[test]
fn no_rule_iterates_the_values_of_a_map_nested_in_a_map() {
    // kube-apiserver multiplies a rule's estimated cost by the largest number of times it can
    // run (the product of every enclosing maxItems and maxProperties): a rule over a section's
    // 128 values inside 64 sections was estimated twelve times over the budget and the CRD did
    // not install, while the client-side estimate above thought it cheap. So no rule below a
    // map or list reads the values of the map it sits on with a string function.
    for schema in [barbican_schema(), store_schema()] {
        let mut rules = Vec::new();
        rules_with_nodes(&schema, &mut rules);
        for (rule, _) in rules {
            assert!(
                !(rule.contains("self[k].matches") || rule.contains("self[k].contains")),
                "{rule}: a per-value string function belongs in the value schema's pattern"
            );
        }
    }
}
