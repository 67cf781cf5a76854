//! The MariaDB connection Barbican keeps its metadata in.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::refs::{ClusterRefSpec, SecretRefSpec};

/// Rule: one of `clusterRef` (managed) and `host` (brownfield), never both.
pub const DATABASE_CLUSTER_REF_XOR_HOST_RULE: &str = "has(self.clusterRef) != has(self.host)";
/// Message of [`DATABASE_CLUSTER_REF_XOR_HOST_RULE`].
pub const DATABASE_CLUSTER_REF_XOR_HOST_MESSAGE: &str =
    "exactly one of clusterRef or host must be set";
/// Rule: `credentialsMode: Dynamic` is only valid in managed mode.
pub const DATABASE_DYNAMIC_REQUIRES_CLUSTER_REF_RULE: &str =
    "!has(self.credentialsMode) || self.credentialsMode != 'Dynamic' || has(self.clusterRef)";
/// Message of [`DATABASE_DYNAMIC_REQUIRES_CLUSTER_REF_RULE`].
pub const DATABASE_DYNAMIC_REQUIRES_CLUSTER_REF_MESSAGE: &str =
    "credentialsMode Dynamic requires clusterRef (managed mode)";

/// The port used when `spec.database.port` is unset.
pub const DEFAULT_DATABASE_PORT: i32 = 3306;

/// How the credential in `spec.database.secretRef` is provisioned.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum CredentialsMode {
    /// A long-lived password; the operator manages the MariaDB User and Grant. The default.
    #[default]
    Static,
    /// Short-lived credentials issued by an external engine; the operator manages no User or
    /// Grant. Requires `clusterRef`.
    Dynamic,
}

/// TLS verification strength of the database connection.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DatabaseTlsMode {
    /// TLS is off; the certificate references are kept but ignored.
    Disabled,
    /// Encrypt only, no peer verification.
    Prefer,
    /// Encrypt only, no peer verification. What an empty mode resolves to.
    Require,
    /// Also verify the server certificate chain against the CA bundle.
    VerifyCa,
    /// Also verify the chain and that the server hostname matches the certificate.
    VerifyFull,
}

/// Opt-in TLS (and mutual TLS) for the database connection. With TLS enabled the client
/// keypair and CA are projected into the API pods, the db-sync Job and the db-clean CronJob.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseTlsSpec {
    /// Verification strength. A present block with no mode means `require`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<DatabaseTlsMode>,
    /// Secret holding the server CA bundle (`ca.crt`) the client trusts.
    pub ca_bundle_secret_ref: SecretRefSpec,
    /// Secret holding the client keypair (`tls.crt`, `tls.key`) presented for mutual TLS.
    pub client_cert_secret_ref: SecretRefSpec,
}

impl DatabaseTlsSpec {
    /// Whether this block asks for an encrypted connection (any mode but `disabled`).
    pub fn is_enabled(&self) -> bool {
        self.mode != Some(DatabaseTlsMode::Disabled)
    }
}

/// Where the database lives and how Barbican logs in, rendered into `[database]` as a pymysql
/// DSN that reaches the pods through the `{name}-db-connection` Secret.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = (DATABASE_CLUSTER_REF_XOR_HOST_RULE, DATABASE_CLUSTER_REF_XOR_HOST_MESSAGE),
    validation = (DATABASE_DYNAMIC_REQUIRES_CLUSTER_REF_RULE, DATABASE_DYNAMIC_REQUIRES_CLUSTER_REF_MESSAGE)
)]
pub struct DatabaseSpec {
    /// A MariaDB custom resource in the Barbican's namespace (managed mode): the operator
    /// creates the Database, User and Grant on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_ref: Option<ClusterRefSpec>,
    /// Hostname or address of an existing server (brownfield mode): the operator creates
    /// nothing on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 253), regex(pattern = r"^[a-zA-Z0-9._:-]+$"))]
    pub host: Option<String>,
    /// Server port; 3306 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
    /// Database (schema) name: a MySQL identifier of at most 64 characters.
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9_]+$"))]
    pub database: String,
    /// Secret with the `username` and `password` keys Barbican connects with.
    pub secret_ref: SecretRefSpec,
    /// `Static` (the default) or `Dynamic`; see [`CredentialsMode`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_mode: Option<CredentialsMode>,
    /// Optional TLS for the connection; plaintext TCP when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<DatabaseTlsSpec>,
    /// Managed MariaDB replica count. Part of the shared database shape that the c5c3 operator's
    /// managed-mode projection reads; the Barbican operator ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = super::deployment::MAX_REPLICAS))]
    pub replicas: Option<i32>,
    /// Managed MariaDB volume size per replica (`100Gi`). Like `replicas`, read by the c5c3
    /// operator only and ignored here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9]+(Mi|Gi|Ti)$"))]
    pub storage_size: Option<String>,
}

impl DatabaseSpec {
    /// The credentials mode with the default applied.
    pub fn effective_credentials_mode(&self) -> CredentialsMode {
        self.credentials_mode.unwrap_or_default()
    }

    /// The port with the default applied.
    pub fn effective_port(&self) -> i32 {
        self.port.unwrap_or(DEFAULT_DATABASE_PORT)
    }
}
