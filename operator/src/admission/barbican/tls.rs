//! `spec.tls`: the certificate comes from one place, and what the operator writes into a
//! requested Certificate is well-formed. The schema says the same (CEL and patterns); the
//! webhook says it again for an API server that skips them, naming each field.

use crate::{
    admission::verdict::Verdict,
    api::{
        Barbican,
        refs::is_dns1123_subdomain,
        tls::{TLS_DNS_NAMES_MESSAGE, TLS_SOURCE_MESSAGE, is_dns_name},
    },
};

const SUBDOMAIN: &str = "must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')";

/// Checks `spec.tls`.
pub(super) fn check_tls(verdict: &mut Verdict, new: &Barbican) {
    let Some(tls) = &new.spec.tls else {
        return;
    };
    if tls.secret_name.is_some() == tls.issuer_ref.is_some() {
        verdict.require("spec.tls", TLS_SOURCE_MESSAGE);
    }
    if tls.dns_names.is_some() && tls.issuer_ref.is_none() {
        verdict.require("spec.tls.dnsNames", TLS_DNS_NAMES_MESSAGE);
    }
    if let Some(secret) = &tls.secret_name
        && !is_dns1123_subdomain(secret)
    {
        verdict.reject("spec.tls.secretName", secret, SUBDOMAIN);
    }
    if let Some(issuer) = &tls.issuer_ref {
        if !is_dns1123_subdomain(&issuer.name) {
            verdict.reject("spec.tls.issuerRef.name", &issuer.name, SUBDOMAIN);
        }
        if let Some(group) = &issuer.group
            && !is_dns1123_subdomain(group)
        {
            verdict.reject("spec.tls.issuerRef.group", group, SUBDOMAIN);
        }
    }
    for (i, name) in tls.dns_names.iter().flatten().enumerate() {
        if !is_dns_name(name) {
            verdict.reject(
                format!("spec.tls.dnsNames[{i}]"),
                name,
                "must be a DNS name: a DNS-1123 subdomain, optionally behind '*.'",
            );
        }
    }
    if tls.dns_names.as_ref().is_some_and(|n| n.len() > 16) {
        verdict.require("spec.tls.dnsNames", "must have at most 16 items");
    }
}
