//! A pod's volumes as files, the way the kubelet's volume plugins lay them out: a `secret`,
//! `configMap` or `projected` volume is a directory holding one file per key (or per listed
//! item, at its `path`, with its `mode`), an `emptyDir` an empty directory, a
//! `persistentVolumeClaim` the claim's own directory, which outlives the pod. Pure: what a
//! volume holds is computed from the objects it names; writing them is the caller's.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// One file of a volume.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    /// Where, relative to the volume's directory.
    pub path: PathBuf,
    /// What it holds.
    pub data: Vec<u8>,
    /// Its permission bits.
    pub mode: u32,
}

/// What a volume holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Contents {
    /// Files (a secret, configMap or projected volume).
    Files(Vec<File>),
    /// Nothing yet (an emptyDir).
    Empty,
    /// The directory of this PersistentVolumeClaim of the pod's namespace: what earlier pods
    /// wrote there is there.
    Claim(String),
}

/// The objects a volume reads, looked up by the caller: `("Secret" | "ConfigMap" |
/// "PersistentVolumeClaim", name)`,
/// `("ServiceAccountToken", audience)` (`{"token": …}` of the pod's service account) and
/// `("Pod", "")` (the pod itself, for the downward API).
pub type Lookup<'a> = dyn Fn(&str, &str) -> Option<Value> + 'a;

/// A [`Lookup`] a task can own.
pub type SharedLookup = Box<dyn Fn(&str, &str) -> Option<Value> + Send + Sync>;

/// kube-apiserver's default for `defaultMode`.
const DEFAULT_MODE: u32 = 0o644;

/// The files of `volume` (a pod's `spec.volumes[]` entry). An error names the volume and what
/// is missing: the pod waits, as a kubelet's `FailedMount` does.
pub fn contents(volume: &Value, lookup: &Lookup<'_>) -> Result<Contents, String> {
    let name = volume["name"].as_str().unwrap_or("");
    if volume.get("emptyDir").is_some() {
        return Ok(Contents::Empty);
    }
    if let Some(source) = volume.get("persistentVolumeClaim") {
        let claim = source["claimName"].as_str().unwrap_or("");
        // The claim's name becomes a directory's: one path component, nothing else.
        if claim.is_empty() || claim.contains('/') || claim.starts_with('.') {
            return Err(format!(
                "volume {name:?}: claimName {claim:?} is no claim's name"
            ));
        }
        if lookup("PersistentVolumeClaim", claim).is_none() {
            return Err(format!(
                "volume {name:?}: persistentvolumeclaim {claim:?} not found"
            ));
        }
        return Ok(Contents::Claim(claim.to_string()));
    }
    if let Some(source) = volume.get("secret") {
        let object = source["secretName"].as_str().unwrap_or("");
        let default_mode = mode(source, "defaultMode").unwrap_or(DEFAULT_MODE);
        return source_files("Secret", object, source, default_mode, lookup)
            .map(Contents::Files)
            .map_err(|e| format!("volume {name:?}: {e}"));
    }
    if let Some(source) = volume.get("configMap") {
        let object = source["name"].as_str().unwrap_or("");
        let default_mode = mode(source, "defaultMode").unwrap_or(DEFAULT_MODE);
        return source_files("ConfigMap", object, source, default_mode, lookup)
            .map(Contents::Files)
            .map_err(|e| format!("volume {name:?}: {e}"));
    }
    if let Some(projected) = volume.get("projected") {
        let default_mode = mode(projected, "defaultMode").unwrap_or(DEFAULT_MODE);
        let mut files = Vec::new();
        for source in projected["sources"].as_array().into_iter().flatten() {
            if let Some(token) = source.get("serviceAccountToken") {
                files.push(
                    token_file(token, default_mode, lookup)
                        .map_err(|e| format!("volume {name:?}: {e}"))?,
                );
                continue;
            }
            if let Some(downward) = source.get("downwardAPI") {
                files.extend(
                    downward_files(downward, default_mode, lookup)
                        .map_err(|e| format!("volume {name:?}: {e}"))?,
                );
                continue;
            }
            let (kind, inner) = if let Some(inner) = source.get("secret") {
                ("Secret", inner)
            } else if let Some(inner) = source.get("configMap") {
                ("ConfigMap", inner)
            } else {
                return Err(format!(
                    "volume {name:?}: the sim's kubelet projects secrets, configMaps, serviceAccountTokens and the downward API only"
                ));
            };
            let object = inner["name"].as_str().unwrap_or("");
            files.extend(
                source_files(kind, object, inner, default_mode, lookup)
                    .map_err(|e| format!("volume {name:?}: {e}"))?,
            );
        }
        return Ok(Contents::Files(files));
    }
    Err(format!(
        "volume {name:?}: the sim's kubelet mounts secret, configMap, projected, emptyDir and persistentVolumeClaim volumes"
    ))
}

