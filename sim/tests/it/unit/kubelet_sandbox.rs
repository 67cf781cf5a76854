//! Tests of `barbican_sim::kubelet::sandbox`, `oci` and `security`: what a container is
//! allowed and how crun is told.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use barbican_sim::kubelet::{oci, sandbox::*, security};

fn pod_of(security_context: Value, container_context: Value) -> (Value, Value) {
    let container = json!({"name": "c", "securityContext": container_context});
    let pod = json!({"metadata": {"name": "p"}, "spec": {
        "securityContext": security_context, "containers": [container.clone()]}});
    (pod, container)
}

#[test]
fn the_barbican_pods_restricted_context_keeps_no_capability_and_no_privilege() {
    let (pod, container) = pod_of(
        json!({"fsGroup": 42424}),
        json!({"runAsUser": 42424, "runAsGroup": 42424, "runAsNonRoot": true,
            "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}),
    );
    let s = security::of(&pod, &container).unwrap();
    assert_eq!(
        (s.uid, s.gid, s.groups.clone()),
        (42424, 42424, vec![42424])
    );
    assert!(s.capabilities.is_empty());
    assert!(s.no_new_privileges && s.seccomp && s.read_only_root);
    let process = oci::process(&["uwsgi".into()], &[], "/", &s);
    assert_eq!(process["capabilities"]["bounding"], json!([]));
    assert_eq!(process["noNewPrivileges"], true);
    assert_eq!(process["user"]["additionalGids"], json!([42424]));
}

#[test]
fn without_a_context_a_container_is_the_images_root_with_containerds_defaults() {
    let (pod, container) = pod_of(Value::Null, Value::Null);
    let s = security::of(&pod, &container).unwrap();
    assert_eq!((s.uid, s.gid), (0, 0));
    assert_eq!(
        s.capabilities,
        security::DEFAULT_CAPABILITIES.map(String::from)
    );
    assert!(!s.capabilities.iter().any(|c| c == "CAP_SYS_ADMIN"));
    // Stricter than a node by default: no_new_privs and the runtime's seccomp profile.
    assert!(s.no_new_privileges && s.seccomp && !s.read_only_root);
    // Root in the container holds them; another user only has them bounded.
    let root = oci::process(&[], &[], "/", &s);
    assert_eq!(root["capabilities"]["effective"], json!(s.capabilities));
    let user = oci::process(
        &[],
        &[],
        "/",
        &security::Security {
            uid: 1000,
            ..s.clone()
        },
    );
    assert_eq!(user["capabilities"]["effective"], json!([]));
    assert_eq!(user["capabilities"]["bounding"], json!(s.capabilities));
}

#[test]
fn capabilities_are_added_and_dropped_by_either_spelling() {
    let (pod, container) = pod_of(
        Value::Null,
        json!({"capabilities": {"drop": ["ALL"], "add": ["net_bind_service", "CAP_KILL"]}}),
    );
    let s = security::of(&pod, &container).unwrap();
    assert_eq!(s.capabilities, ["CAP_NET_BIND_SERVICE", "CAP_KILL"]);
    let (pod, container) = pod_of(Value::Null, json!({"capabilities": {"add": ["SYS_PWN"]}}));
    let error = security::of(&pod, &container).unwrap_err();
    assert!(
        error.contains("capabilities.add") && error.contains("SYS_PWN"),
        "{error}"
    );
}

#[test]
fn what_needs_the_host_is_refused_naming_the_field() {
    let cases = [
        (
            json!({}),
            json!({"privileged": true}),
            "securityContext.privileged",
        ),
        (
            json!({"runAsNonRoot": true}),
            json!({}),
            "runAsNonRoot and image will run as root",
        ),
        (
            json!({}),
            json!({"seccompProfile": {"type": "Localhost", "localhostProfile": "x.json"}}),
            "seccompProfile.type",
        ),
        (
            json!({}),
            json!({"runAsUser": -1}),
            "securityContext.runAsUser",
        ),
        (
            json!({}),
            json!({"runAsGroup": 65_536}),
            "maps user and group IDs 0 to 65535",
        ),
        (
            json!({"fsGroup": 100_000}),
            json!({}),
            "spec.securityContext.fsGroup",
        ),
    ];
    for (pod_context, container_context, field) in cases {
        let (pod, container) = pod_of(pod_context, container_context);
        let error = security::of(&pod, &container).unwrap_err();
        assert!(error.contains(field), "{field}: {error}");
    }
    for host in ["hostNetwork", "hostPID", "hostIPC"] {
        let (mut pod, container) = pod_of(Value::Null, Value::Null);
        pod["spec"][host] = json!(true);
        let error = security::of(&pod, &container).unwrap_err();
        assert!(error.contains(&format!("spec.{host}")), "{error}");
    }
    let (pod, container) = pod_of(
        Value::Null,
        json!({"seccompProfile": {"type": "Unconfined"}}),
    );
    assert!(!security::of(&pod, &container).unwrap().seccomp);
}

#[test]
fn volumes_belong_to_the_pods_user_and_fs_group() {
    let (pod, _) = pod_of(json!({"fsGroup": 2000}), json!({"runAsUser": 1000}));
    assert_eq!(security::volume_owner(&pod), (1000, 2000));
    let (pod, _) = pod_of(Value::Null, json!({"runAsUser": 1000, "runAsGroup": 1001}));
    assert_eq!(security::volume_owner(&pod), (1000, 1001));
    let (pod, _) = pod_of(Value::Null, Value::Null);
    assert_eq!(security::volume_owner(&pod), (0, 0));
}

#[test]
fn each_pod_maps_to_its_own_range_of_unprivileged_host_ids() {
    let mut bases = std::collections::BTreeSet::new();
    for index in 1..2000 {
        let base = oci::id_base(4242, index);
        assert_eq!(base % oci::IDS_PER_POD, 0);
        assert!(base >= 16 * oci::IDS_PER_POD, "{base}");
        assert!(base.checked_add(oci::IDS_PER_POD).is_some(), "{base}");
        bases.insert(base);
    }
    assert_eq!(bases.len(), 1999, "two pods of one kubelet share a range");
    assert!((0..100_000).all(|k| oci::id_base(k, u32::MAX) != 0));
}

#[test]
fn the_image_is_the_distribution_the_python_and_the_root_read_only_and_nothing_else() {
    let found = |p: &Path| match p.to_str().unwrap() {
        "/usr" | "/opt/python/3.11" | "/srv/venv" | "/etc/ssl/certs" => oci::Found::Directory,
        "/bin" => oci::Found::Link("usr/bin".into()),
        "/etc/ld.so.cache" => oci::Found::File,
        _ => oci::Found::Missing,
    };
    let home = oci::python_home("home = /opt/python/3.11/bin\nversion = 3.11.7\n");
    assert_eq!(home.as_deref(), Some(Path::new("/opt/python/3.11/bin")));
    let image = oci::image(Path::new("/srv/venv"), home.as_deref(), &found);
    let binds: Vec<(PathBuf, bool, bool)> = image
        .binds
        .iter()
        .map(|b| (b.target.clone(), b.read_only, b.file))
        .collect();
    assert_eq!(
        binds,
        [
            ("/usr".into(), true, false),
            ("/etc/ssl/certs".into(), true, false),
            ("/etc/ld.so.cache".into(), true, true),
            ("/opt/python/3.11".into(), true, false),
            ("/srv/venv".into(), true, false),
        ]
    );
    assert_eq!(
        image.links,
        [(PathBuf::from("/bin"), PathBuf::from("usr/bin"))]
    );
    assert!(
        !oci::DISTRIBUTION
            .iter()
            .any(|p| *p == "/etc" || p.contains("shadow"))
    );
}

#[test]
fn the_config_isolates_the_container_and_maps_it_to_its_pods_range() {
    let (pod, container) = pod_of(Value::Null, json!({"readOnlyRootFilesystem": true}));
    let security = security::of(&pod, &container).unwrap();
    let image = oci::Image::default();
    let mounts = [
        oci::Mount {
            source: "/state/v/ca".into(),
            target: "/etc/barbican/ca".into(),
            read_only: true,
            file: false,
        },
        oci::Mount {
            source: "/state/v/config".into(),
            target: "/etc/barbican".into(),
            read_only: false,
            file: false,
        },
    ];
    let config = oci::config(&oci::Container {
        process: oci::process(&["id".into()], &[("A".into(), "b".into())], "/", &security),
        hostname: "p",
        netns: Path::new("/run/netns/bsim-1-2"),
        id_base: 1_048_576,
        security: &security,
        image: &image,
        mounts: &mounts,
    });
    assert_eq!(config["root"], json!({"path": "rootfs", "readonly": true}));
    assert_eq!(
        config["linux"]["uidMappings"],
        json!([{"containerID": 0, "hostID": 1_048_576, "size": 65_536}])
    );
    let namespaces: Vec<&str> = config["linux"]["namespaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["type"].as_str().unwrap())
        .collect();
    for kind in ["pid", "network", "ipc", "uts", "user", "mount"] {
        assert!(namespaces.contains(&kind), "{kind}");
    }
    assert_eq!(
        config["linux"]["namespaces"][1]["path"],
        "/run/netns/bsim-1-2"
    );
    assert_eq!(config["process"]["env"], json!(["A=b"]));
    let targets: Vec<&str> = config["mounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["destination"].as_str().unwrap())
        .collect();
    // No writable /tmp with a read-only root; a volume inside another's path comes after it.
    assert!(!targets.contains(&"/tmp"), "{targets:?}");
    let outer = targets.iter().position(|t| *t == "/etc/barbican").unwrap();
    let inner = targets
        .iter()
        .position(|t| *t == "/etc/barbican/ca")
        .unwrap();
    assert!(outer < inner, "{targets:?}");
    let denied = &config["linux"]["seccomp"]["syscalls"][0]["names"];
    for call in ["mount", "unshare", "setns", "ptrace", "bpf", "keyctl"] {
        assert!(
            denied.as_array().unwrap().iter().any(|n| n == call),
            "{call}"
        );
    }
}

#[test]
fn mount_paths_that_could_leave_the_root_or_reach_a_command_line_are_refused() {
    for bad in [
        "/etc/x'; rm -rf /",
        "/etc/a,b",
        "relative",
        "/etc/../x",
        "/etc/$(id)",
        "",
    ] {
        let error = oci::container_path(bad, "volumeMounts.mountPath").unwrap_err();
        assert!(error.contains("volumeMounts.mountPath"), "{bad}: {error}");
    }
    assert_eq!(
        oci::container_path("/etc/barbican", "x").unwrap(),
        PathBuf::from("/etc/barbican")
    );
}

#[test]
fn a_pods_passwd_and_group_name_its_user() {
    assert!(oci::passwd(42424, 42424).contains("pod:x:42424:42424:"));
    assert!(!oci::passwd(0, 0).contains("pod:"));
    assert_eq!(oci::group(&[42424]).matches("g42424").count(), 1);
}

#[test]
fn pods_get_a_slash_30_each() {
    let first = PodNetwork::plan(7, 1, 244).unwrap();
    assert_eq!(
        (first.gateway, first.ip),
        ("10.244.0.5".parse().unwrap(), "10.244.0.6".parse().unwrap())
    );
    let later = PodNetwork::plan(7, 100, 244).unwrap();
    assert_eq!(later.ip, "10.244.1.146".parse::<Ipv4Addr>().unwrap());
    assert!(later.host_if.len() <= 15, "{}", later.host_if);
    assert!(PodNetwork::plan(7, 20_000, 244).is_none());
}

/// A block whose gateway is already an address on this host (another sim's pod, or one a
/// killed sim left) is skipped: two sims on one host must not route each other's pods.
#[test]
fn a_pod_block_already_on_the_host_is_skipped() {
    // An octet no sim uses, so tests beside this one are not disturbed.
    let taken = PodNetwork::plan(7, 0, 243).unwrap().gateway;
    let add = std::process::Command::new("ip")
        .args(["addr", "add", &format!("{taken}/32"), "dev", "lo"])
        .status()
        .expect("ip runs (the kubelet's tests need it)");
    assert!(add.success(), "root may add an address to lo");
    assert!(host_addresses().contains(&taken));
    let mut numbers = 0..;
    let picked = PodNetwork::fresh_index(7, 243, || numbers.next().unwrap());
    let _ = std::process::Command::new("ip")
        .args(["addr", "del", &format!("{taken}/32"), "dev", "lo"])
        .status();
    assert_eq!(picked, 1, "block 0's gateway {taken} is taken");
    let mut numbers = 0..;
    assert_eq!(
        PodNetwork::fresh_index(7, 243, || numbers.next().unwrap()),
        0
    );
}

#[test]
fn a_private_file_is_its_owners_alone_and_replaces_a_readable_one() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("bsim-private-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.json");
    std::fs::write(&file, "old").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    write_private(&file, b"{\"env\": []}").unwrap();
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read(&file).unwrap(), b"{\"env\": []}");
    let fresh = dir.join("exec-1.json");
    write_private(&fresh, b"{}").unwrap();
    assert_eq!(
        std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
        0o600
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
