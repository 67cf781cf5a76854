//! What kube-apiserver checks of a write before it lands: the preconditions a write may name
//! and the ownership it may carry (the operator's create-or-claim, a POST and then applies that
//! name the uid they mean, relies on each), and Pod Security Admission.

use barbican_sim::Cluster;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
};
use serde_json::json;

fn config_map(extra: serde_json::Value) -> serde_json::Value {
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
    if let (Some(object), Some(extra)) = (object["metadata"].as_object_mut(), extra.as_object()) {
        object.extend(extra.clone());
    }
    object
}

fn status_code(error: kube::Error) -> (u16, String) {
    match error {
        kube::Error::Api(status) => (status.code, status.message),
        other => panic!("not an API error: {other}"),
    }
}

/// An apply naming a uid lands only on that object: none existing is a conflict (the
/// apply does not create), another object under the name is refused, and the object it
/// names takes it.
#[tokio::test]
async fn an_apply_naming_a_uid_lands_only_on_that_object() {
    let cluster = Cluster::new();
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    let params = PatchParams::apply("op").force();
    let absent = maps
        .patch(
            "c",
            &params,
            &Patch::Apply(&config_map(json!({"uid": "u-1"}))),
        )
        .await
        .map_err(status_code)
        .unwrap_err();
    assert_eq!(absent.0, 409, "{}", absent.1);
    assert!(
        absent.1.contains("no existing object was found"),
        "{}",
        absent.1
    );
    assert!(
        maps.get_opt("c").await.unwrap().is_none(),
        "nothing created"
    );

    let created = maps
        .create(
            &PostParams::default(),
            &serde_json::from_value(config_map(json!({}))).unwrap(),
        )
        .await
        .unwrap();
    let other = maps
        .patch(
            "c",
            &params,
            &Patch::Apply(&config_map(json!({"uid": "u-1"}))),
        )
        .await
        .map_err(status_code)
        .unwrap_err();
    assert_eq!(other.0, 422, "{}", other.1);
    assert!(other.1.contains("metadata.uid"), "{}", other.1);

    let uid = created.metadata.uid.clone().unwrap();
    let mut mine = config_map(json!({"uid": uid}));
    mine["data"]["a"] = json!("changed");
    let applied = maps
        .patch("c", &params, &Patch::Apply(&mine))
        .await
        .unwrap();
    assert_eq!(applied.data.unwrap()["a"], "changed");
}

/// An apply naming a resourceVersion is refused once the object moved on.
#[tokio::test]
async fn an_apply_naming_a_stale_resource_version_is_a_conflict() {
    let cluster = Cluster::new();
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    let params = PatchParams::apply("op").force();
    let first = maps
        .patch("c", &params, &Patch::Apply(&config_map(json!({}))))
        .await
        .unwrap();
    let seen = first.metadata.resource_version.clone().unwrap();
    let mut moved = config_map(json!({}));
    moved["data"]["b"] = json!("3");
    maps.patch("c", &params, &Patch::Apply(&moved))
        .await
        .unwrap();
    let stale = maps
        .patch(
            "c",
            &params,
            &Patch::Apply(&config_map(json!({"resourceVersion": seen}))),
        )
        .await
        .map_err(status_code)
        .unwrap_err();
    assert_eq!(stale.0, 409, "{}", stale.1);
    assert_eq!(maps.get("c").await.unwrap().data.unwrap()["b"], "3");
}

