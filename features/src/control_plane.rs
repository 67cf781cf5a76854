//! A real Kubernetes control plane for the scenarios: kube-apiserver, etcd,
//! kube-controller-manager, kube-scheduler and kwok's controller, built from their Go modules by
//! `ci/install-control-plane.sh` and started as local processes by `kwokctl --runtime binary`.
//!
//! kwokctl's defaults are kept where they make the API server a production one: the secure
//! port with client certificates, RBAC authorization, the default admission plugins and
//! ServiceAccount token issuing (TokenRequest, TokenReview). Its kwok controller stands in for
//! the kubelets: fake nodes whose pods become Running and Ready, and whose Jobs' pods succeed.
//!
//! Everything it starts lives under one directory of its own (`KWOK_WORKDIR`); dropping the
//! [`ControlPlane`] deletes the cluster (its processes end, its ports close) and removes the
//! directory, so a run leaves nothing behind.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Instant,
};

/// The environment variable naming the directory the control plane's binaries are in (the
/// last line `ci/install-control-plane.sh` prints).
pub const CONTROL_PLANE_VAR: &str = "BARBICAN_E2E_CONTROL_PLANE";

/// The binaries a control plane is started from, as `kwokctl` flags name them.
const BINARIES: [(&str, &str); 5] = [
    ("--kube-apiserver-binary", "kube-apiserver"),
    (
        "--kube-controller-manager-binary",
        "kube-controller-manager",
    ),
    ("--kube-scheduler-binary", "kube-scheduler"),
    ("--etcd-binary", "etcd"),
    ("--kwok-controller-binary", "kwok"),
];

/// The fake nodes the scenarios' pods are scheduled to (the chart spreads the operator over
/// two, barbican's API over three at most).
pub const NODES: u32 = 3;

/// A running control plane; dropping it tears it down.
#[derive(Debug)]
pub struct ControlPlane {
    name: String,
    kwokctl: PathBuf,
    workdir: PathBuf,
    /// The kubeconfig of its administrator (a client certificate of `system:masters`).
    pub kubeconfig: PathBuf,
}

impl ControlPlane {
    /// Starts a control plane from the binaries in `binaries`, named after this process, with
    /// [`NODES`] kwok nodes; waits until it serves. The error says which step failed and what
    /// kwokctl printed.
    pub fn start(binaries: &Path) -> Result<Self, String> {
        for (_, binary) in BINARIES.iter().chain([&("", "kwokctl")]) {
            let path = binaries.join(binary);
            if !path.is_file() {
                return Err(format!(
                    "{} has no {binary}: ${CONTROL_PLANE_VAR} names the directory ci/install-control-plane.sh printed",
                    binaries.display()
                ));
            }
        }
        let name = format!("barbican-e2e-{}", std::process::id());
        let workdir = std::env::temp_dir().join(&name);
        std::fs::create_dir_all(&workdir)
            .map_err(|e| format!("creating {}: {e}", workdir.display()))?;
        let plane = Self {
            kubeconfig: workdir.join("admin.kubeconfig"),
            name,
            kwokctl: binaries.join("kwokctl"),
            workdir,
        };
        let started = Instant::now();
        // kwokctl takes each component's port as the first free one it finds: two control
        // planes created at once took the same and one never served. Creations take turns,
        // each holding a lock on the kwokctl binary they share (no file of its own to leave);
        // a running control plane holds its ports.
        let turn = std::fs::File::open(&plane.kwokctl)
            .map_err(|e| format!("opening {}: {e}", plane.kwokctl.display()))?;
        turn.lock()
            .map_err(|e| format!("taking the control planes' turn: {e}"))?;
        let mut create = vec![
            "create".to_string(),
            "cluster".into(),
            "--runtime".into(),
            "binary".into(),
            "--wait".into(),
            "2m".into(),
            // kwokctl would add the cluster to ~/.kube/config; the run keeps its own.
            "--kubeconfig".into(),
            plane.kubeconfig.display().to_string(),
        ];
        for (flag, binary) in BINARIES {
            create.push(flag.into());
            create.push(binaries.join(binary).display().to_string());
        }
        plane.kwokctl(&create)?;
        plane.kwokctl(&[
            "scale".into(),
            "node".into(),
            "--replicas".into(),
            NODES.to_string(),
        ])?;
        drop(turn);
        println!(
            "control plane {} started from {} in {:.1} s",
            plane.name,
            binaries.display(),
            started.elapsed().as_secs_f64()
        );
        Ok(plane)
    }

