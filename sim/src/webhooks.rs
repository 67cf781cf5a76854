//! Admission webhooks, as kube-apiserver calls them: which webhooks of the stored
//! Mutating/ValidatingWebhookConfigurations apply to a request (rules, namespace and object
//! selectors), the AdmissionReview sent over HTTPS (verifying the `caBundle` against the
//! in-cluster name), and what the answer means (a patch, warnings, a denial, or a failure the
//! `failurePolicy` decides on).

use std::{
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use serde_json::{Value, json};
use tokio::net::TcpStream;

use crate::{errors::ApiError, selectors::matches_label_selector, services::ServiceRegistry};

/// What a request is, as webhook rules and the AdmissionReview see it.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// API group of the resource.
    pub group: &'a str,
    /// Version of the resource.
    pub version: &'a str,
    /// Kind of the object.
    pub kind: &'a str,
    /// Plural resource name.
    pub resource: &'a str,
    /// `status`, or none.
    pub subresource: Option<&'a str>,
    /// CREATE, UPDATE or DELETE.
    pub operation: &'a str,
    /// Whether the resource is namespaced.
    pub namespaced: bool,
    /// The namespace (empty for cluster-scoped objects).
    pub namespace: &'a str,
    /// The object's name.
    pub name: &'a str,
    /// The labels of the object's namespace (for namespace selectors).
    pub namespace_labels: &'a Value,
    /// The object after the change (none for DELETE).
    pub object: Option<&'a Value>,
    /// The stored object (none for CREATE).
    pub old: Option<&'a Value>,
    /// Whether this is a dry run.
    pub dry_run: bool,
}

/// Where a webhook is reached.
#[derive(Clone, Debug)]
pub struct Target {
    /// The name TLS verifies (and the host of the URL kube-apiserver reports).
    pub host: String,
    /// The port.
    pub port: u16,
    /// Path and query.
    pub path: String,
}

impl Target {
    /// The URL the API server calls, with the webhook's timeout as the `timeout` parameter.
    pub fn url(&self, timeout: Duration) -> String {
        let separator = if self.path.contains('?') { '&' } else { '?' };
        format!(
            "https://{}:{}{}{separator}timeout={}s",
            self.host,
            self.port,
            self.path,
            timeout.as_secs()
        )
    }
}

/// One webhook that applies to a request.
#[derive(Clone, Debug)]
pub struct Hook {
    /// The webhook's name (`vbarbican.kb.io`).
    pub name: String,
    /// Whether it may patch the object.
    pub mutating: bool,
    /// Where it listens.
    pub target: Target,
    /// PEM certificates that sign its serving certificate.
    pub ca_bundle: Vec<u8>,
    /// `timeoutSeconds` (default 10, at most 30).
    pub timeout: Duration,
    /// `failurePolicy: Fail` (the v1 default): a webhook that cannot be reached refuses the
    /// request; `Ignore` lets it through.
    pub fail_closed: bool,
}

fn listed(values: &Value, wanted: &str) -> bool {
    values
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|v| v == "*" || v == wanted)
}

fn rule_matches(rule: &Value, request: &Request<'_>) -> bool {
    let resource = match request.subresource {
        Some(sub) => format!("{}/{sub}", request.resource),
        None => request.resource.to_string(),
    };
    let resource_listed = rule["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|r| {
            r == resource
                || r == "*/*"
                || (r == "*" && request.subresource.is_none())
                || request.subresource.is_some_and(|sub| {
                    r.strip_prefix("*/") == Some(sub)
                        || r.strip_suffix("/*") == Some(request.resource)
                })
        });
    let scope = match rule["scope"].as_str().unwrap_or("*") {
        "Cluster" => !request.namespaced,
        "Namespaced" => request.namespaced,
        _ => true,
    };
    listed(&rule["apiGroups"], request.group)
        && listed(&rule["apiVersions"], request.version)
        && listed(&rule["operations"], request.operation)
        && resource_listed
        && scope
}

fn labels(object: Option<&Value>) -> Value {
    object
        .map(|o| o["metadata"]["labels"].clone())
        .unwrap_or(Value::Null)
}

