//! How pods and Services find each other on the sim's kubelet: each Service that selects
//! this kubelet's pods routed to a ready one, and each pod's `/etc/hosts` and
//! `/etc/resolv.conf` naming every Service.

use std::{collections::BTreeSet, net::SocketAddr};

use serde_json::Value;

use super::{Node, View, lock, text};

impl Node {
    /// Points each Service that selects pods of this kubelet at a ready one.
    pub(super) fn route_services(&mut self, view: &View) {
        let registry = self.cluster.services();
        let pods: Vec<&Value> = view.pods.values().flatten().collect();
        let mut routed = BTreeSet::new();
        for service in &view.services {
            let Some(selector) = service["spec"]["selector"]
                .as_object()
                .filter(|s| !s.is_empty())
            else {
                continue;
            };
            let namespace = text(service, "/metadata/namespace");
            let selected: Vec<&&Value> = pods
                .iter()
                .filter(|p| text(p, "/metadata/namespace") == namespace)
                .filter(|p| {
                    selector
                        .iter()
                        .all(|(k, v)| &p["metadata"]["labels"][k] == v)
                })
                .collect();
            if selected.is_empty() {
                continue;
            }
            let name = text(service, "/metadata/name");
            let ready = selected
                .iter()
                .filter(|p| self.ready(p))
                .filter_map(|p| Some((*p, self.pods.get(text(p, "/metadata/uid"))?)))
                .min_by_key(|(p, _)| text(p, "/metadata/name").to_string());
            for port in service["spec"]["ports"].as_array().into_iter().flatten() {
                let Some(number) = port["port"].as_u64().and_then(|p| u16::try_from(p).ok()) else {
                    continue;
                };
                let key = (namespace.to_string(), name.to_string(), number);
                let target = ready.and_then(|(pod, running)| {
                    let ip = lock(&running.handle.status).ip.clone()?;
                    let port = target_port(pod, port)?;
                    format!("{ip}:{port}").parse::<SocketAddr>().ok()
                });
                match target {
                    Some(addr) => {
                        registry.register(namespace, name, number, addr);
                        routed.insert(key);
                    }
                    None => registry.unregister(namespace, name, number),
                }
            }
        }
        for key in self.registered.difference(&routed) {
            registry.unregister(&key.0, &key.1, key.2);
        }
        self.registered = routed;
    }

    /// Rewrites every running pod's hosts file in place (the pods' mounts see the change).
    pub(super) fn rewrite_hosts(&self) {
        for running in self.pods.values() {
            let Some(ip) = lock(&running.handle.status).ip.clone() else {
                continue;
            };
            let services = self.proxies.hosts(&running.namespace);
            let _ = std::fs::write(
                &running.handle.hosts,
                hosts_file(&ip, &running.name, &services),
            );
        }
    }
}

/// A pod's `/etc/resolv.conf`.
pub(super) const RESOLV_CONF: &str = "# barbican-sim's kubelet: names resolve through /etc/hosts only\noptions timeout:1 attempts:1\n";

/// A pod's `/etc/hosts`: itself, then every Service name.
pub(super) fn hosts_file(ip: &str, pod: &str, services: &str) -> String {
    format!("127.0.0.1 localhost\n::1 localhost\n{ip} {pod}\n{services}")
}

/// The container port a Service port reaches on `pod`: `targetPort` as a number, or the
/// container port of that name, or the Service port itself.
pub fn target_port(pod: &Value, port: &Value) -> Option<u16> {
    match &port["targetPort"] {
        Value::Number(n) => n.as_u64().and_then(|p| u16::try_from(p).ok()),
        Value::String(name) => pod["spec"]["containers"]
            .as_array()?
            .iter()
            .flat_map(|c| c["ports"].as_array().cloned().unwrap_or_default())
            .find(|p| p["name"] == name.as_str())?["containerPort"]
            .as_u64()
            .and_then(|p| u16::try_from(p).ok()),
        _ => port["port"].as_u64().and_then(|p| u16::try_from(p).ok()),
    }
}
