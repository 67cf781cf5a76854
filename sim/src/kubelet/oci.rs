//! A container as an OCI runtime runs it: the bundle's `config.json` (its process, its
//! namespaces, its user namespace's ID mapping, its mounts, its seccomp profile) and the
//! read-only root the mapped image is made of. Pure: the bundle is written and crun run by
//! [`super::sandbox`].
//!
//! The root is a directory of mount points only; what the image needs appears in it as
//! read-only bind mounts (the runtime root, the Python it was made from, the distribution's
//! `/usr` and the few files of `/etc` programs read), so nothing of the host outside them is
//! reachable, and no file of the root can be written.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::security::Security;

/// How many user and group IDs a pod's user namespace maps (as the kubelet maps for a pod
/// with `hostUsers: false`): container ID `n` is host ID `base + n`.
pub const IDS_PER_POD: u32 = 65_536;

/// The first host ID of the range of pod number `index` of kubelet `kubelet`: a multiple of
/// [`IDS_PER_POD`] from 2^20 on, never 0 (host root) nor past the 32-bit ID space.
pub fn id_base(kubelet: u32, index: u32) -> u32 {
    /// Ranges below 16 · 65536 are left to the host's own users.
    const FIRST: u32 = 16;
    const RANGES: u32 = (u32::MAX / IDS_PER_POD) - FIRST - 1;
    let slot = (u64::from(kubelet) * 7_919 + u64::from(index)) % u64::from(RANGES);
    (FIRST + u32::try_from(slot).unwrap_or(0)) * IDS_PER_POD
}

/// A path the container sees (a `mountPath`): absolute, of letters, digits, `.`, `_`, `-`
/// and `/`, without `..`. Anything else is refused: it reaches crun's configuration and the
/// bundle's directories.
pub fn container_path(text: &str, field: &str) -> Result<PathBuf, String> {
    let ok = text.starts_with('/')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'))
        && !text.split('/').any(|part| part == "..");
    if ok {
        Ok(PathBuf::from(text))
    } else {
        Err(format!(
            "{field} {text:?}: the sim's kubelet mounts absolute paths of letters, digits, '.', '_', '-' and '/' only"
        ))
    }
}

/// A bind mount into the container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// The directory or file on this machine.
    pub source: PathBuf,
    /// Where the container sees it.
    pub target: PathBuf,
    /// Mounted read-only.
    pub read_only: bool,
    /// The source is a file.
    pub file: bool,
}

/// What the image is made of on this machine: each path appears at the same place in the
/// container, read-only; a symbolic link is made as the same link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    /// Directories and files bound read-only.
    pub binds: Vec<Mount>,
    /// Links of the root (`/bin -> usr/bin` on a merged-/usr distribution): (path, target).
    pub links: Vec<(PathBuf, PathBuf)>,
}

/// The distribution's paths an image is made of, when they exist here: the programs and
/// libraries, and the files of `/etc` that the C library and Python read. Nothing else of the
/// host's `/etc` (no `shadow`, no `passwd`: the pod's own are generated).
pub const DISTRIBUTION: [&str; 14] = [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/alternatives",
    "/etc/ssl/certs",
    "/etc/ld.so.cache",
    "/etc/nsswitch.conf",
    "/etc/protocols",
    "/etc/services",
    "/etc/localtime",
];

/// What a path is on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Not there.
    Missing,
    /// A directory.
    Directory,
    /// A file.
    File,
    /// A symbolic link to this target.
    Link(PathBuf),
}

