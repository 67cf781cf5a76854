//! A registration Secret, read purely: the label contract, the `kubeconfig` and the optional
//! `namespaces` keys, what is refused, and the hash that decides when to re-engage.

use k8s_openapi::api::core::v1::Secret;
use kube::{ResourceExt, config::Kubeconfig};
use sha2::{Digest, Sha256};

use crate::api::refs::is_dns1123_label;

/// The label that registers a Secret as a cluster (exactly `"true"`).
pub const REGISTRATION_LABEL: &str = "sigs.k8s.io/multicluster-runtime-kubeconfig";
/// The data key holding the kubeconfig.
pub const KUBECONFIG_KEY: &str = "kubeconfig";
/// The data key holding the optional comma-separated namespaces.
pub const NAMESPACES_KEY: &str = "namespaces";

/// A registration as read from its Secret.
#[derive(Clone, Debug)]
pub struct Registration {
    /// The cluster name CRs reference (the Secret's name).
    pub name: String,
    /// The parsed kubeconfig.
    pub kubeconfig: Kubeconfig,
    /// The namespaces every LIST/WATCH is limited to; `None` for cluster-wide.
    pub namespaces: Option<Vec<String>>,
    /// SHA-256 over the kubeconfig and namespaces bytes: a change means a fresh engagement.
    pub hash: String,
}

/// Why a Secret is not (or not usably) a registration.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationError {
    /// The label is absent or not exactly `"true"`: not a registration at all.
    #[error("the Secret is not labelled {REGISTRATION_LABEL}=\"true\"")]
    NotRegistered,
    /// No `data.kubeconfig`.
    #[error("data.{KUBECONFIG_KEY} is missing or empty")]
    MissingKubeconfig,
    /// The kubeconfig does not parse.
    #[error("data.{KUBECONFIG_KEY} is not a kubeconfig: {0}")]
    InvalidKubeconfig(String),
    /// A user authenticates through a plugin the operator will not run.
    #[error(
        "data.{KUBECONFIG_KEY}: user {user:?} uses {block}; a target authenticates with a bearer token or a client certificate"
    )]
    ExternalCredentials {
        /// The user entry.
        user: String,
        /// `exec` or `auth-provider`.
        block: &'static str,
    },
    /// `data.namespaces` is present but empty or not a list of DNS-1123 labels.
    #[error(
        "data.{NAMESPACES_KEY} must be comma-separated DNS-1123 labels (lowercase alphanumerics and '-', at most 63 characters), got {0:?}"
    )]
    InvalidNamespaces(String),
}

fn data<'a>(secret: &'a Secret, key: &str) -> Option<&'a [u8]> {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|v| v.0.as_slice())
}

/// The namespaces of a `namespaces` value: comma-separated DNS-1123 labels, at least one.
pub fn parse_namespaces(value: &str) -> Result<Vec<String>, RegistrationError> {
    let names: Vec<String> = value.split(',').map(|n| n.trim().to_string()).collect();
    if value.trim().is_empty() || !names.iter().all(|n| is_dns1123_label(n)) {
        return Err(RegistrationError::InvalidNamespaces(value.to_string()));
    }
    Ok(names)
}

/// The hash of what an engagement is built from.
pub fn engagement_hash(kubeconfig: &[u8], namespaces: Option<&[u8]>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(kubeconfig);
    // A separator that cannot be confused with an absent key.
    hasher.update(match namespaces {
        Some(n) => [b"\0namespaces\0".as_slice(), n].concat(),
        None => b"\0cluster-wide".to_vec(),
    });
    format!("{:x}", hasher.finalize())
}

