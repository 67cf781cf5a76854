//! Helpers shared by the workspace-level integration tests in `tests/tests/`.

pub mod corpus;
pub mod docs;

use std::path::{Path, PathBuf};

/// The workspace root, found from this crate's manifest directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits inside the workspace")
        .to_path_buf()
}

/// Creates (or keeps) the namespace `name` on the cluster `client` talks to.
pub async fn namespace(client: &kube::Client, name: &str) {
    kube::Api::<k8s_openapi::api::core::v1::Namespace>::all(client.clone())
        .patch(
            name,
            &kube::api::PatchParams::apply("test"),
            &kube::api::Patch::Apply(
                serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
            ),
        )
        .await
        .expect("a namespace can be applied");
}
