//! Runs that start processes (`demo --real-barbican`, `demo --installed`, `serve` with a
//! kubelet or a real MariaDB) leave nothing behind, however they end.
//!
//! The command the user started is a launcher ([`launch`]): it reaps what dead runs left
//! ([`barbican_sim::leftovers`]), then runs the same command again as the first process of a
//! PID namespace and a private mount namespace of its own (util-linux's `unshare`), and waits.
//! The kernel ends every process of a PID namespace when its first one ends, so a sim killed
//! with SIGKILL, or one that panics, takes its pods, MariaDB and helpers along; the pods'
//! network namespaces are named on a `/run/netns` private to the run, so they go with it too.
//! What the run makes on the host's network (Service addresses, the nftables table) and its
//! scratch directories the sim removes at its end, and the launcher removes whatever is left
//! once the sim is gone.
//!
//! Stopping is one protocol whoever asks ([`Stopping`]): SIGINT and SIGTERM, to the launcher
//! (which passes them on over the sim's standard input) or to the sim, ask for a graceful
//! stop, the pods' grace periods honoured; a second asks for an immediate one, after which the
//! launcher still cleans up. A launcher that dies (SIGKILL) closes that input, and the sim,
//! alone now, stops gracefully and cleans up after itself.

use std::{ffi::OsString, process::ExitCode};

use barbican_sim::leftovers;
use tokio::{io::AsyncWriteExt, sync::watch};

/// Set in the environment of the sim the launcher starts.
pub const INSIDE_ENV: &str = "BARBICAN_SIM_CONTAINED";

/// A test hook: with `sigusr1`, the sim panics when it gets SIGUSR1 (while it serves), to
/// show that a panic leaves nothing behind.
pub const PANIC_ENV: &str = "BARBICAN_SIM_PANIC_AT";

/// Whether this process is the sim a launcher started.
pub fn inside() -> bool {
    std::env::var_os(INSIDE_ENV).is_some()
}

/// Where `ip netns` keeps its names.
const NETNS_DIR: &str = "/run/netns";

/// In the sim a launcher started: gives the run a `/run/netns` of its own. `ip netns add`
/// keeps a pod's namespace as a file there with the namespace bound onto it; the bind goes
/// with the run's mount namespace, and a tmpfs of that namespace's own takes the files along
/// (on the host's `/run` they would stay, empty names a later run trips over).
pub fn private_netns_dir() -> Result<(), String> {
    std::fs::create_dir_all(NETNS_DIR).map_err(|e| format!("{NETNS_DIR}: {e}"))?;
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "mode=0755", "bsim-netns", NETNS_DIR])
        .status();
    match mounted {
        Ok(status) if status.success() => Ok(()),
        other => Err(format!("mounting a private {NETNS_DIR}: {other:?}")),
    }
}

/// Never resolves, unless [`PANIC_ENV`] is `sigusr1`: then it panics on SIGUSR1.
pub async fn panic_on_request() {
    let asked = std::env::var(PANIC_ENV).is_ok_and(|v| v == "sigusr1");
    let signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1());
    match signal {
        Ok(mut signal) if asked => {
            signal.recv().await;
            panic!("{PANIC_ENV}=sigusr1 and SIGUSR1 came");
        }
        _ => std::future::pending().await,
    }
}

/// How far a stop has been asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stop {
    /// Not asked.
    Running,
    /// Stop gracefully: the pods' grace periods honoured, everything removed.
    Graceful,
    /// Stop now (the launcher cleans up).
    Now,
}

impl Stop {
    /// The level after one more request.
    pub fn escalate(self) -> Stop {
        match self {
            Stop::Running => Stop::Graceful,
            Stop::Graceful | Stop::Now => Stop::Now,
        }
    }

    /// The level a line from the launcher asks for (`stop`, `now`); `None` at end of input
    /// (the launcher is gone: stop gracefully, alone).
    pub fn from_line(line: Option<&str>) -> Option<Stop> {
        match line.map(str::trim) {
            None | Some("stop") => Some(Stop::Graceful),
            Some("now") => Some(Stop::Now),
            Some(_) => None,
        }
    }

    /// The line the launcher sends for this level.
    pub fn line(self) -> &'static str {
        match self {
            Stop::Running => "",
            Stop::Graceful => "stop\n",
            Stop::Now => "now\n",
        }
    }
}

/// Raises the level `tx` holds: one step for a signal, to `to` for a line; at
/// [`Stop::Now`] the process ends.
fn raise(tx: &watch::Sender<Stop>, to: Option<Stop>) {
    let mut level = Stop::Running;
    tx.send_modify(|now| {
        *now = match to {
            None => now.escalate(),
            Some(to) => to.max(*now),
        };
        level = *now;
    });
    match level {
        Stop::Now => {
            eprintln!("barbican-sim: stopping now");
            std::process::exit(130);
        }
        Stop::Graceful => eprintln!("barbican-sim: stopping (again to stop at once)"),
        Stop::Running => {}
    }
}