/// The image of a runtime `root`: the distribution's paths, the root itself and, for a Python
/// virtualenv, the installation its `pyvenv.cfg` names as `home` (its parent: the prefix
/// holding the standard library). `found` says what exists here.
pub fn image(root: &Path, python_home: Option<&Path>, found: &dyn Fn(&Path) -> Found) -> Image {
    let mut image = Image::default();
    let add = |path: &Path, image: &mut Image| {
        if image.binds.iter().any(|b| path.starts_with(&b.target)) {
            return;
        }
        match found(path) {
            Found::Missing => {}
            Found::Link(target) => image.links.push((path.to_path_buf(), target)),
            kind => image.binds.push(Mount {
                source: path.to_path_buf(),
                target: path.to_path_buf(),
                read_only: true,
                file: kind == Found::File,
            }),
        }
    };
    for path in DISTRIBUTION {
        add(Path::new(path), &mut image);
    }
    if let Some(prefix) = python_home.and_then(Path::parent)
        && prefix != Path::new("/")
    {
        add(prefix, &mut image);
    }
    add(root, &mut image);
    image
}

/// The `home` a virtualenv's `pyvenv.cfg` names (the directory of the Python it was made
/// from).
pub fn python_home(pyvenv_cfg: &str) -> Option<PathBuf> {
    pyvenv_cfg.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "home").then(|| PathBuf::from(value.trim()))
    })
}

/// The runtime's default seccomp profile: every system call allowed but those a container
/// has no business making (the ones Docker's and containerd's default profiles leave out:
/// namespaces, mounts, modules, keyrings, tracing other processes, the clock, rebooting),
/// which fail with `EPERM`; `clone3` fails with `ENOSYS` so the C library falls back to
/// `clone`, whose namespace flags are refused.
pub fn seccomp_profile() -> Value {
    const DENIED: [&str; 52] = [
        "acct",
        "add_key",
        "bpf",
        "clock_adjtime",
        "clock_settime",
        "create_module",
        "delete_module",
        "finit_module",
        "fsconfig",
        "fsmount",
        "fsopen",
        "fspick",
        "get_kernel_syms",
        "init_module",
        "ioperm",
        "iopl",
        "kcmp",
        "kexec_file_load",
        "kexec_load",
        "keyctl",
        "lookup_dcookie",
        "mount",
        "mount_setattr",
        "move_mount",
        "name_to_handle_at",
        "nfsservctl",
        "open_by_handle_at",
        "open_tree",
        "perf_event_open",
        "pivot_root",
        "process_vm_readv",
        "process_vm_writev",
        "ptrace",
        "query_module",
        "quotactl",
        "quotactl_fd",
        "reboot",
        "request_key",
        "setns",
        "settimeofday",
        "swapoff",
        "swapon",
        "syslog",
        "umount2",
        "unshare",
        "uselib",
        "userfaultfd",
        "ustat",
        "vm86",
        "vm86old",
        "_sysctl",
        "sysfs",
    ];
    /// `CLONE_NEWNS`, `NEWCGROUP`, `NEWUTS`, `NEWIPC`, `NEWUSER`, `NEWPID`, `NEWNET`,
    /// `NEWTIME`.
    const NAMESPACE_FLAGS: [u64; 8] = [
        0x0002_0000,
        0x0200_0000,
        0x0400_0000,
        0x0800_0000,
        0x1000_0000,
        0x2000_0000,
        0x4000_0000,
        0x80,
    ];
    let mut syscalls = vec![
        json!({"names": DENIED.as_slice(), "action": "SCMP_ACT_ERRNO", "errnoRet": 1}),
        json!({"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}),
    ];
    for flag in NAMESPACE_FLAGS {
        syscalls.push(json!({
            "names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
            "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}],
        }));
    }
    json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32",
            "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"],
        "syscalls": syscalls,
    })
}

/// A process in the container: its words, environment, directory and what it may do. The
/// same for the container's command and for an `exec` (a hook, a probe).
pub fn process(args: &[String], env: &[(String, String)], cwd: &str, security: &Security) -> Value {
    let caps = &security.capabilities;
    let held: &[String] = if security.uid == 0 { caps } else { &[] };
    json!({
        "terminal": false,
        "user": {"uid": security.uid, "gid": security.gid, "additionalGids": security.groups},
        "args": args,
        "env": env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
        "cwd": cwd,
        "capabilities": {
            "bounding": caps, "effective": held, "permitted": held,
            "inheritable": [], "ambient": [],
        },
        // No rlimits: the container keeps the sim's (a node's runtime sets its own).
        "noNewPrivileges": security.no_new_privileges,
    })
}

