//! The admission corpus replayed through the sim's admission chain: the operator's webhook
//! server runs on loopback behind TLS for `barbican-operator-webhook.barbican-system.svc`,
//! registered in the sim's service registry and named by Mutating/ValidatingWebhookConfigurations
//! that carry its CA. Each case is written through the sim's API, with kube::Client (warnings
//! read from the `Warning` headers) and with `kubectl`, and must get the verdict, fields,
//! messages and warnings the pure functions give. Mutate cases must store the object the
//! expected patch describes.
//!
//! Stored objects a case starts from (an UPDATE's old object, sibling stores) are seeded with
//! the label `corpus.barbican-sim/seed`, which the webhook configurations' objectSelector
//! excludes, so they are stored as they were admitted in the past, whatever today's rules say.

use std::{path::PathBuf, sync::Arc};

use barbican_operator::{
    admission::{
        review::Endpoint,
        server::{ApiLookups, provider, router, serve},
        tls::ReloadingCertificate,
    },
    api::{Barbican, BarbicanSecretStore},
};
use barbican_sim::{Cluster, faults::Fault, tokens::base64};
use barbican_tests::corpus::{Case, Layer, Outcome, assert_outcomes, load};
use kube::{
    Api, Client,
    api::{ApiResource, DeleteParams, DynamicObject, PostParams},
};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use serde_json::{Value, json};

const SERVICE: (&str, &str) = ("barbican-system", "barbican-operator-webhook");
const SEED: &str = "corpus.barbican-sim/seed";
const HOLD: &str = "corpus.barbican-sim/hold";

struct Harness {
    cluster: Cluster,
    client: Client,
    _shutdown: tokio::sync::oneshot::Sender<()>,
    /// The webhook's serving pair, removed with the harness.
    _dir: tempfile::TempDir,
}

/// A directory of the test's own, removed when dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("barbican-on-sim-{name}-"))
        .tempdir()
        .unwrap()
}

/// A CA, and a serving pair it signed for the webhook Service's in-cluster name; returns the
/// CA's PEM.
fn pki(dir: &std::path::Path) -> String {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let host = format!("{}.{}.svc", SERVICE.1, SERVICE.0);
    let cert = CertificateParams::new(vec![host])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    std::fs::write(dir.join("tls.crt"), cert.pem()).unwrap();
    std::fs::write(dir.join("tls.key"), key.serialize_pem()).unwrap();
    ca.pem()
}

fn webhook(name: &str, endpoint: Endpoint, plural: &str, ca: &str) -> Value {
    json!({
        "name": name,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "clientConfig": {
            "service": {"namespace": SERVICE.0, "name": SERVICE.1, "path": endpoint.path()},
            "caBundle": base64(ca.as_bytes()),
        },
        "rules": [{"apiGroups": ["barbican.openstack.c5c3.io"], "apiVersions": ["v1alpha1"],
            "operations": ["CREATE", "UPDATE"], "resources": [plural], "scope": "Namespaced"}],
        "objectSelector": {"matchExpressions": [{"key": SEED, "operator": "DoesNotExist"}]},
    })
}

async fn create(client: &Client, api_version: &str, plural: &str, object: Value) {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let resource = ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: api_version.into(),
        kind: object["kind"].as_str().unwrap().into(),
        plural: plural.into(),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    api.create(
        &PostParams::default(),
        &serde_json::from_value(object).unwrap(),
    )
    .await
    .unwrap();
}

