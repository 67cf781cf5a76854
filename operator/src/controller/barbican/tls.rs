//! The TLS step: `spec.tls` made usable for the API pods, reported through TLSReady. With
//! `issuerRef` it keeps a cert-manager Certificate `{name}` for the Service's names, issued
//! into `{name}-tls`; either way it reads the Secret the pods will serve from, checks that
//! `tls.crt` and `tls.key` are a certificate and its key that uWSGI can serve, and hands their
//! digest (which rolls the pods when the certificate is renewed) and the Secret's `ca.crt`
//! (which the health check trusts) on. Without a usable pair the pass stops here: the
//! Deployment is left as it is rather than rolled onto pods that cannot start.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::DynamicObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use serde_json::{Value, json};

use super::{
    handoffs::ApiTls,
    state::{State, owned_metadata},
};
use crate::{
    api::{
        conditions::{BarbicanConditionType as T, Reason},
        tls::TlsSpec,
    },
    controller::{
        discovery::certificate_resource,
        pipeline::{Outcome, StepFuture},
        status::Report,
        step_error::api_error,
    },
    render::secrets::{digest_all, value},
};

/// How soon a certificate that is not there yet (or not usable) is looked at again.
pub const TLS_REQUEUE: Duration = Duration::from_secs(15);
/// How soon a cluster without cert-manager is asked again.
pub const CERT_MANAGER_REQUEUE: Duration = Duration::from_secs(60);
/// How much of the Certificate's own message a waiting condition quotes.
const QUOTE: usize = 256;

/// The names a requested certificate covers: the Service's four in-cluster forms, then
/// `extra` in order, each once.
pub fn dns_names(name: &str, namespace: &str, extra: &[String]) -> Vec<String> {
    let mut names = vec![
        name.to_string(),
        format!("{name}.{namespace}"),
        format!("{name}.{namespace}.svc"),
        format!("{name}.{namespace}.svc.cluster.local"),
    ];
    for extra in extra {
        if !names.contains(extra) {
            names.push(extra.clone());
        }
    }
    names
}

/// The spec of the Certificate a Barbican `name` requests.
pub fn certificate_spec(name: &str, namespace: &str, tls: &TlsSpec) -> Value {
    let issuer = tls.issuer_ref.clone().unwrap_or_default();
    json!({
        "secretName": crate::api::names::tls_secret_name(name),
        "dnsNames": dns_names(name, namespace, tls.dns_names.as_deref().unwrap_or_default()),
        "issuerRef": {
            "name": issuer.name,
            "kind": issuer.effective_kind().as_str(),
            "group": issuer.effective_group(),
        },
        "usages": ["server auth", "digital signature", "key encipherment"],
        // A renewal brings a new key, not only a new signature.
        "privateKey": {"rotationPolicy": "Always"},
    })
}

/// What a usable pair says, for the condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    /// The DNS names the certificate covers.
    pub names: Vec<String>,
    /// When it expires.
    pub not_after: jiff::Timestamp,
}

/// Why a pair cannot be served, naming the key and never quoting it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    /// `tls.crt` holds no PEM certificate.
    #[error("tls.crt holds no PEM certificate")]
    NoCertificate,
    /// A PEM block of `tls.crt` is not a certificate.
    #[error("tls.crt is not a certificate: {0}")]
    BadCertificate(String),
    /// `tls.key` holds no PEM private key.
    #[error("tls.key holds no PEM private key (PKCS #8, PKCS #1 or SEC1)")]
    NoKey,
    /// The key cannot sign (an algorithm rustls does not know).
    #[error("tls.key is a private key of a kind that cannot be used: {0}")]
    BadKey(String),
    /// The key is not the certificate's.
    #[error("tls.key is not the private key of the certificate in tls.crt")]
    KeyMismatch,
    /// The certificate is not valid now.
    #[error("the certificate in tls.crt is valid from {not_before} to {not_after}, not now")]
    NotValidNow {
        /// Its start.
        not_before: jiff::Timestamp,
        /// Its end.
        not_after: jiff::Timestamp,
    },
}

