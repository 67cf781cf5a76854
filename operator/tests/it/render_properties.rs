//! Properties of rendering, over hostile input in every user-controlled string: for any spec
//! (and store) the webhook admits, the rendered files read back with rust-ini hold exactly the
//! intended sections, keys and values, and nothing else; and the content hash does not depend
//! on the order the stores arrive in. 10,000 cases by default (`PROPTEST_CASES` overrides).

use std::collections::BTreeMap;

use barbican_operator::{
    admission::{
        barbican::validate_barbican, lookups::KnownState, secret_store::validate_secret_store,
        verdict::Operation,
    },
    api::{
        Barbican, BarbicanSecretStore,
        fixtures::{managed_store, minimal_barbican, with_spec},
    },
    render::{self, Inputs, ProjectedStore, barbican_conf, ini::Ini},
};
use ini::{Ini as Reader, ParseOption};
use proptest::{collection::btree_map, option, prelude::*, test_runner::TestCaseError};
use serde_json::{Value, json};

/// Characters that matter to INI syntax, plus enough ordinary ones to make valid names.
fn hostile() -> impl Strategy<Value = String> {
    proptest::string::string_regex(r"[a-z_ =:\[\]#;\n\r./-]{0,6}").unwrap()
}

/// A name that is usually one well-formed word, sometimes hostile.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![8 => "[a-z][a-z0-9_.-]{0,7}", 1 => hostile()]
}

/// Mostly names barbican knows (so the catalog admits them), sometimes hostile ones.
fn section() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => prop_oneof![Just("DEFAULT"), Just("database"), Just("oslo_messaging_notifications"), Just("keystone_authtoken")]
            .prop_map(String::from),
        1 => hostile(),
    ]
}

fn option_name() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => prop_oneof![
            Just("debug"), Just("max_retries"), Just("driver"), Just("transport_url"), Just("host_href"),
            Just("region_name"), Just("memcache_pool_maxsize"), Just("max_pool_size")
        ]
        .prop_map(String::from),
        1 => hostile(),
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![8 => "[a-zA-Z0-9:/@?=.,#;_-]{1,12}", 1 => hostile()]
}

fn identity() -> impl Strategy<Value = Option<String>> {
    option::of(prop_oneof![8 => "[A-Za-z0-9_-]{1,10}", 1 => hostile()])
}

prop_compose! {
    fn spec_patch()(
        extra in btree_map(section(), btree_map(option_name(), value(), 0..3), 0..3),
        region in identity(),
        username in identity(),
        project in identity(),
        hostname in option::of(prop_oneof![3 => "[a-z]{1,8}\\.example\\.com", 1 => hostile()]),
        middleware in proptest::collection::vec((token(), value(), any::<bool>(), btree_map(option_name(), value(), 0..2)), 0..2),
        plugins in proptest::collection::vec((token(), btree_map(option_name(), value(), 0..2)), 0..2),
    ) -> Value {
        let mut patch = json!({"extraConfig": extra});
        if let Some(region) = region { patch["region"] = json!(region); }
        if let Some(username) = username { patch["serviceUser"] = json!({"username": username}); }
        if let Some(project) = project { patch["serviceUser"]["projectName"] = json!(project); }
        if let Some(hostname) = hostname { patch["gateway"] = json!({"hostname": hostname, "parentRef": {"name": "gw"}}); }
        patch["middleware"] = middleware
            .into_iter()
            .map(|(name, factory, before, config)| json!({
                "name": name, "filterFactory": factory, "position": if before { "before" } else { "after" }, "config": config
            }))
            .collect();
        patch["plugins"] = plugins
            .into_iter()
            .enumerate()
            .map(|(i, (section, config))| json!({"name": format!("p{i}"), "configSection": section, "config": config}))
            .collect();
        patch
    }
}

