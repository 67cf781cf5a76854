//! The `Barbican` custom resource: one Barbican Key Manager API server.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    api_server::ApiServerSpec,
    autoscaling::AutoscalingSpec,
    database::DatabaseSpec,
    db_clean::DbCleanSpec,
    deployment::DeploymentSpec,
    gateway::GatewaySpec,
    image::ImageSpec,
    logging::LoggingSpec,
    memcached::CacheSpec,
    network_policy::NetworkPolicySpec,
    paste::{MiddlewareSpec, PluginSpec},
    policy::PolicySpec,
    refs::{SecretRefSpec, SecretStoreRefSpec, TargetClusterRefSpec},
};

/// The `YYYY.N` release cadence (N is 1 or 2) accepted by `spec.openStackRelease`.
pub const OPENSTACK_RELEASE_PATTERN: &str = r"^\d{4}\.[12]$";

/// Rule: `spec.targetClusterRef` can be neither added, removed nor renamed.
pub const TARGET_CLUSTER_REF_IMMUTABLE_RULE: &str = "has(self.targetClusterRef) == has(oldSelf.targetClusterRef) && \
     (!has(self.targetClusterRef) || self.targetClusterRef.name == oldSelf.targetClusterRef.name)";
/// Message of [`TARGET_CLUSTER_REF_IMMUTABLE_RULE`]; the validating webhook appends its reason.
pub const TARGET_CLUSTER_REF_IMMUTABLE_MESSAGE: &str = "targetClusterRef is immutable";

/// Desired state of a Barbican Key Manager deployment: its release and image, database and
/// cache, Keystone integration, and the recurring database clean-up.
///
/// The secret stores Barbican writes to are separate `BarbicanSecretStore` resources that point
/// at this one. The API Deployment is not created until an attached store is credential-ready
/// and marked default, because Barbican resolves its store at start-up and exits without one.
// clippy reads the repeated `type_ = "string"` of separate printcolumn(...) entries as one
// attribute given twice.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "barbican.openstack.c5c3.io",
    version = "v1alpha1",
    kind = "Barbican",
    plural = "barbicans",
    namespaced,
    status = "BarbicanStatus",
    derive = "PartialEq",
    doc = "Barbican runs the OpenStack Barbican Key Manager API server.",
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Ready')].status"
    ),
    printcolumn(
        name = "Release",
        type_ = "string",
        json_path = ".status.installedRelease"
    ),
    printcolumn(name = "Endpoint", type_ = "string", json_path = ".status.endpoint"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = kube::core::Rule::new(TARGET_CLUSTER_REF_IMMUTABLE_RULE)
    .message(TARGET_CLUSTER_REF_IMMUTABLE_MESSAGE)
    .field_path(".targetClusterRef"))]
pub struct BarbicanSpec {
    /// The OpenStack release deployed and driven, `YYYY.N` with N 1 or 2. `status.installedRelease`
    /// is promoted to it after a successful db-sync. Kept apart from the image tag so a
    /// digest-pinned image still names a schema. From 2026.1 it also switches the paste layout
    /// (request_id filter in every pipeline, no repoze.profile).
    #[schemars(regex(pattern = OPENSTACK_RELEASE_PATTERN))]
    pub open_stack_release: String,
    /// Pod-level knobs of the API Deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeploymentSpec>,
    /// The container image: a tag or a digest, exactly one.
    pub image: ImageSpec,
    /// The MariaDB connection, rendered into `[database]`.
    pub database: DatabaseSpec,
    /// The Memcached servers of the keystonemiddleware token cache.
    pub cache: CacheSpec,
    /// Keystone auth URL (`[keystone_authtoken] auth_url`), `http://` or `https://` with a host.
    /// Tokens are validated against it from inside the cluster, so use the cluster-local URL.
    #[schemars(length(min = 1, max = 2048), regex(pattern = r"^https?://"))]
    pub keystone_endpoint: String,
    /// Browser-facing Keystone URL (`[keystone_authtoken] www_authenticate_uri`) a 401 points
    /// clients at; `keystoneEndpoint` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2048), regex(pattern = r"^https?://"))]
    pub keystone_public_endpoint: Option<String>,
    /// The Keystone service account Barbican authenticates as.
    pub service_user: ServiceUserSpec,
    /// Keystone region (`[keystone_authtoken] region_name`); omitted when unset, so the
    /// catalog's default region applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255))]
    pub region: Option<String>,
    /// Keystone integration beyond authtoken: the service catalog registration; nothing is
    /// registered when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keystone: Option<super::keystone::KeystoneSpec>,
    /// uWSGI process tuning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_server: Option<ApiServerSpec>,
    /// A dump of the database before each migration to another release or image, kept N
    /// deep on a PersistentVolumeClaim; migrations run without one when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_backup: Option<super::db_backup::DbBackupSpec>,
    /// The db-clean CronJob; scheduled whether or not the block is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_clean: Option<DbCleanSpec>,
    /// Exposure through a Gateway API HTTPRoute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewaySpec>,
    /// TLS on the API: uWSGI serves HTTPS with a certificate from a Secret (named, or issued
    /// by cert-manager); HTTP when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<super::tls::TlsSpec>,
    /// A NetworkPolicy around the API pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_policy: Option<NetworkPolicySpec>,
    /// A HorizontalPodAutoscaler for the API Deployment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<AutoscalingSpec>,
    /// API auditing: every request to `/v1` recorded as CADF events; off when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit: Option<super::audit::AuditSpec>,
    /// oslo.log settings (validated, not rendered yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<LoggingSpec>,
    /// The External Secrets store the credential Secrets arrive through; the shared
    /// ClusterSecretStore `openbao-cluster-store` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_store_ref: Option<SecretStoreRefSpec>,
    /// The registered target cluster that receives this Barbican's children; the local cluster
    /// when unset. Immutable: changing it would strand the children already created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cluster_ref: Option<TargetClusterRefSpec>,
    /// oslo.policy overrides, rendered as `policy.yaml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_overrides: Option<PolicySpec>,
    /// WSGI filters for the `barbican-api-keystone` pipeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub middleware: Option<Vec<MiddlewareSpec>>,
    /// Plugin sections, one per `configSection`; at most 32.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("maxItems" = super::paste::MAX_PLUGINS))]
    #[x_kube(merge_strategy = kube::core::ListMerge::Map(vec!["configSection".into()]))]
    pub plugins: Option<Vec<PluginSpec>>,
    /// Free-form INI sections (`section → option → value`), merged last so user values win.
    /// Overrides of operator-owned keys are honoured and reported, except the three credential
    /// keys the webhook refuses; option names are checked against the release's catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "super::paste::extra_config_schema")]
    pub extra_config: Option<BTreeMap<String, BTreeMap<String, String>>>,
}

