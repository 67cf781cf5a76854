//! What a container may do, decided from its pod's and its own `securityContext` the way the
//! kubelet and containerd decide it: who it runs as, the capabilities it keeps, whether it may
//! gain privileges, its seccomp profile, whether its root is writable. Pure; the OCI runtime
//! configuration is [`super::oci`]'s.
//!
//! Where a node has a choice, the sim takes the stricter one and says so: an unset seccomp
//! profile is `RuntimeDefault` (a kubelet with `seccompDefault: true`), and what would need
//! the host (`privileged`, `hostNetwork`, `hostPID`, `hostIPC`, a `Localhost` seccomp profile)
//! is refused with a message naming the field.

use serde_json::Value;

/// Every capability Linux knows, as the OCI runtime spells them.
pub const ALL_CAPABILITIES: [&str; 41] = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_DAC_READ_SEARCH",
    "CAP_FOWNER",
    "CAP_FSETID",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE",
    "CAP_NET_BIND_SERVICE",
    "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN",
    "CAP_NET_RAW",
    "CAP_IPC_LOCK",
    "CAP_IPC_OWNER",
    "CAP_SYS_MODULE",
    "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT",
    "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT",
    "CAP_SYS_ADMIN",
    "CAP_SYS_BOOT",
    "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE",
    "CAP_SYS_TIME",
    "CAP_SYS_TTY_CONFIG",
    "CAP_MKNOD",
    "CAP_LEASE",
    "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL",
    "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE",
    "CAP_MAC_ADMIN",
    "CAP_SYSLOG",
    "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND",
    "CAP_AUDIT_READ",
    "CAP_PERFMON",
    "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
];

/// containerd's default capabilities for a CRI container: what a container keeps when its
/// `securityContext` neither adds nor drops any.
pub const DEFAULT_CAPABILITIES: [&str; 14] = [
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FSETID",
    "CAP_FOWNER",
    "CAP_MKNOD",
    "CAP_NET_RAW",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETFCAP",
    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT",
    "CAP_KILL",
    "CAP_AUDIT_WRITE",
];

/// What a container may do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Security {
    /// Its user inside its user namespace (`runAsUser`; the image's root without one).
    pub uid: u32,
    /// Its group (`runAsGroup`, else 0).
    pub gid: u32,
    /// Supplementary groups: the pod's `fsGroup` and `supplementalGroups`.
    pub groups: Vec<u32>,
    /// The capabilities it may hold (the bounding set); a process of a user other than root
    /// starts with none of them effective, as containerd starts it.
    pub capabilities: Vec<String>,
    /// `no_new_privs`: set unless `allowPrivilegeEscalation` is true.
    pub no_new_privileges: bool,
    /// The runtime's default seccomp profile applies (`Unconfined` turns it off).
    pub seccomp: bool,
    /// `readOnlyRootFilesystem`: no writable `/tmp` either (the image's root is read-only
    /// in the sim; a container without the field gets a private `/tmp`).
    pub read_only_root: bool,
}

/// One field of the container's `securityContext`, else the pod's.
fn field<'a>(pod: &'a Value, container: &'a Value, name: &str) -> &'a Value {
    let own = &container["securityContext"][name];
    if own.is_null() {
        &pod["spec"]["securityContext"][name]
    } else {
        own
    }
}

/// The most IDs a pod's user namespace maps (as [`super::oci::IDS_PER_POD`]): a user or
/// group past them could not be switched to inside the container.
const MAPPED_IDS: u64 = 65_536;

fn id(value: &Value, path: &str) -> Result<Option<u32>, String> {
    match value {
        Value::Null => Ok(None),
        v => v
            .as_u64()
            .filter(|n| *n < MAPPED_IDS)
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "{path}: {v}: a pod's user namespace maps user and group IDs 0 to 65535 only"
                )
            }),
    }
}

/// A capability as written in a pod (`NET_ADMIN` or `CAP_NET_ADMIN`, any case) in the
/// runtime's spelling, or `None` for a name Linux does not have.
pub fn capability(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    let full = if upper.starts_with("CAP_") {
        upper
    } else {
        format!("CAP_{upper}")
    };
    ALL_CAPABILITIES.iter().copied().find(|c| *c == full)
}

