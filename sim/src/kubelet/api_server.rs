//! The cluster's API for pods: served over TLS on loopback by a CA of the kubelet's own and
//! named `kubernetes.default.svc:443` in the service registry, and that CA published as
//! `kube-root-ca.crt` in every namespace. What a pod is given to reach it is
//! [`super::api_access`]'s.

use std::sync::Arc;

use tokio::task::JoinHandle;

use super::{KubeletError, api_access, text};
use crate::cluster::Cluster;

/// The cluster's API as pods reach it: served over TLS on loopback by a CA of the kubelet's
/// own, for service-account tokens only, and named `kubernetes.default.svc:443` in the service
/// registry (so pods reach it through their proxies; see [`api_access`]).
pub(super) struct ApiForPods {
    /// The CA's certificate, published as `kube-root-ca.crt` in every namespace.
    pub ca_pem: String,
    task: JoinHandle<()>,
}

impl ApiForPods {
    pub async fn start(cluster: &Cluster) -> Result<Self, KubeletError> {
        let authority = Arc::new(crate::tls::Authority::new());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| KubeletError::Host(format!("the API for pods: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| KubeletError::Host(format!("the API for pods: {e}")))?;
        let ca_pem = authority.ca_pem();
        let router = cluster.pod_router();
        let task = tokio::spawn(async move {
            let served =
                crate::tls::serve_router(listener, authority, api_access::SERVICE_HOST, router);
            if let Err(e) = served.await {
                eprintln!("barbican-sim kubelet: the API for pods stopped: {e}");
            }
        });
        cluster
            .services()
            .register("default", "kubernetes", api_access::SERVICE_PORT, addr);
        Ok(Self { ca_pem, task })
    }
}

impl Drop for ApiForPods {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Publishes `pem` as `kube-root-ca.crt` in every namespace, as kube-controller-manager's
/// root-CA publisher does (and again where it was deleted or changed).
pub(super) fn publish_root_ca(cluster: &Cluster, pem: &str) {
    cluster.kubelet_write(|store, registry| {
        let (Some(namespaces), Some(config_maps)) = (
            registry.get("", "v1", "namespaces"),
            registry.get("", "v1", "configmaps"),
        ) else {
            return;
        };
        for namespace in store.list(namespaces, None) {
            let ns = text(&namespace, "/metadata/name");
            if namespace["metadata"]["deletionTimestamp"].is_string() {
                continue;
            }
            let current = store.get(config_maps, ns, api_access::ROOT_CA_CONFIG_MAP);
            let wanted = api_access::root_ca(ns, pem);
            match current {
                Ok(found) if found["data"] == wanted["data"] => {}
                Ok(mut found) => {
                    found["data"] = wanted["data"].clone();
                    let name = api_access::ROOT_CA_CONFIG_MAP;
                    let _ = store.replace(config_maps, ns, name, found, false, false);
                }
                Err(_) => {
                    let _ = store.create(config_maps, ns, wanted, false);
                }
            }
        }
    });
}
