//! The admission and rendering properties of `barbican_operator::properties` over generated
//! input: arbitrary bodies and JSON for the webhooks, and the full example with its free-text
//! fields and `extraConfig` options (names from the release's catalog) drawn at random,
//! including newlines, separators and surrounding whitespace. `fuzz/` runs the same
//! properties on arbitrary bytes.

use barbican_operator::properties::{
    admitted, admitted_barbicans_render_faithfully, admitted_options_read_back, create_review,
    every_body_is_answered,
};
use barbican_tests::workspace_root;
use proptest::prelude::*;
use serde_json::{Value, json};

/// Text with what can break an INI line or a URL: separators, brackets, whitespace at either
/// end, line breaks, and non-ASCII.
fn tricky_text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-z0-9 =:;#\\[\\]\t\n\r/._é中-]{0,24}").unwrap()
}

/// A JSON value of any shape, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        tricky_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(tricky_text(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// `[section] option` names of the 2026.1 catalog (what the webhook admits in extraConfig).
fn catalog_options() -> Vec<(String, String)> {
    let catalog = barbican_operator::admission::catalog::for_release("2026.1").unwrap();
    catalog
        .sections
        .iter()
        .flat_map(|(section, s)| s.options.keys().map(move |o| (section.clone(), o.clone())))
        .collect()
}

/// The full example, placed locally and without a PriorityClass (no lookups answer here).
fn full_example() -> Value {
    let text = std::fs::read_to_string(workspace_root().join("deploy/examples/barbican-full.yaml"))
        .unwrap();
    let mut object: Value = serde_saphyr::from_str(&text).unwrap();
    let spec = object["spec"].as_object_mut().unwrap();
    spec.remove("targetClusterRef");
    spec["deployment"]
        .as_object_mut()
        .unwrap()
        .remove("priorityClassName");
    object
}

/// Text of the characters Rust's and Python's trimming and oslo.config's parser treat
/// specially: every control character, Unicode's whitespace and separators, quotes, the
/// separators of the INI syntax, and a few identifier characters to hold them together.
fn ini_text() -> impl Strategy<Value = String> {
    proptest::string::string_regex(
        "[a-z_\\-'\"=:#;\\[\\] \\x00-\\x1f\\x7f-\\xa0\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}é]{0,8}",
    )
    .unwrap()
}

/// A name that starts as an identifier would, so the grammar admits some of them.
fn ini_name() -> impl Strategy<Value = String> {
    (
        proptest::string::string_regex("[A-Za-z_]{0,3}").unwrap(),
        ini_text(),
    )
        .prop_map(|(head, tail)| head + &tail)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn admitted_config_names_and_values_read_back_as_written(
        section in ini_name(),
        key in ini_name(),
        value in ini_text(),
    ) {
        prop_assert_eq!(admitted_options_read_back(&section, &key, &value), Ok(()));
    }

    #[test]
    fn any_bytes_are_answered(body in prop::collection::vec(any::<u8>(), 0..512)) {
        prop_assert_eq!(every_body_is_answered(&body), Ok(()));
    }

    #[test]
    fn any_object_in_a_review_is_answered(object in json_value()) {
        prop_assert_eq!(every_body_is_answered(&create_review(&object)), Ok(()));
    }

    #[test]
    fn admitted_barbicans_render_what_they_say(
        options in prop::collection::vec((0usize..10_000, tricky_text()), 0..5),
        region in tricky_text(),
        host in tricky_text(),
        middleware_value in tricky_text(),
        policy_rule in tricky_text(),
    ) {
        let catalog = catalog_options();
        let mut object = full_example();
        for (pick, value) in options {
            let (section, option) = &catalog[pick % catalog.len()];
            object["spec"]["extraConfig"][section][option] = json!(value);
        }
        object["spec"]["region"] = json!(region);
        object["spec"]["keystonePublicEndpoint"] = json!(format!("https://{host}/v3"));
        object["spec"]["middleware"][0]["config"]["max_request_body_size"] = json!(middleware_value);
        object["spec"]["policyOverrides"]["rules"]["secrets:get"] = json!(policy_rule);
        prop_assert_eq!(admitted_barbicans_render_faithfully(&object), Ok(()));
    }
}

#[test]
fn the_unchanged_example_is_admitted_and_renders() {
    let object = full_example();
    assert!(
        admitted(&object).unwrap().is_some(),
        "the generator starts from an admitted object"
    );
    assert_eq!(admitted_barbicans_render_faithfully(&object), Ok(()));
}

#[test]
fn separators_inside_an_option_value_are_admitted_and_written_as_they_are() {
    let mut object = full_example();
    object["spec"]["extraConfig"]["DEFAULT"]["max_allowed_secret_in_bytes"] =
        json!("a = b: c ; # [d] é");
    assert!(
        admitted(&object).unwrap().is_some(),
        "nothing the webhook refuses"
    );
    assert_eq!(admitted_barbicans_render_faithfully(&object), Ok(()));
    let mut spilled = full_example();
    spilled["spec"]["extraConfig"]["DEFAULT"]["max_allowed_secret_in_bytes"] =
        json!("1\n[database]\nconnection = sqlite://");
    assert_eq!(
        admitted(&spilled).unwrap(),
        None,
        "a line break is refused at admission"
    );
}
