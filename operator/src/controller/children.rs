//! The per-CR cluster handle: every read and write of a Barbican's children goes through one
//! [`Children`], so choosing the cluster they land on (the target-cluster work) changes this
//! one place rather than every step.
//!
//! Writes are server-side applies under the reference's field manager, forced. An apply is
//! skipped when the live object already carries everything the desired one says, so a pass
//! over a converged Barbican sends no write at all.

use kube::{
    Api, Client, Resource,
    api::{ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

/// The field manager of every apply (the reference's, so both operators can hand over).
pub const FIELD_MANAGER: &str = "cobaltcore-operator";

/// A namespaced built-in or typed kind the handle reads and writes.
pub trait Child:
    Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
    + Clone
    + Serialize
    + DeserializeOwned
    + std::fmt::Debug
{
}

impl<K> Child for K where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + Serialize
        + DeserializeOwned
        + std::fmt::Debug
{
}

/// Where one Barbican's children live: a client and a namespace.
#[derive(Clone)]
pub struct Children {
    client: Client,
    namespace: String,
}

/// Whether `live` already carries everything `desired` says: every key of an object, every
/// element of a list (lists must have the same length), every scalar equal. Fields the server
/// adds (defaults, status, managedFields) do not count.
pub fn covers(live: &Value, desired: &Value) -> bool {
    match (live, desired) {
        (Value::Object(live), Value::Object(desired)) => desired
            .iter()
            .all(|(k, d)| live.get(k).is_some_and(|l| covers(l, d)) || d.is_null()),
        (Value::Array(live), Value::Array(desired)) => {
            live.len() == desired.len() && live.iter().zip(desired).all(|(l, d)| covers(l, d))
        }
        (live, desired) => live == desired,
    }
}

fn not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}

impl Children {
    /// Children on the cluster `client` talks to, in `namespace`.
    pub fn local(client: Client, namespace: &str) -> Self {
        Self {
            client,
            namespace: namespace.to_string(),
        }
    }

    /// The namespace the children live in.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The typed API of a namespaced kind.
    pub fn api<K: Child>(&self) -> Api<K> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// The API of a kind known only at run time (HTTPRoute, the ESO stores).
    pub fn dynamic(&self, resource: &ApiResource) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), &self.namespace, resource)
    }

    /// Reads `name`, `None` when it does not exist.
    pub async fn get<K: Child>(&self, name: &str) -> Result<Option<K>, kube::Error> {
        self.api::<K>().get_opt(name).await
    }

    /// Lists the children matching `labels` (a label selector).
    pub async fn list<K: Child>(&self, labels: &str) -> Result<Vec<K>, kube::Error> {
        Ok(self
            .api::<K>()
            .list(&ListParams::default().labels(labels))
            .await?
            .items)
    }

    /// Makes `desired` live: applied when the live object lacks anything it says, left alone
    /// otherwise. Returns the live object.
    pub async fn ensure<K: Child>(&self, desired: &K) -> Result<K, kube::Error> {
        ensure_on(self.api::<K>(), desired).await
    }

    /// [`Children::ensure`] for a kind known only at run time.
    pub async fn ensure_dynamic(
        &self,
        resource: &ApiResource,
        desired: &DynamicObject,
    ) -> Result<DynamicObject, kube::Error> {
        ensure_on(self.dynamic(resource), desired).await
    }

    /// Creates `object`; an existing one of the same name is returned as it is.
    pub async fn create<K: Child>(&self, object: &K) -> Result<K, kube::Error> {
        let api = self.api::<K>();
        match api.create(&PostParams::default(), object).await {
            Err(kube::Error::Api(status)) if status.code == 409 => {
                let name = object.meta().name.clone().unwrap_or_default();
                api.get(&name).await
            }
            other => other,
        }
    }

    /// Deletes `name` when it exists; `true` when a delete was issued.
    pub async fn delete<K: Child>(&self, name: &str) -> Result<bool, kube::Error> {
        delete_on(self.api::<K>(), name).await
    }

    /// [`Children::delete`] for a kind known only at run time.
    pub async fn delete_dynamic(
        &self,
        resource: &ApiResource,
        name: &str,
    ) -> Result<bool, kube::Error> {
        delete_on(self.dynamic(resource), name).await
    }
}

async fn ensure_on<K>(api: Api<K>, desired: &K) -> Result<K, kube::Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = desired.meta().name.clone().unwrap_or_default();
    let wanted = serde_json::to_value(desired).map_err(kube::Error::SerdeError)?;
    if let Some(live) = api.get_opt(&name).await? {
        let current = serde_json::to_value(&live).map_err(kube::Error::SerdeError)?;
        if covers(&current, &wanted) {
            return Ok(live);
        }
    }
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&wanted),
    )
    .await
}

async fn delete_on<K>(api: Api<K>, name: &str) -> Result<bool, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.get_opt(name).await? {
        None => Ok(false),
        Some(live) if live.meta().deletion_timestamp.is_some() => Ok(false),
        Some(_) => match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => Ok(true),
            Err(e) if not_found(&e) => Ok(false),
            Err(e) => Err(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_live_object_covers_what_it_carries_plus_server_defaults() {
        let live = json!({"metadata": {"name": "a", "uid": "u", "labels": {"x": "1", "y": "2"}},
            "spec": {"ports": [{"port": 9311, "protocol": "TCP"}], "type": "ClusterIP"}});
        let desired = json!({"metadata": {"name": "a", "labels": {"x": "1"}},
            "spec": {"ports": [{"port": 9311}]}});
        assert!(covers(&live, &desired));
    }

    #[test]
    fn a_changed_value_an_added_key_or_a_list_of_another_length_is_not_covered() {
        let live = json!({"spec": {"ports": [{"port": 9311}], "env": ["a", "b"]}});
        assert!(!covers(&live, &json!({"spec": {"ports": [{"port": 80}]}})));
        assert!(!covers(&live, &json!({"spec": {"selector": {"a": "b"}}})));
        assert!(!covers(&live, &json!({"spec": {"env": ["a"]}})));
        assert!(covers(&live, &json!({"spec": {"missing": null}})));
    }
}
