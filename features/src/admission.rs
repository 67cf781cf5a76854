//! The chart's admission webhooks in front of a simulated cluster, as a real install has them:
//! the operator's webhook server over TLS, reachable as the chart's webhook Service, and the
//! Mutating/ValidatingWebhookConfigurations the chart renders (`features/chart-webhooks.yaml`,
//! checked against the chart by a test) with the harness's CA as their `caBundle`.
//!
//! The sim calls the webhooks on every CR write, with the chart's rules, `failurePolicy`,
//! `timeoutSeconds` and `matchConditions`, so a scenario, the soak, the demo and
//! `serve --with-fakes` see what a user of a real install sees: defaults filled in and invalid
//! CRs refused with the operator's messages. On a control plane of Kubernetes' own binaries
//! ([`serve_for_api_server`]) the same configurations call the same server by URL.

use std::sync::Arc;

use barbican_fakes::tls::Authority;
use barbican_operator::admission::server::{ApiLookups, router, serve};
use barbican_sim::Cluster;
use kube::api::{ApiResource, DynamicObject, PostParams};
use serde_json::{Value, json};

/// The webhook configurations the chart renders (release `barbican-operator` in
/// `barbican-system`, a caBundle given), generated and checked in.
pub const CHART_WEBHOOKS: &str = include_str!("../chart-webhooks.yaml");

/// The user agent of the webhook server's own reads (the PriorityClasses and sibling stores
/// its rules consult), apart from the operator's so the operator's request counts stay its own.
pub const WEBHOOK_AGENT: &str = "barbican-operator-webhook";

/// The webhook server, running until this is dropped.
#[derive(Debug)]
pub struct Admission {
    _shutdown: tokio::sync::oneshot::Sender<()>,
    /// The webhook Service's namespace and name, as the configurations name it.
    pub service: (String, String),
}

/// The chart's webhook configurations, each a JSON object.
pub fn configurations() -> Result<Vec<Value>, String> {
    let documents: Vec<Value> = serde_saphyr::from_multiple(CHART_WEBHOOKS)
        .map_err(|e| format!("features/chart-webhooks.yaml: {e}"))?;
    Ok(documents.into_iter().filter(|d| !d.is_null()).collect())
}

/// The Service every webhook of `configurations` calls: namespace and name.
pub fn service_of(configurations: &[Value]) -> Result<(String, String), String> {
    let service = configurations
        .iter()
        .flat_map(|c| c["webhooks"].as_array().into_iter().flatten())
        .map(|w| &w["clientConfig"]["service"])
        .next()
        .ok_or("features/chart-webhooks.yaml: no webhook names a service")?;
    match (service["namespace"].as_str(), service["name"].as_str()) {
        (Some(namespace), Some(name)) => Ok((namespace.to_string(), name.to_string())),
        _ => Err("features/chart-webhooks.yaml: a webhook's service lacks a name".into()),
    }
}

/// Each webhook of `configuration` trusting `ca` (PEM) instead of the rendered placeholder.
pub fn trusting(mut configuration: Value, ca: &str) -> Value {
    barbican_fakes::cert_manager::with_ca_bundle(&mut configuration, ca);
    configuration
}

/// The API of the webhook configuration kind `kind` (Mutating or Validating).
pub fn api(client: kube::Client, kind: &str) -> kube::Api<DynamicObject> {
    let resource = ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_lowercase()),
    };
    kube::Api::all_with(client, &resource)
}

/// Starts the operator's webhook server beside `cluster`, registers it as the chart's webhook
/// Service, and creates the chart's webhook configurations (with their namespace) trusting it.
pub async fn install(cluster: &Cluster) -> Result<Admission, String> {
    let configurations = configurations()?;
    let service = service_of(&configurations)?;
    let admin = cluster.client();
    let (addr, authority, shutdown) = start_server(cluster.client_as(WEBHOOK_AGENT)).await?;
    cluster
        .services()
        .register(&service.0, &service.1, 443, addr);
    register(
        &admin,
        configurations,
        &service.0,
        &authority.ca_pem(),
        None,
    )
    .await?;
    Ok(Admission {
        _shutdown: shutdown,
        service,
    })
}

