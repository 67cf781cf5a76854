//! How one child is made live with no window between the ownership check and the write
//! (see [`super::children::Children::ensure`]): an absent child is created by POST, whose 409
//! sends it back to the check; a present one is applied naming the uid the check saw; and the
//! fields a POST left to the operator's `Update` entry are folded into its apply entry when a
//! later spec leaves one out, so that the apply removes it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{
    Api, Resource,
    api::{Patch, PatchParams, PostParams},
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;
use std::{collections::BTreeSet, sync::Mutex};

use super::applied::{
    Field, covers, created_unwanted, folded_ownership, is_own_update, outlives_spec, owns_unwanted,
    stamped,
};
use super::cache::Cached;
use super::ownership::ChildError;
use crate::api::names::FIELD_MANAGER;

/// Makes `desired` live on `api` (see [`Children::ensure`]); `claim` is the ownership rule,
/// asked of whatever object already holds the name.
pub(super) async fn converge<K>(
    api: &Api<K>,
    desired: &K,
    cached: Cached<K>,
    claim: impl Fn(&ObjectMeta) -> Result<(), ChildError>,
) -> Result<K, ChildError>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = desired.meta().name.clone().unwrap_or_default();
    let wanted = stamped(serde_json::to_value(desired).map_err(kube::Error::SerdeError)?);
    let live = match cached {
        Cached::Present(object) => Some(object),
        // Not watched here (a target cluster): read, so a pass over a converged child sends
        // no write.
        Cached::Unknown => api.get_opt(&name).await?,
        // The cache follows the operator's own children by their labels, so a foreign object
        // under the name is "absent" to it: the create finds out.
        Cached::Absent => None,
    };
    let live = match live {
        Some(live) => live,
        None => match create(api, &wanted).await {
            Ok(created) => return Ok(created),
            Err(kube::Error::Api(status)) if status.code == 409 => api.get(&name).await?,
            Err(other) => return Err(other.into()),
        },
    };
    claim(live.meta())?;
    Ok(apply_unless_covered(api, &wanted, live).await?)
}

/// Creates `wanted` by POST under the operator's field manager.
async fn create<K>(api: &Api<K>, wanted: &Value) -> Result<K, kube::Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let object: K = serde_json::from_value(wanted.clone()).map_err(kube::Error::SerdeError)?;
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PostParams::default()
    };
    api.create(&params, &object).await
}

/// Applies `wanted` to `live` (checked to be the owner's) unless `live` already covers it.
/// A child created by POST keeps what that POST set under the operator's `Update` entry, which
/// the apply cannot remove: when `wanted` leaves out such a field and it is not a server
/// default, the entry is first folded into the operator's apply entry ([`folded_ownership`],
/// a write naming the resourceVersion it read), so the one apply that follows removes it and
/// the child never holds a mix of the two specs.
async fn apply_unless_covered<K>(api: &Api<K>, wanted: &Value, live: K) -> Result<K, kube::Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let current = serde_json::to_value(&live).map_err(kube::Error::SerdeError)?;
    if covers(&current, wanted) && !owns_unwanted(&live, wanted) {
        return Ok(live);
    }
    let checked = live.meta().uid.clone();
    let created = live
        .meta()
        .managed_fields
        .iter()
        .flatten()
        .find(|e| is_own_update(e));
    if let Some(entry) = created {
        // The cache keeps the entry without its fields: read them.
        let fresh = match entry.fields_v1 {
            Some(_) => live.clone(),
            None => {
                api.get(&live.meta().name.clone().unwrap_or_default())
                    .await?
            }
        };
        if fresh.meta().uid == checked {
            let unwanted = created_unwanted(&fresh, wanted);
            if !unwanted.is_empty() && earlier_spec_left(api, wanted, &unwanted).await? {
                fold_ownership(api, fresh).await?;
            }
        }
    }
    apply_to(api, wanted, &live).await
}

/// The sets of fields (by kind, path and value) a dry run showed to be the server's defaults.
/// The children of every Barbican look alike, so one dry run per kind serves them all.
static DEFAULTS_SEEN: std::sync::LazyLock<Mutex<BTreeSet<u64>>> =
    std::sync::LazyLock::new(Default::default);

