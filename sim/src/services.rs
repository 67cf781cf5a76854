//! The service registry: in-cluster DNS names (`<svc>.<ns>.svc[.cluster.local][:port]`) mapped
//! to the loopback listeners that stand in for them.
//!
//! The sim's webhook calls resolve through it, and it is handed to in-process components (the
//! operator's health probe and OpenBao clients) as their resolver. Only the address is
//! substituted: TLS still verifies the in-cluster name, so a certificate has to be issued for
//! `<svc>.<ns>.svc` exactly as in a cluster.

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

/// A Service port (or a Pod port), by namespace, name and port number.
type Key = (String, String, u16);

/// The registry. Cheap to clone; clones share the entries.
#[derive(Clone, Debug, Default)]
pub struct ServiceRegistry {
    entries: Arc<Mutex<BTreeMap<Key, SocketAddr>>>,
    /// What `pods/<name>/portforward` reaches, by namespace, Pod and container port.
    pods: Arc<Mutex<BTreeMap<Key, SocketAddr>>>,
    /// Names outside the cluster, by host and port.
    hosts: Arc<Mutex<BTreeMap<(String, u16), SocketAddr>>>,
    /// Names another process's registry stands in for (see [`ServiceRegistry::set_peers`]),
    /// by host and port: consulted after this registry's own.
    peers: Arc<Mutex<BTreeMap<(String, u16), SocketAddr>>>,
    /// Counts the changes to the names (not the Pods), for whoever mirrors them elsewhere.
    changes: Arc<tokio::sync::watch::Sender<u64>>,
}

/// An in-cluster host name split into its Service and namespace.
fn service_of(host: &str) -> Option<(&str, &str)> {
    let host = host.trim_end_matches('.');
    let rest = host
        .strip_suffix(".svc.cluster.local")
        .or_else(|| host.strip_suffix(".svc"))?;
    let (name, namespace) = rest.split_once('.')?;
    (!name.is_empty() && !namespace.is_empty() && !namespace.contains('.'))
        .then_some((name, namespace))
}

impl ServiceRegistry {
    /// Routes `<name>.<namespace>.svc:<port>` to `addr`.
    pub fn register(&self, namespace: &str, name: &str, port: u16, addr: SocketAddr) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((namespace.into(), name.into(), port), addr);
        self.changed();
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Wakes whenever a name is registered or removed: what a copy of the names outside this
    /// process (an overrides file a separate operator process reads) waits on, so the copy
    /// is as current as the cluster's DNS would be instead of a polling interval behind.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The registry as an overrides file (`host:port address:port` per line, the format of
    /// the operator's `--resolve-overrides`): every Service as `<name>.<namespace>.svc` and
    /// `….svc.cluster.local`, and every name outside the cluster.
    pub fn overrides(&self) -> String {
        let mut out = String::new();
        for ((namespace, name, port), addr) in self
            .entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            out.push_str(&format!("{name}.{namespace}.svc:{port} {addr}\n"));
            out.push_str(&format!(
                "{name}.{namespace}.svc.cluster.local:{port} {addr}\n"
            ));
        }
        for ((host, port), addr) in self.hosts.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            out.push_str(&format!("{host}:{port} {addr}\n"));
        }
        for ((host, port), addr) in self.peers.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            out.push_str(&format!("{host}:{port} {addr}\n"));
        }
        out
    }

    /// Replaces the names another process's registry stands in for with the lines of
    /// `overrides` (its [`ServiceRegistry::overrides`]): a served cluster whose pods must
    /// reach fakes that run in the process driving it (the features' harness, whose operator
    /// runs as the cluster's pods). A name this registry holds itself is still its own.
    /// Returns how many names were read; a malformed line is refused naming it, and nothing
    /// is replaced then.
    pub fn set_peers(&self, overrides: &str) -> Result<usize, String> {
        let mut peers = BTreeMap::new();
        for line in overrides.lines().filter(|l| !l.trim().is_empty()) {
            let parsed = line.split_once(' ').and_then(|(authority, addr)| {
                let (host, port) = authority.rsplit_once(':')?;
                let addr: SocketAddr = addr.trim().parse().ok()?;
                Some(((host.to_string(), port.parse::<u16>().ok()?), addr))
            });
            let (key, addr) = parsed
                .ok_or_else(|| format!("{line:?} is not `<host>:<port> <address>:<port>`"))?;
            peers.insert(key, addr);
        }
        let read = peers.len();
        *self.peers.lock().unwrap_or_else(|p| p.into_inner()) = peers;
        self.changed();
        Ok(read)
    }

    /// Removes a Service port.
    pub fn unregister(&self, namespace: &str, name: &str, port: u16) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(namespace.into(), name.into(), port));
        self.changed();
    }

    /// The listener standing in for `host:port`: a registered name outside the cluster, or an
    /// in-cluster Service name (`<svc>.<ns>.svc` or `<svc>.<ns>.svc.cluster.local`) that has
    /// been registered.
    pub fn resolve(&self, host: &str, port: u16) -> Option<SocketAddr> {
        let outside = self
            .hosts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(host.trim_end_matches('.').to_string(), port))
            .copied();
        if outside.is_some() {
            return outside;
        }
        let own = service_of(host).and_then(|(name, namespace)| {
            self.entries
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&(namespace.to_string(), name.to_string(), port))
                .copied()
        });
        own.or_else(|| {
            self.peers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&(host.trim_end_matches('.').to_string(), port))
                .copied()
        })
    }

    /// Routes a name outside the cluster (`vault.example.com:8200`) to `addr`.
    pub fn register_host(&self, host: &str, port: u16, addr: SocketAddr) {
        self.hosts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((host.to_string(), port), addr);
        self.changed();
    }

    /// Routes the port-forwards to `<namespace>/<pod>:<port>` to `addr`.
    pub fn register_pod(&self, namespace: &str, pod: &str, port: u16, addr: SocketAddr) {
        self.pods
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((namespace.into(), pod.into(), port), addr);
    }

    /// Where a port-forward to `<namespace>/<pod>:<port>` goes, when anything stands in for it.
    pub fn pod(&self, namespace: &str, pod: &str, port: u16) -> Option<SocketAddr> {
        self.pods
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(namespace.to_string(), pod.to_string(), port))
            .copied()
    }

    /// Resolves `host[:port]` (port 443 when absent).
    pub fn resolve_authority(&self, authority: &str) -> Option<SocketAddr> {
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().ok()?),
            None => (authority, 443),
        };
        self.resolve(host, port)
    }
}
