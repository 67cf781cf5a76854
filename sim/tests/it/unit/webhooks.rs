//! Tests of `barbican_sim::webhooks`.

use std::time::Duration;

use rustls::pki_types::CertificateDer;
use serde_json::Value;
use serde_json::json;

use barbican_sim::webhooks::*;

#[test]
fn a_certificate_is_within_its_validity_only_between_its_dates() {
    let mut params = rcgen::CertificateParams::new(vec!["x.svc".to_string()]).unwrap();
    params.not_before = rcgen::date_time_ymd(2020, 1, 1);
    params.not_after = rcgen::date_time_ymd(2021, 1, 1);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    let der = CertificateDer::from(cert.der().to_vec());
    let at = |seconds| rustls::pki_types::UnixTime::since_unix_epoch(Duration::from_secs(seconds));
    assert!(within_validity(&der, at(1_600_000_000)), "September 2020");
    assert!(!within_validity(&der, at(1_700_000_000)), "November 2023");
    assert!(!within_validity(&der, at(1_500_000_000)), "July 2017");
    assert!(!within_validity(
        &CertificateDer::from(vec![0u8; 4]),
        at(1_600_000_000)
    ));
}

fn request<'a>(operation: &'a str, object: &'a Value, ns_labels: &'a Value) -> Request<'a> {
    Request {
        group: "barbican.openstack.c5c3.io",
        version: "v1alpha1",
        kind: "Barbican",
        resource: "barbicans",
        subresource: None,
        operation,
        namespaced: true,
        namespace: "openstack",
        name: "barbican",
        namespace_labels: ns_labels,
        object: Some(object),
        old: None,
        dry_run: false,
    }
}

fn configuration(webhook: Value) -> Value {
    let mut hook = json!({
        "name": "vbarbican.kb.io",
        "clientConfig": {"service": {"name": "webhook", "namespace": "barbican-system", "path": "/validate"}},
        "rules": [{"apiGroups": ["barbican.openstack.c5c3.io"], "apiVersions": ["v1alpha1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["barbicans"]}],
    });
    json_patch::merge(&mut hook, &webhook);
    json!({"metadata": {"name": "barbican"}, "webhooks": [hook]})
}

#[test]
fn match_conditions_skip_a_webhook_as_kube_apiserver_does() {
    let spec_changes = json!({"matchConditions": [{
        "name": "spec-changes",
        "expression": "request.operation != 'UPDATE' || object.spec != oldObject.spec"
    }]});
    let old = json!({"metadata": {"name": "kms"}, "spec": {"replicas": 3}});
    let finalizer_dropped =
        json!({"metadata": {"name": "kms", "finalizers": []}, "spec": {"replicas": 3}});
    let scaled = json!({"metadata": {"name": "kms"}, "spec": {"replicas": 5}});
    let labels = json!({});
    let update = |object| Request {
        old: Some(&old),
        ..request("UPDATE", object, &labels)
    };
    assert!(!conditions_hold(&spec_changes, &update(&finalizer_dropped)));
    assert!(conditions_hold(&spec_changes, &update(&scaled)));
    assert!(conditions_hold(
        &spec_changes,
        &request("CREATE", &scaled, &labels)
    ));
    assert!(conditions_hold(&json!({}), &update(&finalizer_dropped)));
}

#[test]
fn rules_select_by_group_version_operation_resource_and_scope() {
    let object = json!({"metadata": {"labels": {"tier": "api"}}});
    let labels = json!({"team": "cloud"});
    let hooks = |webhook: Value, operation: &str| {
        matching(
            &[configuration(webhook)],
            false,
            &request(operation, &object, &labels),
        )
        .len()
    };
    assert_eq!(hooks(json!({}), "CREATE"), 1);
    assert_eq!(hooks(json!({}), "DELETE"), 0);
    assert_eq!(
        hooks(
            json!({"rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}]}),
            "DELETE"
        ),
        1
    );
    assert_eq!(
        hooks(
            json!({"rules": [{"apiGroups": ["apps"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}]}),
            "CREATE"
        ),
        0
    );
    assert_eq!(
        hooks(
            json!({"rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["barbicans/status"]}]}),
            "CREATE"
        ),
        0,
        "a status rule does not cover the main resource"
    );
    assert_eq!(
        hooks(
            json!({"rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"], "scope": "Cluster"}]}),
            "CREATE"
        ),
        0
    );
}

#[test]
fn namespace_and_object_selectors_filter() {
    let object = json!({"metadata": {"labels": {"tier": "api"}}});
    let labels = json!({"team": "cloud"});
    let hooks = |webhook: Value| {
        matching(
            &[configuration(webhook)],
            false,
            &request("CREATE", &object, &labels),
        )
        .len()
    };
    assert_eq!(
        hooks(json!({"namespaceSelector": {"matchLabels": {"team": "cloud"}}})),
        1
    );
    assert_eq!(
        hooks(json!({"namespaceSelector": {"matchLabels": {"team": "other"}}})),
        0
    );
    assert_eq!(
        hooks(
            json!({"objectSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["api"]}]}})
        ),
        1
    );
    assert_eq!(
        hooks(
            json!({"objectSelector": {"matchExpressions": [{"key": "seed", "operator": "Exists"}]}})
        ),
        0
    );
}

#[test]
fn service_and_url_client_configs_resolve_to_targets() {
    let hook = &matching(
        &[configuration(
            json!({"timeoutSeconds": 60, "failurePolicy": "Ignore"}),
        )],
        true,
        &request("CREATE", &json!({}), &json!({})),
    )[0];
    assert_eq!(hook.target.host, "webhook.barbican-system.svc");
    assert_eq!(hook.target.port, 443);
    assert_eq!(hook.timeout, Duration::from_secs(30), "capped at 30 s");
    assert!(!hook.fail_closed);
    assert_eq!(
        hook.target.url(hook.timeout),
        "https://webhook.barbican-system.svc:443/validate?timeout=30s"
    );
    let by_url = target(&json!({"clientConfig": {"url": "https://127.0.0.1:9443/v"}})).unwrap();
    assert_eq!(
        (by_url.host.as_str(), by_url.port, by_url.path.as_str()),
        ("127.0.0.1", 9443, "/v")
    );
}

#[test]
fn patches_are_read_as_go_reads_byte_fields() {
    let patch = br#"[{"op":"add","path":"/a","value":1}]"#;
    assert_eq!(
        bytes(&json!(barbican_sim::tokens::base64(patch))).unwrap(),
        patch
    );
    let numbers: Vec<u8> = patch.to_vec();
    assert_eq!(bytes(&json!(numbers)).unwrap(), patch);
    assert_eq!(bytes(&json!(5)), None);
}
