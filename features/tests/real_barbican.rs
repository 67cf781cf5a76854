//! The scenarios tagged `@real-barbican`: barbican itself in the loop. Each scenario gets a
//! simulated cluster on the wall clock whose kubelet runs the pods of `ghcr.io/c5c3/barbican`
//! images as real processes (uwsgi and `barbican-manage` from a virtualenv of that release),
//! a real MariaDB behind the fake mariadb-operator, the fake OpenBao and a fake Keystone (see
//! [`barbican_features::backend::Backend::RealBarbican`]).
//!
//! The binary re-runs itself in network and mount namespaces of its own (`unshare`), so the
//! pods' namespaces, addresses and mounts never touch the machine's and vanish with the run.
//! Needs root, iproute2 and, per release, `target/catalog-venvs/<release>` with uwsgi and
//! PyMySQL installed (`ci/install-real-barbican.sh`), or `BARBICAN_REAL_BARBICAN_RUNTIMES`
//! (`<image glob>=<root>,…`). Without them the run prints why and passes, unless `CI` is set:
//! CI prepares them, so there their absence fails. For nextest this binary is one test,
//! `all_real_barbican`.

use std::{path::PathBuf, process::Command};

use barbican_features::{
    backend::{self, Backend, REAL_BARBICAN},
    runner::{self, Selection},
};

/// The one test this binary lists.
const TEST: &str = "all_real_barbican";
/// Set in the re-run inside the private namespaces.
const INSIDE: &str = "BARBICAN_REAL_BARBICAN_NAMESPACES";

/// Where `ip netns` keeps its names.
const NETNS_DIR: &str = "/run/netns";

/// The names under [`NETNS_DIR`] now of the kind this run's kubelets make: theirs start
/// `bsim-1-`, the kubelet's number being its process ID, 1 in the run's PID namespace (a
/// kubelet elsewhere on the machine, such as `demo --installed` beside this run, has another).
fn netns_names() -> std::collections::BTreeSet<String> {
    std::fs::read_dir(NETNS_DIR)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("bsim-1-"))
        .collect()
}

/// Leaves the run: passing with a note, or failing under CI, which prepares everything.
fn unavailable(why: &str) -> ! {
    if std::env::var_os("CI").is_some() {
        eprintln!("real-barbican features cannot run: {why}");
        std::process::exit(1);
    }
    println!("real-barbican features skipped: {why}");
    std::process::exit(0);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    if flag("--list") {
        if !flag("--ignored") {
            println!("{TEST}: test");
        }
        return;
    }
    let selection = match Selection::from(&args, |v| std::env::var(v).ok()) {
        Ok(selection) => selection.requiring(REAL_BARBICAN),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let runtimes = backend::real_barbican_runtimes().unwrap_or_else(|why| unavailable(&why));
    if std::env::var_os(INSIDE).is_none() {
        let Ok(me) = std::env::current_exe() else {
            unavailable("this binary cannot find itself to re-run");
        };
        let before = netns_names();
        // A PID namespace too, whose first process this binary is: however the run ends
        // (a timeout's SIGKILL included), every process it started ends with it.
        let status = Command::new("unshare")
            .args(["--net", "--mount", "--propagation", "private"])
            .args(["--pid", "--fork", "--kill-child", "--mount-proc", "--"])
            .arg(me)
            .args(&args)
            .env(INSIDE, "1")
            .status();
        let left: Vec<String> = netns_names().difference(&before).cloned().collect();
        if !left.is_empty() {
            eprintln!(
                "the run left network namespace names on this machine: {}",
                left.join(", ")
            );
            std::process::exit(1);
        }
        match status {
            Ok(status) if status.code().is_some() => std::process::exit(status.code().unwrap_or(1)),
            Ok(status) => unavailable(&format!("the run in private namespaces ended by {status}")),
            Err(e) => unavailable(&format!("unshare: {e}")),
        }
    }
    // `ip netns add` keeps a pod's namespace as a file under /run/netns with the namespace
    // bound onto it. The bind goes with this mount namespace, but the file would stay on the
    // machine's /run, an empty name every later `ip netns list` trips over and a later run's
    // pod of the same number meets: a tmpfs of this mount namespace's own takes them along.
    let private = std::fs::create_dir_all(NETNS_DIR).map(|_| {
        Command::new("mount")
            .args(["-t", "tmpfs", "-o", "mode=0755", "bsim-netns", NETNS_DIR])
            .status()
    });
    if !matches!(private, Ok(Ok(s)) if s.success()) {
        unavailable(&format!(
            "mounting a private {NETNS_DIR} failed: {private:?}"
        ));
    }
    let up = Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .status();
    if !up.is_ok_and(|s| s.success()) {
        unavailable(
            "`ip link set lo up` failed in the private network namespace (root and iproute2 needed)",
        );
    }
    let state_dir = std::env::temp_dir().join(format!("barbican-real-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&state_dir) {
        unavailable(&format!("{}: {e}", state_dir.display()));
    }
    println!(
        "running the @{REAL_BARBICAN} features with {}",
        runtimes
            .iter()
            .map(|r| format!("{}={}", r.image, r.root.display()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    backend::choose(Backend::RealBarbican {
        runtimes,
        state_dir: state_dir.clone(),
    });
    let files = runner::feature_files();
    let files: Vec<&PathBuf> = files.iter().collect();
    // Three at a time, across the files: each has a cluster, kubelet and MariaDB of its own,
    // and mostly waits on processes starting and Jobs' backoff (eighteen scenarios, two at a
    // time, took 487 s of wall time for 325 CPU-s, two thirds of a core: docs/performance.md).
    let failed = runner::run_files(&files, &selection, 3);
    let _ = std::fs::remove_dir_all(&state_dir);
    std::process::exit(i32::from(failed));
}
