//! A pod's sandbox and its containers: a network namespace of its own joined to the sim's by
//! a veth pair (so every replica can bind the same port), and each container run by crun, the
//! OCI runtime, from a bundle [`super::oci`] describes (its own PID, mount, IPC and UTS
//! namespaces, the pod's network, a user namespace mapping it to an unprivileged host range).
//!
//! Built with iproute2's `ip`, util-linux's `unshare` and crun; needs root. Nothing a pod
//! spec says is ever on a command line here: crun reads it from the bundle's files, and the
//! container IDs are the kubelet's own numbers.

use std::{
    net::Ipv4Addr,
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
    process::Stdio,
};

use serde_json::Value;
use tokio::process::{Child, Command};

use super::oci::Image;

/// What a sandbox step failed at.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A command could not be run or failed.
    #[error("{command}: {detail}")]
    Command {
        /// The command line (no secret is ever on one).
        command: String,
        /// Its error output or why it did not run.
        detail: String,
    },
    /// A mount the sim cannot make.
    #[error("{0}")]
    Mount(String),
}

/// Runs a command to completion; its error output is the error.
async fn run(program: &str, args: &[&str]) -> Result<(), SandboxError> {
    let command = format!("{program} {}", args.join(" "));
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|e| SandboxError::Command {
            command: command.clone(),
            detail: e.to_string(),
        })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(SandboxError::Command {
            command,
            detail: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        })
    }
}

/// The IPv4 addresses on this host's interfaces (`ip -o -4 addr show`); empty when `ip` does
/// not answer.
pub fn host_addresses() -> std::collections::HashSet<Ipv4Addr> {
    let Ok(output) = std::process::Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .stdin(Stdio::null())
        .output()
    else {
        return Default::default();
    };
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            words.find(|w| *w == "inet")?;
            words.next()?.split('/').next()?.parse().ok()
        })
        .collect()
}

/// A pod's network: namespace `netns`, reached from the sim through `host_if`.
#[derive(Clone, Debug)]
pub struct PodNetwork {
    /// The network namespace's name (under `/run/netns`).
    pub netns: String,
    /// The sim's end of the veth pair.
    pub host_if: String,
    /// The sim's address on the pair (the pod's gateway).
    pub gateway: Ipv4Addr,
    /// The pod's address.
    pub ip: Ipv4Addr,
}

impl PodNetwork {
    /// The addresses of pod number `index` (from 1) of kubelet `id`: a /30 per pod in
    /// `10.<octet>.0.0/16`.
    pub fn plan(id: u32, index: u32, octet: u8) -> Option<Self> {
        let base = index.checked_mul(4).filter(|b| *b < 65_532)?;
        let [_, _, hi, lo] = base.to_be_bytes();
        Some(Self {
            netns: format!("bsim-{id}-{index}"),
            host_if: format!("bs{id}h{index}"),
            gateway: Ipv4Addr::new(10, octet, hi, lo + 1),
            ip: Ipv4Addr::new(10, octet, hi, lo + 2),
        })
    }

    /// A new pod number from `next` whose block is free on this host: another sim here
    /// (alive, or killed with its sandboxes left) plans from the same numbers, and a block
    /// whose gateway is already a host address would route this pod's answers to that sim's
    /// pod.
    pub fn fresh_index(id: u32, octet: u8, mut next: impl FnMut() -> u32) -> u32 {
        let taken = host_addresses();
        loop {
            let index = next();
            let free = Self::plan(id, index, octet)
                .is_none_or(|network| !taken.contains(&network.gateway));
            if free {
                return index;
            }
        }
    }

    /// Creates the namespace and the veth pair, addresses and routes.
    pub async fn create(&self) -> Result<(), SandboxError> {
        let ns = self.netns.as_str();
        let (gateway, ip) = (format!("{}/30", self.gateway), format!("{}/30", self.ip));
        let gw = self.gateway.to_string();
        // A namespace left by a sim that was killed goes first.
        let _ = run("ip", &["netns", "del", ns]).await;
        run("ip", &["netns", "add", ns]).await?;
        let h = self.host_if.as_str();
        run(
            "ip",
            &[
                "link", "add", h, "type", "veth", "peer", "name", "eth0", "netns", ns,
            ],
        )
        .await?;
        run("ip", &["addr", "add", &gateway, "dev", h]).await?;
        run("ip", &["link", "set", h, "up"]).await?;
        run("ip", &["-n", ns, "addr", "add", &ip, "dev", "eth0"]).await?;
        run("ip", &["-n", ns, "link", "set", "eth0", "up"]).await?;
        run("ip", &["-n", ns, "link", "set", "lo", "up"]).await?;
        run("ip", &["-n", ns, "route", "add", "default", "via", &gw]).await?;
        Ok(())
    }