fn applies(webhook: &Value, request: &Request<'_>) -> bool {
    let rules = webhook["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| rule_matches(r, request));
    // kube-apiserver ignores the namespace selector for cluster-scoped objects (other than
    // Namespaces themselves, whose own labels it uses).
    let namespace = if request.kind == "Namespace" && request.group.is_empty() {
        matches_label_selector(
            &webhook["namespaceSelector"],
            &labels(request.object.or(request.old)),
        )
    } else {
        !request.namespaced
            || matches_label_selector(&webhook["namespaceSelector"], request.namespace_labels)
    };
    let selector = &webhook["objectSelector"];
    let object = [request.object, request.old]
        .into_iter()
        .flatten()
        .any(|o| matches_label_selector(selector, &o["metadata"]["labels"]));
    rules && namespace && object && conditions_hold(webhook, request)
}

/// Whether every `matchConditions` entry of `webhook` holds for `request`, evaluated as
/// kube-apiserver does: CEL over `request` (the AdmissionRequest without the objects),
/// `object` and `oldObject` (null where the operation has none). One false condition skips
/// the webhook. A condition that does not compile or evaluate to a bool counts as holding, so
/// the webhook is called and its failurePolicy decides (kube-apiserver refuses such a
/// configuration at creation, or fails the request by that policy).
pub fn conditions_hold(webhook: &Value, request: &Request<'_>) -> bool {
    use kube::core::cel::cel::{Context, Program, Value as CelValue, to_value};
    thread_local! {
        static PROGRAMS: std::cell::RefCell<crate::memo::Memo<Option<Program>>> =
            std::cell::RefCell::default();
    }
    let conditions = webhook["matchConditions"].as_array();
    let Some(conditions) = conditions.filter(|c| !c.is_empty()) else {
        return true;
    };
    let expressions: Vec<&str> = conditions
        .iter()
        .filter_map(|c| c["expression"].as_str())
        .collect();
    // Only what an expression names is converted to CEL: the objects are the bulk of the cost,
    // and an expression that names neither (most name `request.userInfo`) does not need them.
    let named = |variable: &str| expressions.iter().any(|e| e.contains(variable));
    let without_objects = Request {
        object: None,
        old: None,
        ..request.clone()
    };
    let mut admission = review("", &without_objects)["request"].take();
    if let Some(fields) = admission.as_object_mut() {
        fields.remove("object");
        fields.remove("oldObject");
    }
    let mut context = Context::default();
    for (name, value) in [
        ("request", Some(admission)),
        (
            "object",
            named("object").then(|| object_or_null(request.object)),
        ),
        (
            "oldObject",
            named("oldObject").then(|| object_or_null(request.old)),
        ),
    ] {
        let Some(value) = value else { continue };
        match to_value(value) {
            Ok(value) => context.add_variable_from_value(name, value),
            Err(_) => return true,
        }
    }
    expressions.into_iter().all(|expression| {
        PROGRAMS.with_borrow_mut(|programs| {
            programs.with(
                expression,
                |e| Program::compile(e).ok(),
                |program| match program.as_ref().map(|p| p.execute(&context)) {
                    Some(Ok(CelValue::Bool(holds))) => holds,
                    _ => true,
                },
            )
        })
    })
}

fn object_or_null(object: Option<&Value>) -> Value {
    object.cloned().unwrap_or(Value::Null)
}

/// Where a webhook configuration's entry is called: its `clientConfig` URL or Service.
pub fn target(webhook: &Value) -> Option<Target> {
    let config = &webhook["clientConfig"];
    if let Some(url) = config["url"].as_str() {
        let rest = url.strip_prefix("https://")?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()?),
            None => (authority.to_string(), 443),
        };
        return Some(Target {
            host,
            port,
            path: if path.is_empty() {
                "/".into()
            } else {
                path.into()
            },
        });
    }
    let service = &config["service"];
    Some(Target {
        host: format!(
            "{}.{}.svc",
            service["name"].as_str()?,
            service["namespace"].as_str()?
        ),
        port: service["port"].as_u64().unwrap_or(443) as u16,
        path: service["path"].as_str().unwrap_or("/").to_string(),
    })
}

/// The webhooks of `configurations` (all mutating, or all validating) that apply to
/// `request`, in the order kube-apiserver calls them: by configuration name, then as listed.
pub fn matching(configurations: &[Value], mutating: bool, request: &Request<'_>) -> Vec<Hook> {
    let mut sorted: Vec<&Value> = configurations.iter().collect();
    sorted.sort_by_key(|c| c["metadata"]["name"].as_str().unwrap_or("").to_string());
    sorted
        .into_iter()
        .flat_map(|c| c["webhooks"].as_array().into_iter().flatten())
        .filter(|w| applies(w, request))
        .filter_map(|w| {
            Some(Hook {
                name: w["name"].as_str()?.to_string(),
                mutating,
                target: target(w)?,
                ca_bundle: w["clientConfig"]["caBundle"]
                    .as_str()
                    .and_then(crate::tokens::base64_decode)
                    .unwrap_or_default(),
                timeout: Duration::from_secs(w["timeoutSeconds"].as_u64().unwrap_or(10).min(30)),
                fail_closed: w["failurePolicy"].as_str() != Some("Ignore"),
            })
        })
        .collect()
}

