//! Admission webhooks as kube-apiserver runs them, against a small webhook of the test's own
//! behind TLS: patches, then pruning and defaults, then schema validation, then validating
//! webhooks; denials, warnings, failure policies, timeouts, certificate verification,
//! selectors, DELETE and dry-run.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Json, Router, extract::State, routing::post};
use barbican_sim::{Cluster, tokens::base64};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::conn::auto,
    service::TowerToHyperService,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, Client,
    api::{ApiResource, DeleteParams, DynamicObject, PostParams},
};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use serde_json::{Value, json};

const HOST: &str = "hooks.webhooks.svc";

/// Every AdmissionReview request the test webhook received.
type Seen = Arc<Mutex<Vec<Value>>>;

struct Webhook {
    addr: SocketAddr,
    ca: String,
    seen: Seen,
}

fn certificates() -> (String, String, String) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec![HOST.to_string()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

/// `allowed` with `uid` copied, plus whatever `extra` adds.
fn respond(review: &Value, extra: Value) -> Json<Value> {
    let mut response = json!({"uid": review["request"]["uid"], "allowed": true});
    json_patch::merge(&mut response, &extra);
    Json(
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}),
    )
}

async fn mutate(State(seen): State<Seen>, Json(review): Json<Value>) -> Json<Value> {
    seen.lock().unwrap().push(review["request"].clone());
    let patch = json!([
        {"op": "add", "path": "/spec/size", "value": "large"},
        {"op": "add", "path": "/spec/undeclared", "value": true},
    ]);
    respond(
        &review,
        json!({"patchType": "JSONPatch", "patch": base64(patch.to_string().as_bytes()),
            "warnings": ["mutated: size set to large"]}),
    )
}

async fn validate(State(seen): State<Seen>, Json(review): Json<Value>) -> Json<Value> {
    seen.lock().unwrap().push(review["request"].clone());
    let request = &review["request"];
    let object = if request["operation"] == "DELETE" {
        &request["oldObject"]
    } else {
        &request["object"]
    };
    if object["metadata"]["labels"]["deny"] == "true" {
        return respond(
            &review,
            json!({"allowed": false, "warnings": ["denials come with warnings too"],
                "status": {"code": 403, "reason": "Forbidden", "message": "spec.size: Forbidden: objects labelled deny=true are refused"}}),
        );
    }
    respond(&review, json!({"warnings": ["validated"]}))
}

async fn slow(Json(review): Json<Value>) -> Json<Value> {
    tokio::time::sleep(Duration::from_secs(3)).await;
    respond(&review, json!({}))
}

/// A certificate for `host` that is its own CA (`basicConstraints CA:TRUE`, self-signed), as
/// `openssl req -x509` makes one: the certificate, its key.
fn self_signed_ca_leaf(host: &str) -> (String, String) {
    let mut params = CertificateParams::new(vec![host.to_string()]).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    (cert.pem(), key.serialize_pem())
}

async fn start() -> Webhook {
    let (ca, cert, key) = certificates();
    serve(ca, cert, key).await
}

/// The test webhook serving `cert` (with `key`); `ca` is what a caBundle should hold.
async fn serve(ca: String, cert: String, key: String) -> Webhook {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route("/mutate", post(mutate))
        .route("/validate", post(validate))
        .route("/slow", post(slow))
        .with_state(seen.clone());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![CertificateDer::from_pem_slice(cert.as_bytes()).unwrap()],
        PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(tcp).await {
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(tls), TowerToHyperService::new(app))
                        .await;
                }
            });
        }
    });
    Webhook { addr, ca, seen }
}

/// A namespaced custom resource `widgets.example.com` whose schema declares `size` (default
/// `small`) and `colour` (enum), and nothing else.
fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "string", "default": "small", "enum": ["small", "large"]},
                        "colour": {"type": "string", "enum": ["red", "blue"]},
                    }},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}}}]},
    })
}

fn widgets(client: &Client) -> Api<DynamicObject> {
    Api::default_namespaced_with(
        client.clone(),
        &ApiResource {
            group: "example.com".into(),
            version: "v1".into(),
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
        },
    )
}

fn widget(name: &str, labels: Value, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": name, "labels": labels}, "spec": spec}))
    .unwrap()
}

/// A webhook entry for `path`, reached through the `hooks` Service in `webhooks`.
fn hook(name: &str, path: &str, ca: &str, extra: Value) -> Value {
    let mut hook = json!({
        "name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
        "clientConfig": {"service": {"namespace": "webhooks", "name": "hooks", "path": path, "port": 8443},
            "caBundle": base64(ca.as_bytes())},
        "rules": [{"apiGroups": ["example.com"], "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE", "DELETE"], "resources": ["widgets"]}],
    });
    json_patch::merge(&mut hook, &extra);
    hook
}

