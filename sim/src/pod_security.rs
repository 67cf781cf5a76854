//! Pod Security Admission as kube-apiserver enforces it: a namespace's
//! `pod-security.kubernetes.io/enforce` label picks the Pod Security Standard (`privileged`,
//! `baseline`, `restricted`) every pod created in it must meet, and a pod that does not is
//! refused with the checks it fails, in kube-apiserver's words. The sim's admission
//! configuration enforces `baseline` where a namespace names no level (kube-apiserver's own
//! default is `privileged`; clusters that care set `baseline` or stricter, and the sim should
//! not run what those refuse) and exempts `kube-system`. Pure: [`check`] decides, the API
//! server and the kubelet's pod creation ask it.

use serde_json::Value;

/// The label naming a namespace's enforced level.
pub const ENFORCE_LABEL: &str = "pod-security.kubernetes.io/enforce";

/// The level enforced where a namespace names none.
pub const DEFAULT_LEVEL: Level = Level::Baseline;

/// A Pod Security Standard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Anything goes.
    Privileged,
    /// No known privilege escalation: no host namespaces, privileged containers, added
    /// capabilities beyond the default set, host paths or ports, unconfined profiles.
    Baseline,
    /// Hardened: baseline, and non-root, no privilege escalation, all capabilities dropped,
    /// a seccomp profile, only the volume types that need no host.
    Restricted,
}

impl Level {
    /// The level a namespace's labels enforce; an unknown value is the strictest, as
    /// kube-apiserver evaluates an invalid level.
    pub fn of_namespace(name: &str, labels: &Value) -> Level {
        if name == "kube-system" {
            return Level::Privileged;
        }
        match labels[ENFORCE_LABEL].as_str() {
            None => DEFAULT_LEVEL,
            Some("privileged") => Level::Privileged,
            Some("baseline") => Level::Baseline,
            Some(_) => Level::Restricted,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }
}

/// The capabilities `baseline` lets a container add.
const BASELINE_CAPABILITIES: [&str; 13] = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

/// The sysctls `baseline` allows.
const SAFE_SYSCTLS: [&str; 10] = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];

/// The volume types `restricted` allows.
const RESTRICTED_VOLUMES: [&str; 8] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// The SELinux types `baseline` allows.
const SELINUX_TYPES: [&str; 4] = [
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

/// Every container of `spec`, init and ephemeral ones included, with its name.
fn containers(spec: &Value) -> impl Iterator<Item = (&str, &Value)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(move |list| spec[list].as_array().into_iter().flatten())
        .map(|c| (c["name"].as_str().unwrap_or_default(), c))
}

/// The names of the containers of `spec` that `fails` says fail a check.
fn failing(spec: &Value, fails: impl Fn(&Value) -> bool) -> Vec<&str> {
    containers(spec)
        .filter(|(_, c)| fails(c))
        .map(|(n, _)| n)
        .collect()
}

/// `"c1", "c2"` of the containers `failing` names.
fn named(failing: &[&str]) -> String {
    let quoted: Vec<String> = failing.iter().map(|n| format!("{n:?}")).collect();
    let noun = if failing.len() == 1 {
        "container"
    } else {
        "containers"
    };
    format!("{noun} {}", quoted.join(", "))
}