/// Checks that `crt` (PEM, the server certificate first) and `key` (PEM) are a certificate
/// valid at `now` and its private key.
pub fn check_pair(crt: &[u8], key: &[u8], now: jiff::Timestamp) -> Result<Served, Unusable> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(crt)
        .collect::<Result<_, _>>()
        .map_err(|e| Unusable::BadCertificate(e.to_string()))?;
    let leaf = chain.first().ok_or(Unusable::NoCertificate)?.clone();
    let key = PrivateKeyDer::from_pem_slice(key).map_err(|_| Unusable::NoKey)?;
    let provider = rustls::crypto::ring::default_provider();
    match rustls::sign::CertifiedKey::from_der(chain, key, &provider) {
        Ok(_) => {}
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            return Err(Unusable::KeyMismatch);
        }
        Err(rustls::Error::InvalidCertificate(e)) => {
            return Err(Unusable::BadCertificate(format!("{e:?}")));
        }
        Err(e) => return Err(Unusable::BadKey(e.to_string())),
    }
    let (_, parsed) = x509_parser::parse_x509_certificate(leaf.as_ref())
        .map_err(|e| Unusable::BadCertificate(e.to_string()))?;
    let at = |t: x509_parser::time::ASN1Time| {
        jiff::Timestamp::from_second(t.timestamp()).unwrap_or(jiff::Timestamp::MIN)
    };
    let (not_before, not_after) = (
        at(parsed.validity().not_before),
        at(parsed.validity().not_after),
    );
    if now < not_before || now > not_after {
        return Err(Unusable::NotValidNow {
            not_before,
            not_after,
        });
    }
    let names = parsed
        .subject_alternative_name()
        .ok()
        .flatten()
        .map(|san| {
            san.value
                .general_names
                .iter()
                .filter_map(|n| match n {
                    x509_parser::extensions::GeneralName::DNSName(d) => Some(d.to_string()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Served { names, not_after })
}

/// The Certificate's Ready condition message, when it is not Ready: what a waiting
/// condition quotes (cut at [`QUOTE`] bytes, on a character boundary).
fn not_ready_message(certificate: &Value) -> Option<String> {
    let ready = certificate["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready")?;
    if ready["status"] == "True" {
        return None;
    }
    let mut message = ready["message"].as_str().unwrap_or_default().to_string();
    let mut end = message.len().min(QUOTE);
    while !message.is_char_boundary(end) {
        end = end.saturating_sub(1);
    }
    message.truncate(end);
    Some(message)
}

/// Keeps the requested Certificate; `Err` with the condition when cert-manager is not
/// served, `Ok` with the Certificate's own not-ready message otherwise.
async fn request(
    state: &State,
    tls: &TlsSpec,
) -> Result<Result<Option<String>, Report>, crate::controller::step_error::StepError> {
    let name = state.name();
    let resource = certificate_resource();
    let mut certificate = DynamicObject::new(&name, &resource).within(&state.namespace());
    certificate.metadata = owned_metadata(state, &name);
    certificate.data = json!({"spec": certificate_spec(&name, &state.namespace(), tls)});
    match state.children.ensure_dynamic(&resource, &certificate).await {
        Ok(live) => Ok(Ok(not_ready_message(&live.data))),
        // cert-manager is not installed where the children live.
        Err(e) if e.kind_not_served() => Ok(Err(Report::not_ready(
            T::TLSReady,
            Reason::CertManagerNotInstalled,
            "spec.tls.issuerRef is set but cert-manager's Certificate (cert-manager.io/v1) is not served on this cluster; install cert-manager or name an existing Secret in spec.tls.secretName",
        ))),
        Err(e) => Err(api_error("applying the Certificate", e)),
    }
}

/// The TLS step.
pub fn tls(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let Some(tls) = state.barbican.spec.tls.clone() else {
            state.handoffs.give(ApiTls::default());
            state.report(Report::ready(
                T::TLSReady,
                Reason::TLSNotRequired,
                "spec.tls is not set: the API serves HTTP",
            ));
            return Ok(Outcome::Done);
        };
        let secret_name = tls.secret(&state.name());
        let mut issuing = None;
        if tls.issuer_ref.is_some() {
            match request(state, &tls).await? {
                Ok(message) => issuing = message,
                Err(report) => {
                    state.report(report);
                    return Ok(Outcome::Requeue(CERT_MANAGER_REQUEUE));
                }
            }
        }
        let secret = state
            .children
            .get::<Secret>(&secret_name)
            .await
            .map_err(|e| api_error("reading the TLS Secret", e))?;
        let (crt, key) = match secret
            .as_ref()
            .map(|s| (value(s, "tls.crt"), value(s, "tls.key")))
        {
            Some((Some(crt), Some(key))) => (crt.to_vec(), key.to_vec()),
            found => {
                let missing = match found {
                    None => "does not exist".to_string(),
                    Some((crt, _)) => format!(
                        "lacks {}",
                        if crt.is_none() { "tls.crt" } else { "tls.key" }
                    ),
                };
                let message = match (&tls.issuer_ref, issuing) {
                    (Some(_), Some(why)) => format!(
                        "Secret {secret_name:?} {missing}: the Certificate {:?} is not issued yet: {why}",
                        state.name()
                    ),
                    (Some(_), None) => format!(
                        "Secret {secret_name:?} {missing}: waiting for cert-manager to issue the Certificate {:?}",
                        state.name()
                    ),
                    (None, _) => {
                        format!("Secret {secret_name:?} named by spec.tls.secretName {missing}")
                    }
                };
                state.report(Report::not_ready(
                    T::TLSReady,
                    Reason::WaitingForTLSCertificate,
                    message,
                ));
                return Ok(Outcome::Requeue(TLS_REQUEUE));
            }
        };
        match check_pair(&crt, &key, state.env.clock.now()) {
            Err(unusable) => {
                state.report(Report::not_ready(
                    T::TLSReady,
                    Reason::TLSSecretInvalid,
                    format!("Secret {secret_name:?}: {unusable}"),
                ));
                Ok(Outcome::Requeue(TLS_REQUEUE))
            }
            Ok(served) => {
                let ca = secret
                    .as_ref()
                    .and_then(|s| value(s, "ca.crt"))
                    .map(<[u8]>::to_vec);
                state.handoffs.give(ApiTls(Some(super::handoffs::ServedTls {
                    secret: secret_name.clone(),
                    digest: digest_all(&[&crt, &key]),
                    ca,
                })));
                let names = if served.names.is_empty() {
                    "no DNS name".to_string()
                } else {
                    served.names.join(", ")
                };
                state.report(Report::ready(
                    T::TLSReady,
                    Reason::TLSCertificateReady,
                    format!(
                        "Secret {secret_name:?} holds a certificate for {names}, valid until {}",
                        served.not_after
                    ),
                ));
                Ok(Outcome::Done)
            }
        }
    })
}

#[cfg(test)]
mod tests;
