//! The cluster's Services as pods reach them: every name in the [`ServiceRegistry`] gets an
//! address of its own on the sim's loopback (`10.<octet>.x.y`), written into each pod's
//! `/etc/hosts`, and a listener on that address for each of its ports that forwards every
//! connection to whatever the registry then names (a fake, a real MariaDB, another pod).
//! This is kube-proxy's old userspace mode; TLS passes through untouched, so a client still
//! verifies the in-cluster name.

use std::{
    collections::BTreeMap,
    net::{Ipv4Addr, SocketAddr},
};

use tokio::{net::TcpListener, task::JoinHandle};

use crate::services::ServiceRegistry;

/// Address numbers, shared by every kubelet of this process: two clusters in one process
/// each give their (same-named) Services addresses of their own.
static ADDRESSES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(10);

/// The addresses and listeners standing in for the registry's names.
pub struct ServiceProxies {
    registry: ServiceRegistry,
    octet: u8,
    /// The label the addresses carry on the loopback, `lo:bs<run>`: what a later run reaps
    /// when this one dies without removing them ([`crate::leftovers`]).
    label: String,
    addresses: BTreeMap<String, Ipv4Addr>,
    listeners: BTreeMap<(Ipv4Addr, u16), JoinHandle<()>>,
    /// What keeps pods to these listeners on the host, when nftables is there.
    filter: Option<super::firewall::HostFilter>,
}

impl Drop for ServiceProxies {
    fn drop(&mut self) {
        for task in self.listeners.values() {
            task.abort();
        }
    }
}

/// The `host:port address` lines of [`ServiceRegistry::overrides`] as (host, port).
pub fn names(overrides: &str) -> Vec<(String, u16)> {
    overrides
        .lines()
        .filter_map(|line| {
            let (authority, _) = line.split_once(' ')?;
            let (host, port) = authority.rsplit_once(':')?;
            Some((host.to_string(), port.parse().ok()?))
        })
        .collect()
}

impl ServiceProxies {
    /// No names yet; addresses come from `10.<octet>.0.0/16`.
    pub fn new(registry: ServiceRegistry, octet: u8) -> Self {
        Self {
            registry,
            octet,
            label: format!("lo:bs{}", crate::leftovers::run_id()),
            addresses: BTreeMap::new(),
            listeners: BTreeMap::new(),
            filter: None,
        }
    }

    /// Keeps the pods of kubelet `kubelet` to these listeners on the host (see
    /// [`super::firewall`]).
    pub async fn filter_pods(&mut self, kubelet: u32) {
        self.filter = super::firewall::HostFilter::install(kubelet).await;
    }

    /// Gives every name the registry holds now an address and a listener per port; true when
    /// a name was added (pods' hosts files are then out of date).
    pub async fn refresh(&mut self) -> Result<bool, String> {
        let mut added = false;
        for (host, port) in names(&self.registry.overrides()) {
            let ip = match self.addresses.get(&host) {
                Some(ip) => *ip,
                None => {
                    let ip = self.claim_address().await?;
                    self.addresses.insert(host.clone(), ip);
                    added = true;
                    ip
                }
            };
            if self.listeners.contains_key(&(ip, port)) {
                continue;
            }
            let listener = TcpListener::bind(SocketAddr::from((ip, port)))
                .await
                .map_err(|e| format!("listening on {ip}:{port} for {host}: {e}"))?;
            if let Some(filter) = &self.filter {
                filter.allow(ip, port).await?;
            }
            let registry = self.registry.clone();
            let task = tokio::spawn(forward(listener, registry, host, port));
            self.listeners.insert((ip, port), task);
        }
        Ok(added)
    }

    /// A Service address of this run's own on the loopback. An address another run on
    /// this host holds (a sim beside this one counts from the same number) is skipped, not
    /// taken over; one it adds between the look and the add is found by the add failing.
    async fn claim_address(&self) -> Result<Ipv4Addr, String> {
        let taken = super::sandbox::host_addresses();
        loop {
            let n = ADDRESSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if n >= 65_000 {
                return Err("the sim's kubelet ran out of Service addresses".into());
            }
            let [_, _, hi, lo] = n.to_be_bytes();
            let ip = Ipv4Addr::new(10, self.octet, hi, lo);
            if taken.contains(&ip) {
                continue;
            }
            let output = tokio::process::Command::new("ip")
                .args(["addr", "add", &format!("{ip}/32"), "dev", "lo"])
                .args(["label", &self.label])
                .output()
                .await
                .map_err(|e| format!("ip addr add {ip}/32 dev lo: {e}"))?;
            let error = String::from_utf8_lossy(&output.stderr);
            if output.status.success() {
                return Ok(ip);
            }
            if !error.contains("already assigned") {
                return Err(format!("ip addr add {ip}/32 dev lo: {}", error.trim()));
            }
        }
    }

    /// `/etc/hosts` lines for every name, as a pod in `namespace` resolves them: a Service's
    /// `<svc>.<ns>.svc` also as `<svc>.<ns>`, and as `<svc>` in its own namespace (what the
    /// cluster DNS's search domains give a pod).
    pub fn hosts(&self, namespace: &str) -> String {
        hosts(&self.addresses, namespace)
    }

    /// Removes the addresses from the loopback.
    pub async fn remove(&mut self) {
        for ip in self.addresses.values() {
            let _ = tokio::process::Command::new("ip")
                .args(["addr", "del", &format!("{ip}/32"), "dev", "lo"])
                .output()
                .await;
        }
        self.addresses.clear();
        if let Some(filter) = self.filter.take() {
            filter.remove().await;
        }
    }
}

/// `/etc/hosts` lines for `addresses` as a pod in `namespace` resolves them (see
/// [`ServiceProxies::hosts`]).
pub fn hosts(addresses: &BTreeMap<String, Ipv4Addr>, namespace: &str) -> String {
    addresses
        .iter()
        .map(|(host, ip)| {
            let mut names = host.clone();
            if let Some((service, ns)) = host
                .strip_suffix(".svc")
                .and_then(|rest| rest.split_once('.'))
            {
                names.push_str(&format!(" {service}.{ns}"));
                if ns == namespace {
                    names.push_str(&format!(" {service}"));
                }
            }
            format!("{ip} {names}\n")
        })
        .collect()
}

/// Forwards each connection to what the registry names `host:port` at that moment.
async fn forward(listener: TcpListener, registry: ServiceRegistry, host: String, port: u16) {
    while let Ok((mut inbound, _)) = listener.accept().await {
        let Some(target) = registry.resolve(&host, port) else {
            continue;
        };
        tokio::spawn(async move {
            if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            }
        });
    }
}