/// A projected `serviceAccountToken`: the pod's service account's token for its `audience`,
/// looked up as `("ServiceAccountToken", <audience>)` (the caller mints it).
fn token_file(source: &Value, mode: u32, lookup: &Lookup<'_>) -> Result<File, String> {
    let audience = source["audience"].as_str().unwrap_or("");
    let token = lookup("ServiceAccountToken", audience)
        .and_then(|t| t["token"].as_str().map(str::to_string))
        .ok_or_else(|| "the pod's service account has no token".to_string())?;
    Ok(File {
        path: relative(source["path"].as_str().unwrap_or("token"))?,
        data: token.into_bytes(),
        mode,
    })
}

/// A projected `downwardAPI` source: each item's pod field (the pod is looked up as
/// `("Pod", "")`).
fn downward_files(source: &Value, mode: u32, lookup: &Lookup<'_>) -> Result<Vec<File>, String> {
    let pod = lookup("Pod", "").unwrap_or(Value::Null);
    let mut files = Vec::new();
    for item in source["items"].as_array().into_iter().flatten() {
        let field = item["fieldRef"]["fieldPath"].as_str().unwrap_or("");
        let pointer = match field {
            "metadata.name" => "/metadata/name",
            "metadata.namespace" => "/metadata/namespace",
            "metadata.uid" => "/metadata/uid",
            other => {
                return Err(format!(
                    "downwardAPI fieldPath {other:?}: the sim's kubelet projects metadata.name, metadata.namespace and metadata.uid"
                ));
            }
        };
        files.push(File {
            path: relative(item["path"].as_str().unwrap_or(""))?,
            data: pod
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or("")
                .as_bytes()
                .to_vec(),
            mode: self::mode(item, "mode").unwrap_or(mode),
        });
    }
    Ok(files)
}

/// The files of one Secret or ConfigMap source: every key, or the listed `items`.
fn source_files(
    kind: &str,
    object: &str,
    source: &Value,
    default_mode: u32,
    lookup: &Lookup<'_>,
) -> Result<Vec<File>, String> {
    let optional = source["optional"] == true;
    let Some(found) = lookup(kind, object) else {
        return if optional {
            Ok(Vec::new())
        } else {
            Err(format!("{kind} {object:?} not found"))
        };
    };
    let data = data_of(kind, &found);
    let items = source["items"].as_array();
    let Some(items) = items else {
        return data
            .into_iter()
            .map(|(key, bytes)| {
                Ok(File {
                    path: relative(&key)?,
                    data: bytes,
                    mode: default_mode,
                })
            })
            .collect();
    };
    let mut files = Vec::new();
    for item in items {
        let key = item["key"].as_str().unwrap_or("");
        let Some((_, bytes)) = data.iter().find(|(k, _)| k == key) else {
            if optional {
                continue;
            }
            return Err(format!("{kind} {object:?} has no key {key:?}"));
        };
        files.push(File {
            path: relative(item["path"].as_str().unwrap_or(key))?,
            data: bytes.clone(),
            mode: mode(item, "mode").unwrap_or(default_mode),
        });
    }
    Ok(files)
}

