//! Nothing outlives a run that starts processes: `demo --real-barbican`, `demo --installed` and
//! `serve --operator-pods` are stopped by SIGTERM, killed by SIGKILL, or panic, and afterwards
//! no process, network namespace, interface, address, nftables table, mount or directory of
//! that run is on the machine (`cli/src/contained.rs`).
//!
//! They need what the @real-barbican scenarios need (root, crun, nftables, each release's
//! virtualenv) and run in their stage of CI, named as theirs are; without a virtualenv they
//! say why and pass, unless `CI` is set.

use std::{
    collections::BTreeSet,
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use barbican_sim::leftovers::{self, Leftover};

/// How long a stopped run may take to be gone: the pods' grace periods (30 s) and more.
const BOUND: Duration = Duration::from_secs(120);

/// A process: its ID and start time (which tells a reused ID apart) and its name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Process {
    pid: u32,
    start: u64,
    name: String,
}

/// Every process on the machine with its parent.
fn processes() -> Vec<(u32, Process)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            // `pid (name) state ppid …`: the name may hold spaces and parentheses.
            let (head, rest) = stat.rsplit_once(") ")?;
            let name = head.split_once(" (")?.1.to_string();
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let parent = fields.get(1)?.parse().ok()?;
            let start = fields.get(19)?.parse().ok()?;
            Some((parent, Process { pid, start, name }))
        })
        .collect()
}

/// `root`'s descendants now.
fn descendants(root: u32) -> BTreeSet<Process> {
    let all = processes();
    let mut found = BTreeSet::new();
    let mut parents = vec![root];
    while let Some(parent) = parents.pop() {
        for (ppid, process) in &all {
            if *ppid == parent && found.insert(process.clone()) {
                parents.push(process.pid);
            }
        }
    }
    found
}

/// What of run `run` is on the machine: its things ([`leftovers::inventory`]), the processes
/// of `seen` still alive, and mounts naming its directories.
fn left_by(run: u32, seen: &BTreeSet<Process>) -> Vec<String> {
    let mut left: Vec<String> = leftovers::inventory()
        .into_iter()
        .filter(|l| l.run() == Some(run))
        .map(|l| l.to_string())
        .collect();
    let alive: BTreeSet<Process> = processes().into_iter().map(|(_, p)| p).collect();
    left.extend(
        seen.intersection(&alive)
            .map(|p| format!("process {} ({})", p.pid, p.name)),
    );
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    left.extend(
        mounts
            .lines()
            .filter(|l| {
                leftovers::SCRATCH_PREFIXES
                    .iter()
                    .any(|prefix| l.contains(&format!("{prefix}{run}")))
            })
            .map(|l| format!("mount {l}")),
    );
    for prefix in leftovers::SCRATCH_PREFIXES {
        let dir = std::env::temp_dir().join(format!("{prefix}{run}"));
        if dir.exists() && !left.iter().any(|l| l.contains(&dir.display().to_string())) {
            left.push(format!("directory {}", dir.display()));
        }
    }
    left
}

/// Whether these tests can run here; false (with the reason said) only outside CI.
fn can_run() -> bool {
    match barbican_features::backend::real_barbican_runtimes() {
        Ok(_) => true,
        Err(why) => {
            assert!(std::env::var_os("CI").is_none(), "in CI: {why}");
            println!("not run: {why}");
            false
        }
    }
}

/// Held by every test here that starts a launcher, shared, and by the one that makes a dead
/// run's leftovers, exclusively: each launcher reaps every dead run's leftovers as it starts,
/// and one beside that test would take them before the launcher it watches.
pub fn launchers(exclusive: bool) -> std::fs::File {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(std::env::temp_dir().join("barbican-sim-launcher-tests.lock"))
        .unwrap();
    if exclusive {
        file.lock().unwrap();
    } else {
        file.lock_shared().unwrap();
    }
    file
}

/// A run of `barbican-sim`, its output in a file.
struct Run {
    child: Child,
    log: PathBuf,
    dir: PathBuf,
    _launchers: std::fs::File,
}

impl Run {
    fn start(name: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        Self::start_holding(name, args, env, launchers(false))
    }

