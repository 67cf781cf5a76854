//! A fake cert-manager: Issuers and ClusterIssuers become Ready; a Certificate is issued into
//! its `spec.secretName` (a `kubernetes.io/tls` Secret with `tls.crt`, `tls.key` and `ca.crt`)
//! by a `selfSigned` or a `ca` issuer and becomes Ready; and, as cert-manager's cainjector does,
//! every webhook configuration annotated `cert-manager.io/inject-ca-from: <ns>/<certificate>`
//! (or `…-from-secret: <ns>/<secret>`) gets that CA as each webhook's `clientConfig.caBundle`,
//! again whenever the Secret changes.
//!
//! What the real one does and this does not: ACME, Vault and external issuers, renewal
//! (`renewBefore`, `duration`: a fake certificate is valid from 1975 to 4096, rcgen's
//! defaults), CertificateRequests, and injection into
//! CRDs' conversion webhooks and APIServices.

use std::{collections::BTreeMap, sync::Arc};

use barbican_sim::clock::Clock;
use futures::{FutureExt, StreamExt, future::BoxFuture};
use k8s_openapi::api::{
    admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
    core::v1::Secret,
};
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams},
    runtime::{WatchStreamExt, watcher},
};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use serde_json::{Value, json};

use crate::controller::{Behaviour, FakeController, Realizer};

/// The annotation naming the Certificate whose CA a webhook configuration trusts.
pub const INJECT_FROM: &str = "cert-manager.io/inject-ca-from";
/// The annotation naming the Secret whose `ca.crt` a webhook configuration trusts.
pub const INJECT_FROM_SECRET: &str = "cert-manager.io/inject-ca-from-secret";
/// The annotation cert-manager puts on an issued Secret: the Certificate's name.
pub const CERTIFICATE_NAME: &str = "cert-manager.io/certificate-name";
/// The label cert-manager puts on the Secrets it manages; the injector watches them by it.
pub const MANAGED_LABEL: &str = "controller.cert-manager.io/fao";
/// The namespace a ClusterIssuer's `ca.secretName` is read from (cert-manager's
/// `--cluster-resource-namespace` default).
pub const CLUSTER_RESOURCE_NAMESPACE: &str = "cert-manager";

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "cert-manager.io".into(),
        version: "v1".into(),
        api_version: "cert-manager.io/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The controllers and the CA injector.
pub struct CertManager {
    /// Issuers.
    pub issuers: FakeController,
    /// ClusterIssuers.
    pub cluster_issuers: FakeController,
    /// Certificates.
    pub certificates: FakeController,
    injector: tokio::task::JoinHandle<()>,
}

impl Drop for CertManager {
    fn drop(&mut self) {
        self.injector.abort();
    }
}

impl CertManager {
    /// Starts the controllers and the injector.
    pub fn start(client: Client, clock: Clock) -> Self {
        let issuer = |kind: &str, plural: &str| {
            FakeController::start(
                client.clone(),
                clock.clone(),
                resource(kind, plural),
                Behaviour::ready("Ready", "IsReady"),
                None,
            )
        };
        Self {
            issuers: issuer("Issuer", "issuers"),
            cluster_issuers: issuer("ClusterIssuer", "clusterissuers"),
            certificates: FakeController::start_realizing(
                client.clone(),
                clock.clone(),
                resource("Certificate", "certificates"),
                Behaviour::ready("Ready", "Ready"),
                None,
                Some(Arc::new(Issuing {
                    client: client.clone(),
                })),
            ),
            injector: tokio::spawn(inject_forever(client)),
        }
    }
}

/// Issues a Certificate into its Secret.
struct Issuing {
    client: Client,
}

impl Realizer for Issuing {
    fn realize(&self, certificate: DynamicObject) -> BoxFuture<'static, Result<(), String>> {
        let client = self.client.clone();
        async move { issue(client, certificate).await }.boxed()
    }

    /// cert-manager leaves the Secret when its Certificate goes (without
    /// `--enable-certificate-owner-ref`).
    fn remove(&self, _certificate: DynamicObject) -> BoxFuture<'static, Result<(), String>> {
        async { Ok(()) }.boxed()
    }
}