/// The keys and bytes of a Secret (`data` is base64, `stringData` never stored) or a
/// ConfigMap (`data` text, `binaryData` base64).
fn data_of(kind: &str, object: &Value) -> Vec<(String, Vec<u8>)> {
    let decoded = |field: &str| -> Vec<(String, Vec<u8>)> {
        object[field]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| {
                let bytes: k8s_openapi::ByteString = serde_json::from_value(v.clone()).ok()?;
                Some((k.clone(), bytes.0))
            })
            .collect()
    };
    if kind == "Secret" {
        return decoded("data");
    }
    let mut out: Vec<(String, Vec<u8>)> = object["data"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.as_bytes().to_vec())))
        .collect();
    out.extend(decoded("binaryData"));
    out
}

/// A mode field; kube-apiserver validates the range, so anything else is ignored.
fn mode(object: &Value, field: &str) -> Option<u32> {
    object[field]
        .as_u64()
        .and_then(|m| u32::try_from(m).ok())
        .filter(|m| *m <= 0o777)
}

/// A path inside the volume: relative, without `..` (kube-apiserver refuses those too).
fn relative(path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    if path.is_empty() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(format!(
            "item path {path:?} must be relative and must not contain '..'"
        ));
    }
    Ok(p.to_path_buf())
}

/// `sub` (a `volumeMount`'s `subPath`) inside the volume directory `volume`: relative, without
/// `..`, and without a symbolic link on the way. A pod writes into its `emptyDir`, and the
/// kubelet mounts a subPath as root on the host, where a link planted by the pod (`x ->
/// /etc/shadow`) would lead out of the volume; the kubelet refuses those too.
pub fn inside(volume: &Path, sub: &str) -> Result<PathBuf, String> {
    let relative = Path::new(sub);
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(format!(
            "subPath {sub:?} must be relative and must not contain '..'"
        ));
    }
    let mut path = volume.to_path_buf();
    for part in relative.components() {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(format!(
                    "subPath {sub:?} goes through a symbolic link; the kubelet mounts only what is inside the volume"
                ));
            }
            Ok(_) => {}
            // A missing subPath is made as a directory, as the kubelet makes it.
            Err(_) => {
                std::fs::create_dir_all(&path).map_err(|e| format!("subPath {sub:?}: {e}"))?;
            }
        }
    }
    Ok(path)
}

/// A path inside the pod's directory held open: the runtime mounts `path`
/// (`/proc/<pid>/fd/<n>`), which is the very file or directory that was walked to, whatever
/// the pod renames or links meanwhile (the kubelet's subPath defence, CVE-2017-1002101).
#[derive(Debug)]
pub struct Pinned {
    /// What stays open until the container runs.
    pub fd: std::os::fd::OwnedFd,
    /// The path the runtime mounts.
    pub path: PathBuf,
    /// It is a file (else a directory).
    pub file: bool,
}

/// Opens `relative` under `base` one component at a time without following a symbolic link
/// (`O_PATH | O_NOFOLLOW`, each step through the previous step's descriptor as
/// `/proc/self/fd/<n>/<name>`): a link anywhere on the way is refused.
pub fn pin(base: &Path, relative: &Path) -> Result<Pinned, String> {
    use std::os::{fd::AsRawFd, unix::fs::OpenOptionsExt};
    let refuse = |why: String| format!("{}: {why}", relative.display());
    let open = |path: &Path| -> Result<std::fs::File, String> {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| refuse(e.to_string()))
    };
    let kind = |file: &std::fs::File| {
        file.metadata()
            .map(|m| m.file_type())
            .map_err(|e| refuse(e.to_string()))
    };
    let mut file = open(base)?;
    for part in relative.components() {
        let Component::Normal(name) = part else {
            return Err(refuse("must be relative and must not contain '..'".into()));
        };
        if !kind(&file)?.is_dir() {
            return Err(refuse("a component on the way is not a directory".into()));
        }
        let next = Path::new("/proc/self/fd")
            .join(file.as_raw_fd().to_string())
            .join(name);
        file = open(&next)?;
        if kind(&file)?.is_symlink() {
            return Err(refuse(
                "goes through a symbolic link; the kubelet mounts only what is inside the volume"
                    .into(),
            ));
        }
    }
    let is_file = kind(&file)?.is_file();
    let path = PathBuf::from(format!(
        "/proc/{}/fd/{}",
        std::process::id(),
        file.as_raw_fd()
    ));
    Ok(Pinned {
        fd: file.into(),
        path,
        file: is_file,
    })
}
