//! Server-side field validation through kube-rs: Strict refuses a field the type does not
//! declare, naming it; Warn (the default) and Ignore store the object without it.

use barbican_operator::api::{Barbican, fixtures::minimal_barbican};
use barbican_sim::Cluster;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, CustomResourceExt,
    api::{Patch, PatchParams, ValidationDirective},
};
use serde_json::json;

#[tokio::test]
async fn strict_refuses_an_undeclared_field_of_a_custom_resource_and_warn_prunes_it() {
    let cluster = Cluster::new();
    cluster
        .install_crd(serde_json::to_value(Barbican::crd()).unwrap())
        .unwrap();
    let barbicans: Api<Barbican> = Api::namespaced(cluster.client(), "default");
    let mut object = minimal_barbican();
    object["metadata"] = json!({"name": "b", "namespace": "default"});
    object["spec"]["deployment"] = json!({"replicaz": 3});
    let strict = PatchParams::apply("test").validation(ValidationDirective::Strict);
    match barbicans.patch("b", &strict, &Patch::Apply(&object)).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 400, "{status:?}");
            assert_eq!(
                status.message,
                "strict decoding error: unknown field \"spec.deployment.replicaz\""
            );
        }
        other => panic!("Strict must refuse, got {other:?}"),
    }
    assert!(barbicans.get_opt("b").await.unwrap().is_none());
    let warn = PatchParams::apply("test").validation(ValidationDirective::Warn);
    let stored = barbicans
        .patch("b", &warn, &Patch::Apply(&object))
        .await
        .unwrap();
    let stored = serde_json::to_value(stored).unwrap();
    assert!(stored["spec"]["deployment"].get("replicaz").is_none());
}

#[tokio::test]
async fn strict_refuses_an_undeclared_field_of_a_built_in_kind() {
    let maps: Api<ConfigMap> = Api::namespaced(Cluster::new().client(), "default");
    let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "m"}, "datum": {"k": "v"}});
    let strict = PatchParams::apply("test").validation(ValidationDirective::Strict);
    match maps.patch("m", &strict, &Patch::Apply(&object)).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 400, "{status:?}");
            assert!(
                status
                    .message
                    .ends_with("strict decoding error: unknown field \"datum\""),
                "{}",
                status.message
            );
        }
        other => panic!("Strict must refuse, got {other:?}"),
    }
    let ignore = PatchParams::apply("test").validation(ValidationDirective::Ignore);
    maps.patch("m", &ignore, &Patch::Apply(&object))
        .await
        .unwrap();
    let stored = serde_json::to_value(maps.get("m").await.unwrap()).unwrap();
    assert!(stored.get("datum").is_none(), "{stored}");
}

/// A body that repeats a key: Strict refuses it naming the path, as kube-apiserver's strict
/// decoder does; Warn stores the last value and says so in a `Warning` header.
#[tokio::test]
async fn a_repeated_key_is_refused_under_strict_and_warned_about_under_warn() {
    let cluster = Cluster::new();
    let client = cluster.client();
    let body = br#"{"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "dup"}, "data": {"a": "1", "a": "2"}}"#;
    let post = |validation: &str| {
        axum::http::Request::post(format!(
            "/api/v1/namespaces/default/configmaps?fieldValidation={validation}"
        ))
        .header("content-type", "application/json")
        .body(body.to_vec())
        .unwrap()
    };
    let refused = client
        .request::<ConfigMap>(post("Strict"))
        .await
        .unwrap_err();
    match refused {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 400);
            assert_eq!(
                status.message,
                "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: duplicate field \"data.a\""
            );
        }
        other => panic!("{other:?}"),
    }
    let response = client.send(post("Warn").map(Into::into)).await.unwrap();
    let warning = response
        .headers()
        .get("warning")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(
        warning.starts_with("299 - ")
            && warning.contains("duplicate field")
            && warning.contains("data.a"),
        "{warning}"
    );
    let stored = Api::<ConfigMap>::namespaced(client, "default")
        .get("dup")
        .await
        .unwrap();
    assert_eq!(stored.data.unwrap()["a"], "2");
}

/// A body that does not decode as an object (an array, a string, `metadata` or its labels of
/// the wrong JSON type) is a 400 naming what is wrong, through every verb that takes a body,
/// as kube-apiserver's decoder refuses it; the stored object is untouched and the server
/// keeps answering (the handlers used to index into such bodies and panic).
#[tokio::test]
async fn a_body_that_is_not_an_object_is_refused_by_every_writing_verb() {
    let cluster = Cluster::new();
    let client = cluster.client();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    maps.create(
        &Default::default(),
        &serde_json::from_value(json!({"metadata": {"name": "c", "labels": {"a": "b"}}})).unwrap(),
    )
    .await
    .unwrap();
    let base = "/api/v1/namespaces/default/configmaps";
    for (body, names) in [
        ("[]", "not a JSON object"),
        ("\"x\"", "not a JSON object"),
        (r#"{"metadata": "x"}"#, "metadata must be an object"),
        (
            r#"{"metadata": {"name": "c", "labels": "x"}}"#,
            "metadata.labels",
        ),
        (r#"{"metadata": {"name": 7}}"#, "metadata.name"),
    ] {
        for (method, uri, content_type) in [
            ("POST", base.to_string(), "application/json"),
            ("PUT", format!("{base}/c"), "application/json"),
            ("PATCH", format!("{base}/c"), "application/merge-patch+json"),
            (
                "PATCH",
                format!("{base}/c?fieldManager=t"),
                "application/apply-patch+yaml",
            ),
        ] {
            let request = axum::http::Request::builder()
                .method(method)
                .uri(&uri)
                .header("content-type", content_type)
                .body(body.as_bytes().to_vec())
                .unwrap();
            match client.request::<ConfigMap>(request).await {
                Err(kube::Error::Api(status)) => {
                    assert_eq!(status.code, 400, "{method} {uri} {body}: {status:?}");
                    assert!(
                        status.message.contains(names),
                        "{method} {uri} {body}: {}",
                        status.message
                    );
                }
                other => panic!("{method} {uri} {body}: {other:?}"),
            }
        }
    }
    let stored = maps.get("c").await.unwrap();
    assert_eq!(
        stored
            .metadata
            .labels
            .unwrap_or_default()
            .get("a")
            .map(String::as_str),
        Some("b")
    );
}
