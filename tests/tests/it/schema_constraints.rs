//! The OpenAPI constraints of both CRDs, checked the way the API server checks them: each row
//! mutates a valid object and names the field path and message the structural validation
//! reports (or `None` when the mutation must be admitted).

use barbican_operator::api::{Barbican, BarbicanSecretStore, fixtures};
use barbican_sim::schema;
use kube::CustomResourceExt;
use serde_json::{Value, json};

fn crd_schema<K: CustomResourceExt>() -> Value {
    barbican_operator::crd::open_api_schema::<K>()
}

fn barbican() -> Value {
    fixtures::minimal_barbican()
}

fn store() -> Value {
    // A brownfield store, so the server URL and Secret references are there to constrain.
    fixtures::with_spec(
        fixtures::managed_store(),
        &json!({"openBao": {"instanceRef": null, "server": {
            "url": "https://vault.example.com:8200",
            "credentialsSecretRef": {"name": "vault-approle"}
        }}}),
    )
}

/// Sets `pointer` (a JSON pointer below the object) to `value`, creating objects on the way.
fn with(mut object: Value, pointer: &str, value: Value) -> Value {
    let mut node = &mut object;
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    for part in &parts[..parts.len() - 1] {
        node = node
            .as_object_mut()
            .unwrap()
            .entry(part.to_string())
            .or_insert_with(|| json!({}));
    }
    node.as_object_mut()
        .unwrap()
        .insert(parts[parts.len() - 1].to_string(), value);
    object
}