async fn configure(client: &Client, kind: &str, hooks: Vec<Value>) {
    let plural = format!("{}s", kind.to_ascii_lowercase());
    let api: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource {
            group: "admissionregistration.k8s.io".into(),
            version: "v1".into(),
            api_version: "admissionregistration.k8s.io/v1".into(),
            kind: kind.into(),
            plural,
        },
    );
    let object = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": "test"}, "webhooks": hooks});
    api.create(
        &PostParams::default(),
        &serde_json::from_value(object).unwrap(),
    )
    .await
    .unwrap();
}

/// The test webhook's `/validate` for every widget.
async fn validate_all(client: &Client, webhook: &Webhook) {
    configure(
        client,
        "ValidatingWebhookConfiguration",
        vec![hook(
            "validate.example.com",
            "/validate",
            &webhook.ca,
            json!({}),
        )],
    )
    .await;
}

async fn setup() -> (Cluster, Client, Webhook) {
    setup_with(start().await).await
}

/// A cluster with the widget CRD whose `hooks` Service in `webhooks` reaches `webhook`.
async fn setup_with(webhook: Webhook) -> (Cluster, Client, Webhook) {
    let cluster = Cluster::new();
    cluster.install_crd(widget_crd()).unwrap();
    cluster
        .services()
        .register("webhooks", "hooks", 8443, webhook.addr);
    let client = cluster.client();
    (cluster, client, webhook)
}

fn refusal(result: kube::Result<DynamicObject>) -> (u16, String, String) {
    match result {
        Err(kube::Error::Api(status)) => {
            (status.code, status.reason.clone(), status.message.clone())
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn mutations_are_pruned_and_defaulted_then_validated_then_stored() {
    let (_cluster, client, webhook) = setup().await;
    configure(
        &client,
        "MutatingWebhookConfiguration",
        vec![hook(
            "mutate.example.com",
            "/mutate",
            &webhook.ca,
            json!({}),
        )],
    )
    .await;
    validate_all(&client, &webhook).await;
    let api = widgets(&client);
    let stored = api
        .create(
            &PostParams::default(),
            &widget("w", json!({}), json!({"colour": "red"})),
        )
        .await
        .unwrap();
    assert_eq!(
        stored.data["spec"],
        json!({"size": "large", "colour": "red"}),
        "the undeclared field the webhook added is pruned"
    );

    let seen = webhook.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    let (mutating, validating) = (&seen[0], &seen[1]);
    assert_eq!(mutating["operation"], "CREATE");
    assert_eq!(mutating["namespace"], "default");
    assert_eq!(mutating["resource"]["resource"], "widgets");
    assert_eq!(
        mutating["object"]["spec"]["size"], "small",
        "the mutating webhook sees the schema's defaults"
    );
    assert_eq!(validating["object"]["spec"]["size"], "large");
    assert!(validating["object"]["spec"].get("undeclared").is_none());
    assert!(validating["oldObject"].is_null());

    // Validation runs after mutation: an invalid object never reaches the validating webhook.
    let (code, reason, message) = refusal(
        api.create(
            &PostParams::default(),
            &widget("bad", json!({}), json!({"colour": "green"})),
        )
        .await,
    );
    assert_eq!((code, reason.as_str()), (422, "Invalid"));
    assert!(message.contains("spec.colour"), "{message}");
    assert_eq!(
        webhook.seen.lock().unwrap().len(),
        3,
        "only the mutating webhook saw it"
    );
}

#[tokio::test]
async fn a_denial_is_reported_as_kube_apiserver_reports_it_with_warnings() {
    let (cluster, client, webhook) = setup().await;
    validate_all(&client, &webhook).await;
    let (code, reason, message) = refusal(
        widgets(&client)
            .create(
                &PostParams::default(),
                &widget("w", json!({"deny": "true"}), json!({})),
            )
            .await,
    );
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        message,
        "admission webhook \"validate.example.com\" denied the request: spec.size: Forbidden: objects labelled deny=true are refused"
    );

    // kube::Client does not surface headers; read them from the router.
    let body = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "ok"}, "spec": {}});
    let response = tower::ServiceExt::oneshot(
        cluster.router(),
        axum::http::Request::post("/apis/example.com/v1/namespaces/default/widgets")
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body.to_string()))
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 201);
    let warnings: Vec<&str> = response
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(warnings, ["299 - \"validated\""]);
}

