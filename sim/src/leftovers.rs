//! What a run of the sim leaves on the host while it runs, and how a later run reaps what a
//! dead one left.
//!
//! A run has a number, [`run_id`]: the process ID of the `barbican-sim` a user started (the
//! sim itself may run in a PID namespace of its own, where its process ID is 1, so that
//! number comes from the environment, [`RUN_ENV`]). Everything the run makes on the host is
//! named after it:
//!
//! | what | name |
//! |---|---|
//! | a pod's network namespace, and the kubelet's probe of `ip netns` | `bsim-<run>-<pod>`, `bsim-probe-<run>-<n>` |
//! | the host end of a pod's veth pair | `bs<run>h<pod>` |
//! | a Service address on the loopback | label `lo:bs<run>` |
//! | the nftables table keeping pods off the host | `inet bsim-<run>` |
//! | scratch directories (pods' state, MariaDB's data) | `<temp>/barbican-demo-<run>`, `<temp>/barbican-sim-kubelet-<run>` |
//!
//! A run is alive while its lock under [`RUN_DIR`] is held (the launcher and the kubelet hold
//! it shared; the kernel drops it when they die) or while a process with its number exists:
//! leftovers of a live run are never touched, whatever a PID's reuse makes of that rule.
//! [`reap_dead`] removes everything else; [`reap_run`] removes one run's things at its end.

use std::{
    fs::File,
    net::Ipv4Addr,
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
    process::Stdio,
};

/// The variable naming the run to a sim started inside the run's namespaces.
pub const RUN_ENV: &str = "BARBICAN_SIM_RUN";

/// Where the runs' locks live: host-wide, outside any directory a run removes.
pub const RUN_DIR: &str = "/run/barbican-sim/runs";

/// The prefixes of the scratch directories under the temporary directory that a run names
/// after itself.
pub const SCRATCH_PREFIXES: [&str; 2] = ["barbican-demo-", "barbican-sim-kubelet-"];

/// This run's number: [`RUN_ENV`] when a launcher set it, else this process's ID.
pub fn run_id() -> u32 {
    std::env::var(RUN_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(std::process::id)
}

/// A scratch directory of this run: `<temp>/<prefix><run>`.
pub fn scratch_dir(prefix: &str) -> PathBuf {
    std::env::temp_dir().join(format!("{prefix}{}", run_id()))
}

/// A run's lock, held shared while it lives; the last holder to drop it removes its file.
#[derive(Debug)]
pub struct RunLock {
    file: Option<File>,
    id: u32,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        drop(self.file.take());
        release(self.id);
    }
}

impl RunLock {
    /// Holds run `id`'s lock (shared: the launcher and the kubelet of one run both hold it).
    pub fn hold(id: u32) -> std::io::Result<RunLock> {
        std::fs::create_dir_all(RUN_DIR)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(Path::new(RUN_DIR).join(id.to_string()))?;
        file.lock_shared()?;
        Ok(RunLock {
            file: Some(file),
            id,
        })
    }
}

/// Removes run `id`'s lock file when no process holds it any more (the run's sim at its end,
/// its launcher gone): a lock nobody holds is a leftover.
pub fn release(id: u32) {
    let path = Path::new(RUN_DIR).join(id.to_string());
    if let Ok(file) = std::fs::OpenOptions::new().write(true).open(&path)
        && file.try_lock().is_ok()
    {
        let _ = std::fs::remove_file(&path);
    }
}

/// Whether run `id` may still be running: its lock is held, or a process has its number.
pub fn is_live(id: u32) -> bool {
    if Path::new(&format!("/proc/{id}")).exists() {
        return true;
    }
    let path = Path::new(RUN_DIR).join(id.to_string());
    match std::fs::OpenOptions::new().write(true).open(&path) {
        Ok(file) => matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
        Err(_) => false,
    }
}

/// One thing on the host a run made.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Leftover {
    /// A network namespace under `/run/netns`.
    NetworkNamespace(String),
    /// A network interface of the host's namespace.
    Link(String),
    /// A Service address on the loopback, with its label.
    Address {
        /// The address.
        ip: Ipv4Addr,
        /// Its label, `lo:bs<run>`.
        label: String,
    },
    /// An nftables table of the `inet` family.
    NftTable(String),
    /// A scratch directory.
    Directory(PathBuf),
    /// The run's lock file.
    Lock(PathBuf),
}

