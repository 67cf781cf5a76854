//! Tests of `barbican_features::admission`.

use barbican_features::admission::*;
use barbican_sim::tokens::base64;

#[test]
fn the_rendered_configurations_name_one_service_and_get_the_harness_ca() {
    let configurations = configurations().unwrap();
    let kinds: Vec<_> = configurations
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration"
        ]
    );
    assert_eq!(
        service_of(&configurations).unwrap(),
        ("barbican-system".into(), "barbican-operator-webhook".into())
    );
    let trusted = trusting(configurations[0].clone(), "PEM");
    for webhook in trusted["webhooks"].as_array().unwrap() {
        assert_eq!(webhook["clientConfig"]["caBundle"], base64(b"PEM"));
        assert!(
            webhook["matchConditions"].is_array(),
            "the chart's matchConditions are kept"
        );
    }
}