#[tokio::test]
async fn failure_policy_decides_when_a_webhook_cannot_be_reached() {
    let (_cluster, client, webhook) = setup().await;
    let unreachable =
        json!({"clientConfig": {"service": {"name": "gone", "namespace": "webhooks"}}});
    configure(
        &client,
        "ValidatingWebhookConfiguration",
        vec![hook("ignored.example.com", "/validate", &webhook.ca, {
            let mut h = unreachable.clone();
            h["failurePolicy"] = json!("Ignore");
            h
        })],
    )
    .await;
    let api = widgets(&client);
    api.create(&PostParams::default(), &widget("a", json!({}), json!({})))
        .await
        .expect("Ignore lets the write through");

    let validating: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
        )),
    );
    validating
        .delete("test", &DeleteParams::default())
        .await
        .unwrap();
    configure(
        &client,
        "ValidatingWebhookConfiguration",
        vec![hook(
            "failing.example.com",
            "/validate",
            &webhook.ca,
            unreachable,
        )],
    )
    .await;
    let (code, reason, message) = refusal(
        api.create(&PostParams::default(), &widget("b", json!({}), json!({})))
            .await,
    );
    assert_eq!((code, reason.as_str()), (500, "InternalError"));
    assert!(
        message.starts_with("Internal error occurred: failed calling webhook \"failing.example.com\": failed to call webhook: Post \"https://gone.webhooks.svc:8443/validate?timeout=10s\""),
        "{message}"
    );
}

#[tokio::test]
async fn a_webhook_past_its_timeout_or_with_an_untrusted_certificate_fails() {
    let (_cluster, client, webhook) = setup().await;
    let (other_ca, _, _) = certificates();
    configure(
        &client,
        "ValidatingWebhookConfiguration",
        vec![
            hook(
                "slow.example.com",
                "/slow",
                &webhook.ca,
                json!({"timeoutSeconds": 1,
                "objectSelector": {"matchLabels": {"hook": "slow"}}}),
            ),
            hook(
                "untrusted.example.com",
                "/validate",
                &other_ca,
                json!({
                "objectSelector": {"matchLabels": {"hook": "untrusted"}}}),
            ),
        ],
    )
    .await;
    let api = widgets(&client);
    let (code, _, message) = refusal(
        api.create(
            &PostParams::default(),
            &widget("s", json!({"hook": "slow"}), json!({})),
        )
        .await,
    );
    assert_eq!(code, 500);
    assert!(message.contains("context deadline exceeded"), "{message}");
    let (code, _, message) = refusal(
        api.create(
            &PostParams::default(),
            &widget("u", json!({"hook": "untrusted"}), json!({})),
        )
        .await,
    );
    assert_eq!(code, 500);
    assert!(message.contains("tls:"), "{message}");
    api.create(&PostParams::default(), &widget("n", json!({}), json!({})))
        .await
        .expect("neither selector matches an unlabelled widget");
}

/// kube-apiserver's webhook client (Go's crypto/x509) accepts a serving certificate that is
/// itself in the caBundle, even one marked as a CA, as `openssl req -x509` makes them; rustls
/// alone refuses a CA certificate as the server's.
#[tokio::test]
async fn a_self_signed_certificate_in_the_ca_bundle_is_trusted() {
    /// Creates a widget through a validating webhook serving a self-signed CA certificate
    /// for `host`, with that certificate as the caBundle.
    async fn create_through(host: &str) -> (kube::Result<DynamicObject>, usize) {
        let (cert, key) = self_signed_ca_leaf(host);
        let (_cluster, client, webhook) = setup_with(serve(cert.clone(), cert, key).await).await;
        validate_all(&client, &webhook).await;
        let created = widgets(&client)
            .create(&PostParams::default(), &widget("w", json!({}), json!({})))
            .await;
        let seen = webhook.seen.lock().unwrap().len();
        (created, seen)
    }
    let (created, seen) = create_through(HOST).await;
    created.expect("the self-signed certificate in the caBundle is trusted");
    assert_eq!(seen, 1);
    // Still checked for the name: such a certificate for another host is refused.
    let (created, seen) = create_through("elsewhere.example.com").await;
    let (code, _, message) = refusal(created);
    assert_eq!((code, seen), (500, 0), "{message}");
    assert!(message.contains("tls:"), "{message}");
}