/// What a Certificate asks for, read from its spec.
#[derive(Debug, PartialEq, Eq)]
pub struct Request {
    /// `spec.secretName`.
    pub secret_name: String,
    /// `spec.dnsNames`.
    pub dns_names: Vec<String>,
    /// `spec.commonName`, if any.
    pub common_name: Option<String>,
    /// `spec.isCA`.
    pub is_ca: bool,
    /// `spec.issuerRef.kind`: `Issuer` unless it says `ClusterIssuer`.
    pub issuer_kind: String,
    /// `spec.issuerRef.name`.
    pub issuer_name: String,
}

/// Reads a Certificate's spec; an error names the field and what is allowed, as cert-manager's
/// webhook would.
pub fn request(spec: &Value) -> Result<Request, String> {
    let text = |pointer: &str| spec.pointer(pointer).and_then(Value::as_str);
    let secret_name = text("/secretName")
        .filter(|s| !s.is_empty())
        .ok_or("spec.secretName: Required value")?;
    let dns_names: Vec<String> = spec["dnsNames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str().map(String::from))
        .collect();
    let common_name = text("/commonName").map(String::from);
    if dns_names.is_empty() && common_name.is_none() {
        return Err("spec: at least one of commonName or dnsNames must be set".into());
    }
    let issuer_name = text("/issuerRef/name")
        .filter(|s| !s.is_empty())
        .ok_or("spec.issuerRef.name: Required value")?;
    let issuer_kind = match text("/issuerRef/kind").unwrap_or("Issuer") {
        "" | "Issuer" => "Issuer",
        "ClusterIssuer" => "ClusterIssuer",
        other => {
            return Err(format!(
                "spec.issuerRef.kind: Unsupported value: {other:?}: supported values: \"Issuer\", \"ClusterIssuer\""
            ));
        }
    };
    Ok(Request {
        secret_name: secret_name.into(),
        dns_names,
        common_name,
        is_ca: spec["isCA"].as_bool().unwrap_or(false),
        issuer_kind: issuer_kind.into(),
        issuer_name: issuer_name.into(),
    })
}

/// The annotations cert-manager writes on an issued Secret; an existing Secret carrying the
/// same ones was issued for this request and is kept (no re-issue on every event).
fn annotations(certificate: &str, request: &Request) -> BTreeMap<String, String> {
    BTreeMap::from([
        (CERTIFICATE_NAME.into(), certificate.into()),
        (
            "cert-manager.io/alt-names".into(),
            request.dns_names.join(","),
        ),
        (
            "cert-manager.io/common-name".into(),
            request.common_name.clone().unwrap_or_default(),
        ),
        (
            "cert-manager.io/issuer-kind".into(),
            request.issuer_kind.clone(),
        ),
        (
            "cert-manager.io/issuer-name".into(),
            request.issuer_name.clone(),
        ),
        (
            "cert-manager.io/issuer-group".into(),
            "cert-manager.io".into(),
        ),
    ])
}

/// A freshly issued key and chain, PEM.
#[derive(Debug)]
pub struct Issued {
    /// `tls.crt`.
    pub certificate: String,
    /// `tls.key` (PKCS#8).
    pub key: String,
    /// `ca.crt`: the issuer's certificate (the certificate itself when self-signed).
    pub ca: String,
}

/// Signs `request` self-signed, or by the CA given as (certificate, key) PEM.
pub fn sign(request: &Request, ca: Option<(&str, &str)>) -> Result<Issued, String> {
    let mut params = CertificateParams::new(request.dns_names.clone()).map_err(text)?;
    if let Some(name) = &request.common_name {
        params.distinguished_name.push(DnType::CommonName, name);
    }
    if request.is_ca {
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    }
    let key = KeyPair::generate().map_err(text)?;
    let (certificate, ca) = match ca {
        None => {
            let pem = params.self_signed(&key).map_err(text)?.pem();
            (pem.clone(), pem)
        }
        Some((ca_pem, ca_key)) => {
            let signer = KeyPair::from_pem(ca_key).map_err(|e| format!("the CA's tls.key: {e}"))?;
            let issuer = Issuer::from_ca_cert_pem(ca_pem, signer)
                .map_err(|e| format!("the CA's tls.crt: {e}"))?;
            let pem = params.signed_by(&key, &issuer).map_err(text)?.pem();
            (pem, ca_pem.to_string())
        }
    };
    Ok(Issued {
        certificate,
        key: key.serialize_pem(),
        ca,
    })
}

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn secret_text(secret: &Secret, key: &str) -> Option<String> {
    let data = secret.data.as_ref()?.get(key)?;
    String::from_utf8(data.0.clone()).ok()
}

/// Renews the Certificate `namespace/name` now, as `cmctl renew` makes cert-manager do: a new
/// key and certificate from its issuer, into its Secret.
pub async fn renew(client: Client, namespace: &str, name: &str) -> Result<(), String> {
    let certificates: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &resource("Certificate", "certificates"),
    );
    let certificate = certificates
        .get_opt(name)
        .await
        .map_err(text)?
        .ok_or_else(|| format!("no Certificate {namespace}/{name}"))?;
    issue_into(client, certificate, true).await
}