    /// [`Run::start`] by a test holding the launchers' lock already.
    fn start_holding(
        name: &str,
        args: &[&str],
        env: &[(&str, &str)],
        launchers: std::fs::File,
    ) -> Run {
        let dir = std::env::temp_dir().join(format!("stopping-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("log");
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_barbican-sim"))
            .args(args)
            .envs(env.iter().copied())
            .current_dir(super::common::workspace())
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        Run {
            child,
            log,
            dir,
            _launchers: launchers,
        }
    }

    fn id(&self) -> u32 {
        self.child.id()
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until one of the run's processes is named `name`, then returns them all.
    fn until_running(&mut self, name: &str, limit: Duration) -> BTreeSet<Process> {
        let deadline = Instant::now() + limit;
        loop {
            let now = descendants(self.id());
            if now.iter().any(|p| p.name == name) {
                return now;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the run ended ({status}) before {name} ran:\n{}",
                    self.output()
                );
            }
            assert!(
                Instant::now() < deadline,
                "no {name} process after {limit:?}:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &self.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }

    /// Sends `signal` to the contained sim among `seen` (the launcher's grandchild, past
    /// `unshare`).
    fn signal_sim(&self, seen: &BTreeSet<Process>, signal: &str) {
        let sim = seen
            .iter()
            .find(|p| p.name == "barbican-sim" && p.pid != self.id())
            .unwrap_or_else(|| panic!("no contained sim in {seen:?}"));
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &sim.pid.to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }

    /// Waits until nothing of the run is left (within [`BOUND`]); its exit status when the
    /// launcher exited by itself.
    fn gone(&mut self, seen: &BTreeSet<Process>) -> std::process::ExitStatus {
        let deadline = Instant::now() + BOUND;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "still running:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        let run = self.id();
        loop {
            let left = left_by(run, seen);
            if left.is_empty() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "run {run} left, {BOUND:?} after it was stopped:\n  {}\n{}",
                left.join("\n  "),
                self.output()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `serve --operator-pods` running a pod (`sleep`, from this machine's /usr).
fn serve_with_a_pod(
    name: &str,
    env: &[(&str, &str)],
    launchers: std::fs::File,
) -> (Run, BTreeSet<Process>) {
    let kubeconfig =
        std::env::temp_dir().join(format!("stopping-{name}-{}.kubeconfig", std::process::id()));
    let _ = std::fs::remove_file(&kubeconfig);
    let mut run = Run::start_holding(
        name,
        &[
            "serve",
            "--operator-pods",
            "--kubelet-runtime",
            "docker.io/library/debian:*=/usr",
            "--kubeconfig-out",
            kubeconfig.to_str().unwrap(),
        ],
        env,
        launchers,
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !kubeconfig.exists() {
        assert!(
            Instant::now() < deadline,
            "no kubeconfig:\n{}",
            run.output()
        );
        if let Ok(Some(status)) = run.child.try_wait() {
            panic!("serve ended ({status}):\n{}", run.output());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let created = super::common::kubectl_command(&kubeconfig)
        .args([
            "create",
            "deployment",
            "sleeper",
            "--image=docker.io/library/debian:12",
        ])
        .args(["--", "sleep", "3600"])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&kubeconfig);
    assert!(created.status.success(), "{created:?}");
    let seen = run.until_running("sleep", Duration::from_secs(60));
    (run, seen)
}

#[test]
fn real_barbican_stop_serve_by_sigterm_leaves_nothing() {
    if !can_run() {
        return;
    }
    let (mut run, seen) = serve_with_a_pod("serve-term", &[], launchers(false));
    // The pod runs in the run's own PID namespace, under crun, below the launcher.
    assert!(seen.iter().any(|p| p.name == "crun"), "{seen:?}");
    run.signal("TERM");
    let status = run.gone(&seen);
    assert!(status.success(), "{status}:\n{}", run.output());
}

#[test]
fn real_barbican_stop_serve_twice_stops_at_once_and_still_cleans_up() {
    if !can_run() {
        return;
    }
    let (mut run, seen) = serve_with_a_pod("serve-twice", &[], launchers(false));
    run.signal("TERM");
    std::thread::sleep(Duration::from_millis(500));
    run.signal("TERM");
    let asked = Instant::now();
    run.gone(&seen);
    // The pod's grace period (30 s) was not waited for.
    assert!(
        asked.elapsed() < Duration::from_secs(20),
        "{:?}",
        asked.elapsed()
    );
    assert!(run.output().contains("stopping now"), "{}", run.output());
}

#[test]
fn real_barbican_stop_serve_by_sigkill_leaves_nothing() {
    if !can_run() {
        return;
    }
    let (mut run, seen) = serve_with_a_pod("serve-kill", &[], launchers(false));
    run.signal("KILL");
    run.gone(&seen);
}

#[test]
fn real_barbican_stop_serve_that_panics_leaves_nothing() {
    if !can_run() {
        return;
    }
    let (mut run, seen) = serve_with_a_pod(
        "serve-panic",
        &[("BARBICAN_SIM_PANIC_AT", "sigusr1")],
        launchers(false),
    );
    // The sim itself (the launcher's grandchild, past `unshare`) panics.
    run.signal_sim(&seen, "USR1");
    let status = run.gone(&seen);
    assert!(!status.success(), "{}", run.output());
    assert!(run.output().contains("SIGUSR1 came"), "{}", run.output());
}

/// `demo` with `flag`, stopped by `signal` once a process named `running` is up; `USR1` goes
/// to the contained sim, which was told to panic on it.
fn demo_stopped(flag: &str, running: &str, signal: &str) {
    let name = format!("demo{flag}-{signal}");
    let panics = [("BARBICAN_SIM_PANIC_AT", "sigusr1")];
    let env: &[(&str, &str)] = if signal == "USR1" { &panics } else { &[] };
    let mut run = Run::start(&name, &["demo", flag], env);
    let seen = run.until_running(running, Duration::from_secs(300));
    if signal == "USR1" {
        run.signal_sim(&seen, signal);
    } else {
        run.signal(signal);
    }
    let status = run.gone(&seen);
    match signal {
        "TERM" => {
            assert!(status.success(), "{status}:\n{}", run.output());
            assert!(
                run.output().trim_end().ends_with("stopped"),
                "{}",
                run.output()
            );
        }
        "USR1" => {
            assert!(!status.success(), "{}", run.output());
            assert!(run.output().contains("SIGUSR1 came"), "{}", run.output());
        }
        _ => {}
    }
}

#[test]
fn real_barbican_stop_demo_that_panics_leaves_nothing() {
    if can_run() {
        demo_stopped("--real-barbican", "uwsgi", "USR1");
    }
}

#[test]
fn real_barbican_stop_demo_by_sigterm_leaves_nothing() {
    if can_run() {
        demo_stopped("--real-barbican", "uwsgi", "TERM");
    }
}

#[test]
fn real_barbican_stop_demo_by_sigkill_leaves_nothing() {
    if can_run() {
        demo_stopped("--real-barbican", "uwsgi", "KILL");
    }
}

#[test]
fn real_barbican_stop_demo_installed_by_sigterm_leaves_nothing() {
    if can_run() {
        demo_stopped("--installed", "barbican-operat", "TERM");
    }
}

#[test]
fn real_barbican_stop_demo_installed_by_sigkill_leaves_nothing() {
    if can_run() {
        demo_stopped("--installed", "barbican-operat", "KILL");
    }
}

/// What a dead run left is removed by the next run's launcher, and said; a live run's is not.
#[test]
fn real_barbican_stop_a_new_run_reaps_a_dead_runs_leftovers() {
    if !can_run() {
        return;
    }
    let exclusive = launchers(true);
    // A dead run's leftovers, made by hand: an address, a table, a directory, a lock. The
    // run's number is a process ID no process has.
    let dead = (100_000..4_000_000)
        .find(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
        .unwrap();
    let ip = "10.245.250.250";
    let sh = |line: &str| {
        let done = Command::new("sh").arg("-c").arg(line).status().unwrap();
        assert!(done.success(), "{line}");
    };
    sh(&format!("ip addr add {ip}/32 dev lo label lo:bs{dead}"));
    sh(&format!("nft add table inet bsim-{dead}"));
    let dir = std::env::temp_dir().join(format!("barbican-demo-{dead}"));
    std::fs::create_dir_all(dir.join("mysql")).unwrap();
    std::fs::create_dir_all(leftovers::RUN_DIR).unwrap();
    std::fs::write(
        std::path::Path::new(leftovers::RUN_DIR).join(dead.to_string()),
        "",
    )
    .unwrap();
    // A live run's (this test process holds its lock) stays.
    let live = std::process::id();
    let _lock = leftovers::RunLock::hold(live).unwrap();
    let live_dir = std::env::temp_dir().join(format!("barbican-sim-kubelet-{live}"));
    std::fs::create_dir_all(&live_dir).unwrap();

    let (mut run, seen) = serve_with_a_pod("reaper", &[], exclusive);
    let said = run.output();
    for expected in [
        format!("removed address {ip} (lo:bs{dead}), left by the dead run {dead}"),
        format!("removed nftables table inet bsim-{dead}, left by the dead run {dead}"),
        format!(
            "removed directory {}, left by the dead run {dead}",
            dir.display()
        ),
    ] {
        assert!(said.contains(&expected), "missing {expected:?} in:\n{said}");
    }
    assert_eq!(left_by(dead, &BTreeSet::new()), Vec::<String>::new());
    assert!(live_dir.exists(), "a live run's directory was removed");
    assert!(
        leftovers::inventory().contains(&Leftover::Directory(live_dir.clone())),
        "{live_dir:?}"
    );
    std::fs::remove_dir_all(&live_dir).unwrap();
    run.signal("TERM");
    run.gone(&seen);
}