#[tokio::test]
async fn namespace_selectors_deletes_dry_runs_and_other_resources() {
    let (_cluster, client, webhook) = setup().await;
    configure(
        &client,
        "ValidatingWebhookConfiguration",
        vec![hook("validate.example.com", "/validate", &webhook.ca, json!({
            "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]}]}}))],
    )
    .await;
    let api = widgets(&client);
    api.create(
        &PostParams::default(),
        &widget("keep", json!({}), json!({})),
    )
    .await
    .unwrap();
    let before = webhook.seen.lock().unwrap().len();

    // A dry run is reviewed with dryRun set, and nothing is stored.
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    api.create(&dry, &widget("dry", json!({}), json!({})))
        .await
        .unwrap();
    assert_eq!(webhook.seen.lock().unwrap()[before]["dryRun"], true);
    assert!(api.get_opt("dry").await.unwrap().is_none());

    // DELETE is reviewed with the stored object as oldObject, and may be refused.
    api.create(
        &PostParams::default(),
        &widget("denied", json!({}), json!({})),
    )
    .await
    .unwrap();
    api.patch(
        "denied",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(json!({"metadata": {"labels": {"deny": "true"}}})),
    )
    .await
    .expect_err("the webhook refuses labelling it deny=true");
    api.delete("keep", &DeleteParams::default()).await.unwrap();
    let last = webhook.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(last["operation"], "DELETE");
    assert_eq!(last["oldObject"]["metadata"]["name"], "keep");
    assert!(last["object"].is_null());

    // ConfigMaps are not covered by the rules.
    let seen = webhook.seen.lock().unwrap().len();
    let maps: Api<ConfigMap> = Api::default_namespaced(client.clone());
    maps.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "m", "labels": {"deny": "true"}}}))
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(webhook.seen.lock().unwrap().len(), seen);
}

#[tokio::test]
async fn url_client_configs_resolve_through_the_registry_and_tls_checks_the_name() {
    let (_cluster, client, webhook) = setup().await;
    let by_url = |name: &str, url: String, label: &str| {
        hook(
            name,
            "/unused",
            &webhook.ca,
            json!({"clientConfig": {"service": null, "url": url},
                "objectSelector": {"matchLabels": {"via": label}}}),
        )
    };
    configure(
        &client,
        "ValidatingWebhookConfiguration",
        vec![
            by_url(
                "by-name.example.com",
                "https://hooks.webhooks.svc:8443/validate".into(),
                "name",
            ),
            by_url(
                "by-address.example.com",
                format!("https://{}/validate", webhook.addr),
                "address",
            ),
        ],
    )
    .await;
    let api = widgets(&client);
    let (code, _, message) = refusal(
        api.create(
            &PostParams::default(),
            &widget("n", json!({"via": "name", "deny": "true"}), json!({})),
        )
        .await,
    );
    assert_eq!(
        code, 403,
        "the webhook was reached by its in-cluster name: {message}"
    );
    // The serving certificate names the Service, not the loopback address behind it.
    let (code, _, message) = refusal(
        api.create(
            &PostParams::default(),
            &widget("a", json!({"via": "address"}), json!({})),
        )
        .await,
    );
    assert_eq!(code, 500);
    assert!(message.contains("tls:"), "{message}");
}

/// managedFields are computed after admission, as kube-apiserver does: what a mutating webhook
/// set in an applied object belongs to the applier's `Apply` entry (so a later apply that
/// leaves the field out removes it), not to nobody.
#[tokio::test]
async fn what_a_mutating_webhook_sets_is_owned_by_the_writer() {
    let (_cluster, client, webhook) = setup().await;
    configure(
        &client,
        "MutatingWebhookConfiguration",
        vec![hook(
            "mutate.example.com",
            "/mutate",
            &webhook.ca,
            json!({}),
        )],
    )
    .await;
    let api = widgets(&client);
    let applied = api
        .patch(
            "w",
            &kube::api::PatchParams::apply("tester"),
            &kube::api::Patch::Apply(json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "w"}, "spec": {"colour": "red"}})),
        )
        .await
        .unwrap();
    assert_eq!(applied.data["spec"]["size"], "large");
    let managed = applied.metadata.managed_fields.unwrap_or_default();
    let tester = managed
        .iter()
        .find(|m| m.manager.as_deref() == Some("tester"))
        .expect("the applier has an entry");
    assert_eq!(tester.operation.as_deref(), Some("Apply"));
    let fields = serde_json::to_value(&tester.fields_v1).unwrap();
    assert!(
        fields["f:spec"].get("f:size").is_some(),
        "the webhook's field is the applier's: {fields}"
    );
    assert_eq!(managed.len(), 1, "no other entry: {managed:?}");
}
