//! What the API server serves, asked once at start-up (and per target cluster): whether a kind
//! is served at all, and the Gateway API's HTTPRoute in particular. Both controllers and the
//! children handle read it; it depends on nothing of theirs.

use kube::{Client, api::ApiResource};

/// What the start-up (or per-cluster) probe found about the Gateway API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GatewayApi {
    /// HTTPRoute is served.
    Installed,
    /// The CRD is absent.
    NotInstalled,
    /// Discovery failed; the message says how.
    ProbeFailed(String),
}

/// `gateway.networking.k8s.io/v1` HTTPRoute.
pub fn http_route_resource() -> ApiResource {
    ApiResource {
        group: "gateway.networking.k8s.io".into(),
        version: "v1".into(),
        api_version: "gateway.networking.k8s.io/v1".into(),
        kind: "HTTPRoute".into(),
        plural: "httproutes".into(),
    }
}

/// cert-manager's `cert-manager.io/v1` Certificate (`spec.tls.issuerRef`).
pub fn certificate_resource() -> ApiResource {
    ApiResource {
        group: "cert-manager.io".into(),
        version: "v1".into(),
        api_version: "cert-manager.io/v1".into(),
        kind: "Certificate".into(),
        plural: "certificates".into(),
    }
}

/// Whether the API server serves `resource` (a failed probe is an error, not "no").
pub async fn serves(client: &Client, resource: &ApiResource) -> Result<bool, kube::Error> {
    match client.list_api_group_resources(&resource.api_version).await {
        Ok(list) => Ok(list.resources.iter().any(|r| r.name == resource.plural)),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}

/// Probes for the Gateway API's HTTPRoute.
pub async fn probe_gateway_api(client: &Client) -> GatewayApi {
    match serves(client, &http_route_resource()).await {
        Ok(true) => GatewayApi::Installed,
        Ok(false) => GatewayApi::NotInstalled,
        Err(e) => GatewayApi::ProbeFailed(e.to_string()),
    }
}