    /// Removes the namespace (and with it the veth pair).
    pub async fn remove(&self) {
        let _ = run("ip", &["netns", "del", &self.netns]).await;
    }
}

/// The OCI runtime: crun, keeping its containers' state under `state`.
///
/// crun runs without a cgroup manager (the sim sets no resource limits), and in a mount
/// namespace of its own where a hybrid cgroup hierarchy's `unified` mount is gone: crun 1.8
/// refuses hosts that have controllers in both hierarchies, and nothing here needs one. In
/// that namespace too, before crun starts, the volumes the kubelet holds open are bound to
/// the bundle's `pins/` (see [`Crun::run`]).
#[derive(Clone, Debug)]
pub struct Crun {
    state: PathBuf,
}

/// The words before crun's: a private mount namespace without the hybrid hierarchy's v2 part,
/// where each pair of arguments before `--` is bound (`mount --bind <from> <to>`).
const PRIVATE_NAMESPACE: [&str; 8] = [
    "unshare",
    "--mount",
    "--propagation",
    "private",
    "--",
    "/bin/sh",
    "-c",
    "umount -l /sys/fs/cgroup/unified 2>/dev/null
while [ \"$1\" != -- ]; do mount --bind \"$1\" \"$2\" || exit 125; shift 2; done
shift
exec \"$@\"",
];

impl Crun {
    /// crun with its state under `state` (made when missing, readable by root only).
    pub fn new(state: PathBuf) -> Self {
        Self { state }
    }

    /// Whether crun and `unshare` run here; the error says which did not.
    pub async fn check() -> Result<(), String> {
        for (program, arg) in [("crun", "--version"), ("unshare", "--version")] {
            let ran = Command::new(program).arg(arg).output().await;
            if !ran.is_ok_and(|o| o.status.success()) {
                return Err(format!(
                    "{program} {arg} did not run (ci/install-crun.sh installs crun)"
                ));
            }
        }
        Ok(())
    }

    /// crun with `words`, run as [`PRIVATE_NAMESPACE`] says after `binds`, with a bare
    /// environment.
    fn std_command(&self, binds: &[(PathBuf, PathBuf)], words: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(PRIVATE_NAMESPACE[0]);
        command.args(&PRIVATE_NAMESPACE[1..]).arg("sh");
        for (from, to) in binds {
            command.arg(from).arg(to);
        }
        command
            .args(["--", "crun", "--root"])
            .arg(&self.state)
            .arg("--cgroup-manager=disabled")
            .args(words)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .stdin(Stdio::null());
        command
    }

    fn command(&self, words: &[&str]) -> Command {
        Command::from(self.std_command(&[], words))
    }

    /// Starts container `id` from `bundle`, its output appended to `log`; the process is
    /// crun's, which ends with the container (its exit status is the container's).
    ///
    /// `binds` are (`/proc/<pid>/fd/<n>`, a mount point under the bundle) pairs: the kubelet
    /// walked to each volume without following links and holds it open, the bind follows the
    /// descriptor to that very directory, and the bundle's configuration names the mount
    /// point. (crun cannot take the descriptor's path itself: it looks at a mount's source
    /// from inside the user namespace, where another process's descriptors are out of reach.)
    pub fn run(
        &self,
        bundle: &Path,
        id: &str,
        log: &Path,
        binds: &[(PathBuf, PathBuf)],
    ) -> Result<Container, SandboxError> {
        let failed = |detail: String| SandboxError::Command {
            command: format!("crun run {id}"),
            detail,
        };
        let _ = std::fs::create_dir_all(&self.state);
        self.delete_now(id);
        // A container's output may echo what its environment holds: root's alone, from the
        // moment the file exists.
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(log)
            .map_err(|e| failed(format!("opening {}: {e}", log.display())))?;
        let err = out
            .try_clone()
            .map_err(|e| failed(format!("opening {}: {e}", log.display())))?;
        let bundle = bundle.to_string_lossy();
        let child = Command::from(self.std_command(binds, &["run", "--bundle", &bundle, id]))
            .stdout(out)
            .stderr(err)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| failed(e.to_string()))?;
        Ok(Container {
            child,
            crun: self.clone(),
            id: id.to_string(),
            held: Vec::new(),
        })
    }

    /// Runs the process `process_file` describes (an OCI `process`) in container `id`; true
    /// when it exits 0. Its output is not kept (a hook's and a probe's are not, on a node).
    pub async fn exec(&self, id: &str, process_file: &Path) -> bool {
        let file = process_file.to_string_lossy();
        self.command(&["exec", "--process", &file, id])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .status()
            .await
            .is_ok_and(|s| s.success())
    }

    /// Waits until container `id` runs (crun's `state` says `running`), for at most
    /// `limit`: a hook, a probe or a signal sent before that finds no container. False when
    /// it never ran (it failed to start, or exited first).
    pub async fn until_running(&self, id: &str, limit: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let state = self
                .command(&["state", id])
                .stderr(Stdio::null())
                .output()
                .await;
            let status = state
                .ok()
                .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
                .and_then(|v| v["status"].as_str().map(str::to_string));
            match status.as_deref() {
                Some("running") => return true,
                Some("stopped") => return false,
                _ if tokio::time::Instant::now() >= deadline => return false,
                _ => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
            }
        }
    }

    /// Sends `signal` (`TERM`, `KILL`) to container `id`'s first process, as a node does.
    pub async fn kill(&self, id: &str, signal: &str) {
        let _ = self
            .command(&["kill", id, signal])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await;
    }

    /// Removes container `id`, killing what runs in it; waits (a drop cannot).
    pub fn delete_now(&self, id: &str) {
        let mut command = self.std_command(&[], &["delete", "--force", id]);
        command.stdout(Stdio::null()).stderr(Stdio::null());
        let _ = command.status();
    }
}