/// Whether a field of an earlier spec is among the `unwanted` fields a POST left to the
/// operator's `Update` entry, rather than only what the server defaulted into the child
/// (which needs no fold and no second apply): the defaults come from a dry-run create of
/// `wanted` under a generated name, which stores nothing.
async fn earlier_spec_left<K>(
    api: &Api<K>,
    wanted: &Value,
    unwanted: &[Field],
) -> Result<bool, kube::Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (wanted["apiVersion"].to_string(), wanted["kind"].to_string()).hash(&mut hasher);
    for (path, value) in unwanted {
        (path, value.to_string()).hash(&mut hasher);
    }
    let key = hasher.finish();
    let seen = |key| {
        DEFAULTS_SEEN
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&key)
    };
    if seen(key) {
        return Ok(false);
    }
    let mut probe = wanted.clone();
    if let Some(metadata) = probe.get_mut("metadata").and_then(Value::as_object_mut) {
        let name = metadata
            .remove("name")
            .and_then(|n| n.as_str().map(String::from))
            .unwrap_or_default();
        let prefix: String = name.chars().take(40).collect();
        metadata.insert("generateName".into(), Value::String(format!("{prefix}-")));
    }
    let probe: K = serde_json::from_value(probe).map_err(kube::Error::SerdeError)?;
    let params = PostParams {
        dry_run: true,
        field_manager: Some(FIELD_MANAGER.to_string()),
    };
    let defaulted = serde_json::to_value(api.create(&params, &probe).await?)
        .map_err(kube::Error::SerdeError)?;
    let left = outlives_spec(unwanted, &defaulted);
    if !left {
        DEFAULTS_SEEN
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key);
    }
    Ok(left)
}

/// How often [`fold_ownership`] reads the child again after another writer got in between.
const FOLD_ATTEMPTS: usize = 3;

/// Folds the operator's `Update` entry of `live` into its apply entry ([`folded_ownership`])
/// by a write that names the resourceVersion it was computed on; another writer getting in
/// between (the Gateway controller setting a route's status) makes it read the child again.
/// It must land in this pass: the apply that follows it is what removes the field, and the
/// next pass finds the child covered by its new hash and applies nothing.
async fn fold_ownership<K>(api: &Api<K>, mut live: K) -> Result<K, kube::Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = live.meta().name.clone().unwrap_or_default();
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    };
    for attempt in 1..=FOLD_ATTEMPTS {
        let Some(entries) = folded_ownership(live.meta().managed_fields.as_deref().unwrap_or(&[]))
        else {
            return Ok(live);
        };
        let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
            {"op": "test", "path": "/metadata/uid", "value": live.meta().uid},
            {"op": "test", "path": "/metadata/resourceVersion",
             "value": live.meta().resource_version},
            {"op": "replace", "path": "/metadata/managedFields", "value": entries},
        ]))
        .map_err(kube::Error::SerdeError)?;
        match api.patch(&name, &params, &Patch::<()>::Json(patch)).await {
            Err(kube::Error::Api(status))
                if matches!(status.code, 409 | 422) && attempt < FOLD_ATTEMPTS =>
            {
                let uid = live.meta().uid.clone();
                live = api.get(&name).await?;
                if live.meta().uid != uid {
                    // Replaced since the apply: not the object this pass checked.
                    return Err(kube::Error::Api(status));
                }
            }
            other => return other,
        }
    }
    Ok(live)
}

/// A forced apply of `wanted` that names `live`'s uid: should the object have been replaced
/// since it was checked, the API server refuses the apply instead of landing it on the
/// newcomer.
async fn apply_to<K>(api: &Api<K>, wanted: &Value, live: &K) -> Result<K, kube::Error>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let mut body = wanted.clone();
    if let (Some(metadata), Some(uid)) = (
        body.get_mut("metadata").and_then(Value::as_object_mut),
        live.meta().uid.as_ref(),
    ) {
        metadata.insert("uid".into(), Value::String(uid.clone()));
    }
    let name = live.meta().name.clone().unwrap_or_default();
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await
}
