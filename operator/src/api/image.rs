//! The container image Barbican runs.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

/// Rule: one of `tag` and `digest`, never both.
pub const IMAGE_TAG_XOR_DIGEST_RULE: &str = "has(self.tag) != has(self.digest)";
/// Message of [`IMAGE_TAG_XOR_DIGEST_RULE`].
pub const IMAGE_TAG_XOR_DIGEST_MESSAGE: &str =
    "exactly one of image.tag or image.digest must be set";

/// An OCI image reference: a repository plus exactly one of a tag or a digest.
///
/// The field carries no immutability rule: image upgrades are routine. A digest pins the image
/// against a re-pushed tag at the cost of tag-based release tracking, which is why
/// `spec.openStackRelease` exists beside it.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = (IMAGE_TAG_XOR_DIGEST_RULE, IMAGE_TAG_XOR_DIGEST_MESSAGE))]
pub struct ImageSpec {
    /// Repository, optionally with registry host and port (`ghcr.io/c5c3/barbican`).
    #[schemars(
        length(min = 1, max = 255),
        regex(pattern = r"^[a-z0-9]+([._:/-][a-z0-9]+)*$")
    )]
    pub repository: String,
    /// Image tag (`2025.2`). Mutually exclusive with `digest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$"))]
    pub tag: Option<String>,
    /// Content digest (`sha256:<64 hex>`). Mutually exclusive with `tag`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^sha256:[a-f0-9]{64}$"))]
    pub digest: Option<String>,
}

impl ImageSpec {
    /// The reference workloads run: `repository@digest` when a digest is pinned, otherwise
    /// `repository:tag`.
    pub fn reference(&self) -> String {
        match (&self.digest, &self.tag) {
            (Some(digest), _) => format!("{}@{digest}", self.repository),
            (None, Some(tag)) => format!("{}:{tag}", self.repository),
            (None, None) => self.repository.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_prefers_the_digest() {
        let image = ImageSpec {
            repository: "ghcr.io/c5c3/barbican".into(),
            tag: Some("2025.2".into()),
            digest: Some(format!("sha256:{}", "a".repeat(64))),
        };
        assert_eq!(
            image.reference(),
            format!("ghcr.io/c5c3/barbican@sha256:{}", "a".repeat(64))
        );
    }

    #[test]
    fn reference_uses_the_tag_without_a_digest() {
        let image = ImageSpec {
            repository: "ghcr.io/c5c3/barbican".into(),
            tag: Some("2025.2".into()),
            digest: None,
        };
        assert_eq!(image.reference(), "ghcr.io/c5c3/barbican:2025.2");
    }
}