impl BarbicanSpec {
    /// `[keystone_authtoken] www_authenticate_uri`: the public endpoint, or the internal one.
    /// Resolved at render time so a later edit of `keystoneEndpoint` is still followed.
    pub fn effective_keystone_public_endpoint(&self) -> &str {
        self.keystone_public_endpoint
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or(&self.keystone_endpoint)
    }
}

/// The Keystone service account. A minimal CR names only the password Secret; the webhook
/// fills `barbican` / `service` / `Default` / `Default`. Each identity field is rendered
/// verbatim into `[keystone_authtoken]`, so none may carry a newline or carriage return.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceUserSpec {
    /// Keystone user name; `barbican` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255))]
    pub username: Option<String>,
    /// Project the user scopes to; `service` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255))]
    pub project_name: Option<String>,
    /// Domain of the user; `Default` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255))]
    pub user_domain_name: Option<String>,
    /// Domain of the project; `Default` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255))]
    pub project_domain_name: Option<String>,
    /// Secret holding the password (key `password` by default). The password reaches the pods
    /// as `OS_KEYSTONE_AUTHTOKEN__PASSWORD` and is never rendered into config.
    pub secret_ref: SecretRefSpec,
}

impl ServiceUserSpec {
    /// The user name in effect: `barbican` when unset.
    pub fn effective_username(&self) -> &str {
        self.username.as_deref().unwrap_or("barbican")
    }

    /// The project in effect: `service` when unset.
    pub fn effective_project_name(&self) -> &str {
        self.project_name.as_deref().unwrap_or("service")
    }

    /// The user's domain in effect: `Default` when unset.
    pub fn effective_user_domain_name(&self) -> &str {
        self.user_domain_name.as_deref().unwrap_or("Default")
    }

    /// The project's domain in effect: `Default` when unset.
    pub fn effective_project_domain_name(&self) -> &str {
        self.project_domain_name.as_deref().unwrap_or("Default")
    }
}

/// Observed state of a Barbican.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BarbicanStatus {
    /// The eleven sub-conditions, the aggregate `Ready`, and `ExtraConfigHealthy`; one entry per
    /// type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = kube::core::ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The API URL: `https://{gateway.hostname}` with a gateway, otherwise the cluster-local
    /// Service URL (`https://` with `spec.tls`). The same value as the rendered
    /// `[DEFAULT] host_href`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The release whose schema is installed, promoted after a successful db-sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed_release: Option<String>,
    /// The image reference that migrated the installed schema; lets the release gate refuse a
    /// release bump that left the image untouched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed_image: Option<String>,
    /// The release a bump is converging to; empty in steady state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_release: Option<String>,
    /// The stores the last valid projection rendered, in section order; a store leaving this
    /// set is a detach.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projected_secret_stores: Vec<String>,
    /// The OpenBao server URLs that projection resolved; the egress of an invalid projection is
    /// widened from this record, never from live store specs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub projected_secret_store_hosts: Vec<String>,
    /// What this Barbican registered in Keystone's catalog (`spec.keystone.catalog`): the
    /// service and endpoints it updates and deregisters, and no others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<super::keystone::CatalogStatus>,
}