/// The sim's view of stop requests: its own SIGINT and SIGTERM, and inside a launcher the
/// lines on its standard input. A request for [`Stop::Now`] ends the process at once.
#[derive(Clone)]
pub struct Stopping(watch::Receiver<Stop>);

impl Stopping {
    /// Starts listening.
    pub fn listen() -> Stopping {
        let (tx, rx) = watch::channel(Stop::Running);
        let tx = std::sync::Arc::new(tx);
        for kind in [
            tokio::signal::unix::SignalKind::interrupt(),
            tokio::signal::unix::SignalKind::terminate(),
        ] {
            let tx = tx.clone();
            if let Ok(mut signal) = tokio::signal::unix::signal(kind) {
                tokio::spawn(async move {
                    while signal.recv().await.is_some() {
                        raise(&tx, None);
                    }
                });
            }
        }
        if inside() {
            // A thread of its own: reading standard input blocks.
            std::thread::spawn(move || {
                let mut lines = std::io::stdin().lines();
                loop {
                    let line = lines.next().and_then(Result::ok);
                    let ended = line.is_none();
                    if let Some(level) = Stop::from_line(line.as_deref()) {
                        raise(&tx, Some(level));
                    }
                    if ended {
                        break;
                    }
                }
            });
        }
        Stopping(rx)
    }

    /// Resolves once a stop is asked for.
    pub async fn requested(&mut self) {
        let _ = self.0.wait_for(|s| *s != Stop::Running).await;
    }
}

/// Runs this command again contained, passing stop requests on, and cleans up after it;
/// the exit code is the sim's.
pub fn launch(args: Vec<OsString>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("barbican-sim: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(launch_and_wait(args))
}

const THIS_RUN: &str = "this run";

/// `barbican-sim leftovers`: lists what dead runs left, or removes it (`reap`); with `check`,
/// an error when there is any.
pub fn leftovers(reap: bool, check: bool) -> Result<(), String> {
    if reap {
        let reaped = leftovers::reap_dead();
        let failed = reaped
            .iter()
            .filter(|(_, removed)| removed.is_err())
            .count();
        report("the dead run", reaped);
        return match failed {
            0 => Ok(()),
            n => Err(format!("{n} leftover(s) could not be removed")),
        };
    }
    let found = leftovers::of_ended_runs(leftovers::inventory(), |id| !leftovers::is_live(id));
    for leftover in &found {
        println!("{leftover} (run {})", leftover.run().unwrap_or_default());
    }
    if check && !found.is_empty() {
        return Err(format!(
            "runs that are gone left {} thing(s) here",
            found.len()
        ));
    }
    Ok(())
}

fn report(what: &str, reaped: Vec<(leftovers::Leftover, Result<(), String>)>) {
    for (leftover, removed) in reaped {
        if what == THIS_RUN && matches!(leftover, leftovers::Leftover::Lock(_)) {
            // Its own lock goes without a word.
            continue;
        }
        let run = leftover.run().unwrap_or_default();
        match removed {
            Ok(()) => eprintln!("barbican-sim: removed {leftover}, left by {what} {run}"),
            Err(e) => eprintln!("barbican-sim: could not remove {leftover} of run {run}: {e}"),
        }
    }
}

async fn launch_and_wait(args: Vec<OsString>) -> ExitCode {
    let id = std::process::id();
    let _lock = match leftovers::RunLock::hold(id) {
        Ok(lock) => lock,
        Err(e) => {
            eprintln!(
                "barbican-sim: this run starts processes and needs root to contain them ({}: {e})",
                leftovers::RUN_DIR
            );
            return ExitCode::FAILURE;
        }
    };
    report("the dead run", leftovers::reap_dead());
    let Ok(me) = std::env::current_exe() else {
        eprintln!("barbican-sim: cannot find this binary to run it contained");
        return ExitCode::FAILURE;
    };
    let mut command = tokio::process::Command::new("unshare");
    command
        .args(["--pid", "--fork", "--kill-child", "--mount-proc"])
        .args(["--mount", "--propagation", "private", "--"])
        .arg(me)
        .args(&args)
        .env(INSIDE_ENV, "1")
        .env(leftovers::RUN_ENV, id.to_string())
        .stdin(std::process::Stdio::piped())
        // A process group of its own: a terminal's Ctrl-C reaches the launcher alone, which
        // passes it on once.
        .process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("barbican-sim: unshare (util-linux) did not start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut input = child.stdin.take();
    let mut level = Stop::Running;
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        eprintln!("barbican-sim: cannot handle SIGINT and SIGTERM");
        let _ = child.kill().await;
        return ExitCode::FAILURE;
    };
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        level = level.escalate();
        if let Some(pipe) = input.as_mut() {
            let _ = pipe.write_all(level.line().as_bytes()).await;
            let _ = pipe.flush().await;
        }
    };
    drop(input);
    report(THIS_RUN, leftovers::reap_run(id));
    match status {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(status) => {
            let code = status.code().unwrap_or(1);
            ExitCode::from(u8::try_from(code).unwrap_or(1))
        }
        Err(e) => {
            eprintln!("barbican-sim: waiting for the contained run: {e}");
            ExitCode::FAILURE
        }
    }
}
