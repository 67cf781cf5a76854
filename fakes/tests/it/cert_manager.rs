//! The fake cert-manager on a sim cluster: Certificates issued by selfSigned and ca Issuers
//! into `kubernetes.io/tls` Secrets whose certificate a TLS client accepts for its DNS name,
//! kept (not re-issued) on later events, refused with the field named, and the cainjector
//! writing the CA into annotated webhook configurations, again when it changes.

use std::{future::Future, sync::Arc, time::Duration};

use barbican_fakes::cert_manager::{self, CertManager};
use barbican_sim::{Cluster, tokens::base64};
use k8s_openapi::api::{
    admissionregistration::v1::ValidatingWebhookConfiguration, core::v1::Secret,
};
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, Patch, PatchParams, PostParams},
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, pem::PemObject};
use serde_json::{Value, json};

/// A sim with the fake cert-manager running, and the APIs the tests use.
struct Fixture {
    _cluster: Cluster,
    _cert_manager: CertManager,
    client: Client,
    certificates: Api<DynamicObject>,
    secrets: Api<Secret>,
}

impl Fixture {
    fn start() -> Self {
        let (cluster, client) = crate::controllers::cluster();
        Self {
            _cert_manager: CertManager::start(client.clone(), cluster.clock().clone()),
            certificates: cert_manager_api(&client, "Certificate", "certificates"),
            secrets: Api::default_namespaced(client.clone()),
            _cluster: cluster,
            client,
        }
    }

    /// Creates the Issuer `name` with `spec`.
    async fn issuer(&self, name: &str, spec: Value) {
        let issuers = cert_manager_api(&self.client, "Issuer", "issuers");
        create(
            &issuers,
            json!({"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
            "metadata": {"name": name}, "spec": spec}),
        )
        .await;
    }

    /// Creates the Certificate `name` with `spec`.
    async fn certificate(&self, name: &str, spec: Value) {
        create(
            &self.certificates,
            json!({"apiVersion": "cert-manager.io/v1",
            "kind": "Certificate", "metadata": {"name": name}, "spec": spec}),
        )
        .await;
    }
}

