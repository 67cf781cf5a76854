//! A volume provisioner for an API server that has none: a control plane of Kubernetes' own
//! binaries with kwok's nodes has no storage driver, so a PersistentVolumeClaim (the
//! `dbBackup` claim barbican's dump Job mounts) stays Pending and its pod unschedulable. For
//! each Pending claim without a storage class it creates a PersistentVolume pre-bound to the
//! claim (`claimRef`), as a dynamic provisioner does; kube-controller-manager's binder does
//! the binding. A claim with a storage class is its class's provisioner's (kind's and k3s's
//! default class is set on every claim by admission), so on those clusters this does nothing.
//! The volume goes with its claim.

use futures::StreamExt;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, PostParams},
    runtime::{WatchStreamExt, watcher},
};
use serde_json::json;

/// The label that marks a volume as this provisioner's.
pub const PROVISIONED_BY: &str = "barbican-fakes/provisioned-for";

/// Provisions volumes until dropped.
#[derive(Debug)]
pub struct Provisioner {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Provisioner {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The name of the volume for the claim with `uid`.
pub fn volume_name(uid: &str) -> String {
    format!("pvc-{uid}")
}

/// The volume a Pending claim without a class gets, or `None` when the claim is not this
/// provisioner's (bound, classed, or not yet given a uid).
pub fn volume_for(claim: &PersistentVolumeClaim) -> Option<serde_json::Value> {
    let uid = claim.uid()?;
    let spec = claim.spec.as_ref()?;
    let classed = spec
        .storage_class_name
        .as_deref()
        .is_some_and(|c| !c.is_empty());
    let bound = spec.volume_name.as_deref().is_some_and(|v| !v.is_empty());
    let pending = claim
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .is_none_or(|p| p == "Pending");
    if classed || bound || !pending || claim.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let storage = spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
        .map_or_else(|| "1Gi".to_string(), |q| q.0.clone());
    let modes = spec
        .access_modes
        .clone()
        .unwrap_or_else(|| vec!["ReadWriteOnce".into()]);
    Some(json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": volume_name(&uid), "labels": {PROVISIONED_BY: uid}},
        "spec": {
            "capacity": {"storage": storage},
            "accessModes": modes,
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "hostPath": {"path": format!("/var/lib/barbican-fakes/{uid}")},
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "namespace": claim.namespace().unwrap_or_default(),
                "name": claim.name_any(), "uid": uid},
        },
    }))
}

impl Provisioner {
    /// Starts on the API server `client` talks to when it serves PersistentVolumes (the sim
    /// does not: its kubelet mounts a claim without one) and a list of them succeeds.
    pub async fn start_where_served(client: Client) -> Option<Self> {
        let volumes: Api<PersistentVolume> = Api::all(client.clone());
        volumes
            .list(&kube::api::ListParams::default().limit(1))
            .await
            .ok()?;
        Some(Self::start(client))
    }

    /// Watches every namespace's claims through `client`.
    pub fn start(client: Client) -> Self {
        let task = tokio::spawn(async move {
            let claims: Api<PersistentVolumeClaim> = Api::all(client.clone());
            let volumes: Api<PersistentVolume> = Api::all(client);
            let mut events = watcher(claims, watcher::Config::default())
                .default_backoff()
                .boxed();
            while let Some(event) = events.next().await {
                match event {
                    Ok(watcher::Event::Apply(claim) | watcher::Event::InitApply(claim)) => {
                        let Some(volume) = volume_for(&claim) else {
                            continue;
                        };
                        let Ok(volume) = serde_json::from_value::<PersistentVolume>(volume) else {
                            continue;
                        };
                        // One already there (409) is this claim's; another failure is retried
                        // with the claim's next event, as a provisioner's work queue would.
                        let _ = volumes.create(&PostParams::default(), &volume).await;
                    }
                    Ok(watcher::Event::Delete(claim)) => {
                        if let Some(uid) = claim.uid() {
                            let _ = volumes
                                .delete(&volume_name(&uid), &DeleteParams::default())
                                .await;
                        }
                    }
                    _ => {}
                }
            }
        });
        Self { task }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(spec: serde_json::Value, status: serde_json::Value) -> PersistentVolumeClaim {
        serde_json::from_value(json!({
            "metadata": {"name": "barbican-db-backups", "namespace": "openstack", "uid": "u-1"},
            "spec": spec, "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn a_pending_claim_without_a_class_gets_a_volume_bound_to_it() {
        let pending = claim(
            json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}),
            json!({"phase": "Pending"}),
        );
        let volume = volume_for(&pending).unwrap();
        assert_eq!(volume["metadata"]["name"], "pvc-u-1");
        assert_eq!(volume["spec"]["capacity"]["storage"], "10Gi");
        assert_eq!(volume["spec"]["accessModes"], json!(["ReadWriteOnce"]));
        assert_eq!(
            volume["spec"]["claimRef"],
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "namespace": "openstack", "name": "barbican-db-backups", "uid": "u-1"})
        );
        // It parses as a PersistentVolume.
        serde_json::from_value::<PersistentVolume>(volume).unwrap();
    }

    #[test]
    fn a_classed_bound_or_settled_claim_is_not_this_provisioners() {
        let classed = claim(
            json!({"storageClassName": "standard"}),
            json!({"phase": "Pending"}),
        );
        let bound = claim(json!({"volumeName": "pv-1"}), json!({"phase": "Pending"}));
        let settled = claim(json!({}), json!({"phase": "Bound"}));
        for claim in [classed, bound, settled] {
            assert_eq!(volume_for(&claim), None, "{claim:?}");
        }
    }
}