/// Fields a POST created belong to the creator's `Update` entry, so a later apply by the same
/// manager that leaves one out does not remove it; a write carrying managedFields that move
/// them into the `Apply` entry makes the next apply remove it. kube-apiserver takes the
/// managedFields a write carries as the base it records the write's own changes on.
#[tokio::test]
async fn managed_fields_a_write_carries_replace_the_stored_ones() {
    let cluster = Cluster::new();
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    let post = PostParams {
        field_manager: Some("op".into()),
        ..Default::default()
    };
    maps.create(
        &post,
        &serde_json::from_value(config_map(json!({}))).unwrap(),
    )
    .await
    .unwrap();
    let params = PatchParams::apply("op").force();
    let mut without_b = config_map(json!({}));
    without_b["data"].as_object_mut().unwrap().remove("b");
    let kept = maps
        .patch("c", &params, &Patch::Apply(&without_b))
        .await
        .unwrap();
    assert_eq!(
        kept.data.as_ref().unwrap().get("b").map(String::as_str),
        Some("2"),
        "the Update entry still owns b"
    );

    // Move every field of the manager's Update entry into its Apply entry.
    let live = serde_json::to_value(&kept).unwrap();
    let entries = live["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .clone();
    let mut apply_entry = entries
        .iter()
        .find(|e| e["operation"] == "Apply")
        .unwrap()
        .clone();
    let update = entries.iter().find(|e| e["operation"] == "Update").unwrap();
    json_patch::merge(&mut apply_entry["fieldsV1"], &update["fieldsV1"]);
    let patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/resourceVersion",
         "value": live["metadata"]["resourceVersion"]},
        {"op": "replace", "path": "/metadata/managedFields", "value": [apply_entry]}
    ]))
    .unwrap();
    let moved = maps
        .patch("c", &PatchParams::default(), &Patch::<()>::Json(patch))
        .await
        .unwrap();
    let managers: Vec<_> = moved
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| e.operation.clone().unwrap_or_default())
        .collect();
    assert_eq!(managers, ["Apply"], "{moved:?}");

    let removed = maps
        .patch("c", &params, &Patch::Apply(&without_b))
        .await
        .unwrap();
    assert_eq!(removed.data.unwrap().get("b"), None);

    // `[{}]` strips ownership altogether.
    let patch: json_patch::Patch = serde_json::from_value(json!([
        {"op": "replace", "path": "/metadata/managedFields", "value": [{}]}
    ]))
    .unwrap();
    let stripped = maps
        .patch("c", &PatchParams::default(), &Patch::<()>::Json(patch))
        .await
        .unwrap();
    assert!(stripped.metadata.managed_fields.is_none(), "{stripped:?}");
}

/// Pod Security Admission refuses a pod the namespace's level forbids, with kube-apiserver's
/// 403 and message: `baseline` where the namespace names no level, `restricted` where it
/// says so; a hardened pod is admitted in both.
#[tokio::test]
async fn pod_security_admission_refuses_a_pod_its_namespace_forbids() {
    use k8s_openapi::api::core::v1::{Namespace, Pod};
    let cluster = Cluster::new();
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "strict",
                "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}}))
            .unwrap(),
        )
        .await
        .unwrap();
    let pod = |name: &str, security: serde_json::Value| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {
            "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "c", "image": "busybox", "securityContext": security}]}}))
        .unwrap()
    };
    let unconfined = pod(
        "escape",
        json!({"capabilities": {"add": ["ALL"]}, "seccompProfile": {"type": "Unconfined"}}),
    );
    let default: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let (code, message) = default
        .create(&PostParams::default(), &unconfined)
        .await
        .map_err(status_code)
        .unwrap_err();
    assert_eq!(code, 403, "{message}");
    assert!(
        message
            .starts_with("pods \"escape\" is forbidden: violates PodSecurity \"baseline:latest\""),
        "{message}"
    );
    let plain = pod("plain", json!({}));
    default
        .create(&PostParams::default(), &plain)
        .await
        .expect("baseline admits a plain pod");
    let strict: Api<Pod> = Api::namespaced(cluster.client(), "strict");
    let (code, message) = strict
        .create(&PostParams::default(), &plain)
        .await
        .map_err(status_code)
        .unwrap_err();
    assert_eq!(code, 403);
    assert!(message.contains("restricted:latest"), "{message}");
    assert!(
        message.contains("allowPrivilegeEscalation != false"),
        "{message}"
    );
    let hardened = pod(
        "hardened",
        json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}),
    );
    strict
        .create(&PostParams::default(), &hardened)
        .await
        .expect("restricted admits a hardened pod");
}
