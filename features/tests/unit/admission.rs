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

#[test]
fn on_a_real_api_server_each_webhook_calls_the_server_by_url_at_its_path() {
    let addr: std::net::SocketAddr = "127.0.0.1:41234".parse().unwrap();
    for configuration in configurations().unwrap() {
        let paths: Vec<String> = configuration["webhooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                w["clientConfig"]["service"]["path"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let mut by = trusting(configuration, "PEM");
        by_url(&mut by, addr);
        let webhooks = by["webhooks"].as_array().unwrap();
        assert_eq!(webhooks.len(), paths.len());
        for (webhook, path) in webhooks.iter().zip(paths) {
            let client = &webhook["clientConfig"];
            assert_eq!(client["url"], format!("https://127.0.0.1:41234{path}"));
            assert!(client.get("service").is_none(), "{client}");
            assert_eq!(client["caBundle"], base64(b"PEM"), "the CA is kept");
        }
    }
}
