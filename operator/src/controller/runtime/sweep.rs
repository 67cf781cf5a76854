//! Children swept per pass, as the well-kept operators do: a pass records every child it
//! read, wrote or kept by name (in [`super::children::Children`]); after it, the owner's
//! children of each kind whose steps all went through that it did not record are deleted
//! (which kinds: `Pipeline::sweepable`). A child the spec no longer asks for (an HPA, a NetworkPolicy, an HTTPRoute, a
//! MariaDB User once credentials are dynamic, an old config Secret) therefore goes without a
//! step deciding to delete it, and a step that stops asking for a child cannot forget to.

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::ownership::{Owner, is_ours};

/// Of `live`, the objects of `kind` on `cluster` (`None`: the management cluster), the ones a
/// sweep for `owner` deletes: its own ([`is_ours`]), not already going, not in `kept`, and not
/// controlled by another object. The last matters on a target cluster, where ownership is by
/// labels: the Jobs a CronJob makes carry its template's labels but are the CronJob's.
pub fn unkept<'a>(
    cluster: Option<&str>,
    owner: &Owner,
    kind: &str,
    kept: &BTreeSet<(String, String)>,
    live: Vec<&'a ObjectMeta>,
) -> Vec<&'a ObjectMeta> {
    live.into_iter()
        .filter(|meta| {
            let name = meta.name.clone().unwrap_or_default();
            let controlled_elsewhere = meta
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && Some(&o.uid) != owner.uid.as_ref());
            is_ours(cluster, meta, owner)
                && meta.deletion_timestamp.is_none()
                && !controlled_elsewhere
                && !kept.contains(&(kind.to_string(), name))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::runtime::ownership::owner_labels;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};

    fn owner() -> Owner {
        Owner {
            kind: "Barbican".into(),
            name: "kms".into(),
            namespace: "openstack".into(),
            uid: Some("uid-kms".into()),
        }
    }

    fn controlled_by(uid: &str) -> Option<Vec<OwnerReference>> {
        Some(vec![OwnerReference {
            uid: uid.into(),
            controller: Some(true),
            ..OwnerReference::default()
        }])
    }

    fn meta(name: &str, owners: Option<Vec<OwnerReference>>, labelled: bool) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some("openstack".into()),
            owner_references: owners,
            labels: labelled.then(|| owner_labels("Barbican", "kms", "openstack")),
            ..ObjectMeta::default()
        }
    }

    fn names(swept: Vec<&ObjectMeta>) -> Vec<String> {
        swept.into_iter().filter_map(|m| m.name.clone()).collect()
    }

    #[test]
    fn on_the_management_cluster_only_unkept_children_the_owner_controls_go() {
        let kept = BTreeSet::from([("NetworkPolicy".to_string(), "kms".to_string())]);
        let mut going = meta("kms-old", controlled_by("uid-kms"), false);
        going.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        let live = [
            meta("kms", controlled_by("uid-kms"), false),
            meta("kms-extra", controlled_by("uid-kms"), false),
            meta("foreign", controlled_by("uid-other"), false),
            meta("labelled-only", None, true),
            going,
        ];
        let swept = unkept(
            None,
            &owner(),
            "NetworkPolicy",
            &kept,
            live.iter().collect(),
        );
        assert_eq!(names(swept), ["kms-extra"]);
        // The same name of another kind is not kept by it.
        let swept = unkept(None, &owner(), "Service", &kept, live.iter().collect());
        assert_eq!(names(swept), ["kms", "kms-extra"]);
    }

    #[test]
    fn on_a_target_cluster_the_owner_labels_count_but_not_on_objects_another_controls() {
        let kept = BTreeSet::new();
        let live = [
            meta("kms", None, true),
            // A Job the db-clean CronJob made: its template's labels, the CronJob's.
            meta("kms-db-clean-1", controlled_by("uid-cronjob"), true),
            meta("unlabelled", None, false),
        ];
        let swept = unkept(
            Some("edge-1"),
            &owner(),
            "Job",
            &kept,
            live.iter().collect(),
        );
        assert_eq!(names(swept), ["kms"]);
    }
}
