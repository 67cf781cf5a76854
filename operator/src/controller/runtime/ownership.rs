//! Ownership: who a child belongs to, and the one rule every write of a child passes. On the
//! management cluster a child is its CR's when it carries a controller ownerReference to the
//! CR's uid; on a target cluster, which holds no ownerReferences to the management cluster's
//! objects, when it carries the three owner labels naming the CR. Anything else under a
//! child's name is someone else's: never applied over, created over or deleted
//! ([`ChildError::NameTaken`]).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;

use crate::api::names::{OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL};

/// The CR a [`Children`] handle acts for: what the ownership rule compares a live child with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Its kind (`Barbican`, `BarbicanSecretStore`).
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its namespace, which is also its children's.
    pub namespace: String,
    /// Its uid: the one a controller ownerReference must name.
    pub uid: Option<String>,
}

impl Owner {
    /// The owner `owner` is.
    pub fn of<O: Resource<DynamicType = ()>>(owner: &O) -> Self {
        Self {
            kind: O::kind(&()).into_owned(),
            name: owner.meta().name.clone().unwrap_or_default(),
            namespace: owner.meta().namespace.clone().unwrap_or_default(),
            uid: owner.meta().uid.clone(),
        }
    }
}

/// Why a request about a child did not go through.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The API server refused or could not be reached.
    #[error(transparent)]
    Api(#[from] kube::Error),
    /// An object of the child's kind and name exists and was not made for this owner.
    #[error(transparent)]
    NameTaken(Box<Taken>),
}

impl ChildError {
    /// Whether the API server does not serve the child's kind at all (a 404 for a write: the
    /// CRD of another operator is not installed where the children live).
    pub fn kind_not_served(&self) -> bool {
        matches!(self, ChildError::Api(kube::Error::Api(status)) if status.code == 404)
    }
}

/// An object in a child's place that is someone else's, and is left as it is.
#[derive(Debug, thiserror::Error)]
#[error(
    "{kind} {name:?} in namespace {namespace:?}{} exists and is not owned by {owner_kind} {owner:?}; it is left as it is (rename or remove it)",
    cluster.as_deref().map(|c| format!(" on cluster {c:?}")).unwrap_or_default()
)]
pub struct Taken {
    /// The child's kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// The target cluster it is on; `None` on the management cluster.
    pub cluster: Option<String>,
    /// The owner's kind.
    pub owner_kind: String,
    /// The owner's name.
    pub owner: String,
}

/// The longest value a label may carry: a CR whose name is longer cannot own remote children.
pub const MAX_LABEL_VALUE_LENGTH: usize = 63;

/// The three labels that record ownership of a child on a target cluster, where no
/// ownerReference can point at the CR (it lives on the management cluster).
pub fn owner_labels(kind: &str, name: &str, namespace: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (OWNER_KIND_LABEL.to_string(), kind.to_string()),
        (OWNER_NAME_LABEL.to_string(), name.to_string()),
        (OWNER_NAMESPACE_LABEL.to_string(), namespace.to_string()),
    ])
}

/// The label selector of [`owner_labels`].
pub fn owner_selector(kind: &str, name: &str, namespace: &str) -> String {
    owner_labels(kind, name, namespace)
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Why `owner` cannot own children on a target cluster: its name does not fit a label value.
pub fn label_owner_refusal(owner_name: &str) -> Option<String> {
    (owner_name.len() > MAX_LABEL_VALUE_LENGTH).then(|| {
        format!(
            "metadata.name is {} characters; a CR placing children on a target cluster must have at most {MAX_LABEL_VALUE_LENGTH}, since it is recorded in the {OWNER_NAME_LABEL} label",
            owner_name.len()
        )
    })
}

/// Whether `object` belongs to `owner`: a controller ownerReference to its uid (the owner's
/// own cluster, or what an older operator left on a target), or the three owner labels naming
/// it, in its namespace.
pub fn owned_by<K: Resource, O: Resource<DynamicType = ()>>(object: &K, owner: &O) -> bool {
    labelled_for(object.meta(), &Owner::of(owner))
}

/// [`owned_by`] over an object's metadata and an [`Owner`].
fn labelled_for(meta: &ObjectMeta, owner: &Owner) -> bool {
    let labels = meta.labels.clone().unwrap_or_default();
    let labelled = meta.namespace.as_deref() == Some(owner.namespace.as_str())
        && owner_labels(&owner.kind, &owner.name, &owner.namespace)
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v));
    controlled_by(meta, owner) || labelled
}

/// Whether `object` was made for `owner` on the cluster `cluster` names (`None`: the
/// management cluster): there, only a controller ownerReference to the owner's uid counts (a
/// foreign object that merely shares the name, or copies the labels, is not ours); on a target
/// cluster, which holds no ownerReferences to the management cluster's objects, the owner
/// labels ([`owned_by`]).
pub fn made_for<K: Resource, O: Resource<DynamicType = ()>>(
    cluster: Option<&str>,
    object: &K,
    owner: &O,
) -> bool {
    is_ours(cluster, object.meta(), &Owner::of(owner))
}

/// The ownership rule every write of a child passes (see [`made_for`]): whether the object
/// `meta` describes, on `cluster`, was made for `owner`.
pub fn is_ours(cluster: Option<&str>, meta: &ObjectMeta, owner: &Owner) -> bool {
    match cluster {
        Some(_) => labelled_for(meta, owner),
        None => controlled_by(meta, owner),
    }
}

/// Whether `meta` carries a controller ownerReference to `owner`'s uid (never true for an
/// owner without one).
fn controlled_by(meta: &ObjectMeta, owner: &Owner) -> bool {
    let Some(uid) = owner.uid.as_deref() else {
        return false;
    };
    meta.owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true) && o.uid == uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_longer_than_a_label_value_cannot_own_remote_children() {
        assert_eq!(label_owner_refusal(&"a".repeat(63)), None);
        let refusal = label_owner_refusal(&"a".repeat(64)).unwrap();
        assert!(refusal.contains("64 characters") && refusal.contains(OWNER_NAME_LABEL));
        assert_eq!(
            owner_selector("Barbican", "kms", "openstack"),
            "openstack.c5c3.io/owner-kind=Barbican,openstack.c5c3.io/owner-name=kms,openstack.c5c3.io/owner-namespace=openstack"
        );
    }
}
