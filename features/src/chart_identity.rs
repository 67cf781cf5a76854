//! The operator's identity as the chart installs it: the ServiceAccount
//! `barbican-system/barbican-operator`, its ClusterRole and leader-election Role, and one
//! provisioner-token Role per namespace of managed stores (`features/chart-rbac.yaml`, checked
//! against the chart by a test).
//!
//! Where the operator runs as its own process against a served sim (`serve --with-fakes` or
//! `--admission`, the bench) or on a kubeconfig, the harness installs these objects with the
//! cluster administrator's client, asks for a bound token of the ServiceAccount and hands the
//! operator that token: every request the operator makes is then checked against the chart's
//! grants, by the sim (which enforces RBAC for the tokens it mints) or by a real API server.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::{
    authentication::v1::TokenRequest,
    core::v1::ServiceAccount,
    rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding},
};
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, Patch, PatchParams},
};
use serde_json::Value;

/// The chart's ServiceAccount and RBAC (release `barbican-operator` in `barbican-system`),
/// with `HARNESS-NAMESPACE`/`HARNESS-INSTANCE` where `rbac.secretStoreNamespaces` goes.
pub const CHART_RBAC: &str = include_str!("../chart-rbac.yaml");

/// The namespace of the chart's release, where its ServiceAccount lives.
pub const RELEASE_NAMESPACE: &str = "barbican-system";
/// The chart's ServiceAccount.
pub const SERVICE_ACCOUNT: &str = "barbican-operator";
/// The field manager the harness installs the chart's objects as, as Helm would be.
const MANAGER: &str = "helm";

/// The placeholder of a store namespace in [`CHART_RBAC`].
const NAMESPACE_PLACEHOLDER: &str = "HARNESS-NAMESPACE";
/// The placeholder of an OpenBao instance in [`CHART_RBAC`].
const INSTANCE_PLACEHOLDER: &str = "HARNESS-INSTANCE";

/// `rbac.secretStoreNamespaces`: for each namespace of managed stores, the names of the
/// OpenBaoClusters its stores provision on.
pub type StoreGrants = BTreeMap<String, BTreeSet<String>>;

/// The grants `--set rbac.secretStoreNamespaces.<namespace>={<instance>}` gives, for one pair.
pub fn grant(namespace: &str, instance: &str) -> StoreGrants {
    StoreGrants::from([(
        namespace.to_string(),
        BTreeSet::from([instance.to_string()]),
    )])
}

/// The documents of [`CHART_RBAC`], the provisioner-token ones still with their placeholders.
fn documents() -> Result<Vec<Value>, String> {
    let documents: Vec<Value> = serde_saphyr::from_multiple(CHART_RBAC)
        .map_err(|e| format!("features/chart-rbac.yaml: {e}"))?;
    Ok(documents.into_iter().filter(|d| !d.is_null()).collect())
}

/// Whether `document` is one of the per-namespace provisioner-token objects.
fn per_namespace(document: &Value) -> bool {
    document["metadata"]["namespace"] == NAMESPACE_PLACEHOLDER
}

/// `value` with every string's namespace placeholder replaced by `namespace`, and every array
/// entry naming the instance placeholder written once per instance, in order.
fn filled(value: &Value, namespace: &str, instances: &BTreeSet<String>) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace(NAMESPACE_PLACEHOLDER, namespace)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .flat_map(|item| match item.as_str() {
                    Some(s) if s.contains(INSTANCE_PLACEHOLDER) => instances
                        .iter()
                        .map(|i| Value::String(s.replace(INSTANCE_PLACEHOLDER, i)))
                        .collect(),
                    _ => vec![filled(item, namespace, instances)],
                })
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), filled(v, namespace, instances)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The chart's ServiceAccount and RBAC objects rendered with `grants` as
/// `rbac.secretStoreNamespaces`, in the order `helm template` prints them.
pub fn objects(grants: &StoreGrants) -> Result<Vec<Value>, String> {
    let documents = documents()?;
    let (templates, fixed): (Vec<Value>, Vec<Value>) =
        documents.into_iter().partition(per_namespace);
    if templates.is_empty() {
        return Err("features/chart-rbac.yaml: no provisioner-token Role to fill in".into());
    }
    // As `helm template` prints a template's objects: by kind (the Roles, then the
    // RoleBindings), each for every namespace in order.
    let mut objects = fixed;
    for template in &templates {
        objects.extend(
            grants
                .iter()
                .map(|(namespace, instances)| filled(template, namespace, instances)),
        );
    }
    Ok(objects)
}

