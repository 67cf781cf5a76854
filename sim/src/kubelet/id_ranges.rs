//! The host IDs a pod's user namespace maps, allocated host-wide: every range a running pod
//! uses is held by an exclusive lock on a file named after it under [`LOCK_DIR`], so two sims
//! on one host never give two pods the same host users (not even two in PID namespaces of
//! their own, whose kubelets all have the process id one), and a range a dead sim held is free
//! again at once (the kernel drops its locks). The range [`super::oci::id_base`] suggests is
//! tried first.

use std::{fs::File, os::unix::fs::OpenOptionsExt, path::Path};

use super::oci::{IDS_PER_POD, id_base};

/// Where the range locks live: host-wide, outside any scratch directory a run removes.
pub const LOCK_DIR: &str = "/run/barbican-sim/id-ranges";

/// A range of host IDs this process holds until it is dropped.
#[derive(Debug)]
pub struct IdRange {
    base: u32,
    _lock: File,
}

impl IdRange {
    /// The first free range from the one `kubelet`'s pod number `index` suggests.
    pub fn claim(kubelet: u32, index: u32) -> std::io::Result<IdRange> {
        Self::claim_in(Path::new(LOCK_DIR), kubelet, index)
            // A host without a writable /run: the temporary directory is still host-wide
            // unless a mount namespace gives this sim one of its own.
            .or_else(|_| {
                Self::claim_in(
                    &std::env::temp_dir().join("barbican-sim-id-ranges"),
                    kubelet,
                    index,
                )
            })
    }

    /// [`IdRange::claim`] with its locks under `dir`.
    pub fn claim_in(dir: &Path, kubelet: u32, index: u32) -> std::io::Result<IdRange> {
        std::fs::create_dir_all(dir)?;
        let suggested = id_base(kubelet, index);
        // Walk the ranges id_base can give, from the suggested one, by whole ranges.
        for step in 0..4096u32 {
            let base = id_base(kubelet, index.wrapping_add(step));
            let path = dir.join(base.to_string());
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(&path)?;
            match file.try_lock() {
                Ok(()) => return Ok(IdRange { base, _lock: file }),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
        Err(std::io::Error::other(format!(
            "no free range of {IDS_PER_POD} host IDs near {suggested} under {}",
            dir.display()
        )))
    }

    /// The first host ID of the range.
    pub fn base(&self) -> u32 {
        self.base
    }
}