async fn harness(name: &str) -> Harness {
    let cluster = Cluster::new();
    for crd in barbican_operator::crd::definitions() {
        cluster
            .install_crd(serde_json::to_value(crd).unwrap())
            .unwrap();
    }
    let client = cluster.client();
    create(
        &client,
        "v1",
        "namespaces",
        json!({"kind": "Namespace", "metadata": {"name": SERVICE.0}}),
    )
    .await;

    let scratch_dir = scratch(name);
    let dir = scratch_dir.path();
    let ca = pki(dir);
    let certificate = Arc::new(
        ReloadingCertificate::new(dir.join("tls.crt"), dir.join("tls.key"), provider()).unwrap(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    cluster
        .services()
        .register(SERVICE.0, SERVICE.1, 443, listener.local_addr().unwrap());
    let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
    let app = router(Arc::new(ApiLookups::new(cluster.client())));
    tokio::spawn(serve(listener, certificate, app, async {
        let _ = stop.await;
    }));

    let group = "admissionregistration.k8s.io/v1";
    create(&client, group, "mutatingwebhookconfigurations", json!({
        "kind": "MutatingWebhookConfiguration", "metadata": {"name": "barbican-operator"},
        "webhooks": [
            webhook("mbarbican.openstack.c5c3.io", Endpoint::MutateBarbican, "barbicans", &ca),
            webhook("mbarbicansecretstore.openstack.c5c3.io", Endpoint::MutateSecretStore, "barbicansecretstores", &ca),
        ],
    })).await;
    create(&client, group, "validatingwebhookconfigurations", json!({
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "barbican-operator"},
        "webhooks": [
            webhook("vbarbican.openstack.c5c3.io", Endpoint::ValidateBarbican, "barbicans", &ca),
            webhook("vbarbicansecretstore.openstack.c5c3.io", Endpoint::ValidateSecretStore, "barbicansecretstores", &ca),
        ],
    })).await;
    Harness {
        cluster,
        client,
        _shutdown: shutdown,
        _dir: scratch_dir,
    }
}

fn resource(kind: &str) -> ApiResource {
    if kind == "Barbican" {
        ApiResource::erase::<Barbican>(&())
    } else {
        ApiResource::erase::<BarbicanSecretStore>(&())
    }
}

fn seeded(mut object: Value, namespace: &str) -> Value {
    object["metadata"]["namespace"] = json!(namespace);
    object["metadata"]["labels"][SEED] = json!("true");
    object
}

/// Puts the cluster in the state the case's lookups describe, in `namespace`; returns the
/// stored object an UPDATE starts from.
async fn prepare(h: &Harness, case: &Case, namespace: &str) -> Option<Value> {
    create(
        &h.client,
        "v1",
        "namespaces",
        json!({"kind": "Namespace", "metadata": {"name": namespace}}),
    )
    .await;
    let classes: Api<DynamicObject> = Api::all_with(
        h.client.clone(),
        &ApiResource {
            group: "scheduling.k8s.io".into(),
            version: "v1".into(),
            api_version: "scheduling.k8s.io/v1".into(),
            kind: "PriorityClass".into(),
            plural: "priorityclasses".into(),
        },
    );
    for existing in classes.list(&Default::default()).await.unwrap().items {
        classes
            .delete(&existing.metadata.name.unwrap(), &DeleteParams::default())
            .await
            .unwrap();
    }
    for class in case.priority_classes() {
        create(
            &h.client,
            "scheduling.k8s.io/v1",
            "priorityclasses",
            json!({"kind": "PriorityClass", "metadata": {"name": class}, "value": 1000}),
        )
        .await;
    }
    let stores: Api<DynamicObject> = Api::namespaced_with(
        h.client.clone(),
        namespace,
        &resource("BarbicanSecretStore"),
    );
    let own_name = case.object()["metadata"]["name"].clone();
    for (store, deleting) in case.sibling_stores() {
        // On an UPDATE the store itself is among the stores listed: it is the stored object.
        if case.old().is_some() && store["metadata"]["name"] == own_name {
            continue;
        }
        let mut store = seeded(store, namespace);
        if deleting {
            store["metadata"]["finalizers"] = json!([HOLD]);
        }
        let name = store["metadata"]["name"].as_str().unwrap().to_string();
        stores
            .create(
                &PostParams::default(),
                &serde_json::from_value(store).unwrap(),
            )
            .await
            .unwrap();
        if deleting {
            stores
                .delete(&name, &DeleteParams::default())
                .await
                .unwrap();
        }
    }
    if case.unavailable().is_some() {
        for rule in [
            "verb=list,resource=barbicansecretstores,code=503",
            "verb=get,resource=priorityclasses,code=503",
        ] {
            h.cluster.add_fault(rule.parse::<Fault>().unwrap());
        }
    }
    let old = case.old()?;
    let api: Api<DynamicObject> =
        Api::namespaced_with(h.client.clone(), namespace, &resource(&case.kind));
    let mut old = seeded(old, namespace);
    if case.deleting() {
        old["metadata"]["finalizers"] = json!([HOLD]);
    }
    let name = old["metadata"]["name"].as_str().unwrap().to_string();
    api.create(
        &PostParams::default(),
        &serde_json::from_value(old).unwrap(),
    )
    .await
    .unwrap();
    if case.deleting() {
        api.delete(&name, &DeleteParams::default()).await.unwrap();
    }
    Some(serde_json::to_value(api.get(&name).await.unwrap()).unwrap())
}

/// The object the case writes, in `namespace`, on top of the stored one for an UPDATE.
fn written(case: &Case, namespace: &str, stored: Option<&Value>) -> Value {
    let mut object = case.object();
    object["metadata"]["namespace"] = json!(namespace);
    if let Some(stored) = stored {
        object["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"].clone();
    }
    object
}

/// Who refused, and the refusal as the corpus words it: a webhook's denial without
/// kube-apiserver's `admission webhook "..." denied the request: ` prefix, or the API server's
/// own causes as `field: message` joined by `"; "`.
fn refusal(allowed: bool, status: &Value) -> (bool, String) {
    if allowed {
        return (false, String::new());
    }
    let message = status["message"].as_str().unwrap_or("");
    if let Some((_, denial)) = message.split_once(" denied the request: ") {
        return (false, denial.to_string());
    }
    let causes: Vec<String> = status["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap_or(""),
                c["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    (
        true,
        if causes.is_empty() {
            message.to_string()
        } else {
            causes.join("; ")
        },
    )
}

/// What a mutate case should have stored: the case's object with the expected patch applied,
/// and the schema's defaults filled as the API server fills them.
fn mutated(case: &Case, stored: &Value) -> Vec<String> {
    let Some(patch) = case.expected_patch() else {
        return vec![];
    };
    let mut expected = case.object();
    let operations: json_patch::Patch = serde_json::from_value(patch.clone()).unwrap();
    json_patch::patch(&mut expected, &operations).unwrap();
    let schema = barbican_operator::crd::definitions()
        .into_iter()
        .find(|c| c.spec.names.kind == case.kind)
        .map(|c| {
            serde_json::to_value(&c.spec.versions[0].schema).unwrap()["openAPIV3Schema"].clone()
        })
        .unwrap();
    barbican_sim::schema::apply_defaults(&schema, &mut expected);
    if expected["spec"] == stored["spec"] {
        vec![]
    } else {
        vec![format!(
            "stored spec {}, expected {}",
            stored["spec"], expected["spec"]
        )]
    }
}

/// Writes through kube::Client, reading the verdict, the message and the Warning headers.
async fn through_kube(h: &Harness, case: &Case, namespace: &str) -> (Outcome, Vec<String>) {
    let stored = prepare(h, case, namespace).await;
    let object = written(case, namespace, stored.as_ref());
    let name = object["metadata"]["name"].as_str().unwrap().to_string();
    let url = format!(
        "/apis/barbican.openstack.c5c3.io/v1alpha1/namespaces/{namespace}/{}",
        resource(&case.kind).plural
    );
    let request = kube::core::Request::new(url);
    let body = serde_json::to_vec(&object).unwrap();
    let request = match &stored {
        None => request.create(&PostParams::default(), body),
        Some(_) => request.replace(&name, &PostParams::default(), body),
    }
    .unwrap()
    .map(kube::client::Body::from);
    let response = h.client.send(request).await.unwrap();
    let warnings: Vec<String> = response
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| warning_text(v.to_str().unwrap()))
        .collect();
    let allowed = response.status().is_success();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    h.cluster.clear_faults();
    let problems = if allowed && case.endpoint() == "mutate" {
        mutated(case, &answer)
    } else {
        vec![]
    };
    let (refused_by_api_server, message) = refusal(allowed, &answer);
    (
        Outcome {
            refused_by_api_server,
            allowed,
            message,
            warnings,
            patch: None,
        },
        problems,
    )
}

/// `299 - "text"` → `text`.
fn warning_text(header: &str) -> String {
    header
        .splitn(3, ' ')
        .nth(2)
        .map(|t| {
            t.trim_matches('"')
                .replace("\\\"", "\"")
                .replace("\\\\", "\\")
        })
        .unwrap_or_else(|| header.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_corpus_replays_through_the_sims_admission_chain_with_kube_client() {
    let h = harness("kube").await;
    let cases = load();
    let mut outcomes = Vec::new();
    let mut extra = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let (outcome, problems) = through_kube(&h, case, &format!("case-{i}")).await;
        extra.extend(problems.into_iter().map(|p| format!("{}: {p}", case.title)));
        outcomes.push((case, outcome));
    }
    assert_outcomes(Layer::ApiServer, outcomes);
    assert!(extra.is_empty(), "{}", extra.join("\n"));
}

/// Runs kubectl with `stdin`; returns (success, stdout, stderr).
async fn kubectl(kubeconfig: PathBuf, args: Vec<String>, stdin: String) -> (bool, String, String) {
    tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new("kubectl")
            .args(&args)
            .env("KUBECONFIG", &kubeconfig)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl must be installed (CI provides 1.32)");
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), stdin.as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    })
    .await
    .unwrap()
}