/// The API of a kind [`CHART_RBAC`] holds.
fn api(client: &Client, object: &Value) -> Result<Api<DynamicObject>, String> {
    let kind = object["kind"].as_str().unwrap_or_default();
    let resource = match kind {
        "ServiceAccount" => ApiResource::erase::<ServiceAccount>(&()),
        "ClusterRole" => ApiResource::erase::<ClusterRole>(&()),
        "ClusterRoleBinding" => ApiResource::erase::<ClusterRoleBinding>(&()),
        "Role" => ApiResource::erase::<Role>(&()),
        "RoleBinding" => ApiResource::erase::<RoleBinding>(&()),
        other => {
            return Err(format!(
                "features/chart-rbac.yaml: unexpected kind {other:?}"
            ));
        }
    };
    Ok(match object["metadata"]["namespace"].as_str() {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None => Api::all_with(client.clone(), &resource),
    })
}

/// Installs the chart's ServiceAccount and RBAC with `grants` through `client` (a cluster
/// administrator's), as `helm upgrade --install` would; creating the release namespace when
/// missing. Installing again with more grants widens them; the namespaces of `grants` must
/// exist.
pub async fn install(client: &Client, grants: &StoreGrants) -> Result<(), String> {
    let namespaces: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::erase::<k8s_openapi::api::core::v1::Namespace>(&()),
    );
    let namespace: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": RELEASE_NAMESPACE},
    }))
    .map_err(|e| e.to_string())?;
    namespaces
        .patch(
            RELEASE_NAMESPACE,
            &PatchParams::apply(MANAGER),
            &Patch::Apply(&namespace),
        )
        .await
        .map_err(|e| format!("creating the namespace {RELEASE_NAMESPACE}: {e}"))?;
    for object in objects(grants)? {
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let what = format!("the chart's {} {name}", object["kind"]);
        let typed: DynamicObject =
            serde_json::from_value(object.clone()).map_err(|e| format!("{what}: {e}"))?;
        api(client, &object)?
            .patch(&name, &PatchParams::apply(MANAGER), &Patch::Apply(&typed))
            .await
            .map_err(|e| format!("installing {what}: {e}"))?;
    }
    Ok(())
}

/// A bound token of the ServiceAccount `namespace/name`, valid for 30 days, from the cluster
/// `client` talks to.
pub async fn service_account_token(
    client: Client,
    namespace: &str,
    name: &str,
) -> Result<String, String> {
    let request: TokenRequest =
        serde_json::from_value(serde_json::json!({"spec": {"expirationSeconds": 30 * 24 * 3600}}))
            .map_err(|e| e.to_string())?;
    Api::<ServiceAccount>::namespaced(client, namespace)
        .create_token_request(name, &Default::default(), &request)
        .await
        .map_err(|e| format!("a token for ServiceAccount {namespace}/{name}: {e}"))?
        .status
        .and_then(|s| s.token)
        .ok_or_else(|| "the TokenRequest returned no token".to_string())
}

/// Installs the chart's identity with `grants` and returns a token of its ServiceAccount, for
/// the operator's kubeconfig.
pub async fn install_and_token(client: &Client, grants: &StoreGrants) -> Result<String, String> {
    install(client, grants).await?;
    service_account_token(client.clone(), RELEASE_NAMESPACE, SERVICE_ACCOUNT).await
}
