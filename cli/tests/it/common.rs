//! What the cli's tests share: `barbican-sim serve` as a child process, and kubectl against it.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

/// A running `barbican-sim serve`.
pub struct Sim {
    pub child: Child,
    pub kubeconfig: PathBuf,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The directory of its kubeconfig and kubectl's cache is the sim's own (see
        // `launch`): a test run leaves nothing in the temporary directory.
        if let Some(dir) = self.kubeconfig.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn start(name: &str) -> Sim {
    start_with(name, &[])
}

pub fn start_with(name: &str, extra: &[&str]) -> Sim {
    launch(name, |serve| {
        serve
            .arg("--crds")
            .arg(workspace().join("deploy/crds"))
            .args(extra);
    })
}

/// `barbican-sim serve` on a free port, writing its kubeconfig to a directory of its own;
/// `configure` adds to the command. Returns once kubectl gets an answer.
pub fn launch(name: &str, configure: impl FnOnce(&mut Command)) -> Sim {
    let dir = std::env::temp_dir().join(format!(
        "barbican-sim-kubectl-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let _ = std::fs::remove_file(&kubeconfig);
    let mut serve = Command::new(env!("CARGO_BIN_EXE_barbican-sim"));
    serve
        .args(["serve", "--port", "0", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .stderr(Stdio::null());
    configure(&mut serve);
    let child = serve.spawn().unwrap();
    let sim = Sim { child, kubeconfig };
    for _ in 0..200 {
        if sim.kubeconfig.exists() && kubectl(&sim, &["get", "namespaces"]).0 {
            return sim;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("barbican-sim serve did not come up");
}

/// kubectl for the cluster of `kubeconfig`, with a discovery cache of its own: kubectl keys
/// its cache by host and port, and a port an earlier sim served is reused, with whatever that
/// sim's discovery said.
pub fn kubectl_command(kubeconfig: &Path) -> Command {
    let mut command = Command::new("kubectl");
    command
        .env("KUBECONFIG", kubeconfig)
        .env("KUBECACHEDIR", kubeconfig.with_extension("cache"));
    command
}

/// Runs kubectl; returns (success, stdout + stderr).
pub fn kubectl(sim: &Sim, args: &[&str]) -> (bool, String) {
    kubectl_as(&sim.kubeconfig, args)
}

/// Runs kubectl with the kubeconfig `kubeconfig`; returns (success, stdout + stderr).
pub fn kubectl_as(kubeconfig: &Path, args: &[&str]) -> (bool, String) {
    let output = kubectl_command(kubeconfig)
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("kubectl must be installed (CI provides 1.32)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

pub fn ok(sim: &Sim, args: &[&str]) -> String {
    let (success, text) = kubectl(sim, args);
    assert!(success, "kubectl {}: {text}", args.join(" "));
    text
}

pub fn apply_stdin(sim: &Sim, manifest: &str) {
    let (applied, text) = try_apply_stdin(sim, manifest);
    assert!(applied, "kubectl apply: {text}");
}

/// `kubectl apply -f -`; returns (success, stderr). (`kubectl create <kind>` sends protobuf
/// for built-in kinds, which the sim refuses; apply sends JSON.)
pub fn try_apply_stdin(sim: &Sim, manifest: &str) -> (bool, String) {
    let mut child = kubectl_command(&sim.kubeconfig)
        .args(["apply", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), manifest.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into(),
    )
}

/// Runs `barbican-sim` with `args` to completion; its stdout, after asserting it succeeded
/// (the failure shows both streams).
pub fn run_ok(args: &[&std::ffi::OsStr]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_barbican-sim"))
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    text
}
