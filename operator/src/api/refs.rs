//! References from a custom resource to other objects by name.
//!
//! Each reference is its own small type so the generated schema says what a name addresses and
//! carries the `minLength` guard that stops an empty string from slipping through `required`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Kubernetes object-name grammar (DNS-1123 subdomain). Used by references the operator resolves
/// itself, so a malformed name fails at admission instead of at the first lookup.
pub const DNS1123_SUBDOMAIN_PATTERN: &str =
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

/// Whether `name` is a DNS-1123 subdomain: at most 253 characters of dot-separated labels, each
/// lowercase alphanumerics and '-', starting and ending alphanumeric. The check
/// [`DNS1123_SUBDOMAIN_PATTERN`] states for the schema, for code that runs without a regex engine.
pub fn is_dns1123_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// Whether `name` is a DNS-1123 label: one label of a subdomain, at most 63 characters (a
/// namespace name).
pub fn is_dns1123_label(name: &str) -> bool {
    name.len() <= 63 && !name.contains('.') && is_dns1123_subdomain(name)
}

/// A Secret reference with an optional data key.
///
/// The key selects which entry of the Secret holds the value; callers that read fixed keys
/// (the database Secret's `username`/`password`) ignore it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretRefSpec {
    /// Name of the Secret, in the namespace of the referencing resource. A DNS-1123 subdomain.
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS1123_SUBDOMAIN_PATTERN))]
    pub name: String,
    /// Data key inside the Secret. For the service-user Secret the defaulting webhook sets
    /// `password` when the key is left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253))]
    pub key: Option<String>,
}

/// A Secret reference by name alone: the data keys it must carry are fixed by contract, so
/// there is nothing to select.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretNameRefSpec {
    /// Name of the Secret, in the namespace of the referencing resource.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// A reference to a cluster-providing custom resource (a MariaDB or Memcached CR) in the
/// namespace of the Barbican.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterRefSpec {
    /// Name of the referenced cluster resource.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// A reference to a ConfigMap in the namespace of the Barbican.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigMapRefSpec {
    /// Name of the ConfigMap.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// Names the Barbican a secret store attaches to, in the store's own namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BarbicanRefSpec {
    /// Name of the Barbican custom resource. It need not exist when the store is admitted
    /// (GitOps ordering); a dangling reference shows as `Ready=False` on the store.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// Names the OpenBaoCluster (`openbao.org/v1alpha1`) a managed store provisions against.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceRefSpec {
    /// Name of the OpenBaoCluster in the store's namespace. The server URL, the CA Secret
    /// `<name>-tls-ca` and the provisioner ServiceAccount `<name>-provisioner` derive from it.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// Names the registered target cluster that receives a Barbican's children.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetClusterRefSpec {
    /// Name of the registration Secret (in the operator's clusters namespace) that holds the
    /// target's kubeconfig. A non-empty DNS-1123 subdomain. Whether it is registered is not
    /// checked at admission.
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS1123_SUBDOMAIN_PATTERN))]
    pub name: String,
}

/// The scope of an External Secrets store.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum SecretStoreKind {
    /// A cluster-scoped `ClusterSecretStore`, resolved by name alone.
    #[default]
    ClusterSecretStore,
    /// A namespaced `SecretStore`, resolved in the Barbican's own namespace.
    SecretStore,
}

impl SecretStoreKind {
    /// The Kubernetes kind name of the store.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretStoreKind::ClusterSecretStore => "ClusterSecretStore",
            SecretStoreKind::SecretStore => "SecretStore",
        }
    }
}

/// Selects the External Secrets store the credential Secrets arrive through.
///
/// This is the ESO store gating `SecretsReady`; it has nothing to do with the secret stores
/// Barbican itself writes to (those are `BarbicanSecretStore` resources).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretStoreRefSpec {
    /// `ClusterSecretStore` (the default) or `SecretStore` (looked up in the Barbican's namespace).
    #[serde(default)]
    pub kind: SecretStoreKind,
    /// Name of the store. A DNS-1123 subdomain.
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS1123_SUBDOMAIN_PATTERN))]
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns1123_subdomains() {
        for ok in ["a", "openbao-cluster-store", "a.b-c.d", "0abc"] {
            assert!(is_dns1123_subdomain(ok), "{ok}");
        }
        for bad in ["", "A", "-a", "a-", "a..b", "a_b", &"a".repeat(254)] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
    }
}