fn cert_manager_api(client: &Client, kind: &str, plural: &str) -> Api<DynamicObject> {
    let resource = ApiResource {
        group: "cert-manager.io".into(),
        version: "v1".into(),
        api_version: "cert-manager.io/v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    };
    Api::default_namespaced_with(client.clone(), &resource)
}

async fn create(api: &Api<DynamicObject>, object: Value) {
    api.create(
        &PostParams::default(),
        &serde_json::from_value(object).unwrap(),
    )
    .await
    .unwrap();
}

/// Polls (real time, bounded) until `check` gives a value.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..1000 {
        if let Some(value) = check().await {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

fn text(secret: &Secret, key: &str) -> String {
    String::from_utf8(secret.data.as_ref().unwrap()[key].0.clone()).unwrap()
}

async fn issued(secrets: &Api<Secret>, name: &str) -> Secret {
    eventually(&format!("the Secret {name}"), || async {
        secrets
            .get_opt(name)
            .await
            .unwrap()
            .filter(|s| s.data.as_ref().is_some_and(|d| d.contains_key("tls.crt")))
    })
    .await
}

async fn ready(certificates: &Api<DynamicObject>, name: &str) -> (String, String) {
    eventually(&format!("the Certificate {name}'s Ready"), || async {
        let certificate = certificates.get(name).await.ok()?;
        let condition = certificate.data["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == "Ready")?
            .clone();
        Some((
            condition["status"].as_str()?.to_string(),
            condition["message"].as_str().unwrap_or("").to_string(),
        ))
    })
    .await
}

/// A TLS handshake: a server with `cert`/`key`, a client trusting only `ca` dialling `name`.
async fn handshake(cert: &str, key: &str, ca: &str, name: &str) -> Result<(), String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(|e| e.to_string())?;
    let server = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| e.to_string())?;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(ca.as_bytes()) {
        roots
            .add(certificate.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let (near, far) = tokio::io::duplex(64 * 1024);
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
    let name = ServerName::try_from(name.to_string()).map_err(|e| e.to_string())?;
    let (accepted, connected) = tokio::join!(acceptor.accept(far), connector.connect(name, near));
    connected.map_err(|e| e.to_string())?;
    accepted.map_err(|e| e.to_string())?;
    Ok(())
}

#[tokio::test]
async fn a_self_signed_certificate_is_issued_once_and_verifies_for_its_names() {
    let fixture = Fixture::start();
    let (certificates, secrets) = (&fixture.certificates, &fixture.secrets);
    fixture
        .issuer("selfsigned", json!({"selfSigned": {}}))
        .await;
    fixture
        .certificate(
            "webhook",
            json!({"secretName": "webhook-tls",
            "dnsNames": ["hook.default.svc", "hook.default.svc.cluster.local"],
            "issuerRef": {"kind": "Issuer", "name": "selfsigned"}}),
        )
        .await;

    let secret = issued(secrets, "webhook-tls").await;
    assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/tls"));
    let annotations = secret.metadata.annotations.clone().unwrap();
    assert_eq!(annotations[cert_manager::CERTIFICATE_NAME], "webhook");
    assert_eq!(
        annotations["cert-manager.io/alt-names"],
        "hook.default.svc,hook.default.svc.cluster.local"
    );
    let (cert, key, ca) = (
        text(&secret, "tls.crt"),
        text(&secret, "tls.key"),
        text(&secret, "ca.crt"),
    );
    assert_eq!(ca, cert, "a self-signed certificate is its own CA");
    handshake(&cert, &key, &ca, "hook.default.svc")
        .await
        .unwrap();
    handshake(&cert, &key, &ca, "hook.default.svc.cluster.local")
        .await
        .unwrap();
    let other = handshake(&cert, &key, &ca, "other.default.svc").await;
    assert!(other.is_err(), "a name not asked for must not verify");
    assert_eq!(ready(certificates, "webhook").await.0, "True");

    // A later event (a label) keeps what was issued: no new key on every reconcile.
    certificates
        .patch(
            "webhook",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let again = secrets.get("webhook-tls").await.unwrap();
    assert_eq!(text(&again, "tls.crt"), cert);
}

#[tokio::test]
async fn a_ca_issuer_signs_with_the_ca_a_self_signed_certificate_made() {
    let fixture = Fixture::start();
    let secrets = &fixture.secrets;
    fixture.issuer("bootstrap", json!({"selfSigned": {}})).await;
    fixture
        .certificate(
            "root",
            json!({"secretName": "root-ca", "isCA": true,
            "commonName": "root", "issuerRef": {"name": "bootstrap"}}),
        )
        .await;
    fixture
        .issuer("ca", json!({"ca": {"secretName": "root-ca"}}))
        .await;
    fixture
        .certificate(
            "leaf",
            json!({"secretName": "leaf-tls",
            "dnsNames": ["leaf.default.svc"], "issuerRef": {"name": "ca"}}),
        )
        .await;

    let root = issued(secrets, "root-ca").await;
    let leaf = issued(secrets, "leaf-tls").await;
    assert_eq!(text(&leaf, "ca.crt"), text(&root, "tls.crt"));
    assert_ne!(text(&leaf, "tls.crt"), text(&root, "tls.crt"));
    handshake(
        &text(&leaf, "tls.crt"),
        &text(&leaf, "tls.key"),
        &text(&root, "tls.crt"),
        "leaf.default.svc",
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_certificate_naming_a_missing_issuer_is_not_ready_and_says_which() {
    let fixture = Fixture::start();
    let certificates = &fixture.certificates;
    fixture
        .certificate(
            "orphan",
            json!({"secretName": "orphan-tls",
            "dnsNames": ["orphan.default.svc"], "issuerRef": {"name": "nowhere"}}),
        )
        .await;
    let (status, message) = ready(certificates, "orphan").await;
    assert_eq!(status, "False");
    assert!(
        message.contains("\"nowhere\" not found") || message.contains("nowhere"),
        "{message}"
    );
}

#[test]
fn a_request_names_the_field_it_lacks() {
    let missing_secret =
        cert_manager::request(&json!({"dnsNames": ["a"], "issuerRef": {"name": "i"}}));
    assert_eq!(
        missing_secret.unwrap_err(),
        "spec.secretName: Required value"
    );
    let no_names = cert_manager::request(&json!({"secretName": "s", "issuerRef": {"name": "i"}}));
    assert!(no_names.unwrap_err().contains("commonName or dnsNames"));
    let bad_kind = cert_manager::request(
        &json!({"secretName": "s", "dnsNames": ["a"], "issuerRef": {"name": "i", "kind": "Vault"}}),
    );
    assert!(
        bad_kind
            .unwrap_err()
            .starts_with("spec.issuerRef.kind: Unsupported value: \"Vault\"")
    );
    let cluster_issued = cert_manager::request(
        &json!({"secretName": "s", "dnsNames": ["a"], "issuerRef": {"name": "i", "kind": "ClusterIssuer"}}),
    )
    .unwrap();
    assert_eq!(cluster_issued.issuer_kind, "ClusterIssuer");
}

#[tokio::test]
async fn the_injector_writes_the_ca_into_annotated_webhook_configurations() {
    let fixture = Fixture::start();
    let secrets = &fixture.secrets;
    let configurations: Api<ValidatingWebhookConfiguration> = Api::all(fixture.client.clone());
    let configuration = |name: &str, annotations: Value| {
        let webhook = |n: &str| {
            json!({"name": n, "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "clientConfig": {"service": {"namespace": "default", "name": "hook", "path": "/v"}}})
        };
        serde_json::from_value::<ValidatingWebhookConfiguration>(json!({
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name, "annotations": annotations},
            "webhooks": [webhook("a.example.com"), webhook("b.example.com")]}))
        .unwrap()
    };
    configurations
        .create(
            &PostParams::default(),
            &configuration(
                "injected",
                json!({cert_manager::INJECT_FROM: "default/webhook"}),
            ),
        )
        .await
        .unwrap();
    configurations
        .create(
            &PostParams::default(),
            &configuration("left-alone", json!({})),
        )
        .await
        .unwrap();
    fixture
        .issuer("selfsigned", json!({"selfSigned": {}}))
        .await;
    fixture
        .certificate(
            "webhook",
            json!({"secretName": "webhook-tls",
            "dnsNames": ["hook.default.svc"], "issuerRef": {"name": "selfsigned"}}),
        )
        .await;
    let secret = issued(secrets, "webhook-tls").await;
    let bundle = |ca: &str| base64(ca.as_bytes());
    let wanted = bundle(&text(&secret, "ca.crt"));
    let bundles = |configuration: ValidatingWebhookConfiguration| -> Vec<Option<String>> {
        configuration
            .webhooks
            .unwrap_or_default()
            .into_iter()
            .map(|w| w.client_config.ca_bundle.map(|b| base64(&b.0)))
            .collect()
    };
    eventually("the CA injected into both webhooks", || async {
        let got = bundles(configurations.get("injected").await.ok()?);
        (got == vec![Some(wanted.clone()), Some(wanted.clone())]).then_some(())
    })
    .await;
    assert_eq!(
        bundles(configurations.get("left-alone").await.unwrap()),
        vec![None, None]
    );

    // A rotated CA reaches the configuration too.
    let rotated = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    secrets
        .patch(
            "webhook-tls",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"ca.crt": rotated}})),
        )
        .await
        .unwrap();
    let wanted = bundle(rotated);
    eventually("the rotated CA injected", || async {
        let got = bundles(configurations.get("injected").await.ok()?);
        (got == vec![Some(wanted.clone()), Some(wanted.clone())]).then_some(())
    })
    .await;
}

#[test]
fn the_injection_source_is_read_from_either_annotation() {
    use std::collections::BTreeMap;
    let from = |k: &str, v: &str| BTreeMap::from([(k.to_string(), v.to_string())]);
    assert_eq!(
        cert_manager::injection_source(&from(cert_manager::INJECT_FROM, "ns/cert")),
        Some(("ns".into(), "cert".into(), true))
    );
    assert_eq!(
        cert_manager::injection_source(&from(cert_manager::INJECT_FROM_SECRET, "ns/secret")),
        Some(("ns".into(), "secret".into(), false))
    );
    assert_eq!(
        cert_manager::injection_source(&from(cert_manager::INJECT_FROM, "no-slash")),
        None
    );
    assert_eq!(cert_manager::injection_source(&BTreeMap::new()), None);
}
