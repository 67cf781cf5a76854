//! What a pod may reach on the host: only the Service addresses and ports the kubelet's
//! proxies listen on ([`super::proxy`]). A host-side nftables table of the sim process
//! accepts, from the pods' veth interfaces, replies to connections the host opened (probes,
//! port-forwards, proxied Service traffic) and new connections to a registered (address,
//! port) pair, and drops the rest: a pod cannot reach a host process listening on 0.0.0.0
//! (not through its gateway, and not on a Service address's other ports), as a cluster's
//! network policy keeps pods off the node. Without `nft` on the host (Debian's `nftables`) the
//! kubelet says so once and pods reach the host as before.

use std::net::Ipv4Addr;

use tokio::io::AsyncWriteExt;

/// The nftables ruleset of the table `table` filtering what arrives from the interfaces
/// `interfaces` (an nft interface pattern: `bs<kubelet>h*`).
pub fn ruleset(table: &str, interfaces: &str) -> String {
    format!(
        "table inet {table} {{\n  set services {{ type ipv4_addr . inet_service; }}\n  chain input {{\n    type filter hook input priority 0; policy accept;\n    iifname \"{interfaces}\" ct state established,related accept\n    iifname \"{interfaces}\" ip daddr . tcp dport @services accept\n    iifname \"{interfaces}\" drop\n  }}\n}}\n"
    )
}

/// The table of one kubelet, present while it runs.
#[derive(Debug)]
pub struct HostFilter {
    table: String,
}

async fn nft(args: &[&str], input: Option<&str>) -> Result<(), String> {
    let mut command = tokio::process::Command::new("nft");
    command
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().map_err(|e| format!("nft: {e}"))?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin
            .write_all(text.as_bytes())
            .await
            .map_err(|e| format!("nft: {e}"))?;
    }
    let output = child
        .wait_with_output()
        .await
        .map_err(|e| format!("nft: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "nft {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// The table this process's kubelets share, with how many hold it. Kubelets of one process
/// share an interface prefix (their pod numbers are distinct), and nftables drops a packet
/// any base chain drops, so two tables over the same interfaces would each drop the other's
/// Services: one table holds every Service of the process.
static SHARED: tokio::sync::Mutex<Option<(String, usize)>> = tokio::sync::Mutex::const_new(None);

impl HostFilter {
    /// Installs the table of kubelet `kubelet`'s process (replacing one a dead process of the
    /// same id left), or joins it; `None`, said on standard error, where nftables cannot be
    /// used.
    pub async fn install(kubelet: u32) -> Option<HostFilter> {
        let mut shared = SHARED.lock().await;
        if let Some((table, holders)) = shared.as_mut() {
            *holders += 1;
            return Some(HostFilter {
                table: table.clone(),
            });
        }
        let table = format!("bsim-{kubelet}");
        let _ = nft(&["delete", "table", "inet", &table], None).await;
        let rules = ruleset(&table, &format!("bs{kubelet}h*"));
        match nft(&["-f", "-"], Some(&rules)).await {
            Ok(()) => {
                *shared = Some((table.clone(), 1));
                Some(HostFilter { table })
            }
            Err(e) => {
                eprintln!(
                    "barbican-sim kubelet: pods can reach every host listener ({e}; install nftables to keep them to the Services)"
                );
                None
            }
        }
    }

    /// Lets pods open connections to `ip:port` (a Service's address and port).
    pub async fn allow(&self, ip: Ipv4Addr, port: u16) -> Result<(), String> {
        let element = format!("{{ {ip} . {port} }}");
        nft(
            &["add", "element", "inet", &self.table, "services", &element],
            None,
        )
        .await
    }

    /// Leaves the table; the last kubelet of the process to leave removes it.
    pub async fn remove(&self) {
        let mut shared = SHARED.lock().await;
        if let Some((_, holders)) = shared.as_mut() {
            *holders = holders.saturating_sub(1);
            if *holders > 0 {
                return;
            }
        }
        *shared = None;
        let _ = nft(&["delete", "table", "inet", &self.table], None).await;
    }
}