async fn issue(client: Client, certificate: DynamicObject) -> Result<(), String> {
    issue_into(client, certificate, false).await
}

/// Issues `certificate` into its Secret; one already issued for the same request is kept
/// unless `renewing`.
async fn issue_into(
    client: Client,
    certificate: DynamicObject,
    renewing: bool,
) -> Result<(), String> {
    let namespace = certificate.namespace().unwrap_or_default();
    let name = certificate.name_any();
    let request = request(&certificate.data["spec"])?;
    let wanted = annotations(&name, &request);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    if let Some(existing) = secrets.get_opt(&request.secret_name).await.map_err(text)?
        && !renewing
    {
        let current = existing.metadata.annotations.clone().unwrap_or_default();
        let issued = wanted.iter().all(|(k, v)| current.get(k) == Some(v))
            && secret_text(&existing, "tls.crt").is_some()
            && secret_text(&existing, "tls.key").is_some();
        if issued {
            return Ok(());
        }
    }
    let (issuer, issuer_namespace) = match request.issuer_kind.as_str() {
        "ClusterIssuer" => (
            Api::<DynamicObject>::all_with(
                client.clone(),
                &resource("ClusterIssuer", "clusterissuers"),
            ),
            CLUSTER_RESOURCE_NAMESPACE.to_string(),
        ),
        _ => (
            Api::<DynamicObject>::namespaced_with(
                client.clone(),
                &namespace,
                &resource("Issuer", "issuers"),
            ),
            namespace.clone(),
        ),
    };
    let issuer = issuer
        .get_opt(&request.issuer_name)
        .await
        .map_err(text)?
        .ok_or_else(|| {
            format!(
                "Referenced \"{}\" not found: {} {:?}",
                request.issuer_kind, request.issuer_kind, request.issuer_name
            )
        })?;
    let spec = &issuer.data["spec"];
    let issued = if spec.get("selfSigned").is_some() {
        sign(&request, None)?
    } else if let Some(ca_secret) = spec["ca"]["secretName"].as_str() {
        let cas: Api<Secret> = Api::namespaced(client.clone(), &issuer_namespace);
        let ca =
            cas.get_opt(ca_secret).await.map_err(text)?.ok_or_else(|| {
                format!("the CA Secret {issuer_namespace}/{ca_secret} is missing")
            })?;
        let (Some(ca_crt), Some(ca_key)) =
            (secret_text(&ca, "tls.crt"), secret_text(&ca, "tls.key"))
        else {
            return Err(format!(
                "the CA Secret {issuer_namespace}/{ca_secret} lacks tls.crt or tls.key"
            ));
        };
        sign(&request, Some((&ca_crt, &ca_key)))?
    } else {
        return Err(format!(
            "the {} {:?} is neither selfSigned nor ca: this fake issues with no other",
            request.issuer_kind, request.issuer_name
        ));
    };
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": request.secret_name, "namespace": namespace,
            "labels": {MANAGED_LABEL: "true"}, "annotations": wanted},
        "type": "kubernetes.io/tls",
        "stringData": {"tls.crt": issued.certificate, "tls.key": issued.key, "ca.crt": issued.ca},
    });
    secrets
        .patch(
            &request.secret_name,
            &PatchParams::apply("cert-manager-certificates-issuing").force(),
            &Patch::Apply(secret),
        )
        .await
        .map_err(text)?;
    Ok(())
}

