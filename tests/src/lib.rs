//! Helpers shared by the workspace-level integration tests in `tests/tests/`.

pub mod corpus;

use std::path::{Path, PathBuf};

/// The workspace root, found from this crate's manifest directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits inside the workspace")
        .to_path_buf()
}
