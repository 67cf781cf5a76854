//! What a pod's task is given and what it reports: the [`PodContext`] the kubelet starts it
//! with, and the [`PodStatus`] it keeps current for the kubelet to write. The pod's life
//! ([`super::pod`]), its containers ([`super::container`]) and its directory
//! ([`super::layout`]) all read these, and none of them depends on another through them.

use std::{
    path::PathBuf,
    sync::{Arc, Mutex},
};

use serde_json::{Value, json};

use super::{
    logs::PodLogs,
    sandbox::{Crun, PodNetwork},
    volumes::SharedLookup,
};

/// What the kubelet knows of one container.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContainerStatus {
    /// The container's name.
    pub name: String,
    /// Its image.
    pub image: String,
    /// Whether it passes its readiness probe (or runs, without one).
    pub ready: bool,
    /// Whether it passed its startup probe (or runs, without one).
    pub started: bool,
    /// Restarts so far.
    pub restarts: u32,
    /// Its `state` as the API shows it (`waiting`, `running` or `terminated`).
    pub state: Value,
}

/// What the kubelet knows of one pod.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodStatus {
    /// `Pending`, `Running`, `Succeeded` or `Failed`.
    pub phase: String,
    /// The pod's address, once its sandbox exists.
    pub ip: Option<String>,
    /// The sim's address on the pod's network.
    pub host_ip: Option<String>,
    /// Each container.
    pub containers: Vec<ContainerStatus>,
    /// When the kubelet took the pod.
    pub start_time: String,
}

impl PodStatus {
    /// Whether every container is ready.
    pub fn ready(&self) -> bool {
        self.phase == "Running" && self.containers.iter().all(|c| c.ready)
    }

    /// The pod's `status` as the API shows it.
    pub fn to_json(&self) -> Value {
        let ready = if self.ready() { "True" } else { "False" };
        let mut status = json!({
            "phase": self.phase,
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Initialized", "status": "True"},
                {"type": "ContainersReady", "status": ready},
                {"type": "Ready", "status": ready},
            ],
            "startTime": self.start_time,
            "qosClass": "Burstable",
            "containerStatuses": self.containers.iter().map(|c| json!({
                "name": c.name, "image": c.image, "imageID": "", "ready": c.ready,
                "started": c.started, "restartCount": c.restarts, "state": c.state,
            })).collect::<Vec<_>>(),
        });
        if let Some(ip) = &self.ip {
            status["podIP"] = json!(ip);
            status["podIPs"] = json!([{"ip": ip}]);
        }
        if let Some(ip) = &self.host_ip {
            status["hostIP"] = json!(ip);
            status["hostIPs"] = json!([{"ip": ip}]);
        }
        status
    }
}

/// Everything a pod's task needs.
pub struct PodContext {
    /// The Pod as created.
    pub pod: Value,
    /// The root its image maps to (its `bin` goes first on `PATH`).
    pub root: PathBuf,
    /// Its image's entrypoint (for a container without `command`).
    pub entrypoint: Vec<String>,
    /// The pod's own directory (volumes, hosts file, logs, overlay layers).
    pub dir: PathBuf,
    /// Where the PersistentVolumeClaims of the pod's namespace keep their files, one
    /// directory each ([`super::config::KubeletConfig::claims_dir`]).
    pub claims: PathBuf,
    /// Its network.
    pub network: PodNetwork,
    /// Reads the Secrets and ConfigMaps of the pod's namespace.
    pub lookup: SharedLookup,
    /// The `/etc/hosts` the pod sees (rewritten in place as Services appear).
    pub hosts: PathBuf,
    /// Where container output is registered.
    pub logs: PodLogs,
    /// The shared status.
    pub status: Arc<Mutex<PodStatus>>,
    /// The OCI runtime.
    pub crun: Crun,
    /// Names the pod's containers for crun (`<prefix>-<container index>`): the kubelet's own
    /// numbers, never a name from the pod spec.
    pub container_prefix: String,
    /// The first host ID of the pod's user namespace ([`oci::id_base`]).
    pub id_base: u32,
}

/// What a pod's volumes read, from the cluster as the kubelet sees it: the Secrets,
/// ConfigMaps and PersistentVolumeClaims of `namespace`, the pod itself (the downward API),
/// and tokens of its service account for an audience.
pub(super) fn lookup(cluster: &crate::Cluster, namespace: &str, pod: &Value) -> SharedLookup {
    let cluster = cluster.clone();
    let ns = namespace.to_string();
    let the_pod = pod.clone();
    let account = pod["spec"]["serviceAccountName"]
        .as_str()
        .unwrap_or("default")
        .to_string();
    Box::new(move |kind: &str, object: &str| {
        let plural = match kind {
            "Secret" => "secrets",
            "ConfigMap" => "configmaps",
            "PersistentVolumeClaim" => "persistentvolumeclaims",
            "Pod" => return Some(the_pod.clone()),
            "ServiceAccountToken" => {
                let audiences: Vec<String> = (!object.is_empty())
                    .then(|| object.to_string())
                    .into_iter()
                    .collect();
                // A projected token is bound to its pod, as the kubelet asks for it.
                let pod_name = the_pod["metadata"]["name"].as_str().unwrap_or_default();
                let pod_uid = the_pod["metadata"]["uid"].as_str().unwrap_or_default();
                let token = cluster
                    .service_account_token(
                        &ns,
                        &account,
                        &audiences,
                        super::api_access::TOKEN_SECONDS as i64,
                        Some((pod_name, pod_uid)),
                    )
                    .ok()?;
                return Some(json!({"token": token}));
            }
            _ => return None,
        };
        cluster.kubelet_view(|store, registry| {
            registry
                .get("", "v1", plural)
                .and_then(|t| store.get(t, &ns, object).ok())
        })
    })
}
