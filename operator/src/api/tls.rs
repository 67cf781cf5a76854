//! TLS on the API: uWSGI serves HTTPS on 9311 with a certificate from a Secret, which either
//! exists already (`secretName`) or is issued by cert-manager for the Service's names
//! (`issuerRef`). With it, `status.endpoint` and `[DEFAULT] host_href` say `https://`, the
//! probes speak HTTPS, and a rotated certificate rolls the pods.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use super::refs::DNS1123_SUBDOMAIN_PATTERN;

/// Rule: the certificate comes from exactly one place.
pub const TLS_SOURCE_RULE: &str = "has(self.secretName) != has(self.issuerRef)";
/// Message of [`TLS_SOURCE_RULE`].
pub const TLS_SOURCE_MESSAGE: &str = "exactly one of tls.secretName or tls.issuerRef must be set";
/// Rule: extra names go into a certificate the operator requests, so only with `issuerRef`.
pub const TLS_DNS_NAMES_RULE: &str = "!has(self.dnsNames) || has(self.issuerRef)";
/// Message of [`TLS_DNS_NAMES_RULE`].
pub const TLS_DNS_NAMES_MESSAGE: &str =
    "tls.dnsNames names what a requested certificate covers, so it needs tls.issuerRef";
/// The most extra DNS names a requested certificate carries.
pub const MAX_DNS_NAMES: u32 = 16;
/// The API group of cert-manager's issuers, the default of `issuerRef.group`.
pub const CERT_MANAGER_GROUP: &str = "cert-manager.io";
/// A DNS name a certificate can carry: a DNS-1123 subdomain, optionally behind `*.`.
pub const DNS_NAME_PATTERN: &str =
    r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

/// Whether `name` is a DNS name a certificate can carry ([`DNS_NAME_PATTERN`], at most 253
/// characters), for code that runs without a regex engine.
pub fn is_dns_name(name: &str) -> bool {
    let bare = name.strip_prefix("*.").unwrap_or(name);
    name.len() <= 253 && super::refs::is_dns1123_subdomain(bare)
}

/// TLS on the API. Present: uWSGI serves HTTPS only, with `tls.crt` and `tls.key` of the
/// Secret; absent (the default): HTTP, as before.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = (TLS_SOURCE_RULE, TLS_SOURCE_MESSAGE),
    validation = (TLS_DNS_NAMES_RULE, TLS_DNS_NAMES_MESSAGE)
)]
pub struct TlsSpec {
    /// A `kubernetes.io/tls` Secret in the Barbican's namespace, kept by whoever issued it:
    /// `tls.crt` (the server certificate, then its chain), `tls.key`, and optionally `ca.crt`,
    /// which the operator's health check trusts (the platform's roots without it). The
    /// certificate must name the Service (`{name}.{namespace}.svc` and the cluster-local
    /// form). Exactly one of `secretName` and `issuerRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS1123_SUBDOMAIN_PATTERN))]
    pub secret_name: Option<String>,
    /// A cert-manager issuer: the operator requests a Certificate `{name}` for the Service's
    /// names (and `dnsNames`), issued into the Secret `{name}-tls` and renewed by cert-manager.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer_ref: Option<IssuerRefSpec>,
    /// Further DNS names of the requested certificate, such as an internal load balancer's;
    /// only with `issuerRef`. At most 16.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        extend("maxItems" = MAX_DNS_NAMES),
        inner(length(min = 1, max = 253), regex(pattern = DNS_NAME_PATTERN))
    )]
    pub dns_names: Option<Vec<String>>,
}

/// The kinds of cert-manager issuer.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, schemars::JsonSchema,
)]
pub enum IssuerKind {
    /// An Issuer in the Barbican's namespace (the default).
    #[default]
    Issuer,
    /// A cluster-scoped ClusterIssuer.
    ClusterIssuer,
}

impl IssuerKind {
    /// The kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Issuer => "Issuer",
            Self::ClusterIssuer => "ClusterIssuer",
        }
    }
}

/// The issuer a requested Certificate names.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IssuerRefSpec {
    /// The issuer's name.
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS1123_SUBDOMAIN_PATTERN))]
    pub name: String,
    /// `Issuer` (in the Barbican's namespace, the default) or `ClusterIssuer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<IssuerKind>,
    /// The issuer's API group: `cert-manager.io` when unset; an external issuer's otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253), regex(pattern = DNS1123_SUBDOMAIN_PATTERN))]
    pub group: Option<String>,
}

impl IssuerRefSpec {
    /// The kind in effect.
    pub fn effective_kind(&self) -> IssuerKind {
        self.kind.unwrap_or_default()
    }

    /// The group in effect.
    pub fn effective_group(&self) -> &str {
        self.group.as_deref().unwrap_or(CERT_MANAGER_GROUP)
    }
}

impl TlsSpec {
    /// The Secret the API pods serve from: `secretName`, or the Secret the requested
    /// Certificate of the Barbican `name` is issued into.
    pub fn secret(&self, name: &str) -> String {
        match &self.secret_name {
            Some(secret) => secret.clone(),
            None => super::names::tls_secret_name(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_names_are_subdomains_with_an_optional_wildcard() {
        for good in ["kms.example.com", "*.kms.example.com", "kms", "a-1.b"] {
            assert!(is_dns_name(good), "{good}");
        }
        let long = format!("{}.example", "a".repeat(250));
        for bad in [
            "",
            "*",
            "*.",
            "kms.*.example",
            "KMS.example",
            "kms\n.example",
            "-kms",
            &long,
        ] {
            assert!(!is_dns_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn the_served_secret_is_the_named_one_or_the_issued_one() {
        let named = TlsSpec {
            secret_name: Some("kms-cert".into()),
            ..TlsSpec::default()
        };
        assert_eq!(named.secret("barbican"), "kms-cert");
        let issued = TlsSpec {
            issuer_ref: Some(IssuerRefSpec {
                name: "ca".into(),
                ..IssuerRefSpec::default()
            }),
            ..TlsSpec::default()
        };
        assert_eq!(issued.secret("barbican"), "barbican-tls");
        let issuer = issued.issuer_ref.unwrap();
        assert_eq!(
            (issuer.effective_kind(), issuer.effective_group()),
            (IssuerKind::Issuer, "cert-manager.io")
        );
    }
}
