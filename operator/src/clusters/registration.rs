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
    /// The kubeconfig does not parse. Only where is said, never what is there: the lines
    /// around the error hold tokens and keys.
    #[error("data.{KUBECONFIG_KEY} is not a kubeconfig: {0}")]
    InvalidKubeconfig(String),
    /// An entry sets something the operator refuses to act on: it would read a local file,
    /// run a program, skip the certificate check, or send the credentials somewhere else.
    #[error("data.{KUBECONFIG_KEY}: {entry} sets {field}, which is refused: {why}")]
    Refused {
        /// The entry: `user "<name>"` or `cluster "<name>"`.
        entry: String,
        /// The kubeconfig field.
        field: &'static str,
        /// Why, and what to use instead.
        why: &'static str,
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

/// Where a kubeconfig failed to parse, as "line L, column C": the parser's own message
/// quotes the text around the error, which is where the tokens and keys are.
fn position(error: &kube::config::KubeconfigError) -> String {
    match error {
        kube::config::KubeconfigError::Parse(inner) => match inner.location() {
            Some(at) => format!(
                "it does not parse as YAML at line {}, column {}",
                at.line(),
                at.column()
            ),
            None => "it does not parse as YAML".to_string(),
        },
        _ => "it does not parse".to_string(),
    }
}

/// An entry's name as shown in a refusal: quoted, shortened, and only if it reads as a name.
fn entry(kind: &str, name: &str) -> String {
    let shown: String = name.chars().take(63).collect();
    if shown
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@' | ':' | '/'))
    {
        format!("{kind} {shown:?}")
    } else {
        format!("a {kind}")
    }
}

fn refused(entry: String, field: &'static str, why: &'static str) -> RegistrationError {
    RegistrationError::Refused { entry, field, why }
}

/// A registration authenticates with inline credentials only (`token`, or
/// `client-certificate-data` with `client-key-data`) and trusts an inline
/// `certificate-authority-data` (or the platform's roots) over `https://`. Anything that would
/// make the operator read its own files (a `tokenFile` naming its ServiceAccount token), run a
/// program, skip the certificate check or route its credentials elsewhere is refused, each
/// with its reason.
fn check_credentials(kubeconfig: &Kubeconfig) -> Result<(), RegistrationError> {
    const FILE: &str =
        "it names a file on the operator's host; the registration carries the value inline";
    for named in &kubeconfig.clusters {
        let at = || entry("cluster", &named.name);
        let Some(cluster) = &named.cluster else {
            continue;
        };
        if cluster.certificate_authority.is_some() {
            return Err(refused(at(), "certificate-authority", FILE));
        }
        if cluster.insecure_skip_tls_verify == Some(true) {
            return Err(refused(
                at(),
                "insecure-skip-tls-verify",
                "it turns off the check of the target's certificate; give certificate-authority-data",
            ));
        }
        if cluster.proxy_url.is_some() {
            return Err(refused(
                at(),
                "proxy-url",
                "it sends the credentials through another host; the operator connects to the target directly",
            ));
        }
        let server = cluster.server.as_deref().unwrap_or_default();
        let Some(rest) = server.strip_prefix("https://") else {
            return Err(refused(
                at(),
                "server",
                "it is not an https:// URL, and the token would travel in clear",
            ));
        };
        if crate::api::secret_store::url_has_userinfo(rest) {
            return Err(refused(
                at(),
                "server",
                "it carries credentials before the host (user:password@)",
            ));
        }
    }
    for named in &kubeconfig.auth_infos {
        let at = || entry("user", &named.name);
        let Some(info) = &named.auth_info else {
            continue;
        };
        let checks: [(bool, &'static str, &'static str); 9] = [
            (
                info.exec.is_some(),
                "exec",
                "it runs a program on the operator's host; use a token or a client certificate",
            ),
            (
                info.auth_provider.is_some(),
                "auth-provider",
                "it runs an authentication plugin in the operator; use a token or a client certificate",
            ),
            (info.token_file.is_some(), "tokenFile", FILE),
            (
                info.client_certificate.is_some(),
                "client-certificate",
                FILE,
            ),
            (info.client_key.is_some(), "client-key", FILE),
            (
                info.username.is_some() || info.password.is_some(),
                "username/password",
                "basic authentication is not accepted; use a token or a client certificate",
            ),
            (
                info.impersonate.is_some()
                    || info.impersonate_uid.is_some()
                    || info.impersonate_groups.is_some()
                    || info.impersonate_user_extra.is_some(),
                "as (impersonation)",
                "the registration's own identity must hold the access",
            ),
            (
                info.client_certificate_data.is_some() != info.client_key_data.is_some(),
                "client-certificate-data/client-key-data",
                "a client certificate needs both, inline",
            ),
            (
                info.token.is_none() && info.client_certificate_data.is_none(),
                "no credentials",
                "a target authenticates with a token or a client certificate",
            ),
        ];
        if let Some((_, field, why)) = checks.into_iter().find(|(hit, ..)| *hit) {
            return Err(refused(at(), field, why));
        }
    }
    Ok(())
}

/// Reads a registration Secret.
pub fn parse(secret: &Secret) -> Result<Registration, RegistrationError> {
    if secret.labels().get(REGISTRATION_LABEL).map(String::as_str) != Some("true") {
        return Err(RegistrationError::NotRegistered);
    }
    let raw = data(secret, KUBECONFIG_KEY)
        .filter(|k| !k.is_empty())
        .ok_or(RegistrationError::MissingKubeconfig)?;
    let text = std::str::from_utf8(raw).map_err(|e| {
        RegistrationError::InvalidKubeconfig(format!("it is not UTF-8 (byte {})", e.valid_up_to()))
    })?;
    let kubeconfig = Kubeconfig::from_yaml(text)
        .map_err(|e| RegistrationError::InvalidKubeconfig(position(&e)))?;
    check_credentials(&kubeconfig)?;
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
            RegistrationError::Refused {
                field: "auth-provider",
                ..
            }
        ));
    }

    fn refusal(kubeconfig: &str) -> Option<&'static str> {
        match parse(&secret(Some("true"), &[(KUBECONFIG_KEY, kubeconfig)])) {
            Err(RegistrationError::Refused { field, .. }) => Some(field),
            Err(other) => panic!("refused as {other}, not for a field"),
            Ok(_) => None,
        }
    }

    #[test]
    fn only_inline_credentials_over_https_are_accepted() {
        let user = |u: &str| KUBECONFIG.replace("user: {token: abc}", u);
        let cluster =
            |c: &str| KUBECONFIG.replace("cluster: {server: 'https://edge.example:6443'}", c);
        assert_eq!(refusal(KUBECONFIG), None);
        assert_eq!(
            refusal(&user(
                "user: {client-certificate-data: Y2VydA==, client-key-data: a2V5}"
            )),
            None
        );
        assert_eq!(
            refusal(&cluster(
                "cluster: {server: 'https://edge.example:6443', certificate-authority-data: Y2E=}"
            )),
            None
        );
        for (kubeconfig, field) in [
            (
                user("user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}"),
                "tokenFile",
            ),
            (
                user("user: {client-certificate: /etc/cert, client-key: /etc/key}"),
                "client-certificate",
            ),
            (
                user("user: {client-certificate-data: Y2VydA==, client-key: /etc/key}"),
                "client-key",
            ),
            (
                user("user: {client-certificate-data: Y2VydA==}"),
                "client-certificate-data/client-key-data",
            ),
            (
                user("user: {username: admin, password: hunter2}"),
                "username/password",
            ),
            (
                user("user: {token: abc, as: system:admin}"),
                "as (impersonation)",
            ),
            (user("user: {}"), "no credentials"),
            (
                cluster("cluster: {server: 'http://127.0.0.1:6443'}"),
                "server",
            ),
            (
                cluster("cluster: {server: 'https://u:p@edge.example'}"),
                "server",
            ),
            (
                cluster(
                    "cluster: {server: 'https://edge.example', insecure-skip-tls-verify: true}",
                ),
                "insecure-skip-tls-verify",
            ),
            (
                cluster("cluster: {server: 'https://edge.example', proxy-url: 'http://evil:3128'}"),
                "proxy-url",
            ),
            (
                cluster(
                    "cluster: {server: 'https://edge.example', certificate-authority: /etc/ca.crt}",
                ),
                "certificate-authority",
            ),
        ] {
            assert_eq!(refusal(&kubeconfig), Some(field), "{kubeconfig}");
        }
    }

    #[test]
    fn a_parse_error_names_the_position_and_never_the_text() {
        let broken = "apiVersion: v1\nclusters:\n- name: edge\n  cluster: {server: 'https://e'}\nusers:\n- name: u\n  user: {token: s3cr3t-token, client-key-data: UExBTlRFRA==\n  bad: [\n";
        let refused = parse(&secret(Some("true"), &[(KUBECONFIG_KEY, broken)])).unwrap_err();
        let text = refused.to_string();
        assert!(
            matches!(refused, RegistrationError::InvalidKubeconfig(_)),
            "{text}"
        );
        assert!(text.contains("line"), "{text}");
        for planted in ["s3cr3t-token", "UExBTlRFRA==", "token", "client-key-data"] {
            assert!(!text.contains(planted), "{text}");
        }
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