/// Where a webhook configuration's annotations say its CA comes from: a Certificate's Secret
/// or a Secret, as `(namespace, certificate or secret, is a certificate)`.
pub fn injection_source(annotations: &BTreeMap<String, String>) -> Option<(String, String, bool)> {
    let (value, is_certificate) = match annotations.get(INJECT_FROM) {
        Some(v) => (v, true),
        None => (annotations.get(INJECT_FROM_SECRET)?, false),
    };
    let (namespace, name) = value.split_once('/')?;
    (!namespace.is_empty() && !name.is_empty())
        .then(|| (namespace.to_string(), name.to_string(), is_certificate))
}

/// The CA PEM the source names, when it has been issued.
async fn ca_of(client: &Client, source: &(String, String, bool)) -> Option<String> {
    let (namespace, name, is_certificate) = source;
    let secret_name = if *is_certificate {
        let certificates: Api<DynamicObject> = Api::namespaced_with(
            client.clone(),
            namespace,
            &resource("Certificate", "certificates"),
        );
        let certificate = certificates.get_opt(name).await.ok()??;
        certificate.data["spec"]["secretName"].as_str()?.to_string()
    } else {
        name.clone()
    };
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let secret = secrets.get_opt(&secret_name).await.ok()??;
    secret_text(&secret, "ca.crt").filter(|ca| !ca.is_empty())
}

/// Sets `caBundle` on every webhook of `configuration` (a Mutating or Validating one, as
/// JSON); true when anything changed.
pub fn with_ca_bundle(configuration: &mut Value, ca_pem: &str) -> bool {
    let bundle = barbican_sim::tokens::base64(ca_pem.as_bytes());
    let mut changed = false;
    for webhook in configuration["webhooks"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        if webhook["clientConfig"]["caBundle"].as_str() != Some(bundle.as_str()) {
            webhook["clientConfig"]["caBundle"] = json!(bundle);
            changed = true;
        }
    }
    changed
}

/// Injects the CA into every annotated configuration of one kind.
async fn inject_kind<K>(client: &Client) -> Result<(), String>
where
    K: kube::Resource<Scope = k8s_openapi::ClusterResourceScope, DynamicType = ()>
        + Clone
        + serde::Serialize
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    for configuration in api.list(&ListParams::default()).await.map_err(text)? {
        let Some(source) = injection_source(configuration.annotations()) else {
            continue;
        };
        let Some(ca) = ca_of(client, &source).await else {
            continue;
        };
        let mut value = serde_json::to_value(&configuration).map_err(text)?;
        if with_ca_bundle(&mut value, &ca) {
            let updated: K = serde_json::from_value(value).map_err(text)?;
            // A conflict means it changed meanwhile; the watch brings it round again.
            let _ = api
                .replace(&configuration.name_any(), &PostParams::default(), &updated)
                .await;
        }
    }
    Ok(())
}

async fn inject_all(client: &Client) {
    let _ = inject_kind::<MutatingWebhookConfiguration>(client).await;
    let _ = inject_kind::<ValidatingWebhookConfiguration>(client).await;
}

/// The cainjector: on every change to a webhook configuration or a Secret cert-manager
/// issued, injects every annotated configuration again (they are few).
async fn inject_forever(client: Client) {
    let mutating = watcher(
        Api::<MutatingWebhookConfiguration>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .touched_objects()
    .map(|_| ())
    .boxed();
    let validating = watcher(
        Api::<ValidatingWebhookConfiguration>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .touched_objects()
    .map(|_| ())
    .boxed();
    let secrets = watcher(
        Api::<Secret>::all(client.clone()),
        watcher::Config::default().labels(&format!("{MANAGED_LABEL}=true")),
    )
    .default_backoff()
    .touched_objects()
    .map(|_| ())
    .boxed();
    let mut events =
        futures::stream::select(mutating, futures::stream::select(validating, secrets));
    while events.next().await.is_some() {
        inject_all(&client).await;
    }
}