/// The AdmissionReview kube-apiserver sends for `request`.
pub fn review(uid: &str, request: &Request<'_>) -> Value {
    let kind = json!({"group": request.group, "version": request.version, "kind": request.kind});
    let resource =
        json!({"group": request.group, "version": request.version, "resource": request.resource});
    let options = match request.operation {
        "CREATE" => "CreateOptions",
        "UPDATE" => "UpdateOptions",
        _ => "DeleteOptions",
    };
    let mut body = json!({
        "uid": uid, "kind": kind, "resource": resource, "requestKind": kind,
        "requestResource": resource, "name": request.name, "operation": request.operation,
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
        "object": request.object, "oldObject": request.old, "dryRun": request.dry_run,
        "options": {"kind": options, "apiVersion": "meta.k8s.io/v1"},
    });
    if request.namespaced {
        body["namespace"] = json!(request.namespace);
    }
    if let Some(sub) = request.subresource {
        body["subResource"] = json!(sub);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": body})
}

/// What a webhook said.
#[derive(Clone, Debug, Default)]
pub struct Answer {
    /// The object after the webhook's patch (mutating webhooks only).
    pub patched: Option<Value>,
    /// Warnings for the client.
    pub warnings: Vec<String>,
}

/// The reasons kube-apiserver passes through from a webhook's Status; others become empty.
fn reason(text: &str) -> &'static str {
    const KNOWN: &[&str] = &[
        "Unauthorized",
        "Forbidden",
        "NotFound",
        "AlreadyExists",
        "Conflict",
        "Gone",
        "Invalid",
        "ServerTimeout",
        "Timeout",
        "TooManyRequests",
        "BadRequest",
        "MethodNotAllowed",
        "NotAcceptable",
        "RequestEntityTooLarge",
        "UnsupportedMediaType",
        "InternalError",
        "Expired",
        "ServiceUnavailable",
    ];
    KNOWN.iter().find(|k| **k == text).copied().unwrap_or("")
}

/// A `[]byte` field as Go's JSON decoder reads it: a base64 string, or an array of numbers.
pub fn bytes(value: &Value) -> Option<Vec<u8>> {
    match value {
        Value::String(text) => crate::tokens::base64_decode(text),
        Value::Array(items) => items
            .iter()
            .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
            .collect(),
        _ => None,
    }
}

/// A request a webhook refused (or that failed closed), with the warnings to send anyway.
#[derive(Clone, Debug)]
pub struct Refused {
    /// What the client is answered.
    pub error: ApiError,
    /// Warnings the webhook gave with its denial.
    pub warnings: Vec<String>,
}

impl From<ApiError> for Refused {
    fn from(error: ApiError) -> Self {
        Self {
            error,
            warnings: vec![],
        }
    }
}

/// Calls `hook` about `request`; `Err` is what the client gets instead.
pub async fn call(
    hook: &Hook,
    request: &Request<'_>,
    services: &ServiceRegistry,
) -> Result<Answer, Refused> {
    static CALLS: AtomicU64 = AtomicU64::new(1);
    let uid = format!(
        "5eb1ca11-0000-4000-8000-{:012x}",
        CALLS.fetch_add(1, Ordering::Relaxed)
    );
    let body = review(&uid, request);
    let failed = |error: String| {
        ApiError::new(
            500,
            "InternalError",
            format!(
                "Internal error occurred: failed calling webhook \"{}\": {error}",
                hook.name
            ),
        )
    };
    let sent = tokio::time::timeout(hook.timeout, post(hook, &body, services))
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "failed to call webhook: Post \"{}\": context deadline exceeded",
                hook.target.url(hook.timeout)
            ))
        });
    let answer = match sent {
        Ok(answer) => answer,
        Err(error) if hook.fail_closed => return Err(failed(error).into()),
        Err(_) => return Ok(Answer::default()),
    };
    let response = &answer["response"];
    if response["uid"] != uid.as_str() {
        let error = format!(
            "expected response.uid=\"{uid}\", got \"{}\"",
            response["uid"].as_str().unwrap_or("")
        );
        return if hook.fail_closed {
            Err(failed(error).into())
        } else {
            Ok(Answer::default())
        };
    }
    let warnings: Vec<String> = response["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w.as_str().map(String::from))
        .collect();
    if response["allowed"] != true {
        let status = &response["status"];
        let message = match status["message"].as_str().filter(|m| !m.is_empty()) {
            Some(m) => format!(
                "admission webhook \"{}\" denied the request: {m}",
                hook.name
            ),
            None => format!(
                "admission webhook \"{}\" denied the request without explanation",
                hook.name
            ),
        };
        let code = status["code"].as_u64().filter(|c| *c >= 400).unwrap_or(400) as u16;
        let error = ApiError::new(
            code,
            reason(status["reason"].as_str().unwrap_or("")),
            message,
        );
        return Err(Refused { error, warnings });
    }
    let patched = match (hook.mutating, response.get("patch").and_then(bytes)) {
        (true, Some(patch)) => {
            let operations: json_patch::Patch = serde_json::from_slice(&patch)
                .map_err(|e| failed(format!("the patch is not a JSON patch: {e}")))?;
            let mut object = request.object.cloned().unwrap_or(Value::Null);
            json_patch::patch(&mut object, &operations)
                .map_err(|e| failed(format!("the patch does not apply: {e}")))?;
            Some(object)
        }
        _ => None,
    };
    Ok(Answer { patched, warnings })
}

