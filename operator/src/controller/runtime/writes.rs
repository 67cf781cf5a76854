//! Every write this operator makes to its own CRs: the status, the finalizers, other
//! metadata. Each is recorded in [`OwnWrites`] until the watch delivers it, so a pass never
//! starts from a cache older than what it wrote.

use kube::{
    Api, Resource,
    api::{Patch, PatchParams},
};
use serde_json::{Value, json};

use crate::controller::runtime::cache::OwnWrites;

/// The merge patch that makes the stored status read `status`: absent fields are nulled so a
/// cleared field is cleared on the server too.
pub fn status_patch<S: serde::Serialize>(before: &S, status: &S) -> Value {
    // A status is plain data with string keys: it always serializes.
    let mut after = serde_json::to_value(status).unwrap_or_default();
    let before = serde_json::to_value(before).unwrap_or_default();
    if let (Some(after), Some(before)) = (after.as_object_mut(), before.as_object()) {
        for key in before.keys() {
            after.entry(key.clone()).or_insert(Value::Null);
        }
    }
    json!({ "status": after })
}

/// Writes `status` on the status subresource of `name`, nulling what `before` had and it lacks;
/// the write is recorded in `writes` until the watch delivers it.
pub async fn write_status<K, S>(
    writes: &OwnWrites,
    api: &Api<K>,
    name: &str,
    before: &S,
    status: &S,
) -> Result<(), kube::Error>
where
    K: Resource + Clone + Send + Sync + serde::de::DeserializeOwned + std::fmt::Debug + 'static,
    S: serde::Serialize,
{
    let written = api
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(&status_patch(before, status)),
        )
        .await?;
    writes.wrote(&written);
    Ok(())
}

/// Merges `patch` into the metadata of the CR `name`, recorded in `writes` until the watch
/// delivers it (every write of this operator to its CRs goes through here or
/// [`write_status`]).
pub async fn patch_metadata<K>(
    writes: &OwnWrites,
    api: &Api<K>,
    name: &str,
    patch: &serde_json::Value,
) -> Result<K, kube::Error>
where
    K: Resource + Clone + Send + Sync + serde::de::DeserializeOwned + std::fmt::Debug + 'static,
{
    let written = api
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await?;
    writes.wrote(&written);
    Ok(written)
}

/// Writes `finalizers` as the whole list on `name`, guarded by the `resource_version` the
/// list was derived from; `false` when the object is already gone.
pub async fn write_finalizers<K>(
    writes: &OwnWrites,
    api: &Api<K>,
    name: &str,
    resource_version: Option<String>,
    finalizers: Vec<String>,
) -> Result<bool, kube::Error>
where
    K: Resource + Clone + Send + Sync + serde::de::DeserializeOwned + std::fmt::Debug + 'static,
{
    let patch =
        json!({"metadata": {"finalizers": finalizers, "resourceVersion": resource_version}});
    match patch_metadata(writes, api, name, &patch).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::barbican::BarbicanStatus;

    #[test]
    fn a_cleared_status_field_is_nulled_in_the_patch() {
        let before = BarbicanStatus {
            endpoint: Some("http://x".into()),
            observed_generation: Some(1),
            ..BarbicanStatus::default()
        };
        let after = BarbicanStatus {
            observed_generation: Some(2),
            ..BarbicanStatus::default()
        };
        let patch = status_patch(&before, &after);
        assert_eq!(patch["status"]["endpoint"], Value::Null);
        assert!(
            patch["status"]
                .as_object()
                .unwrap()
                .contains_key("endpoint")
        );
        assert_eq!(patch["status"]["observedGeneration"], 2);
    }
}