/// The capability names of `securityContext.capabilities.<list>`; `ALL` stands for every one.
fn capability_list(container: &Value, list: &str) -> Result<Vec<&'static str>, String> {
    let mut out = Vec::new();
    for name in container["securityContext"]["capabilities"][list]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = name.as_str().unwrap_or("");
        if name.eq_ignore_ascii_case("ALL") {
            out.extend(ALL_CAPABILITIES);
        } else {
            out.push(capability(name).ok_or_else(|| {
                format!("securityContext.capabilities.{list}: {name:?} is not a Linux capability")
            })?);
        }
    }
    Ok(out)
}

/// What `container` of `pod` may do, or why the kubelet does not start it (the message names
/// the field, as a `CreateContainerConfigError` does).
pub fn of(pod: &Value, container: &Value) -> Result<Security, String> {
    let spec = &pod["spec"];
    for host in ["hostNetwork", "hostPID", "hostIPC"] {
        if spec[host] == true {
            return Err(format!(
                "spec.{host}: the sim's kubelet never shares the host's namespaces with a pod"
            ));
        }
    }
    if container["securityContext"]["privileged"] == true {
        return Err(
            "securityContext.privileged: the sim's kubelet does not run privileged containers"
                .into(),
        );
    }
    let uid = id(
        field(pod, container, "runAsUser"),
        "securityContext.runAsUser",
    )?;
    if field(pod, container, "runAsNonRoot") == &Value::Bool(true) && uid.unwrap_or(0) == 0 {
        // The kubelet's words: the mapped image names no user, so it runs as root.
        return Err("container has runAsNonRoot and image will run as root".into());
    }
    let gid = id(
        field(pod, container, "runAsGroup"),
        "securityContext.runAsGroup",
    )?;
    let mut groups = Vec::new();
    if let Some(group) = id(
        &spec["securityContext"]["fsGroup"],
        "spec.securityContext.fsGroup",
    )? {
        groups.push(group);
    }
    for group in spec["securityContext"]["supplementalGroups"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let Some(group) = id(group, "spec.securityContext.supplementalGroups")?
            && !groups.contains(&group)
        {
            groups.push(group);
        }
    }
    let drop = capability_list(container, "drop")?;
    let add = capability_list(container, "add")?;
    let mut capabilities: Vec<String> = DEFAULT_CAPABILITIES
        .iter()
        .filter(|c| !drop.contains(c))
        .map(|c| c.to_string())
        .collect();
    for cap in add {
        if !capabilities.iter().any(|c| c == cap) {
            capabilities.push(cap.to_string());
        }
    }
    let seccomp = match field(pod, container, "seccompProfile")["type"].as_str() {
        None | Some("RuntimeDefault") => true,
        Some("Unconfined") => false,
        Some(other) => {
            return Err(format!(
                "securityContext.seccompProfile.type: {other:?}: the sim's kubelet runs RuntimeDefault and Unconfined profiles only"
            ));
        }
    };
    Ok(Security {
        uid: uid.unwrap_or(0),
        gid: gid.unwrap_or(0),
        groups,
        capabilities,
        no_new_privileges: container["securityContext"]["allowPrivilegeEscalation"] != true,
        seccomp,
        read_only_root: container["securityContext"]["readOnlyRootFilesystem"] == true,
    })
}

/// The user and group of pod's volumes: the pod's `runAsUser` (else its first container's,
/// else root) and its `fsGroup` (else that user's group).
pub fn volume_owner(pod: &Value) -> (u32, u32) {
    let first = &pod["spec"]["containers"][0];
    let read = |name: &str| {
        id(field(pod, first, name), name)
            .ok()
            .flatten()
            .unwrap_or(0)
    };
    let uid = read("runAsUser");
    let group = id(&pod["spec"]["securityContext"]["fsGroup"], "fsGroup")
        .ok()
        .flatten()
        .unwrap_or_else(|| read("runAsGroup"));
    (uid, group)
}
