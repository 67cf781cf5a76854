//! One pod's life on the sim's kubelet: its volumes written ([`super::layout`]), its sandbox
//! made, each container started by the runtime ([`super::container`]), probed, restarted or left ended as the restart policy says, and, when
//! the pod goes, stopped the way a kubelet stops it (`preStop`, SIGTERM, the grace period,
//! SIGKILL).

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::{Value, json};
use tokio::sync::watch;

use super::{
    container::{Plan, found, python_home},
    context::{ContainerStatus, PodContext, PodStatus},
    env::container_env,
    layout::write_volumes,
    oci::{self, Mount},
    probes::{Check, Probe},
    sandbox::Container,
    security, text,
};

/// How long a failed start waits before the next attempt, at first; it doubles up to
/// [`MAX_BACKOFF`] (the kubelet's CrashLoopBackOff).
const FIRST_BACKOFF: Duration = Duration::from_secs(10);
const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// A running pod: its status and how to stop it.
pub struct PodHandle {
    /// What the kubelet knows of it.
    pub status: Arc<Mutex<PodStatus>>,
    /// Its hosts file.
    pub hosts: PathBuf,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl PodHandle {
    /// Starts the pod's task.
    pub fn start(context: PodContext) -> Self {
        let (stop, stopping) = watch::channel(false);
        let status = context.status.clone();
        let hosts = context.hosts.clone();
        let task = tokio::spawn(run(context, stopping));
        Self {
            status,
            hosts,
            stop,
            task,
        }
    }

    /// Stops the pod's containers gracefully; returns once they are gone and the sandbox is
    /// removed.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

fn set(status: &Arc<Mutex<PodStatus>>, change: impl FnOnce(&mut PodStatus)) {
    change(&mut status.lock().unwrap_or_else(|p| p.into_inner()));
}

fn set_container(
    status: &Arc<Mutex<PodStatus>>,
    i: usize,
    change: impl FnOnce(&mut ContainerStatus),
) {
    set(status, |s| {
        if let Some(c) = s.containers.get_mut(i) {
            change(c);
        }
    });
}

fn waiting(reason: &str, message: &str) -> Value {
    json!({"waiting": {"reason": reason, "message": message}})
}

/// Waits `delay` unless the pod is stopped first; true when stopped.
async fn stopped_during(stopping: &mut watch::Receiver<bool>, delay: Duration) -> bool {
    if *stopping.borrow() {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(delay) => *stopping.borrow(),
        _ = stopping.changed() => true,
    }
}

/// The pod's whole life.
async fn run(context: PodContext, mut stopping: watch::Receiver<bool>) {
    let spec = &context.pod["spec"];
    let containers: Vec<Value> = spec["containers"].as_array().cloned().unwrap_or_default();
    set(&context.status, |s| {
        s.phase = "Pending".into();
        s.containers = containers
            .iter()
            .map(|c| ContainerStatus {
                name: c["name"].as_str().unwrap_or("").into(),
                image: c["image"].as_str().unwrap_or("").into(),
                state: waiting("ContainerCreating", ""),
                ..Default::default()
            })
            .collect();
    });
    // Volumes first: a Secret that is not there yet holds the pod, as FailedMount does.
    let mounts = loop {
        match write_volumes(&context) {
            Ok(mounts) => break mounts,
            Err(message) => {
                for i in 0..containers.len() {
                    set_container(&context.status, i, |c| {
                        c.state = waiting("ContainerCreating", &message)
                    });
                }
                if stopped_during(&mut stopping, Duration::from_secs(2)).await {
                    return;
                }
            }
        }
    };
    if let Err(e) = context.network.create().await {
        for i in 0..containers.len() {
            set_container(&context.status, i, |c| {
                c.state = waiting(
                    "ContainerCreating",
                    &format!("creating the pod sandbox: {e}"),
                )
            });
        }
        let _ = stopping.changed().await;
        context.network.remove().await;
        return;
    }
    set(&context.status, |s| {
        s.phase = "Running".into();
        s.ip = Some(context.network.ip.to_string());
        s.host_ip = Some(context.network.gateway.to_string());
    });
    let context = Arc::new(context);
    let mut tasks = Vec::new();
    for (i, container) in containers.into_iter().enumerate() {
        let context = context.clone();
        let mounts = mounts.clone();
        let stopping = stopping.clone();
        tasks.push(tokio::spawn(async move {
            supervise(&context, i, &container, &mounts, stopping).await
        }));
    }
    let mut codes = Vec::new();
    for task in tasks {
        codes.push(task.await.ok().flatten());
    }
    // Containers that ended on their own (restartPolicy Never or OnFailure) end the pod; its
    // sandbox goes at once, its status and logs stay until the Pod does.
    context.network.remove().await;
    if !*stopping.borrow() {
        let phase = if codes.iter().all(|c| *c == Some(0)) {
            "Succeeded"
        } else {
            "Failed"
        };
        set(&context.status, |s| s.phase = phase.into());
        let _ = stopping.changed().await;
    }
    context.logs.forget(
        text(&context.pod, "/metadata/namespace"),
        text(&context.pod, "/metadata/name"),
    );
    let _ = std::fs::remove_dir_all(&context.dir);
}

/// The environment every container starts with before its own: the image's `PATH` (the
/// mapped root's `bin` first) and, for a Python virtualenv root, `VIRTUAL_ENV`.
fn base_env(root: &Path, pod: &Value) -> Vec<(String, String)> {
    let mut env = vec![
        (
            "PATH".to_string(),
            format!(
                "{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                root.join("bin").display()
            ),
        ),
        (
            "HOSTNAME".to_string(),
            text(pod, "/metadata/name").to_string(),
        ),
        ("HOME".to_string(), "/tmp".to_string()),
    ];
    env.extend(super::api_access::env());
    if root.join("pyvenv.cfg").is_file() {
        env.push(("VIRTUAL_ENV".to_string(), root.display().to_string()));
    }
    env
}

/// How a started container ended.
enum Ended {
    /// It exited with this code.
    Exited(i32),
    /// Its liveness (or startup) probe failed past its threshold.
    Unhealthy,
    /// The pod is being stopped.
    Stopping,
}

/// Runs container `i` until the pod stops or, unless it restarts always, it exits; returns
/// its last exit code.
async fn supervise(
    context: &PodContext,
    i: usize,
    container: &Value,
    mounts: &[Vec<Mount>],
    mut stopping: watch::Receiver<bool>,
) -> Option<i32> {
    let name = container["name"].as_str().unwrap_or("").to_string();
    let always = context.pod["spec"]["restartPolicy"]
        .as_str()
        .is_none_or(|p| p == "Always");
    let words_of = |field: &str| -> Vec<String> {
        container[field]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|w| w.as_str().map(str::to_string))
            .collect()
    };
    // A `command` replaces the image's entrypoint; `args` follow either.
    let mut words = words_of("command");
    if words.is_empty() {
        words = context.entrypoint.clone();
    }
    let no_command = words.is_empty();
    words.extend(words_of("args"));
    let fail = |reason: &str, message: String| {
        set_container(&context.status, i, |c| c.state = waiting(reason, &message));
    };
    if no_command {
        fail(
            "CreateContainerError",
            "the container names no command and its image's runtime no entrypoint (<image glob>=<root>=<entrypoint>)"
                .into(),
        );
        let _ = stopping.changed().await;
        return None;
    }
    let probes = match (
        Probe::of(container, "startupProbe"),
        Probe::of(container, "livenessProbe"),
        Probe::of(container, "readinessProbe"),
    ) {
        (Ok(s), Ok(l), Ok(r)) => (s, l, r),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            fail("CreateContainerError", e);
            let _ = stopping.changed().await;
            return None;
        }
    };
    let security = match security::of(&context.pod, container) {
        Ok(security) => security,
        Err(e) => {
            fail("CreateContainerConfigError", e);
            let _ = stopping.changed().await;
            return None;
        }
    };
    let cwd = match container["workingDir"].as_str().filter(|d| !d.is_empty()) {
        None => "/".to_string(),
        Some(dir) => match oci::container_path(dir, "workingDir") {
            Ok(dir) => dir.display().to_string(),
            Err(e) => {
                fail("CreateContainerError", e);
                let _ = stopping.changed().await;
                return None;
            }
        },
    };
    let plan = Plan {
        id: format!("{}-{i}", context.container_prefix),
        bundle: context.dir.join(format!("bundle-{i}")),
        image: oci::image(&context.root, python_home(&context.root).as_deref(), &found),
        security,
        mounts: mounts.get(i).cloned().unwrap_or_default(),
        cwd,
    };
    let log = context.dir.join(format!("container-{i}.log"));
    context.logs.register(
        text(&context.pod, "/metadata/namespace"),
        text(&context.pod, "/metadata/name"),
        &name,
        log.clone(),
    );
    let mut backoff = FIRST_BACKOFF;
    loop {
        // The environment is read at each start, as a restarted container sees a changed
        // Secret.
        let env = match container_env(container, &context.pod, &*context.lookup) {
            Ok(own) => {
                let mut env = base_env(&context.root, &context.pod);
                for (k, v) in own {
                    env.retain(|(n, _)| *n != k);
                    env.push((k, v));
                }
                env
            }
            Err(message) => {
                fail("CreateContainerConfigError", message);
                if stopped_during(&mut stopping, Duration::from_secs(2)).await {
                    return None;
                }
                continue;
            }
        };
        let running = match plan.start(context, &words, &env, &log).await {
            Ok(running) => running,
            Err(e) => {
                fail("RunContainerError", e);
                if stopped_during(&mut stopping, backoff).await {
                    return None;
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        let started_at = crate::clock::rfc3339(jiff::Timestamp::now());
        set_container(&context.status, i, |c| {
            c.state = json!({"running": {"startedAt": started_at}});
            c.started = probes.0.is_none();
            c.ready = probes.0.is_none() && probes.2.is_none();
        });
        let (ended, mut running) =
            watch_container(context, i, &plan, &env, running, &probes, &mut stopping).await;
        let code = match ended {
            Ended::Stopping => {
                terminate(context, container, &plan, &env, &mut running).await;
                set_container(&context.status, i, |c| {
                    c.ready = false;
                    c.state = json!({"terminated": {"exitCode": 143, "reason": "Error"}});
                });
                return None;
            }
            Ended::Unhealthy => {
                terminate(context, container, &plan, &env, &mut running).await;
                137
            }
            Ended::Exited(code) => code,
        };
        drop(running);
        let reason = if code == 0 { "Completed" } else { "Error" };
        set_container(&context.status, i, |c| {
            c.ready = false;
            c.state = json!({"terminated": {"exitCode": code, "reason": reason,
                "finishedAt": crate::clock::rfc3339(jiff::Timestamp::now())}});
        });
        // `OnFailure` is run as `Never`: the Job's next pod stands for the restart, and the
        // Job counts it against its backoff limit either way.
        if !always {
            return Some(code);
        }
        set_container(&context.status, i, |c| {
            c.restarts = c.restarts.saturating_add(1);
            c.state = waiting(
                "CrashLoopBackOff",
                &format!(
                    "back-off {}s restarting failed container={name}",
                    backoff.as_secs()
                ),
            );
        });
        if stopped_during(&mut stopping, backoff).await {
            return None;
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Runs one check of `probe` on the container: `httpGet` and `tcpSocket` against the pod's
/// address, `exec` inside the container through the runtime.
async fn check(context: &PodContext, plan: &Plan, env: &[(String, String)], probe: &Probe) -> bool {
    match &probe.check {
        Check::Exec { command } => plan.exec(context, command, env, probe.timeout).await,
        _ => probe.passes(context.network.ip).await,
    }
}

/// Probes a started container until it exits, fails its liveness (or startup) probe, or the
/// pod stops.
async fn watch_container(
    context: &PodContext,
    i: usize,
    plan: &Plan,
    env: &[(String, String)],
    mut running: Container,
    probes: &(Option<Probe>, Option<Probe>, Option<Probe>),
    stopping: &mut watch::Receiver<bool>,
) -> (Ended, Container) {
    let probing = async {
        let (startup, liveness, readiness) = probes;
        if let Some(probe) = startup {
            tokio::time::sleep(probe.initial_delay).await;
            let mut failures = 0;
            loop {
                if check(context, plan, env, probe).await {
                    break;
                }
                failures += 1;
                if failures >= probe.failure_threshold {
                    return;
                }
                tokio::time::sleep(probe.period).await;
            }
            set_container(&context.status, i, |c| {
                c.started = true;
                c.ready = readiness.is_none();
            });
        }
        let begun = tokio::time::Instant::now();
        let due = |p: &Option<Probe>| {
            p.as_ref()
                .map(|p| super::probes::after(begun, p.initial_delay))
        };
        let (mut live_due, mut ready_due) = (due(liveness), due(readiness));
        let (mut live_failures, mut ready_failures) = (0u32, 0u32);
        loop {
            let next = [live_due, ready_due].into_iter().flatten().min();
            let Some(next) = next else {
                std::future::pending::<()>().await;
                return;
            };
            tokio::time::sleep_until(next).await;
            let now = tokio::time::Instant::now();
            if let (Some(probe), Some(at)) = (liveness, live_due)
                && at <= now
            {
                if check(context, plan, env, probe).await {
                    live_failures = 0;
                } else {
                    live_failures += 1;
                    if live_failures >= probe.failure_threshold {
                        return;
                    }
                }
                live_due = Some(super::probes::after(now, probe.period));
            }
            if let (Some(probe), Some(at)) = (readiness, ready_due)
                && at <= now
            {
                if check(context, plan, env, probe).await {
                    ready_failures = 0;
                    set_container(&context.status, i, |c| c.ready = true);
                } else {
                    ready_failures += 1;
                    if ready_failures >= probe.failure_threshold {
                        set_container(&context.status, i, |c| c.ready = false);
                    }
                }
                ready_due = Some(super::probes::after(now, probe.period));
            }
        }
    };
    let ended = tokio::select! {
        status = running.child.wait() => Ended::Exited(status.ok().and_then(|s| s.code()).unwrap_or(137)),
        _ = probing => Ended::Unhealthy,
        _ = stopping.changed() => Ended::Stopping,
    };
    (ended, running)
}

/// Stops a container as the kubelet does: its `preStop` exec hook (inside the container),
/// then SIGTERM to its first process, then SIGKILL once the pod's grace period is over.
async fn terminate(
    context: &PodContext,
    container: &Value,
    plan: &Plan,
    env: &[(String, String)],
    running: &mut Container,
) {
    let grace = Duration::from_secs(
        context.pod["spec"]["terminationGracePeriodSeconds"]
            .as_u64()
            .unwrap_or(30),
    );
    let begun = tokio::time::Instant::now();
    let deadline = super::probes::after(begun, grace);
    let hook: Vec<String> = container["lifecycle"]["preStop"]["exec"]["command"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect();
    if !hook.is_empty() {
        plan.exec(
            context,
            &hook,
            env,
            deadline.saturating_duration_since(begun),
        )
        .await;
    }
    context.crun.kill(running.id(), "TERM").await;
    if tokio::time::timeout_at(deadline, running.child.wait())
        .await
        .is_err()
    {
        context.crun.kill(running.id(), "KILL").await;
        let _ = running.child.wait().await;
    }
}