/// Everything [`config`] needs of one container.
pub struct Container<'a> {
    /// Its process.
    pub process: Value,
    /// The pod's name (the container's hostname).
    pub hostname: &'a str,
    /// The pod's network namespace (`/run/netns/<name>`).
    pub netns: &'a Path,
    /// The first host ID of the pod's range ([`id_base`]).
    pub id_base: u32,
    /// What it may do.
    pub security: &'a Security,
    /// The image's read-only binds.
    pub image: &'a Image,
    /// The pod's files and volumes, in the order the pod lists them.
    pub mounts: &'a [Mount],
}

fn bind(mount: &Mount) -> Value {
    let mut options = vec!["rbind", "nosuid", "nodev"];
    if mount.read_only {
        options.push("ro");
    }
    json!({
        "destination": mount.target, "type": "bind", "source": mount.source,
        "options": options,
    })
}

/// The bundle's `config.json` (the root is the bundle's `rootfs`).
pub fn config(container: &Container<'_>) -> Value {
    let mut mounts = vec![
        json!({"destination": "/proc", "type": "proc", "source": "proc",
            "options": ["nosuid", "noexec", "nodev"]}),
        json!({"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
            "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]}),
        json!({"destination": "/dev/pts", "type": "devpts", "source": "devpts",
            "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]}),
        json!({"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
            "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]}),
        json!({"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
            "options": ["nosuid", "noexec", "nodev"]}),
    ];
    if !container.security.read_only_root {
        mounts.push(
            json!({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
            "options": ["nosuid", "nodev", "mode=1777", "size=262144k"]}),
        );
    }
    mounts.extend(container.image.binds.iter().map(bind));
    // Shallower first: a volume inside another's mount path is mounted after it.
    let mut own: Vec<&Mount> = container.mounts.iter().collect();
    own.sort_by_key(|m| m.target.components().count());
    mounts.extend(own.into_iter().map(bind));
    let map = |size| json!([{"containerID": 0, "hostID": container.id_base, "size": size}]);
    let mut linux = json!({
        "uidMappings": map(IDS_PER_POD),
        "gidMappings": map(IDS_PER_POD),
        "namespaces": [
            {"type": "pid"}, {"type": "network", "path": container.netns}, {"type": "ipc"},
            {"type": "uts"}, {"type": "user"}, {"type": "mount"}, {"type": "cgroup"},
        ],
        "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
            "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
            "/proc/sched_debug", "/proc/scsi", "/sys/firmware"],
        "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
            "/proc/sysrq-trigger"],
    });
    if container.security.seccomp {
        linux["seccomp"] = seccomp_profile();
    }
    json!({
        "ociVersion": "1.0.2",
        "process": container.process,
        "root": {"path": "rootfs", "readonly": true},
        "hostname": container.hostname,
        "mounts": mounts,
        "linux": linux,
    })
}

/// The `/etc/passwd` of a pod: root, the pod's user when it is another, and nobody.
pub fn passwd(uid: u32, gid: u32) -> String {
    let mut text = String::from("root:x:0:0:root:/root:/bin/sh\n");
    if uid != 0 && uid != 65_534 {
        text.push_str(&format!("pod:x:{uid}:{gid}:pod user:/tmp:/bin/sh\n"));
    }
    text.push_str("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    text
}

/// The `/etc/group` of a pod: root, the pod's groups, and nogroup.
pub fn group(groups: &[u32]) -> String {
    let mut text = String::from("root:x:0:\n");
    for g in groups.iter().filter(|g| **g != 0 && **g != 65_534) {
        text.push_str(&format!("g{g}:x:{g}:\n"));
    }
    text.push_str("nogroup:x:65534:\n");
    text
}
