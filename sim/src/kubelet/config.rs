//! What the kubelet is told: the images it runs and the roots they are made from, where it
//! keeps its pods, its address ranges, and why it cannot start.

use std::{path::PathBuf, str::FromStr};

use serde_json::Value;

use crate::controllers::runs_on;

/// An image (a glob: `ghcr.io/c5c3/barbican:2025.2*`) and the local root its containers run
/// from (`<root>/bin` first on `PATH`; a Python virtualenv also sets `VIRTUAL_ENV`), with the
/// image's entrypoint when it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Runtime {
    /// The image glob.
    pub image: String,
    /// The root.
    pub root: PathBuf,
    /// The image's `ENTRYPOINT`: what a container that names no `command` runs, followed by
    /// its `args` (empty: such a container cannot start).
    pub entrypoint: Vec<String>,
}

impl FromStr for Runtime {
    type Err = String;

    /// `<image glob>=<root directory>[=<entrypoint>]`.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut parts = text.splitn(3, '=');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(image), Some(root), entrypoint)
                if !image.is_empty()
                    && !root.is_empty()
                    && entrypoint.is_none_or(|e| !e.is_empty()) =>
            {
                Ok(Self {
                    image: image.to_string(),
                    root: PathBuf::from(root),
                    entrypoint: entrypoint.map(str::to_string).into_iter().collect(),
                })
            }
            _ => Err(format!(
                "{text:?}: a runtime is <image glob>=<root directory>[=<entrypoint>], for example ghcr.io/c5c3/barbican:2025.2*=target/venvs/2025.2 or ghcr.io/c5c3/barbican-operator:*=target/debug=/work/target/debug/barbican-operator"
            )),
        }
    }
}

/// How the kubelet runs.
#[derive(Clone, Debug)]
pub struct KubeletConfig {
    /// The images it runs, first match wins.
    pub runtimes: Vec<Runtime>,
    /// Where pods keep their volumes, logs and overlay layers.
    pub state_dir: PathBuf,
    /// Pods get addresses in `10.<pod_octet>.0.0/16`.
    pub pod_octet: u8,
    /// Services get addresses in `10.<service_octet>.0.0/16` on the loopback.
    pub service_octet: u8,
}

impl KubeletConfig {
    /// `runtimes`, with state under `state_dir` and the default address ranges.
    pub fn new(runtimes: Vec<Runtime>, state_dir: PathBuf) -> Self {
        Self {
            runtimes,
            state_dir,
            pod_octet: 244,
            service_octet: 245,
        }
    }

    /// Where the PersistentVolumeClaims of `namespace` keep their files: a directory per
    /// claim under it, kept across pods for as long as the kubelet's state (a claim bound to
    /// a volume of this node; the sim provisions no volumes and enforces no size).
    pub fn claims_dir(&self, namespace: &str) -> PathBuf {
        self.state_dir.join("claims").join(namespace)
    }

    /// The runtime a Pod's image runs on, when one is configured for it.
    pub fn runtime_for(&self, object: &Value) -> Option<&Runtime> {
        self.runtimes
            .iter()
            .find(|r| runs_on(std::slice::from_ref(&r.image), object))
    }
}

/// Why the kubelet could not start.
#[derive(Debug, thiserror::Error)]
pub enum KubeletError {
    /// A runtime's root is not a directory.
    #[error("runtime {image}: {root} is not a directory")]
    Root {
        /// The image glob.
        image: String,
        /// The root.
        root: PathBuf,
    },
    /// The machine cannot make sandboxes.
    #[error("the sim's kubelet needs root, iproute2's `ip`, util-linux's `unshare` and crun: {0}")]
    Host(String),
    /// The state directory could not be made.
    #[error("state directory {path}: {detail}")]
    State {
        /// The directory.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
}

/// `runtimes` with their roots absolute and without links: a root appears at the same path
/// inside each container, where a relative one (`target/catalog-venvs/2025.2`) would name
/// nothing. A root that is not a directory is the error.
pub fn absolute_roots(runtimes: Vec<Runtime>) -> Result<Vec<Runtime>, KubeletError> {
    runtimes
        .into_iter()
        .map(|runtime| match runtime.root.canonicalize() {
            Ok(root) if root.is_dir() => Ok(Runtime { root, ..runtime }),
            _ => Err(KubeletError::Root {
                image: runtime.image,
                root: runtime.root,
            }),
        })
        .collect()
}