/// One row: where to write, what, and the expected `(path, message fragment)` or `None`.
type Row = (&'static str, Value, Option<(&'static str, &'static str)>);

fn run(schema: &Value, base: Value, rows: Vec<Row>) {
    for (pointer, value, expected) in rows {
        let object = with(base.clone(), pointer, value.clone());
        let errors = schema::validate(schema, &object, "");
        match expected {
            None => assert!(
                errors.is_empty(),
                "{pointer} = {value}: expected admission, got {errors:?}"
            ),
            Some((path, fragment)) => assert!(
                errors
                    .iter()
                    .any(|e| e.path == path && e.message.contains(fragment)),
                "{pointer} = {value}: expected {path}: …{fragment}…, got {errors:?}"
            ),
        }
    }
}

#[test]
fn barbican_openapi_constraints() {
    let s = crd_schema::<Barbican>();
    run(
        &s,
        barbican(),
        vec![
            ("/spec/openStackRelease", json!("2026.1"), None),
            (
                "/spec/openStackRelease",
                json!("2025.3"),
                Some(("spec.openStackRelease", r"should match '^\d{4}\.[12]$'")),
            ),
            (
                "/spec/openStackRelease",
                json!("2025.1-p1"),
                Some(("spec.openStackRelease", "should match")),
            ),
            (
                "/spec/keystoneEndpoint",
                json!("ftp://keystone"),
                Some(("spec.keystoneEndpoint", "should match '^https?://'")),
            ),
            (
                "/spec/keystoneEndpoint",
                json!(""),
                Some(("spec.keystoneEndpoint", "at least 1 chars long")),
            ),
            (
                "/spec/keystonePublicEndpoint",
                json!("keystone.example.com"),
                Some(("spec.keystonePublicEndpoint", "should match '^https?://'")),
            ),
            (
                "/spec/image/repository",
                json!(""),
                Some(("spec.image.repository", "at least 1 chars long")),
            ),
            (
                "/spec/image/digest",
                json!("sha256:xyz"),
                Some(("spec.image.digest", "should match")),
            ),
            ("/spec/database/credentialsMode", json!("Dynamic"), None),
            (
                "/spec/database/credentialsMode",
                json!("Rotating"),
                Some((
                    "spec.database.credentialsMode",
                    "supported values: \"Static\", \"Dynamic\"",
                )),
            ),
            (
                "/spec/database/port",
                json!(0),
                Some(("spec.database.port", "greater than or equal to 1")),
            ),
            (
                "/spec/database/port",
                json!(65536),
                Some(("spec.database.port", "less than or equal to 65535")),
            ),
            (
                "/spec/database/database",
                json!("bar-bican"),
                Some(("spec.database.database", "should match")),
            ),
            (
                "/spec/database/secretRef/name",
                json!(""),
                Some(("spec.database.secretRef.name", "at least 1 chars long")),
            ),
            (
                "/spec/database/secretRef/name",
                json!("Barbican_DB"),
                Some(("spec.database.secretRef.name", "should match")),
            ),
            (
                "/spec/database/clusterRef/name",
                json!(""),
                Some(("spec.database.clusterRef.name", "at least 1 chars long")),
            ),
            (
                "/spec/database/tls",
                json!({"mode": "verify-all", "caBundleSecretRef": {"name": "ca"}, "clientCertSecretRef": {"name": "c"}}),
                Some(("spec.database.tls.mode", "Unsupported value")),
            ),
            (
                "/spec/database/storageSize",
                json!("100G"),
                Some(("spec.database.storageSize", "should match")),
            ),
            (
                "/spec/cache/clusterRef/name",
                json!(""),
                Some(("spec.cache.clusterRef.name", "at least 1 chars long")),
            ),
            (
                "/spec/serviceUser/secretRef/name",
                json!(""),
                Some(("spec.serviceUser.secretRef.name", "at least 1 chars long")),
            ),
            (
                "/spec/deployment",
                json!({"replicas": 0}),
                Some(("spec.deployment.replicas", "greater than or equal to 1")),
            ),
            (
                "/spec/deployment",
                json!({"preStopSleepSeconds": -1}),
                Some((
                    "spec.deployment.preStopSleepSeconds",
                    "greater than or equal to 0",
                )),
            ),
            (
                "/spec/apiServer",
                json!({"uwsgi": {"processes": 0}}),
                Some((
                    "spec.apiServer.uwsgi.processes",
                    "greater than or equal to 1",
                )),
            ),
            (
                "/spec/apiServer",
                json!({"uwsgi": {"httpKeepAliveTimeout": 0}}),
                Some((
                    "spec.apiServer.uwsgi.httpKeepAliveTimeout",
                    "greater than or equal to 1",
                )),
            ),
            (
                "/spec/dbClean",
                json!({"retentionDays": 0}),
                Some(("spec.dbClean.retentionDays", "greater than or equal to 1")),
            ),
            (
                "/spec/autoscaling",
                json!({"maxReplicas": 0, "targetCPUUtilization": 80}),
                Some(("spec.autoscaling.maxReplicas", "greater than or equal to 1")),
            ),
            (
                "/spec/autoscaling",
                json!({"targetCPUUtilization": 80}),
                Some(("spec.autoscaling.maxReplicas", "Required value")),
            ),
            (
                "/spec/logging",
                json!({"format": "xml"}),
                Some((
                    "spec.logging.format",
                    "supported values: \"text\", \"json\"",
                )),
            ),
            (
                "/spec/logging",
                json!({"level": "TRACE"}),
                Some(("spec.logging.level", "Unsupported value")),
            ),
            (
                "/spec/secretStoreRef",
                json!({"kind": "Vault", "name": "x"}),
                Some((
                    "spec.secretStoreRef.kind",
                    "supported values: \"ClusterSecretStore\", \"SecretStore\"",
                )),
            ),
            (
                "/spec/secretStoreRef",
                json!({"name": ""}),
                Some(("spec.secretStoreRef.name", "at least 1 chars long")),
            ),
            (
                "/spec/targetClusterRef",
                json!({"name": "region-one"}),
                None,
            ),
            (
                "/spec/targetClusterRef",
                json!({"name": ""}),
                Some(("spec.targetClusterRef.name", "at least 1 chars long")),
            ),
            (
                "/spec/targetClusterRef",
                json!({"name": "Region_One"}),
                Some(("spec.targetClusterRef.name", "should match")),
            ),
            (
                "/spec/gateway",
                json!({"hostname": "", "parentRef": {"name": "gw"}}),
                Some(("spec.gateway.hostname", "at least 1 chars long")),
            ),
            (
                "/spec/gateway",
                json!({"hostname": "b.example.com", "parentRef": {"name": ""}}),
                Some(("spec.gateway.parentRef.name", "at least 1 chars long")),
            ),
            (
                "/spec/policyOverrides",
                json!({"configMapRef": {"name": ""}}),
                Some((
                    "spec.policyOverrides.configMapRef.name",
                    "at least 1 chars long",
                )),
            ),
            (
                "/spec/middleware",
                json!([{"name": "audit", "filterFactory": "x:y", "position": "middle"}]),
                Some((
                    "spec.middleware[0].position",
                    "supported values: \"before\", \"after\"",
                )),
            ),
            (
                "/spec/plugins",
                json!([{"name": "a", "configSection": "vault_plugin"}, {"name": "b", "configSection": "KMIP_PLUGIN"}]),
                None,
            ),
            // Only a plugin group: never DEFAULT, logging's sections or a store's.
            (
                "/spec/plugins",
                json!([{"name": "a", "configSection": "handler_h"}]),
                Some(("spec.plugins[0].configSection", "should match")),
            ),
            (
                "/spec/plugins",
                json!([{"name": "a", "configSection": "secretstore:x_plugin"}]),
                Some(("spec.plugins[0].configSection", "should match")),
            ),
            (
                "/spec/plugins",
                json!([{"name": "a", "configSection": "s_plugin"}, {"name": "b", "configSection": "s_plugin"}]),
                Some(("spec.plugins[1]", "Duplicate value")),
            ),
            (
                "/spec/plugins",
                json!([{"name": "a"}]),
                Some(("spec.plugins[0].configSection", "Required value")),
            ),
            (
                "/spec/extraConfig",
                json!({"DEFAULT": {"debug": "true"}}),
                None,
            ),
            (
                "/spec/extraConfig",
                json!({"DEFAULT": {"debug": true}}),
                Some(("spec.extraConfig.DEFAULT.debug", "must be of type string")),
            ),
            (
                "/spec/replicas",
                json!(3),
                Some(("spec.replicas", "unknown field")),
            ),
            // Bounded so one CR cannot grow the config Secret (and the operator) without limit.
            (
                "/spec/extraConfig",
                json!({"DEFAULT": {"debug": "x".repeat(4096)}}),
                None,
            ),
            (
                "/spec/extraConfig",
                json!({"DEFAULT": {"debug": "x".repeat(4097)}}),
                Some((
                    "spec.extraConfig.DEFAULT.debug",
                    "may not be more than 4096",
                )),
            ),
            (
                "/spec/extraConfig",
                Value::Object(
                    (0..65)
                        .map(|i| (format!("section_{i}"), json!({})))
                        .collect(),
                ),
                Some(("spec.extraConfig", "must have at most 64 items")),
            ),
            (
                "/spec/extraConfig",
                json!({"DEFAULT": (0..129).map(|i| (format!("o{i}"), json!("v"))).collect::<serde_json::Map<_, _>>()}),
                Some(("spec.extraConfig.DEFAULT", "must have at most 128 items")),
            ),
            (
                "/spec/plugins",
                json!(
                    (0..33)
                        .map(|i| json!({"name": "p", "configSection": format!("s{i}_plugin")}))
                        .collect::<Vec<_>>()
                ),
                Some(("spec.plugins", "must have at most 32 items")),
            ),
            (
                "/spec/plugins",
                json!([{"name": "p", "configSection": "s_plugin", "config": {"k": "x".repeat(4097)}}]),
                Some(("spec.plugins[0].config.k", "may not be more than 4096")),
            ),
        ],
    );
}

#[test]
fn secret_store_openapi_constraints() {
    let s = crd_schema::<BarbicanSecretStore>();
    let many: serde_json::Map<String, Value> = (0..33)
        .map(|i| (format!("option_{i}"), json!("v")))
        .collect();
    let enough: serde_json::Map<String, Value> = (0..32)
        .map(|i| (format!("option_{i}"), json!("v")))
        .collect();
    run(
        &s,
        store(),
        vec![
            (
                "/spec/type",
                json!("Vault"),
                Some(("spec.type", "supported values: \"OpenBao\"")),
            ),
            (
                "/spec/barbicanRef",
                json!({"name": ""}),
                Some(("spec.barbicanRef.name", "at least 1 chars long")),
            ),
            (
                "/spec/openBao/instanceRef",
                json!({"name": ""}),
                Some(("spec.openBao.instanceRef.name", "at least 1 chars long")),
            ),
            (
                "/spec/openBao/server/url",
                json!("http://vault.example.com"),
                Some(("spec.openBao.server.url", "should match '^https://")),
            ),
            (
                "/spec/openBao/server/url",
                json!("https://admin:hunter2@vault.example.com"),
                Some(("spec.openBao.server.url", "should match '^https://")),
            ),
            (
                "/spec/openBao/server/url",
                json!("https://vault.example.com:8200/v1"),
                None,
            ),
            (
                "/spec/openBao/namespace",
                json!("tenant\u{1}a"),
                Some(("spec.openBao.namespace", "should match")),
            ),
            (
                "/spec/openBao/namespace",
                json!("a/../b"),
                Some(("spec.openBao.namespace", "should match")),
            ),
            ("/spec/openBao/namespace", json!("admin/tenant-a/"), None),
            ("/spec/openBao/namespace", json!(""), None),
            (
                "/spec/openBao/kvMountpoint",
                json!("kv/.."),
                Some(("spec.openBao.kvMountpoint", "should match")),
            ),
            (
                "/spec/openBao/kvMountpoint",
                json!("kv barbican"),
                Some(("spec.openBao.kvMountpoint", "should match")),
            ),
            ("/spec/openBao/kvMountpoint", json!("secret/barbican"), None),
            (
                "/spec/openBao/server/url",
                json!(""),
                Some(("spec.openBao.server.url", "at least 1 chars long")),
            ),
            (
                "/spec/openBao/server/credentialsSecretRef",
                json!({"name": ""}),
                Some((
                    "spec.openBao.server.credentialsSecretRef.name",
                    "at least 1 chars long",
                )),
            ),
            (
                "/spec/openBao/server/caBundleSecretRef",
                json!({"name": ""}),
                Some((
                    "spec.openBao.server.caBundleSecretRef.name",
                    "at least 1 chars long",
                )),
            ),
            (
                "/spec/openBao/kvMountpoint",
                json!(""),
                Some(("spec.openBao.kvMountpoint", "at least 1 chars long")),
            ),
            ("/spec/extraOptions", Value::Object(enough), None),
            (
                "/spec/extraOptions",
                Value::Object(many),
                Some(("spec.extraOptions", "must have at most 32 items")),
            ),
            (
                "/spec/isDefault",
                json!("yes"),
                Some(("spec.isDefault", "must be of type boolean")),
            ),
        ],
    );
}

#[test]
fn kv_mountpoint_defaults_to_barbican() {
    let s = crd_schema::<BarbicanSecretStore>();
    let mut object = store();
    schema::apply_defaults(&s, &mut object);
    assert_eq!(object["spec"]["openBao"]["kvMountpoint"], "barbican");
    // An explicit value is kept.
    let mut explicit = with(store(), "/spec/openBao/kvMountpoint", json!("kv"));
    schema::apply_defaults(&s, &mut explicit);
    assert_eq!(explicit["spec"]["openBao"]["kvMountpoint"], "kv");
}

#[test]
fn secret_store_ref_kind_defaults_to_the_cluster_store() {
    let s = crd_schema::<Barbican>();
    let mut object = with(
        barbican(),
        "/spec/secretStoreRef",
        json!({"name": "openbao-cluster-store"}),
    );
    schema::apply_defaults(&s, &mut object);
    assert_eq!(
        object["spec"]["secretStoreRef"]["kind"],
        "ClusterSecretStore"
    );
}

#[test]
fn condition_lists_are_list_maps_keyed_by_type() {
    for s in [
        crd_schema::<Barbican>(),
        crd_schema::<BarbicanSecretStore>(),
    ] {
        let conditions = &s["properties"]["status"]["properties"]["conditions"];
        assert_eq!(conditions["x-kubernetes-list-type"], "map");
        assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
    }
}
