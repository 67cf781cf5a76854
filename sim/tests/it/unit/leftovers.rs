//! What a run leaves on the host is told apart by its name, and only dead runs' leftovers
//! are reaped (`sim/src/leftovers.rs`).

use std::{net::Ipv4Addr, path::PathBuf};

use barbican_sim::leftovers::{
    Leftover, of_ended_runs, parse_addresses, parse_links, parse_tables,
};

#[test]
fn each_kind_of_leftover_names_its_run() {
    let cases = [
        (
            Leftover::NetworkNamespace("bsim-4194304-16383".into()),
            Some(4_194_304),
        ),
        (
            Leftover::NetworkNamespace("bsim-probe-77-3".into()),
            Some(77),
        ),
        (Leftover::NetworkNamespace("bsim-77".into()), None),
        (Leftover::NetworkNamespace("other-1-2".into()), None),
        (Leftover::Link("bs77h12".into()), Some(77)),
        (Leftover::Link("bsx7h12".into()), None),
        (Leftover::Link("bond0".into()), None),
        (
            Leftover::Address {
                ip: Ipv4Addr::new(10, 245, 0, 10),
                label: "lo:bs77".into(),
            },
            Some(77),
        ),
        (
            Leftover::Address {
                ip: Ipv4Addr::new(10, 245, 0, 10),
                label: "lo:other".into(),
            },
            None,
        ),
        (Leftover::NftTable("bsim-77".into()), Some(77)),
        (Leftover::NftTable("filter".into()), None),
        (
            Leftover::Directory(PathBuf::from("/tmp/barbican-demo-77")),
            Some(77),
        ),
        (
            Leftover::Directory(PathBuf::from("/tmp/barbican-sim-kubelet-77")),
            Some(77),
        ),
        (
            Leftover::Directory(PathBuf::from("/tmp/barbican-demo-notes")),
            None,
        ),
        (
            Leftover::Lock(PathBuf::from("/run/barbican-sim/runs/77")),
            Some(77),
        ),
    ];
    for (leftover, run) in cases {
        assert_eq!(leftover.run(), run, "{leftover:?}");
    }
}

/// The longest names a run gives fit the kernel's 15 characters for an interface and a label.
#[test]
fn the_longest_run_and_pod_numbers_fit_interface_names() {
    let network = barbican_sim::kubelet::sandbox::PodNetwork::plan(4_194_304, 16_382, 244).unwrap();
    assert!(network.host_if.len() <= 15, "{}", network.host_if);
    assert_eq!(Leftover::Link(network.host_if).run(), Some(4_194_304));
    assert!("lo:bs4194304".len() <= 15);
}

#[test]
fn the_hosts_listings_are_read_as_ip_and_nft_print_them() {
    let links = "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n\
                 7: bs31874h2@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default qlen 1000\\    link/ether 2a:1b brd ff:ff link-netns bsim-31874-2\n";
    assert_eq!(parse_links(links), vec!["lo", "bs31874h2"]);
    let addresses = "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n\
                     1: lo    inet 10.245.0.10/32 scope global lo:bs30869\\       valid_lft forever preferred_lft forever\n";
    assert_eq!(
        parse_addresses(addresses),
        vec![(Ipv4Addr::new(10, 245, 0, 10), "lo:bs30869".to_string())]
    );
    let tables = "table inet filter\ntable ip nat\ntable inet bsim-30869\n";
    assert_eq!(parse_tables(tables), vec!["filter", "bsim-30869"]);
}

#[test]
fn only_ended_runs_are_reaped_and_their_lock_goes_last() {
    let found = vec![
        Leftover::Lock(PathBuf::from("/run/barbican-sim/runs/5")),
        Leftover::NftTable("bsim-5".into()),
        Leftover::NftTable("bsim-6".into()),
        Leftover::Directory(PathBuf::from("/tmp/barbican-demo-5")),
        Leftover::Directory(PathBuf::from("/tmp/unrelated")),
    ];
    let ended = of_ended_runs(found, |run| run == 5);
    assert_eq!(
        ended,
        vec![
            Leftover::NftTable("bsim-5".into()),
            Leftover::Directory(PathBuf::from("/tmp/barbican-demo-5")),
            Leftover::Lock(PathBuf::from("/run/barbican-sim/runs/5")),
        ]
    );
}

/// A run is alive while its lock is held, even when no process has its number (the
/// launcher's PID is the number; the sim in its PID namespace holds the lock too).
#[test]
fn a_held_lock_keeps_a_run_alive_and_its_last_holder_removes_it() {
    let run = (3_000_000..4_000_000)
        .find(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
        .unwrap();
    let Ok(lock) = barbican_sim::leftovers::RunLock::hold(run) else {
        println!("no writable {}: not run", barbican_sim::leftovers::RUN_DIR);
        return;
    };
    assert!(barbican_sim::leftovers::is_live(run));
    barbican_sim::leftovers::release(run);
    let path = std::path::Path::new(barbican_sim::leftovers::RUN_DIR).join(run.to_string());
    assert!(path.exists(), "a held lock was removed");
    let second = barbican_sim::leftovers::RunLock::hold(run).unwrap();
    drop(lock);
    assert!(path.exists(), "a lock another holder holds was removed");
    assert!(barbican_sim::leftovers::is_live(run));
    drop(second);
    assert!(!barbican_sim::leftovers::is_live(run));
    assert!(!path.exists(), "the last holder leaves no lock file");
}