/// The TLS client for a webhook whose `clientConfig.caBundle` is `bundle`: chains to a
/// certificate of the bundle, as kube-apiserver verifies them, plus a serving certificate that
/// is itself in the bundle (see [`BundleVerifier`]).
fn client_config(bundle: &[u8]) -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let pinned: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(bundle).flatten().collect();
    let mut roots = rustls::RootCertStore::empty();
    for cert in &pinned {
        let _ = roots.add(cert.clone());
    }
    let chains = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .map_err(|e| format!("x509: the caBundle holds no usable certificate: {e}"))?;
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(BundleVerifier { chains, pinned }))
        .with_no_client_auth())
}

/// kube-apiserver's webhook client is Go's crypto/x509, which accepts a serving certificate
/// that is itself in the caBundle, even one marked as a CA (what `openssl req -x509` makes);
/// rustls alone refuses a CA certificate as a server's. Everything else is rustls's check of
/// the chain; a certificate of the bundle must still name the host and be within its validity.
#[derive(Debug)]
struct BundleVerifier {
    chains: Arc<rustls::client::WebPkiServerVerifier>,
    pinned: Vec<CertificateDer<'static>>,
}

impl rustls::client::danger::ServerCertVerifier for BundleVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        let refusal = match self.chains.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(verified) => return Ok(verified),
            Err(refusal) => refusal,
        };
        if !self
            .pinned
            .iter()
            .any(|c| c.as_ref() == end_entity.as_ref())
        {
            return Err(refusal);
        }
        let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_name(&parsed, server_name)?;
        if !within_validity(end_entity, now) {
            return Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::Expired,
            ));
        }
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.chains.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.chains.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.chains.supported_verify_schemes()
    }
}

/// Whether `now` falls within the certificate's notBefore..notAfter (false when it does not
/// parse).
pub fn within_validity(cert: &CertificateDer<'_>, now: rustls::pki_types::UnixTime) -> bool {
    let Ok((_, parsed)) = x509_parser::parse_x509_certificate(cert.as_ref()) else {
        return false;
    };
    let Ok(seconds) = i64::try_from(now.as_secs()) else {
        return false;
    };
    x509_parser::time::ASN1Time::from_timestamp(seconds)
        .is_ok_and(|at| parsed.validity().is_valid_at(at))
}

/// The HTTPS exchange: resolve, connect, verify the certificate for the in-cluster name, POST.
async fn post(hook: &Hook, body: &Value, services: &ServiceRegistry) -> Result<Value, String> {
    let target = &hook.target;
    let url = target.url(hook.timeout);
    let fail = |what: String| format!("failed to call webhook: Post \"{url}\": {what}");
    let addr: SocketAddr = match services.resolve(&target.host, target.port) {
        Some(addr) => addr,
        None => tokio::net::lookup_host((target.host.as_str(), target.port))
            .await
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| {
                fail(format!(
                    "dial tcp: lookup {}: no such host (no Service registered for it)",
                    target.host
                ))
            })?,
    };
    let config = client_config(&hook.ca_bundle).map_err(fail)?;
    let name = ServerName::try_from(target.host.clone()).map_err(|e| fail(e.to_string()))?;
    let tcp = TcpStream::connect(addr)
        .await
        .map_err(|e| fail(format!("dial tcp {addr}: {e}")))?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| fail(format!("tls: {e}")))?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
            .await
            .map_err(|e| fail(e.to_string()))?;
    tokio::spawn(connection);
    let path = format!(
        "{}{}timeout={}s",
        target.path,
        if target.path.contains('?') { '&' } else { '?' },
        hook.timeout.as_secs()
    );
    let request = hyper::Request::post(path)
        .header(
            hyper::header::HOST,
            format!("{}:{}", target.host, target.port),
        )
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::ACCEPT, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| fail(e.to_string()))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| fail(e.to_string()))?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| fail(e.to_string()))?
        .to_bytes();
    if !status.is_success() {
        return Err(fail(format!(
            "the server answered {status}: {}",
            String::from_utf8_lossy(&bytes)
        )));
    }
    serde_json::from_slice(&bytes).map_err(|e| fail(format!("the answer is not JSON: {e}")))
}
