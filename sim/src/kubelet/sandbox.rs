//! A pod's sandbox: a network namespace of its own joined to the sim's by a veth pair (so
//! every replica can bind the same port), and per container a private mount namespace where
//! the volumes appear at their `mountPath`s and `/etc/hosts` names the cluster's Services.
//!
//! Built with iproute2's `ip` and util-linux's `unshare` and `setpriv`; needs root. A
//! `mountPath` that does not exist on this machine is made inside an overlay of its nearest
//! existing ancestor, so nothing outside the pod's mount namespace changes.

use std::{
    net::Ipv4Addr,
    path::{Path, PathBuf},
    process::Stdio,
};

use tokio::process::{Child, Command};

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

/// A volume (or the hosts file) to appear at `target` inside the container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// The directory (or file) on this machine.
    pub source: PathBuf,
    /// The `mountPath`.
    pub target: PathBuf,
    /// Mounted read-only.
    pub read_only: bool,
    /// The source is a file (a `subPath` naming one, or the hosts file).
    pub file: bool,
}

/// Who the container runs as (`runAsUser`, `runAsGroup`, the pod's `fsGroup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunAs {
    /// The user.
    pub uid: u32,
    /// The group.
    pub gid: u32,
    /// A supplementary group.
    pub fs_group: Option<u32>,
}

/// Single-quotes `text` for `sh`.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A path as a mount option may hold it: overlayfs splits its options at `,` and `:`.
fn plain(path: &Path) -> Result<String, SandboxError> {
    let text = path.to_string_lossy();
    let ok = text.starts_with('/')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'));
    if ok && !text.split('/').any(|part| part == "..") {
        Ok(text.into_owned())
    } else {
        Err(SandboxError::Mount(format!(
            "mountPath {text:?}: the sim's kubelet mounts absolute paths of letters, digits, '.', '_', '-' and '/' only"
        )))
    }
}

/// The shell script that makes `mounts` inside a fresh mount namespace, enters `working_dir`
/// and runs the container's command (its words are the script's arguments, never part of
/// the script). `exists` says what exists on this machine; overlays keep their upper layers
/// under `scratch`.
pub fn script(
    mounts: &[Mount],
    exists: &dyn Fn(&Path) -> bool,
    scratch: &Path,
    working_dir: Option<&str>,
    run_as: Option<RunAs>,
) -> Result<String, SandboxError> {
    let mut lines = vec!["set -e".to_string()];
    let mut mounts: Vec<&Mount> = mounts.iter().collect();
    mounts.sort_by_key(|m| m.target.components().count());
    // Overlays first, binds after: an overlay mounted over a directory would hide a bind
    // made inside it earlier.
    let mut overlaid: Vec<PathBuf> = Vec::new();
    for (i, mount) in mounts.iter().enumerate() {
        plain(&mount.target)?;
        let covered = mounts[..i]
            .iter()
            .map(|m| &m.target)
            .chain(overlaid.iter())
            .any(|m| mount.target.starts_with(m));
        if exists(&mount.target) || covered {
            continue;
        }
        let ancestor = mount
            .target
            .ancestors()
            .skip(1)
            .find(|a| exists(a))
            .unwrap_or(Path::new("/"));
        if ancestor == Path::new("/") {
            return Err(SandboxError::Mount(format!(
                "mountPath {:?}: its parent directory must exist on this machine (the sim does not overlay /)",
                mount.target.display().to_string()
            )));
        }
        let lower = plain(ancestor)?;
        let layer = plain(&scratch.join(format!("overlay-{}", overlaid.len())))?;
        lines.push(format!("mkdir -p {0}/upper {0}/work", quote(&layer)));
        lines.push(format!(
            "mount -t overlay overlay -o {} {}",
            quote(&format!(
                "lowerdir={lower},upperdir={layer}/upper,workdir={layer}/work"
            )),
            quote(&lower)
        ));
        overlaid.push(ancestor.to_path_buf());
    }
    let mut read_only = Vec::new();
    for mount in &mounts {
        let target = plain(&mount.target)?;
        if mount.file {
            lines.push(format!(
                "[ -e {0} ] || {{ mkdir -p \"$(dirname {0})\"; : > {0}; }}",
                quote(&target)
            ));
        } else {
            lines.push(format!("mkdir -p {}", quote(&target)));
        }
        let source = mount.source.to_string_lossy();
        lines.push(format!(
            "mount --bind {} {}",
            quote(&source),
            quote(&target)
        ));
        if mount.read_only {
            read_only.push(target);
        }
    }
    // Read-only last: a mount inside a read-only volume needs its mount point made first.
    for target in read_only {
        lines.push(format!("mount -o remount,bind,ro {}", quote(&target)));
    }
    if let Some(dir) = working_dir {
        lines.push(format!("cd {}", quote(dir)));
    } else {
        lines.push("cd /".to_string());
    }
    match run_as {
        None => lines.push("exec \"$@\"".to_string()),
        Some(RunAs { uid, gid, fs_group }) => {
            let groups = match fs_group {
                Some(g) => format!("--groups {g}"),
                None => "--clear-groups".to_string(),
            };
            lines.push(format!(
                "exec setpriv --reuid {uid} --regid {gid} {groups} -- \"$@\""
            ));
        }
    }
    Ok(lines.join("\n"))
}

/// Starts `words` (the container's command and args) in the pod's network namespace and a
/// mount namespace of its own, after `script`'s mounts, with exactly `env`, its output
/// appended to `log`. The process leads a process group of its own (see [`signal_group`]).
pub fn spawn(
    netns: &str,
    script: &str,
    words: &[String],
    env: &[(String, String)],
    log: &Path,
) -> Result<Child, SandboxError> {
    let failed = |detail: String| SandboxError::Command {
        command: format!("ip netns exec {netns} unshare --mount …"),
        detail,
    };
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| failed(format!("opening {}: {e}", log.display())))?;
    let err = out
        .try_clone()
        .map_err(|e| failed(format!("opening {}: {e}", log.display())))?;
    Command::new("ip")
        .args(["netns", "exec", netns])
        .args(["unshare", "--mount", "--propagation", "private", "--"])
        .args(["/bin/sh", "-c", script, "sh"])
        .args(words)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| failed(e.to_string()))
}

/// Runs `words` (a `preStop` exec hook) in the pod's network namespace with `env`.
pub async fn exec_hook(netns: &str, words: &[String], env: &[(String, String)]) -> bool {
    Command::new("ip")
        .args(["netns", "exec", netns])
        .args(words)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .is_ok_and(|s| s.success())
}

/// Sends `signal` (`TERM`, `KILL`) to the process group led by `pid`.
pub async fn signal_group(pid: u32, signal: &str) {
    let _ = run("kill", &[&format!("-{signal}"), "--", &format!("-{pid}")]).await;
}
