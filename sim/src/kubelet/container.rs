//! One container as the runtime runs it: the bundle written for each start (its volumes
//! walked to and held open, see [`super::volumes::pin`]), crun started on it, and processes
//! run inside it (hooks, exec probes) as its command runs.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use super::{
    context::PodContext,
    oci::{self, Mount},
    sandbox::Container,
    security::Security,
    text, volumes,
};

/// How long a container may take to be running after crun starts it.
const STARTING: Duration = Duration::from_secs(30);

/// One container of a pod as the runtime runs it: its bundle, what it may do, and the
/// environment and directory its processes (the command, hooks, exec probes) get.
pub(super) struct Plan {
    /// crun's name for it.
    pub id: String,
    /// Its bundle directory.
    pub bundle: PathBuf,
    /// What it may do.
    pub security: Security,
    /// What its root is made of.
    pub image: oci::Image,
    /// The pod's files and volumes it mounts.
    pub mounts: Vec<Mount>,
    /// Where its processes start.
    pub cwd: String,
}

impl Plan {
    /// Writes the bundle for a start with `env` and starts the container.
    pub async fn start(
        &self,
        context: &PodContext,
        words: &[String],
        env: &[(String, String)],
        log: &Path,
    ) -> Result<Container, String> {
        // Every volume is walked to without following a link, held open, and bound to a
        // mount point of the bundle from the descriptor: what the pod wrote into an emptyDir
        // cannot point crun elsewhere (see `Crun::run`).
        let volumes = context.dir.join("volumes");
        let pins = self.bundle.join("pins");
        let (mut held, mut binds) = (Vec::new(), Vec::new());
        let mut mounts = self.mounts.clone();
        for mount in &mut mounts {
            let Ok(relative) = mount.source.strip_prefix(&volumes) else {
                continue;
            };
            let pinned = volumes::pin(&volumes, relative).map_err(|e| format!("volume {e}"))?;
            let point = pins.join(binds.len().to_string());
            mount.source = point.clone();
            mount.file = pinned.file;
            binds.push((pinned.path, point, pinned.file));
            held.push(pinned.fd);
        }
        let config = oci::config(&oci::Container {
            process: oci::process(words, env, &self.cwd, &self.security),
            hostname: text(&context.pod, "/metadata/name"),
            netns: &Path::new("/run/netns").join(&context.network.netns),
            id_base: context.id_base,
            security: &self.security,
            image: &self.image,
            mounts: &mounts,
        });
        super::sandbox::write_bundle(&self.bundle, &config, &self.image, context.id_base)
            .map_err(|e| e.to_string())?;
        let mut pairs = Vec::new();
        for (from, point, file) in binds {
            let made = std::fs::create_dir_all(&pins).and_then(|()| {
                if file {
                    std::fs::write(&point, "")
                } else {
                    std::fs::create_dir(&point)
                }
            });
            made.map_err(|e| format!("{}: {e}", point.display()))?;
            pairs.push((from, point));
        }
        let mut running = context
            .crun
            .run(&self.bundle, &self.id, log, &pairs)
            .map_err(|e| e.to_string())?;
        running.hold(held);
        // Started means running, as a CRI runtime's StartContainer returns: the probes, hooks
        // and signals that follow need the container to exist. One that exits first is
        // reported by its exit status.
        context.crun.until_running(&self.id, STARTING).await;
        Ok(running)
    }

    /// Runs `words` in the running container (a hook, an exec probe) as its command runs,
    /// within `limit`; true when it exits 0.
    pub async fn exec(
        &self,
        context: &PodContext,
        words: &[String],
        env: &[(String, String)],
        limit: Duration,
    ) -> bool {
        static EXECS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = EXECS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // The environment may hold a Secret's value: the file is root's alone, in the
        // bundle's directory (root's alone), and goes once the process ends.
        let file = self.bundle.join(format!("exec-{n}.json"));
        let process = oci::process(words, env, &self.cwd, &self.security);
        let written =
            super::sandbox::write_private(&file, &serde_json::to_vec(&process).unwrap_or_default());
        let passed = written.is_ok()
            && tokio::time::timeout(limit, context.crun.exec(&self.id, &file))
                .await
                .unwrap_or(false);
        let _ = std::fs::remove_file(&file);
        passed
    }
}

/// The pod's Python: the `home` its runtime root's `pyvenv.cfg` names, if it has one.
pub(super) fn python_home(root: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(root.join("pyvenv.cfg")).ok()?;
    oci::python_home(&text)
}

/// What a path is on this machine, for [`oci::image`].
pub(super) fn found(path: &Path) -> oci::Found {
    match std::fs::symlink_metadata(path) {
        Err(_) => oci::Found::Missing,
        Ok(meta) if meta.file_type().is_symlink() => std::fs::read_link(path)
            .map(oci::Found::Link)
            .unwrap_or(oci::Found::Missing),
        Ok(meta) if meta.is_dir() => oci::Found::Directory,
        Ok(_) => oci::Found::File,
    }
}