/// The checks `pod` fails at `level`, each as kube-apiserver words it; empty: admitted.
pub fn violations(level: Level, pod: &Value) -> Vec<String> {
    let spec = &pod["spec"];
    let mut out = Vec::new();
    if level == Level::Privileged {
        return out;
    }
    // baseline
    let host: Vec<String> = ["hostNetwork", "hostPID", "hostIPC"]
        .iter()
        .filter(|f| spec[**f] == true)
        .map(|f| format!("{f}=true"))
        .collect();
    if !host.is_empty() {
        out.push(format!("host namespaces ({})", host.join(", ")));
    }
    let privileged = failing(spec, |c| c["securityContext"]["privileged"] == true);
    if !privileged.is_empty() {
        out.push(format!(
            "privileged ({} must not set securityContext.privileged=true)",
            named(&privileged)
        ));
    }
    let mut added = Vec::new();
    for (_, c) in containers(spec) {
        for cap in c["securityContext"]["capabilities"]["add"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let allowed = if level == Level::Restricted {
                cap == "NET_BIND_SERVICE"
            } else {
                BASELINE_CAPABILITIES.contains(&cap)
            };
            if !allowed && !added.contains(&cap) {
                added.push(cap);
            }
        }
    }
    if !added.is_empty() && level == Level::Baseline {
        let quoted: Vec<String> = added.iter().map(|c| format!("{c:?}")).collect();
        out.push(format!(
            "non-default capabilities (containers must not include {} in securityContext.capabilities.add)",
            quoted.join(", ")
        ));
    }
    let host_paths: Vec<&str> = spec["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v.get("hostPath").is_some())
        .map(|v| v["name"].as_str().unwrap_or_default())
        .collect();
    if !host_paths.is_empty() {
        out.push(format!(
            "hostPath volumes (volumes {})",
            host_paths
                .iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let host_ports: Vec<String> = containers(spec)
        .flat_map(|(_, c)| c["ports"].as_array().into_iter().flatten())
        .filter_map(|p| p["hostPort"].as_i64().filter(|port| *port != 0))
        .map(|p| p.to_string())
        .collect();
    if !host_ports.is_empty() {
        out.push(format!("hostPort (hostPorts {})", host_ports.join(", ")));
    }
    let unconfined = |context: &Value, field: &str| context[field]["type"] == "Unconfined";
    let apparmor = unconfined(&spec["securityContext"], "appArmorProfile")
        || containers(spec).any(|(_, c)| unconfined(&c["securityContext"], "appArmorProfile"))
        || pod["metadata"]["annotations"]
            .as_object()
            .into_iter()
            .flatten()
            .any(|(k, v)| {
                k.starts_with("container.apparmor.security.beta.kubernetes.io/")
                    && v == "unconfined"
            });
    if apparmor {
        out.push("forbidden AppArmor profile (Unconfined)".into());
    }
    let selinux_bad = |context: &Value| {
        let options = &context["seLinuxOptions"];
        options["type"]
            .as_str()
            .is_some_and(|t| !SELINUX_TYPES.contains(&t))
            || options.get("user").is_some_and(|u| !u.is_null())
            || options.get("role").is_some_and(|r| !r.is_null())
    };
    if selinux_bad(&spec["securityContext"])
        || containers(spec).any(|(_, c)| selinux_bad(&c["securityContext"]))
    {
        out.push("seLinuxOptions (type, user and role are limited)".into());
    }
    let proc_mount = failing(spec, |c| {
        c["securityContext"]["procMount"]
            .as_str()
            .is_some_and(|m| m != "Default")
    });
    if !proc_mount.is_empty() {
        out.push(format!(
            "procMount ({} must not set securityContext.procMount to anything but Default)",
            named(&proc_mount)
        ));
    }
    let unconfined_seccomp = failing(spec, |c| {
        unconfined(&c["securityContext"], "seccompProfile")
    });
    if unconfined(&spec["securityContext"], "seccompProfile") {
        out.push(
            "seccompProfile (pod must not set securityContext.seccompProfile.type to \"Unconfined\")"
                .into(),
        );
    }
    if !unconfined_seccomp.is_empty() {
        out.push(format!(
            "seccompProfile ({} must not set securityContext.seccompProfile.type to \"Unconfined\")",
            named(&unconfined_seccomp)
        ));
    }
    let sysctls: Vec<&str> = spec["securityContext"]["sysctls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str())
        .filter(|s| !SAFE_SYSCTLS.contains(s))
        .collect();
    if !sysctls.is_empty() {
        out.push(format!("forbidden sysctls ({})", sysctls.join(", ")));
    }
    if level == Level::Restricted {
        restricted(pod, &added, &mut out);
    }
    out
}

/// The checks `restricted` adds to `baseline`.
fn restricted(pod: &Value, added: &[&str], out: &mut Vec<String>) {
    let spec = &pod["spec"];
    let volumes: Vec<String> = spec["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| {
            let kind = v
                .as_object()?
                .keys()
                .find(|k| *k != "name")
                .cloned()
                .unwrap_or_default();
            (!RESTRICTED_VOLUMES.contains(&kind.as_str())).then(|| {
                format!(
                    "volume {:?} uses restricted volume type {kind:?}",
                    v["name"].as_str().unwrap_or_default()
                )
            })
        })
        .collect();
    if !volumes.is_empty() {
        out.push(format!("restricted volume types ({})", volumes.join(", ")));
    }
    let escalating = failing(spec, |c| {
        c["securityContext"]["allowPrivilegeEscalation"] != false
    });
    if !escalating.is_empty() {
        out.push(format!(
            "allowPrivilegeEscalation != false ({} must set securityContext.allowPrivilegeEscalation=false)",
            named(&escalating)
        ));
    }
    let dropping_all = |c: &Value| {
        c["securityContext"]["capabilities"]["drop"]
            .as_array()
            .is_some_and(|d| d.iter().any(|x| x == "ALL"))
    };
    let keeping = failing(spec, |c| !dropping_all(c));
    if !keeping.is_empty() || !added.is_empty() {
        let mut parts = Vec::new();
        if !keeping.is_empty() {
            parts.push(format!(
                "{} must set securityContext.capabilities.drop=[\"ALL\"]",
                named(&keeping)
            ));
        }
        if !added.is_empty() {
            let quoted: Vec<String> = added.iter().map(|c| format!("{c:?}")).collect();
            parts.push(format!(
                "containers must not include {} in securityContext.capabilities.add",
                quoted.join(", ")
            ));
        }
        out.push(format!("unrestricted capabilities ({})", parts.join("; ")));
    }
    let pod_non_root = spec["securityContext"]["runAsNonRoot"] == true;
    let root_allowed = failing(spec, |c| match &c["securityContext"]["runAsNonRoot"] {
        Value::Bool(own) => !own,
        _ => !pod_non_root,
    });
    if !root_allowed.is_empty() {
        out.push(format!(
            "runAsNonRoot != true (pod or {} must set securityContext.runAsNonRoot=true)",
            named(&root_allowed)
        ));
    }
    let as_root = spec["securityContext"]["runAsUser"] == 0
        || containers(spec).any(|(_, c)| c["securityContext"]["runAsUser"] == 0);
    if as_root {
        out.push("runAsUser=0 (pod and containers must not set runAsUser=0)".into());
    }
    let profiled = |context: &Value| {
        matches!(
            context["seccompProfile"]["type"].as_str(),
            Some("RuntimeDefault" | "Localhost")
        )
    };
    let pod_profiled = profiled(&spec["securityContext"]);
    let unprofiled = failing(spec, |c| {
        let own = &c["securityContext"]["seccompProfile"]["type"];
        if own.is_null() {
            !pod_profiled
        } else {
            !profiled(&c["securityContext"])
        }
    });
    if !unprofiled.is_empty() {
        out.push(format!(
            "seccompProfile (pod or {} must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")",
            named(&unprofiled)
        ));
    }
}

/// kube-apiserver's refusal of the pod `name` at `level` for `violations`.
pub fn refusal(name: &str, level: Level, violations: &[String]) -> String {
    format!(
        "pods {name:?} is forbidden: violates PodSecurity \"{}:latest\": {}",
        level.name(),
        violations.join(", ")
    )
}