    /// The directory everything of this control plane lives under.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// Runs `kwokctl <args> --name <this>` in this control plane's workdir, its output
    /// appended to `kwokctl.log` there: not to pipes, which the components it leaves running
    /// would inherit and hold open, so reading them to their end would never return.
    fn kwokctl(&self, args: &[String]) -> Result<(), String> {
        let log_path = self.workdir.join("kwokctl.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("opening {}: {e}", log_path.display()))?;
        let err = log
            .try_clone()
            .map_err(|e| format!("opening {}: {e}", log_path.display()))?;
        let status = Command::new(&self.kwokctl)
            .args(args)
            .args(["--name", &self.name])
            .env("KWOK_WORKDIR", &self.workdir)
            .stdin(std::process::Stdio::null())
            .stdout(log)
            .stderr(err)
            .status()
            .map_err(|e| format!("running {}: {e}", self.kwokctl.display()))?;
        if status.success() {
            return Ok(());
        }
        let printed = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = printed.lines().rev().take(20).collect();
        Err(format!(
            "kwokctl {} failed ({status}); the end of {}:\n{}",
            args.join(" "),
            log_path.display(),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ))
    }
}

impl ControlPlane {
    /// Tears the control plane down and checks it left nothing: no process started from or
    /// working in its directory, no listener on its API server's port, no directory.
    pub fn stop(mut self) -> Result<(), String> {
        let port = self.api_server_port();
        self.tear_down();
        // kwokctl signals the components and returns; a process exiting still holds its
        // ports for a moment (its command line already gone), so look until a bound.
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let mut left = Vec::new();
            for (pid, command) in processes_naming(&self.workdir) {
                left.push(format!("process {pid} ({command})"));
            }
            if let Some(port) = port
                && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            {
                left.push(format!("a listener on the API server's port {port}"));
            }
            if self.workdir.exists() {
                left.push(format!("the directory {}", self.workdir.display()));
            }
            if left.is_empty() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "control plane {} left behind: {}",
                    self.name,
                    left.join(", ")
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }

    /// The port of the API server, from the kubeconfig kwokctl wrote.
    fn api_server_port(&self) -> Option<u16> {
        let text = std::fs::read_to_string(&self.kubeconfig).ok()?;
        let server = text
            .lines()
            .find_map(|line| line.trim().strip_prefix("server:"))?
            .trim();
        server
            .rsplit(':')
            .next()?
            .trim_end_matches('/')
            .parse()
            .ok()
    }

    fn tear_down(&mut self) {
        if self.workdir.exists() {
            if let Err(e) = self.kwokctl(&["delete".into(), "cluster".into()]) {
                eprintln!("tearing down control plane {}: {e}", self.name);
            }
            let _ = std::fs::remove_dir_all(&self.workdir);
        }
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        self.tear_down();
    }
}

/// The processes whose command line names `dir` (kwokctl starts every component with paths
/// under its workdir), as `(pid, command line)`.
pub fn processes_naming(dir: &Path) -> Vec<(u32, String)> {
    let needle = dir.display().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let raw = std::fs::read(entry.path().join("cmdline")).ok()?;
            let command = String::from_utf8_lossy(&raw).replace('\0', " ");
            command
                .contains(&needle)
                .then(|| (pid, command.trim().to_string()))
        })
        .collect()
}
