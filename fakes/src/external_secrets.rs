//! A fake External Secrets operator: stores become Ready (scenarios can hold them not-ready),
//! and an ExternalSecret becomes Ready and materializes its target Secret, owned by it, with
//! each `data[].secretKey` taken from the fake's remote values.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use barbican_sim::clock::Clock;
use futures::FutureExt;
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DynamicObject, Patch, PatchParams},
};
use serde_json::json;

use crate::controller::{Behaviour, FakeController, Hook};

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "external-secrets.io".into(),
        version: "v1".into(),
        api_version: "external-secrets.io/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// Remote values: `(key, property)` → value (property empty when the ref names none).
pub type Remote = Arc<Mutex<BTreeMap<(String, String), String>>>;

/// The three controllers and the remote values they read.
pub struct ExternalSecrets {
    /// ClusterSecretStores.
    pub cluster_stores: FakeController,
    /// SecretStores.
    pub stores: FakeController,
    /// ExternalSecrets.
    pub external_secrets: FakeController,
    /// What the "remote" provider holds.
    pub remote: Remote,
}

impl ExternalSecrets {
    /// Starts the controllers.
    pub fn start(client: Client, clock: Clock) -> Self {
        let remote: Remote = Arc::default();
        let materialize: Hook = {
            let (client, remote) = (client.clone(), remote.clone());
            Arc::new(move |external: DynamicObject| {
                let (client, remote) = (client.clone(), remote.clone());
                async move { materialize(client, remote, external).await }.boxed()
            })
        };
        let controller = |kind: &str, plural: &str, reason: &'static str, hook: Option<Hook>| {
            FakeController::start(
                client.clone(),
                clock.clone(),
                resource(kind, plural),
                Behaviour::ready("Ready", reason),
                hook,
            )
        };
        Self {
            cluster_stores: controller("ClusterSecretStore", "clustersecretstores", "Valid", None),
            stores: controller("SecretStore", "secretstores", "Valid", None),
            external_secrets: controller(
                "ExternalSecret",
                "externalsecrets",
                "SecretSynced",
                Some(materialize),
            ),
            remote,
        }
    }

    /// Sets what the remote provider holds for `key` (and `property`, empty for none).
    pub fn set_remote(&self, key: &str, property: &str, value: &str) {
        self.remote
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((key.into(), property.into()), value.into());
    }
}

async fn materialize(
    client: Client,
    remote: Remote,
    external: DynamicObject,
) -> Result<(), String> {
    let namespace = external.namespace().unwrap_or_default();
    let name = external.data["spec"]["target"]["name"]
        .as_str()
        .map(String::from)
        .unwrap_or_else(|| external.name_any());
    let mut data = BTreeMap::new();
    for item in external.data["spec"]["data"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let Some(secret_key) = item["secretKey"].as_str() else {
            continue;
        };
        let key = item["remoteRef"]["key"].as_str().unwrap_or("").to_string();
        let property = item["remoteRef"]["property"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let value = remote
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(key.clone(), property.clone()))
            .cloned()
            .unwrap_or_else(|| format!("remote:{key}/{property}"));
        data.insert(secret_key.to_string(), value);
    }
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace,
            "labels": {"reconcile.external-secrets.io/managed": "true"},
            "ownerReferences": [{"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
                "name": external.name_any(), "uid": external.uid(), "controller": true,
                "blockOwnerDeletion": true}]},
        "type": "Opaque",
        "stringData": data,
    });
    let secrets: Api<Secret> = Api::namespaced(client, &namespace);
    secrets
        .patch(
            &name,
            &PatchParams::apply("external-secrets").force(),
            &Patch::Apply(secret),
        )
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}
