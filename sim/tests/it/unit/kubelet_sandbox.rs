//! Tests of `barbican_sim::kubelet::sandbox`.

use std::net::Ipv4Addr;
use std::path::Path;

use barbican_sim::kubelet::sandbox::*;

fn mount(source: &str, target: &str, read_only: bool) -> Mount {
    Mount {
        source: source.into(),
        target: target.into(),
        read_only,
        file: false,
    }
}

#[test]
fn a_missing_mount_path_is_made_in_an_overlay_of_its_nearest_existing_ancestor() {
    let exists = |p: &Path| ["/", "/etc", "/etc/hosts"].contains(&p.to_str().unwrap());
    let script = script(
        &[
            mount("/state/v/config", "/etc/barbican", true),
            mount("/state/v/ca", "/etc/barbican/secret-store-ca", true),
            Mount {
                source: "/state/hosts".into(),
                target: "/etc/hosts".into(),
                read_only: false,
                file: true,
            },
        ],
        &exists,
        Path::new("/state/scratch"),
        None,
        Some(RunAs {
            uid: 42424,
            gid: 42424,
            fs_group: Some(42424),
        }),
    )
    .unwrap();
    // The overlay goes first: mounted after the hosts file's bind, it would hide it.
    let expected = [
        "set -e",
        "mkdir -p '/state/scratch/overlay-0'/upper '/state/scratch/overlay-0'/work",
        "mount -t overlay overlay -o 'lowerdir=/etc,upperdir=/state/scratch/overlay-0/upper,workdir=/state/scratch/overlay-0/work' '/etc'",
        "mkdir -p '/etc/barbican'",
        "mount --bind '/state/v/config' '/etc/barbican'",
        "[ -e '/etc/hosts' ] || { mkdir -p \"$(dirname '/etc/hosts')\"; : > '/etc/hosts'; }",
        "mount --bind '/state/hosts' '/etc/hosts'",
        "mkdir -p '/etc/barbican/secret-store-ca'",
        "mount --bind '/state/v/ca' '/etc/barbican/secret-store-ca'",
        "mount -o remount,bind,ro '/etc/barbican'",
        "mount -o remount,bind,ro '/etc/barbican/secret-store-ca'",
        "cd /",
        "exec setpriv --reuid 42424 --regid 42424 --groups 42424 -- \"$@\"",
    ];
    assert_eq!(script.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn mount_paths_that_could_break_out_of_the_script_or_the_options_are_refused() {
    let exists = |_: &Path| true;
    for bad in [
        "/etc/x'; rm -rf /",
        "/etc/a,b",
        "/etc/a:b",
        "relative",
        "/etc/../x",
    ] {
        let error = script(
            &[mount("/s", bad, false)],
            &exists,
            Path::new("/scratch"),
            None,
            None,
        )
        .unwrap_err();
        assert!(error.to_string().contains("mountPath"), "{bad}: {error}");
    }
}

#[test]
fn a_mount_path_directly_under_the_root_is_refused_rather_than_overlaying_it() {
    let exists = |p: &Path| p == Path::new("/");
    let error = script(
        &[mount("/s", "/data", false)],
        &exists,
        Path::new("/x"),
        None,
        None,
    )
    .unwrap_err();
    assert!(error.to_string().contains("\"/data\""), "{error}");
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