/// The webhook server in front of a real API server for a whole run, on a thread and runtime
/// of its own (scenarios come and go, each with its runtime); stops when dropped.
#[derive(Debug)]
pub struct ServedAdmission {
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for ServedAdmission {
    fn drop(&mut self) {
        drop(self.shutdown.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts the operator's webhook server on loopback for the API server `kubeconfig` names and
/// registers the chart's webhook configurations with it, each calling the server by `url`
/// (`https://127.0.0.1:<port><path>`) with the server's CA as its `caBundle`: an API server
/// on this host reaches it so, where a Service's endpoints on loopback are refused. Its rule
/// lookups read through the same kubeconfig. Configurations left by an earlier run are replaced.
pub fn serve_for_api_server(kubeconfig: &std::path::Path) -> Result<ServedAdmission, String> {
    let kubeconfig = kubeconfig.to_path_buf();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
    let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("webhook-server".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = ready_tx.send(Err(format!("the webhook server's runtime: {e}")));
                    return;
                }
            };
            runtime.block_on(async move {
                let started = async {
                    let admin = crate::backend::client(&kubeconfig).await?;
                    let configurations = configurations()?;
                    let service = service_of(&configurations)?;
                    let (addr, authority, server_stop) = start_server(admin.clone()).await?;
                    register(
                        &admin,
                        configurations,
                        &service.0,
                        &authority.ca_pem(),
                        Some(addr),
                    )
                    .await?;
                    Ok::<_, String>(server_stop)
                };
                match started.await {
                    Ok(server_stop) => {
                        let _ = ready_tx.send(Ok(()));
                        let _ = stopped.await;
                        drop(server_stop);
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                    }
                }
            });
        })
        .map_err(|e| format!("starting the webhook server's thread: {e}"))?;
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(ServedAdmission {
            shutdown: Some(shutdown),
            thread: Some(thread),
        }),
        Ok(Err(e)) => Err(e),
        Err(_) => Err("the webhook server's thread ended before it was ready".into()),
    }
}

/// Starts the webhook server on a loopback port with a CA of its own, its rule lookups
/// reading through `lookups`; returns where it listens, the CA, and what stops it.
async fn start_server(
    lookups: kube::Client,
) -> Result<
    (
        std::net::SocketAddr,
        Arc<Authority>,
        tokio::sync::oneshot::Sender<()>,
    ),
    String,
> {
    let authority = Arc::new(Authority::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("binding the webhook server: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("the webhook server's address: {e}"))?;
    let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
    let app = router(Arc::new(ApiLookups::new(lookups)));
    tokio::spawn(serve(listener, authority.resolver(), app, async {
        let _ = stop.await;
    }));
    Ok((addr, authority, shutdown))
}

/// Creates `namespace` and the webhook configurations trusting `ca`; with `url`, each webhook
/// calls that address by URL instead of the chart's Service. A configuration already there is
/// replaced.
async fn register(
    admin: &kube::Client,
    configurations: Vec<Value>,
    namespace: &str,
    ca: &str,
    url: Option<std::net::SocketAddr>,
) -> Result<(), String> {
    let namespaces: kube::Api<DynamicObject> = kube::Api::all_with(
        admin.clone(),
        &ApiResource::erase::<k8s_openapi::api::core::v1::Namespace>(&()),
    );
    let object = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace},
    }))
    .map_err(|e| e.to_string())?;
    match namespaces.create(&PostParams::default(), &object).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(e) => return Err(format!("creating the namespace {namespace}: {e}")),
    }
    for configuration in configurations {
        let kind = configuration["kind"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let name = configuration["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut configuration = trusting(configuration, ca);
        if let Some(addr) = url {
            by_url(&mut configuration, addr);
        }
        let api = api(admin.clone(), &kind);
        let object: DynamicObject =
            serde_json::from_value(configuration).map_err(|e| format!("{kind}: {e}"))?;
        match api.create(&PostParams::default(), &object).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {
                api.delete(&name, &Default::default())
                    .await
                    .map_err(|e| format!("replacing the {kind}: {e}"))?;
                api.create(&PostParams::default(), &object)
                    .await
                    .map_err(|e| format!("registering the {kind}: {e}"))?;
            }
            Err(e) => return Err(format!("registering the {kind}: {e}")),
        }
    }
    Ok(())
}

/// Each webhook of `configuration` calling `addr` by URL, at the path its Service reference
/// named.
pub fn by_url(configuration: &mut Value, addr: std::net::SocketAddr) {
    for webhook in configuration["webhooks"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        let client = &mut webhook["clientConfig"];
        let path = client["service"]["path"]
            .as_str()
            .unwrap_or("/")
            .to_string();
        if let Some(client) = client.as_object_mut() {
            client.remove("service");
            client.insert("url".into(), json!(format!("https://{addr}{path}")));
        }
    }
}
