//! Tests of `barbican_sim::kubelet::id_ranges` and the kubelet's state root.

use barbican_sim::kubelet::{id_ranges::IdRange, oci::id_base};

/// Two kubelets that suggest the same range (two sims in PID namespaces of their own both
/// have process id 1) get different ones, and a range is free again once dropped.
#[test]
fn a_range_is_held_host_wide_until_dropped() {
    let dir = std::env::temp_dir().join(format!("bsim-id-ranges-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let first = IdRange::claim_in(&dir, 1, 7).unwrap();
    assert_eq!(first.base(), id_base(1, 7), "the suggested range when free");
    let second = IdRange::claim_in(&dir, 1, 7).unwrap();
    assert_ne!(second.base(), first.base());
    let (a, b) = (first.base(), second.base());
    assert!(a.abs_diff(b) >= 65_536, "whole ranges apart: {a} {b}");
    drop(first);
    let again = IdRange::claim_in(&dir, 1, 7).unwrap();
    assert_eq!(again.base(), id_base(1, 7), "free once its holder is gone");
    drop((second, again));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The state root lets host users pass, not list: the pods' names and files stay theirs.
#[test]
fn the_state_root_is_not_listable() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("bsim-state-root-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    barbican_sim::kubelet::sandbox::state_root(&dir.join("pods")).unwrap();
    let mode = std::fs::metadata(dir.join("pods"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o711);
    std::fs::remove_dir_all(&dir).unwrap();
}