/// A running container; dropping it removes it (a pod task that ends early never leaves a
/// container behind).
pub struct Container {
    /// crun's process.
    pub child: Child,
    crun: Crun,
    id: String,
    /// Descriptors its mounts name (`/proc/<pid>/fd/<n>`), open while it runs.
    held: Vec<std::os::fd::OwnedFd>,
}

impl Container {
    /// Its ID.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Keeps `fds` open as long as the container runs.
    pub fn hold(&mut self, fds: Vec<std::os::fd::OwnedFd>) {
        self.held.extend(fds);
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        self.crun.delete_now(&self.id);
    }
}

/// Writes a container's bundle in `bundle`: `config.json` and a `rootfs` of mount points
/// (with the image's links), owned by `owner`, the container's root as the host sees it
/// (crun makes the mount points from inside the user namespace; the root is read-only once
/// the container runs). Others may only pass through the directory (crun reaches the
/// root from inside the user namespace); `config.json` is root's alone.
pub fn write_bundle(
    bundle: &Path,
    config: &Value,
    image: &Image,
    owner: u32,
) -> Result<(), SandboxError> {
    let failed = |what: &Path, e: std::io::Error| {
        SandboxError::Mount(format!("bundle {}: {e}", what.display()))
    };
    let rootfs = bundle.join("rootfs");
    let _ = std::fs::remove_dir_all(bundle);
    std::fs::create_dir_all(&rootfs).map_err(|e| failed(&rootfs, e))?;
    std::os::unix::fs::chown(&rootfs, Some(owner), Some(owner)).map_err(|e| failed(&rootfs, e))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bundle, std::fs::Permissions::from_mode(0o711))
        .map_err(|e| failed(bundle, e))?;
    for (link, target) in &image.links {
        let at = rootfs.join(link.strip_prefix("/").unwrap_or(link));
        // The link's directories are the container root's, as crun's mount points are.
        let mut dir = rootfs.clone();
        for part in link.parent().into_iter().flat_map(Path::components).skip(1) {
            dir.push(part);
            if !dir.exists() {
                std::fs::create_dir(&dir).map_err(|e| failed(&dir, e))?;
                std::os::unix::fs::chown(&dir, Some(owner), Some(owner))
                    .map_err(|e| failed(&dir, e))?;
            }
        }
        std::os::unix::fs::symlink(target, &at).map_err(|e| failed(&at, e))?;
    }
    let text = serde_json::to_vec(config).unwrap_or_default();
    let file = bundle.join("config.json");
    write_private(&file, &text).map_err(|e| failed(&file, e))
}

/// Writes `bytes` to a new file at `path` that only its owner (root) can read, from the
/// moment it exists: an OCI `config.json` or an exec's process file holds the container's
/// environment, Secret values included. Written and then chmod'ed, it was world-readable in
/// between; a file already at `path` is replaced, not reused with its mode.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?
        .write_all(bytes)
}

/// Makes the kubelet's state root: mode 0711, so a host user can neither list the pods' names
/// nor read their files, while a pod's mapped users still pass through to their own bundle
/// and volumes (which 0700 would stop: they are not the root directory's owner).
pub fn state_root(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))
}
