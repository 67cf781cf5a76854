//! A pod's directory as the kubelet lays it out before its containers start: each volume
//! written and owned as the pod's user namespace maps its user and `fsGroup`, the pod's own
//! `/etc` files, and the mounts each container gets.

use std::path::{Path, PathBuf};

use super::{
    context::PodContext,
    oci::{self, Mount},
    security,
    volumes::{self, Contents, Lookup},
};

/// Writes every volume under the pod's directory and returns the mounts of each container
/// (by container index), with the pod's hosts, resolver, `passwd` and `group` files.
///
/// The pod's directory is root's, others may only pass through it (crun reaches the bundle
/// and the volumes from inside the pod's user namespace); each volume is owned by the pod's
/// user and `fsGroup`
/// as its user namespace maps them (a Secret's files keep their mode, 0644 unless the pod
/// says otherwise, in a directory only that user and group enter), an `emptyDir` is the
/// pod's to write.
pub(super) fn write_volumes(context: &PodContext) -> Result<Vec<Vec<Mount>>, String> {
    let spec = &context.pod["spec"];
    let fs_group = spec["securityContext"]["fsGroup"]
        .as_u64()
        .and_then(|g| u32::try_from(g).ok());
    let (uid, gid) = security::volume_owner(&context.pod);
    let host = |id: u32| context.id_base.saturating_add(id.min(oci::IDS_PER_POD - 1));
    let own = |path: &Path| {
        std::os::unix::fs::lchown(path, Some(host(uid)), Some(host(gid)))
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    let lookup: &Lookup<'_> = &*context.lookup;
    chmod(&context.dir, 0o711)?;
    let root = context.dir.join("volumes");
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    chmod(&root, 0o711)?;
    let mut written = Vec::new();
    // A claim's files are the pod's, group-writable by its fsGroup, as the kubelet makes a
    // volume it mounts for a pod with an fsGroup.
    let own_claim = |path: &Path| {
        std::os::unix::fs::lchown(path, Some(host(uid)), Some(host(fs_group.unwrap_or(gid))))
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    // The claims' directories, by volume name: mounted from where they outlive the pod.
    let mut claimed: Vec<(String, PathBuf)> = Vec::new();
    for volume in spec["volumes"].as_array().into_iter().flatten() {
        let name = volume["name"].as_str().unwrap_or("");
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(format!("volume {name:?} has no usable name"));
        }
        let dir = root.join(name);
        let contents = volumes::contents(volume, lookup)?;
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("volume {name:?}: {e}"))?;
        own(&dir)?;
        match contents {
            Contents::Claim(claim) => {
                let _ = std::fs::remove_dir(&dir);
                claimed.push((name.to_string(), claim_dir(context, &claim, &own_claim)?));
            }
            Contents::Empty => chmod(&dir, 0o777)?,
            Contents::Files(files) => {
                chmod(&dir, 0o750)?;
                for file in files {
                    let path = dir.join(&file.path);
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent)
                            .map_err(|e| format!("volume {name:?}: {e}"))?;
                        if parent != dir {
                            own(parent)?;
                            chmod(parent, 0o755)?;
                        }
                    }
                    std::fs::write(&path, &file.data)
                        .map_err(|e| format!("volume {name:?}: {e}"))?;
                    // With an fsGroup the kubelet gives the group read access to what it
                    // writes, so a container running as that group reads mode 0400 files.
                    let mode = if fs_group.is_some() {
                        file.mode | 0o040
                    } else {
                        file.mode
                    };
                    own(&path)?;
                    chmod(&path, mode)?;
                }
            }
        }
        written.push(name.to_string());
    }
    let file = |name: &str, text: String| -> Result<PathBuf, String> {
        let path = context.dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        chmod(&path, 0o644)?;
        Ok(path)
    };
    let mut groups = vec![gid];
    groups.extend(fs_group);
    let passwd = file("etc-passwd", oci::passwd(uid, gid))?;
    let group = file("etc-group", oci::group(&groups))?;
    let pod_file = |source: &Path, target: &str| Mount {
        source: source.to_path_buf(),
        target: target.into(),
        read_only: true,
        file: true,
    };
    let mut per_container = Vec::new();
    for container in spec["containers"].as_array().into_iter().flatten() {
        let mut mounts = vec![
            pod_file(&context.hosts, "/etc/hosts"),
            pod_file(&context.dir.join("resolv.conf"), "/etc/resolv.conf"),
            pod_file(&passwd, "/etc/passwd"),
            pod_file(&group, "/etc/group"),
        ];
        for mount in container["volumeMounts"].as_array().into_iter().flatten() {
            let name = mount["name"].as_str().unwrap_or("");
            if !written.iter().any(|w| w == name) {
                return Err(format!("volumeMount {name:?} names no volume of the pod"));
            }
            let target = oci::container_path(
                mount["mountPath"].as_str().unwrap_or(""),
                "volumeMounts.mountPath",
            )?;
            let volume = claimed
                .iter()
                .find(|(volume, _)| volume == name)
                .map_or_else(|| root.join(name), |(_, dir)| dir.clone());
            let sub = mount["subPath"].as_str().filter(|s| !s.is_empty());
            let source = match sub {
                Some(sub) => volumes::inside(&volume, sub)
                    .map_err(|e| format!("volumeMount {name:?}: {e}"))?,
                None => volume,
            };
            let file = std::fs::symlink_metadata(&source).is_ok_and(|m| m.is_file());
            mounts.push(Mount {
                source,
                target,
                read_only: mount["readOnly"] == true,
                file,
            });
        }
        per_container.push(mounts);
    }
    Ok(per_container)
}

/// The directory of the claim `claim`, made if need be and everything in it owned by the pod
/// (`own`): the claim's files outlive its pods, so the next pod (another user namespace) is
/// given what the last one wrote.
fn claim_dir(
    context: &PodContext,
    claim: &str,
    own: &dyn Fn(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    let dir = context.claims.join(claim);
    std::fs::create_dir_all(&dir).map_err(|e| format!("claim {claim:?}: {e}"))?;
    for parent in [context.claims.parent(), Some(context.claims.as_path())]
        .into_iter()
        .flatten()
    {
        chmod(parent, 0o711)?;
    }
    own_tree(&dir, own)?;
    chmod(&dir, 0o2770)?;
    Ok(dir)
}

/// Applies `own` to `dir` and everything under it, following no symbolic link (a pod may
/// have planted one).
fn own_tree(dir: &Path, own: &dyn Fn(&Path) -> Result<(), String>) -> Result<(), String> {
    own(dir)?;
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        if kind.is_dir() {
            own_tree(&entry.path(), own)?;
        } else {
            own(&entry.path())?;
        }
    }
    Ok(())
}

fn chmod(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("{}: {e}", path.display()))
}