fn parse(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let options = ParseOption {
        enabled_quote: false,
        enabled_escape: false,
        ..ParseOption::default()
    };
    let reader = Reader::load_from_str_opt(text, options).expect("rendered files parse");
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (section, properties) in reader.iter() {
        let Some(section) = section else {
            // rust-ini always reports the general section; a property there would be a line
            // outside every section.
            assert!(properties.is_empty(), "a line outside every section");
            continue;
        };
        let section = section.to_string();
        let target = out.entry(section.clone()).or_default();
        for (key, value) in properties.iter() {
            assert!(
                target.insert(key.to_string(), value.to_string()).is_none(),
                "[{section}] {key} appears twice"
            );
        }
    }
    out
}

fn count_options(text: &str) -> usize {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('['))
        .count()
}

/// Checks one case; `Ok(true)` when it was admitted and rendered, `Ok(false)` when refused.
fn check(
    spec_patch: Value,
    extra_options: BTreeMap<String, String>,
) -> Result<bool, TestCaseError> {
    let barbican: Barbican =
        match serde_json::from_value(with_spec(minimal_barbican(), &spec_patch)) {
            Ok(b) => b,
            Err(_) => return Ok(false),
        };
    let store: BarbicanSecretStore = serde_json::from_value(with_spec(
        managed_store(),
        &json!({"extraOptions": extra_options}),
    ))
    .unwrap();
    let admitted = validate_barbican(Operation::Create, None, &barbican, &KnownState::default())
        .allowed()
        && validate_secret_store(Operation::Create, None, &store, &KnownState::default()).allowed();
    if !admitted {
        return Ok(false);
    }
    let mut projected =
        ProjectedStore::managed("openbao-primary", "openbao", "openstack", "role-1", true);
    projected.extra_options = extra_options;
    let other = ProjectedStore::managed("openbao-second", "openbao", "openstack", "role-2", false);
    let inputs = Inputs {
        name: "barbican".into(),
        namespace: "openstack".into(),
        stores: vec![projected.clone(), other.clone()],
        ..Default::default()
    };
    let spec = &barbican.spec;
    let rendered = render::render(spec, &inputs)
        .map_err(|e| TestCaseError::fail(format!("admitted but not renderable: {e}")))?;

    // barbican.conf reads back as exactly the model: plugins < operator sections < extraConfig.
    let conf = &rendered.files[render::BARBICAN_CONF];
    let endpoint = render::endpoint("barbican", "openstack", spec);
    let mut model = barbican_conf::plugin_sections(spec).unwrap();
    model.overlay(
        &barbican_conf::operator_sections(&endpoint, spec, &inputs.stores, false).unwrap(),
    );
    let (extra, _) = barbican_conf::extra_config(spec).unwrap();
    model.overlay(&extra);
    let parsed = parse(conf);
    prop_assert_eq!(&parsed, model.sections());
    prop_assert_eq!(
        count_options(conf),
        model.sections().values().map(|s| s.len()).sum::<usize>(),
        "an extra line appeared"
    );

    // Independently of the model: every extraConfig value lands verbatim, nothing else appears.
    for (section, options) in spec.extra_config.iter().flatten() {
        for (key, value) in options {
            prop_assert_eq!(parsed.get(section).and_then(|s| s.get(key)), Some(value));
        }
    }
    let mut allowed_sections: Vec<String> = [
        "DEFAULT",
        "database",
        "keystone_authtoken",
        "queue",
        "secretstore",
        "secretstore:openbao-primary",
        "secretstore:openbao-second",
        "vault_plugin",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    allowed_sections.extend(spec.extra_config.iter().flatten().map(|(s, _)| s.clone()));
    allowed_sections.extend(
        spec.plugins
            .iter()
            .flatten()
            .map(|p| p.config_section.clone()),
    );
    for section in parsed.keys() {
        prop_assert!(
            allowed_sections.contains(section),
            "unexpected section [{}]",
            section
        );
    }
    if let Some(region) = spec.region.as_ref().filter(|r| !r.is_empty()) {
        let overridden = spec
            .extra_config
            .iter()
            .flatten()
            .any(|(s, o)| s == "keystone_authtoken" && o.contains_key("region_name"));
        if !overridden {
            prop_assert_eq!(
                parsed["keystone_authtoken"].get("region_name"),
                Some(region)
            );
        }
    }
    for key in ["root_token_id", "approle_secret_id"] {
        prop_assert!(
            !parsed
                .get("vault_plugin")
                .is_some_and(|s| s.contains_key(key))
        );
    }

    // The paste file: the keystone pipeline is the base filters with the middleware around them.
    let paste = parse(&rendered.files[render::PASTE_INI]);
    let pipeline: Vec<&str> = paste["pipeline:barbican-api-keystone"]["pipeline"]
        .split(' ')
        .collect();
    let names = |before: bool| -> Vec<&str> {
        spec.middleware
            .iter()
            .flatten()
            .filter(|m| {
                (m.position == barbican_operator::api::paste::PipelinePosition::Before) == before
            })
            .map(|m| m.name.as_str())
            .collect()
    };
    let request_id = render::paste::has_request_id(&spec.open_stack_release).unwrap();
    let mut expected = names(true);
    expected.extend(if request_id {
        vec!["cors", "request_id", "http_proxy_to_wsgi"]
    } else {
        vec!["cors", "http_proxy_to_wsgi"]
    });
    expected.extend(["authtoken", "context", "microversion"]);
    expected.extend(names(false));
    expected.push("apiapp");
    prop_assert_eq!(pipeline, expected);
    for middleware in spec.middleware.iter().flatten() {
        let section = &paste[&format!("filter:{}", middleware.name)];
        prop_assert_eq!(&section["paste.filter_factory"], &middleware.filter_factory);
        for (key, value) in middleware.config.iter().flatten() {
            prop_assert_eq!(section.get(key), Some(value));
        }
    }

    // The hash does not depend on the order stores arrive in.
    let reversed = Inputs {
        stores: vec![other, projected],
        ..inputs
    };
    let again = render::render(spec, &reversed).unwrap();
    prop_assert_eq!(&again.hash, &rendered.hash);
    prop_assert_eq!(&again.files, &rendered.files);
    Ok(true)
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(10_000)
}

#[test]
fn admitted_specs_render_exactly_what_they_say() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use proptest::test_runner::TestRunner;

    let cases = cases();
    let mut runner = TestRunner::new(ProptestConfig {
        cases,
        ..ProptestConfig::default()
    });
    let admitted = AtomicUsize::new(0);
    let extra_options = btree_map(
        prop_oneof![3 => Just("kv_version".to_string()), 1 => hostile()],
        value(),
        0..2,
    );
    runner
        .run(&(spec_patch(), extra_options), |(patch, extra_options)| {
            if check(patch, extra_options)? {
                admitted.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        })
        .unwrap();
    let admitted = admitted.into_inner();
    println!("{admitted} of {cases} generated specs were admitted and rendered");
    // Most cases carry hostile strings the webhook refuses; a property over too few admitted
    // ones would prove little.
    assert!(
        admitted * 10 >= cases as usize,
        "only {admitted} of {cases} cases were admitted"
    );
}

/// A control for the property: hostile strings do reach the renderer's checks, and the webhook
/// refuses the ones that would change the file's structure.
#[test]
fn hostile_strings_are_refused_before_they_reach_a_file() {
    let patch =
        json!({"extraConfig": {"DEFAULT": {"debug": "true\n[vault_plugin]\nroot_token_id = s.x"}}});
    let barbican: Barbican = serde_json::from_value(with_spec(minimal_barbican(), &patch)).unwrap();
    assert!(
        !validate_barbican(Operation::Create, None, &barbican, &KnownState::default()).allowed()
    );
    let error = render::render(&barbican.spec, &Inputs::default()).unwrap_err();
    assert_eq!(error.field, "spec.extraConfig[DEFAULT][debug]");
    let mut model = Ini::new();
    model.set("DEFAULT", "debug", "true\nx");
    assert!(model.render().is_err());
}