/// Reads a registration Secret.
pub fn parse(secret: &Secret) -> Result<Registration, RegistrationError> {
    if secret.labels().get(REGISTRATION_LABEL).map(String::as_str) != Some("true") {
        return Err(RegistrationError::NotRegistered);
    }
    let raw = data(secret, KUBECONFIG_KEY)
        .filter(|k| !k.is_empty())
        .ok_or(RegistrationError::MissingKubeconfig)?;
    let text = std::str::from_utf8(raw)
        .map_err(|e| RegistrationError::InvalidKubeconfig(e.to_string()))?;
    let kubeconfig = Kubeconfig::from_yaml(text)
        .map_err(|e| RegistrationError::InvalidKubeconfig(e.to_string()))?;
    for named in &kubeconfig.auth_infos {
        let Some(info) = &named.auth_info else {
            continue;
        };
        let block = if info.exec.is_some() {
            Some("exec")
        } else if info.auth_provider.is_some() {
            Some("auth-provider")
        } else {
            None
        };
        if let Some(block) = block {
            return Err(RegistrationError::ExternalCredentials {
                user: named.name.clone(),
                block,
            });
        }
    }
    let raw_namespaces = data(secret, NAMESPACES_KEY);
    let namespaces = match raw_namespaces {
        None => None,
        Some(bytes) => Some(parse_namespaces(&String::from_utf8_lossy(bytes))?),
    };
    Ok(Registration {
        name: secret.name_any(),
        kubeconfig,
        namespaces,
        hash: engagement_hash(raw, raw_namespaces),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;
    use std::collections::BTreeMap;

    const KUBECONFIG: &str = "\
apiVersion: v1
kind: Config
clusters:
- name: edge
  cluster: {server: 'https://edge.example:6443'}
users:
- name: operator
  user: {token: abc}
contexts:
- name: edge
  context: {cluster: edge, user: operator}
current-context: edge
";

    fn secret(label: Option<&str>, data: &[(&str, &str)]) -> Secret {
        let mut secret = Secret::default();
        secret.metadata.name = Some("edge-1".into());
        if let Some(value) = label {
            secret.metadata.labels = Some(BTreeMap::from([(
                REGISTRATION_LABEL.to_string(),
                value.to_string(),
            )]));
        }
        secret.data = Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                .collect(),
        );
        secret
    }

    #[test]
    fn only_the_exact_label_registers() {
        let data = [(KUBECONFIG_KEY, KUBECONFIG)];
        assert_eq!(
            parse(&secret(None, &data)).unwrap_err(),
            RegistrationError::NotRegistered
        );
        assert_eq!(
            parse(&secret(Some("True"), &data)).unwrap_err(),
            RegistrationError::NotRegistered
        );
        let registration = parse(&secret(Some("true"), &data)).unwrap();
        assert_eq!(registration.name, "edge-1");
        assert_eq!(registration.namespaces, None);
    }

    #[test]
    fn a_missing_or_broken_kubeconfig_and_plugin_users_are_refused() {
        assert_eq!(
            parse(&secret(Some("true"), &[])).unwrap_err(),
            RegistrationError::MissingKubeconfig
        );
        assert!(matches!(
            parse(&secret(Some("true"), &[(KUBECONFIG_KEY, "clusters: 7")])).unwrap_err(),
            RegistrationError::InvalidKubeconfig(_)
        ));
        let exec = KUBECONFIG.replace(
            "user: {token: abc}",
            "user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}",
        );
        let refused = parse(&secret(Some("true"), &[(KUBECONFIG_KEY, &exec)])).unwrap_err();
        assert!(refused.to_string().contains("exec"), "{refused}");
        let provider =
            KUBECONFIG.replace("user: {token: abc}", "user: {auth-provider: {name: gcp}}");
        assert!(matches!(
            parse(&secret(Some("true"), &[(KUBECONFIG_KEY, &provider)])).unwrap_err(),
            RegistrationError::ExternalCredentials {
                block: "auth-provider",
                ..
            }
        ));
    }

    #[test]
    fn namespaces_are_labels_and_an_empty_or_invalid_list_is_refused() {
        let with = |ns: &str| {
            parse(&secret(
                Some("true"),
                &[(KUBECONFIG_KEY, KUBECONFIG), (NAMESPACES_KEY, ns)],
            ))
        };
        assert_eq!(
            with("openstack, tenant-a").unwrap().namespaces,
            Some(vec!["openstack".to_string(), "tenant-a".to_string()])
        );
        for bad in ["", " ", "Openstack", "a.b", "ok,", &"x".repeat(64)] {
            assert!(
                matches!(with(bad), Err(RegistrationError::InvalidNamespaces(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_hash_moves_with_the_kubeconfig_and_the_namespaces() {
        let base = engagement_hash(b"k", None);
        assert_eq!(base, engagement_hash(b"k", None));
        assert_ne!(base, engagement_hash(b"k2", None));
        assert_ne!(base, engagement_hash(b"k", Some(b"openstack")));
        assert_ne!(
            engagement_hash(b"k", Some(b"a")),
            engagement_hash(b"k", Some(b"b"))
        );
    }
}
