//! `pods/<name>/log`: where each container's output is kept, by the kubelet that runs it.

use std::{
    collections::BTreeMap,
    path::PathBuf,
    sync::{Arc, Mutex},
};

use crate::errors::ApiError;

/// Each pod's containers' log files, by namespace and pod.
type Files = BTreeMap<(String, String), BTreeMap<String, PathBuf>>;

/// The log file of each container a kubelet runs, by namespace, pod and container. Cheap to
/// clone; clones share the entries.
#[derive(Clone, Debug, Default)]
pub struct PodLogs {
    files: Arc<Mutex<Files>>,
}

impl PodLogs {
    /// Records where `container` of `namespace/pod` writes.
    pub fn register(&self, namespace: &str, pod: &str, container: &str, file: PathBuf) {
        self.files
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((namespace.into(), pod.into()))
            .or_default()
            .insert(container.into(), file);
    }

    /// Forgets a pod's containers.
    pub fn forget(&self, namespace: &str, pod: &str) {
        self.files
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(namespace.to_string(), pod.to_string()));
    }

    /// The log of `container` (the only one when `None`) of `pod`, whose containers are
    /// `containers`: its last `tail_lines`, at most `limit_bytes`. Errors are kube-apiserver's.
    pub fn read(
        &self,
        namespace: &str,
        pod: &str,
        containers: &[String],
        container: Option<&str>,
        tail_lines: Option<usize>,
        limit_bytes: Option<usize>,
    ) -> Result<String, ApiError> {
        let name = match (container, containers) {
            (Some(name), _) => name.to_string(),
            (None, [only]) => only.clone(),
            (None, _) => {
                return Err(ApiError::bad_request(format!(
                    "a container name must be specified for pod {pod}, choose one of: [{}]",
                    containers.join(" ")
                )));
            }
        };
        if !containers.contains(&name) {
            return Err(ApiError::bad_request(format!(
                "container {name} is not valid for pod {pod}"
            )));
        }
        let file = self
            .files
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(namespace.to_string(), pod.to_string()))
            .and_then(|c| c.get(&name))
            .cloned();
        let Some(file) = file else {
            return Err(ApiError::bad_request(format!(
                "container \"{name}\" in pod \"{pod}\" is waiting to start: ContainerCreating"
            )));
        };
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap_or_default()).into_owned();
        Ok(tail(&text, tail_lines, limit_bytes))
    }
}

/// The last `lines` lines of `text`, then at most `bytes` bytes of them (kube-apiserver
/// applies `tailLines` before `limitBytes`).
pub fn tail(text: &str, lines: Option<usize>, bytes: Option<usize>) -> String {
    let mut out = match lines {
        Some(n) => {
            let all: Vec<&str> = text.split_inclusive('\n').collect();
            all[all.len().saturating_sub(n)..].concat()
        }
        None => text.to_string(),
    };
    if let Some(limit) = bytes
        && out.len() > limit
    {
        let mut cut = limit;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}