impl Leftover {
    /// The run that made it, read from its name; `None` for a name no run gives.
    pub fn run(&self) -> Option<u32> {
        let number = |s: &str| s.parse::<u32>().ok();
        match self {
            Leftover::NetworkNamespace(name) => {
                let rest = name.strip_prefix("bsim-")?;
                let rest = rest.strip_prefix("probe-").unwrap_or(rest);
                let (run, pod) = rest.split_once('-')?;
                number(pod)?;
                number(run)
            }
            Leftover::Link(name) => {
                let (run, pod) = name.strip_prefix("bs")?.split_once('h')?;
                number(pod)?;
                number(run)
            }
            Leftover::Address { label, .. } => number(label.strip_prefix("lo:bs")?),
            Leftover::NftTable(name) => number(name.strip_prefix("bsim-")?),
            Leftover::Directory(path) => {
                let name = path.file_name()?.to_str()?;
                SCRATCH_PREFIXES
                    .iter()
                    .find_map(|prefix| number(name.strip_prefix(prefix)?))
            }
            Leftover::Lock(path) => number(path.file_name()?.to_str()?),
        }
    }
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Leftover::NetworkNamespace(name) => write!(f, "network namespace {name}"),
            Leftover::Link(name) => write!(f, "interface {name}"),
            Leftover::Address { ip, label } => write!(f, "address {ip} ({label})"),
            Leftover::NftTable(name) => write!(f, "nftables table inet {name}"),
            Leftover::Directory(path) => write!(f, "directory {}", path.display()),
            Leftover::Lock(path) => write!(f, "run lock {}", path.display()),
        }
    }
}

/// The names `ip -o link show` lists (without an `@peer` suffix).
pub fn parse_links(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| {
            let name = line.split(": ").nth(1)?;
            Some(name.split('@').next()?.to_string())
        })
        .collect()
}

/// The labelled addresses `ip -o -4 addr show dev lo` lists.
pub fn parse_addresses(output: &str) -> Vec<(Ipv4Addr, String)> {
    output
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "inet")?;
            let ip = words.get(at + 1)?.split('/').next()?.parse().ok()?;
            let label = words[at..]
                .iter()
                .find(|w| w.starts_with("lo:"))?
                .trim_end_matches('\\');
            Some((ip, label.to_string()))
        })
        .collect()
}

/// The `inet` tables `nft list tables` lists.
pub fn parse_tables(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| Some(line.strip_prefix("table inet ")?.trim().to_string()))
        .collect()
}

/// Runs `program` and returns its output, empty when it does not run.
fn output(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

fn names_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Everything on this host (as this process sees it) that some run's naming gives.
pub fn inventory() -> Vec<Leftover> {
    let mut found: Vec<Leftover> = names_in(Path::new("/run/netns"))
        .into_iter()
        .map(Leftover::NetworkNamespace)
        .collect();
    found.extend(
        parse_links(&output("ip", &["-o", "link", "show"]))
            .into_iter()
            .map(Leftover::Link),
    );
    found.extend(
        parse_addresses(&output("ip", &["-o", "-4", "addr", "show", "dev", "lo"]))
            .into_iter()
            .map(|(ip, label)| Leftover::Address { ip, label }),
    );
    found.extend(
        parse_tables(&output("nft", &["list", "tables"]))
            .into_iter()
            .map(Leftover::NftTable),
    );
    let temp = std::env::temp_dir();
    found.extend(
        names_in(&temp)
            .into_iter()
            .map(|name| Leftover::Directory(temp.join(name))),
    );
    found.extend(
        names_in(Path::new(RUN_DIR))
            .into_iter()
            .map(|name| Leftover::Lock(Path::new(RUN_DIR).join(name))),
    );
    found.retain(|leftover| leftover.run().is_some());
    found.sort();
    found
}

/// Of `found`, what belongs to runs `gone` says have ended, in the order it is removed (the
/// lock last, so a reap cut short is found again).
pub fn of_ended_runs(found: Vec<Leftover>, gone: impl Fn(u32) -> bool) -> Vec<Leftover> {
    let mut ended: Vec<Leftover> = found
        .into_iter()
        .filter(|leftover| leftover.run().is_some_and(&gone))
        .collect();
    ended.sort_by_key(|leftover| matches!(leftover, Leftover::Lock(_)));
    ended
}

/// Removes `leftover`; what failed, said.
pub fn remove(leftover: &Leftover) -> Result<(), String> {
    let run = |program: &str, args: &[&str]| {
        let done = std::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{program}: {e}"))?;
        if done.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&done.stderr).trim()
            ))
        }
    };
    match leftover {
        Leftover::NetworkNamespace(name) => run("ip", &["netns", "del", name]),
        Leftover::Link(name) => run("ip", &["link", "del", name]),
        Leftover::Address { ip, .. } => {
            run("ip", &["addr", "del", &format!("{ip}/32"), "dev", "lo"])
        }
        Leftover::NftTable(name) => run("nft", &["delete", "table", "inet", name]),
        Leftover::Directory(path) => std::fs::remove_dir_all(path).map_err(|e| e.to_string()),
        Leftover::Lock(path) => std::fs::remove_file(path).map_err(|e| e.to_string()),
    }
}

/// Removes what runs that are no longer alive ([`is_live`]) left; returns what it removed
/// and what it could not.
pub fn reap_dead() -> Vec<(Leftover, Result<(), String>)> {
    reap(of_ended_runs(inventory(), |id| !is_live(id)))
}

/// Removes what run `id` has on the host now (its own end, or its launcher's after it).
pub fn reap_run(id: u32) -> Vec<(Leftover, Result<(), String>)> {
    reap(of_ended_runs(inventory(), |run| run == id))
}

fn reap(leftovers: Vec<Leftover>) -> Vec<(Leftover, Result<(), String>)> {
    leftovers
        .into_iter()
        .map(|leftover| {
            let removed = remove(&leftover);
            (leftover, removed)
        })
        .collect()
}