/// kubectl's rendering of a refusal, back in the corpus's terms: a webhook denial follows
/// `denied the request: `; the API server's own refusal lists its causes after `is invalid: `,
/// one per `* ` line when there are several.
fn kubectl_refusal(stderr: &str) -> (bool, String) {
    let error: String = stderr
        .lines()
        .filter(|l| !l.starts_with("Warning: "))
        .collect::<Vec<_>>()
        .join("\n");
    if let Some((_, denial)) = error.split_once(" denied the request: ") {
        return (false, denial.trim().to_string());
    }
    let causes = error
        .split_once(" is invalid: ")
        .map(|(_, c)| c)
        .unwrap_or(&error);
    let causes: Vec<&str> = causes
        .split('\n')
        .map(|l| l.trim().trim_start_matches("* ").trim())
        .filter(|l| !l.is_empty())
        .collect();
    (true, causes.join("; "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_corpus_replays_through_the_sims_admission_chain_with_kubectl() {
    let h = harness("kubectl").await;
    let addr = h.cluster.serve_on_loopback().await.unwrap();
    let scratch_dir = scratch("kubectl");
    let kubeconfig = scratch_dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: http://{addr}\n\
             users:\n- name: sim\n  user: {{}}\ncontexts:\n- name: sim\n  context:\n    cluster: sim\n    user: sim\n\
             current-context: sim\n"
        ),
    )
    .unwrap();
    let cases = load();
    let mut outcomes = Vec::new();
    let mut extra = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let namespace = format!("case-{i}");
        let stored = prepare(&h, case, &namespace).await;
        let object = written(case, &namespace, stored.as_ref());
        let verb = if stored.is_some() {
            "replace"
        } else {
            "create"
        };
        let args = [verb, "-f", "-", "-o", "json"].map(String::from).to_vec();
        let (allowed, stdout, stderr) = kubectl(kubeconfig.clone(), args, object.to_string()).await;
        h.cluster.clear_faults();
        let warnings = stderr
            .lines()
            .filter_map(|l| l.strip_prefix("Warning: "))
            .map(String::from)
            .collect();
        let (refused_by_api_server, message) = if allowed {
            if case.endpoint() == "mutate" {
                let stored: Value = serde_json::from_str(&stdout).unwrap();
                extra.extend(
                    mutated(case, &stored)
                        .into_iter()
                        .map(|p| format!("{}: {p}", case.title)),
                );
            }
            (false, String::new())
        } else {
            kubectl_refusal(&stderr)
        };
        outcomes.push((
            case,
            Outcome {
                refused_by_api_server,
                allowed,
                message,
                warnings,
                patch: None,
            },
        ));
    }
    assert_outcomes(Layer::ApiServer, outcomes);
    assert!(extra.is_empty(), "{}", extra.join("\n"));
}
