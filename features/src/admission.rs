//! The chart's admission webhooks in front of a simulated cluster, as a real install has them:
//! the operator's webhook server over TLS, reachable as the chart's webhook Service, and the
//! Mutating/ValidatingWebhookConfigurations the chart renders (`features/chart-webhooks.yaml`,
//! checked against the chart by a test) with the harness's CA as their `caBundle`.
//!
//! The sim calls the webhooks on every CR write, with the chart's rules, `failurePolicy`,
//! `timeoutSeconds` and `matchConditions`, so a scenario, the soak, the demo and
//! `serve --with-fakes` see what a user of a real install sees: defaults filled in and invalid
//! CRs refused with the operator's messages.

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
    let namespaces: kube::Api<DynamicObject> = kube::Api::all_with(
        admin.clone(),
        &ApiResource::erase::<k8s_openapi::api::core::v1::Namespace>(&()),
    );
    let namespace = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": service.0},
    }))
    .map_err(|e| e.to_string())?;
    match namespaces.create(&PostParams::default(), &namespace).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(e) => return Err(format!("creating the namespace {}: {e}", service.0)),
    }

    let authority = Arc::new(Authority::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("binding the webhook server: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("the webhook server's address: {e}"))?;
    cluster
        .services()
        .register(&service.0, &service.1, 443, addr);
    let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
    let app = router(Arc::new(ApiLookups::new(cluster.client_as(WEBHOOK_AGENT))));
    tokio::spawn(serve(listener, authority.resolver(), app, async {
        let _ = stop.await;
    }));

    for configuration in configurations {
        let kind = configuration["kind"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let api = api(admin.clone(), &kind);
        let object = serde_json::from_value(trusting(configuration, &authority.ca_pem()))
            .map_err(|e| format!("{kind}: {e}"))?;
        api.create(&PostParams::default(), &object)
            .await
            .map_err(|e| format!("registering the {kind}: {e}"))?;
    }
    Ok(Admission {
        _shutdown: shutdown,
        service,
    })
}
