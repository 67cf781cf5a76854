//! Keystone integration beyond authtoken: registering the key manager in Keystone's service
//! catalog, where Nova, Cinder and Octavia (through castellan) and the `openstack` CLI look
//! Barbican up by its service type.

use serde::{Deserialize, Serialize};

/// The service type castellan and the clients look Barbican up by.
pub const SERVICE_TYPE: &str = "key-manager";
/// The service's name in the catalog, as kolla-ansible and openstack-helm register it.
pub const SERVICE_NAME: &str = "barbican";
/// The service's description, which also marks a service this operator created.
pub const SERVICE_DESCRIPTION: &str = "Barbican Key Management Service (barbican-operator)";
/// The region registered into when neither `catalog.region` nor `spec.region` names one:
/// the region Keystone's bootstrap creates.
pub const DEFAULT_REGION: &str = "RegionOne";
/// The pattern of both endpoint URLs.
pub const ENDPOINT_URL_PATTERN: &str = "^https?://";

/// Whether `region` is a region id the catalog registration can name: letters, digits, `-`,
/// `_` and `.`, 1 to 255 of them (it reaches Keystone's API in a path).
pub fn is_region_id(region: &str) -> bool {
    !region.is_empty()
        && region.len() <= 255
        && region
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Keystone integration settings. Today one block: the service catalog.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeystoneSpec {
    /// Registers the `key-manager` service and its public and internal endpoints in Keystone's
    /// catalog; absent (the default), the catalog is left to whoever manages it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<KeystoneCatalogSpec>,
}

/// The catalog registration: one `key-manager` service named `barbican`, and in `region` one
/// `public` and one `internal` endpoint. The operator authenticates as `spec.serviceUser`
/// (password from its Secret), which needs the `admin` role on its project, as kolla-ansible
/// and openstack-helm grant service users; a user without it is reported as
/// `CatalogRegistrationDenied` and nothing is written. Removing the block, or deleting the
/// Barbican, deregisters the endpoints this Barbican registered (and the service, when it
/// created it and no endpoint is left on it).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeystoneCatalogSpec {
    /// The Keystone region the endpoints are registered in: `spec.region` when unset, else
    /// `RegionOne`. The region must exist in Keystone; the operator does not create regions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 255), regex(pattern = r"^[A-Za-z0-9._-]+$"))]
    pub region: Option<String>,
    /// The `public` endpoint: what clients outside the cluster use. When unset, the API URL
    /// the Barbican advertises (`status.endpoint`: `https://{gateway.hostname}` with a
    /// gateway, else the cluster-local Service URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048), regex(pattern = ENDPOINT_URL_PATTERN))]
    pub public_url: Option<String>,
    /// The `internal` endpoint: what services inside the cloud use. When unset, the
    /// cluster-local Service URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 2048), regex(pattern = ENDPOINT_URL_PATTERN))]
    pub internal_url: Option<String>,
}

/// What this Barbican registered in Keystone's catalog: the records that make a service or
/// an endpoint its own. The operator updates and deletes only what is recorded here (or an
/// endpoint that already says exactly what it would register), never another registration
/// in the same region.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CatalogStatus {
    /// The Keystone id of the `key-manager` service the endpoints belong to.
    pub service_id: String,
    /// Whether this Barbican created that service (and may delete it once it is empty).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub service_created: bool,
    /// The region the endpoints are in.
    pub region: String,
    /// The endpoints, one per interface.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<CatalogEndpointStatus>,
}

/// One endpoint this Barbican registered.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CatalogEndpointStatus {
    /// `public` or `internal`.
    pub interface: String,
    /// Its Keystone id.
    pub id: String,
    /// The URL it was registered with.
    pub url: String,
}
