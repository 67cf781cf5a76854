//! A TCP tunnel to a Service on a target cluster, through its API server's `pods/portforward`:
//! the operator has no route into a target's network, so a placed managed store reaches its
//! OpenBao this way. The tunnel listens on a loopback port; every connection made to it is
//! forwarded to a ready Pod behind the Service. Callers keep the Service's URL and point only
//! the address at the tunnel ([`Tunnel::resolver`]), so TLS still verifies the in-cluster name.

use std::net::SocketAddr;

use k8s_openapi::api::{
    core::v1::{Pod, Service},
    discovery::v1::EndpointSlice,
};
use kube::{Api, Client, api::ListParams};

use crate::resolve::Resolve;

/// Why a tunnel could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum TunnelError {
    /// No ready Pod stands behind the Service.
    #[error("no ready endpoints for service {namespace}/{service}")]
    NoReadyEndpoints {
        /// The Service's namespace.
        namespace: String,
        /// The Service.
        service: String,
    },
    /// Reading the Service or its EndpointSlices failed.
    #[error("reading the endpoints of service {namespace}/{service}: {source}")]
    Api {
        /// The Service's namespace.
        namespace: String,
        /// The Service.
        service: String,
        /// The client's error.
        source: kube::Error,
    },
    /// The local listener could not be bound.
    #[error("binding the tunnel's local port: {0}")]
    Bind(std::io::Error),
}

/// Where a Service port leads: a Pod and its container port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backend {
    /// The Pod.
    pub pod: String,
    /// The port on the Pod.
    pub port: u16,
}

/// The ready Pod behind `service`'s `port`, read from its EndpointSlices (pure): the
/// Service port's name picks the slice port (its only one when unnamed); an endpoint counts
/// unless it says it is not ready, and it must name its Pod.
pub fn backend(service: &Service, slices: &[EndpointSlice], port: u16) -> Option<Backend> {
    let service_port = service
        .spec
        .as_ref()?
        .ports
        .iter()
        .flatten()
        .find(|p| p.port == i32::from(port))?;
    slices.iter().find_map(|slice| {
        let target = slice.ports.iter().flatten().find(|p| {
            p.name == service_port.name || slice.ports.as_ref().is_some_and(|all| all.len() == 1)
        })?;
        let pod = slice.endpoints.iter().flatten().find_map(|e| {
            let ready = e.conditions.as_ref().and_then(|c| c.ready) != Some(false);
            let reference = e.target_ref.as_ref()?;
            (ready && reference.kind.as_deref() == Some("Pod")).then(|| reference.name.clone())?
        })?;
        Some(Backend {
            pod,
            port: u16::try_from(target.port?).ok()?,
        })
    })
}

/// An open tunnel; dropping it closes the listener and every forwarded connection.
pub struct Tunnel {
    addr: SocketAddr,
    host: String,
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Tunnel {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Tunnel {
    /// Opens a tunnel to `service`'s `port` in `namespace`, on the cluster `client` talks to.
    pub async fn open(
        client: &Client,
        namespace: &str,
        service: &str,
        port: u16,
    ) -> Result<Self, TunnelError> {
        let failed = |source| TunnelError::Api {
            namespace: namespace.to_string(),
            service: service.to_string(),
            source,
        };
        let none = || TunnelError::NoReadyEndpoints {
            namespace: namespace.to_string(),
            service: service.to_string(),
        };
        let Some(found) = Api::<Service>::namespaced(client.clone(), namespace)
            .get_opt(service)
            .await
            .map_err(failed)?
        else {
            return Err(none());
        };
        let slices = Api::<EndpointSlice>::namespaced(client.clone(), namespace)
            .list(&ListParams::default().labels(&format!("kubernetes.io/service-name={service}")))
            .await
            .map_err(failed)?
            .items;
        let backend = backend(&found, &slices, port).ok_or_else(none)?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(TunnelError::Bind)?;
        let addr = listener.local_addr().map_err(TunnelError::Bind)?;
        let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut local, _)) = listener.accept().await {
                let (pods, backend) = (pods.clone(), backend.clone());
                connections.spawn(async move {
                    let forwarded = pods.portforward(&backend.pod, &[backend.port]).await;
                    let mut forwarder = match forwarded {
                        Ok(forwarder) => forwarder,
                        Err(error) => {
                            tracing::debug!(%error, pod = %backend.pod, "port-forward refused");
                            return;
                        }
                    };
                    if let Some(mut remote) = forwarder.take_stream(backend.port) {
                        let _ = tokio::io::copy_bidirectional(&mut local, &mut remote).await;
                    }
                    forwarder.abort();
                });
            }
        });
        Ok(Self {
            addr,
            host: format!("{service}.{namespace}.svc"),
            port,
            task,
        })
    }

    /// The local address the tunnel listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// A resolver that sends `<service>.<namespace>.svc[.cluster.local]:<port>` into the
    /// tunnel and leaves every other name to DNS.
    pub fn resolver(&self) -> TunnelResolver {
        TunnelResolver {
            host: self.host.clone(),
            port: self.port,
            addr: self.addr,
        }
    }
}

/// See [`Tunnel::resolver`].
#[derive(Clone, Debug)]
pub struct TunnelResolver {
    host: String,
    port: u16,
    addr: SocketAddr,
}

impl Resolve for TunnelResolver {
    fn resolve(&self, host: &str, port: u16) -> Option<SocketAddr> {
        let host = host.trim_end_matches('.');
        let matches = host == self.host || host.strip_suffix(".cluster.local") == Some(&self.host);
        (matches && port == self.port).then_some(self.addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn service() -> Service {
        serde_json::from_value(
            json!({"metadata": {"name": "openbao", "namespace": "openstack"},
            "spec": {"ports": [{"name": "https", "port": 8200, "targetPort": 8200}]}}),
        )
        .unwrap()
    }

    fn slice(ready: Option<bool>, port: i32) -> EndpointSlice {
        serde_json::from_value(json!({
            "metadata": {"name": "openbao-x", "namespace": "openstack"},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.7"], "conditions": {"ready": ready},
                "targetRef": {"kind": "Pod", "name": "openbao-0", "namespace": "openstack"}}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}))
        .unwrap()
    }

    #[test]
    fn the_backend_is_a_ready_pod_behind_the_named_port() {
        assert_eq!(
            backend(&service(), &[slice(Some(true), 8201)], 8200),
            Some(Backend {
                pod: "openbao-0".into(),
                port: 8201
            })
        );
        assert!(
            backend(&service(), &[slice(None, 8200)], 8200).is_some(),
            "unknown readiness counts as ready"
        );
        assert_eq!(backend(&service(), &[slice(Some(false), 8200)], 8200), None);
        assert_eq!(backend(&service(), &[], 8200), None, "no slices");
        assert_eq!(
            backend(&service(), &[slice(Some(true), 8200)], 9999),
            None,
            "no such port"
        );
    }

    #[test]
    fn the_resolver_sends_only_the_services_name_into_the_tunnel() {
        let resolver = TunnelResolver {
            host: "openbao.openstack.svc".into(),
            port: 8200,
            addr: "127.0.0.1:4000".parse().unwrap(),
        };
        assert!(resolver.resolve("openbao.openstack.svc", 8200).is_some());
        assert!(
            resolver
                .resolve("openbao.openstack.svc.cluster.local", 8200)
                .is_some()
        );
        assert!(resolver.resolve("openbao.openstack.svc", 443).is_none());
        assert!(resolver.resolve("vault.legacy.svc", 8200).is_none());
    }
}
