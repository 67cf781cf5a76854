//! The `BarbicanSecretStore` custom resource: a backend Barbican writes secret material to.
//!
//! The attachment is inverted: a store points at its Barbican, so stores are added and replaced
//! without editing the Barbican.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::refs::{BarbicanRefSpec, InstanceRefSpec, SecretNameRefSpec};

/// Credentials Secret data key of the AppRole role ID (rendered as `approle_role_id`).
pub const ROLE_ID_KEY: &str = "role-id";
/// Credentials Secret data key of the AppRole secret ID (delivered as an env var only).
pub const SECRET_ID_KEY: &str = "secret-id";
/// CA bundle Secret data key of the PEM trust bundle.
pub const CA_KEY: &str = "ca.crt";
/// The KV v2 mount a store uses when `kvMountpoint` is unset; the only one a managed store may use.
pub const DEFAULT_KV_MOUNTPOINT: &str = "barbican";

/// Rule: the store stays attached to the Barbican it was created for.
pub const BARBICAN_REF_IMMUTABLE_RULE: &str = "self.barbicanRef.name == oldSelf.barbicanRef.name";
/// Message of [`BARBICAN_REF_IMMUTABLE_RULE`].
pub const BARBICAN_REF_IMMUTABLE_MESSAGE: &str = "barbicanRef is immutable";
/// Rule: the plugin type never changes: material written through one plugin cannot be read
/// through another.
pub const TYPE_IMMUTABLE_RULE: &str = "self.type == oldSelf.type";
/// Message of [`TYPE_IMMUTABLE_RULE`].
pub const TYPE_IMMUTABLE_MESSAGE: &str = "type is immutable";
/// Rule: exactly the store block that matches `type`.
pub const TYPE_UNION_RULE: &str = "(self.type == 'OpenBao') == has(self.openBao)";
/// Message of [`TYPE_UNION_RULE`].
pub const TYPE_UNION_MESSAGE: &str =
    "exactly one store block matching spec.type must be set (type OpenBao requires spec.openBao)";
/// Rule: extraOptions keys and values stay within their length bounds.
pub const EXTRA_OPTIONS_BOUNDS_RULE: &str = "self.all(k, size(k) <= 256 && size(self[k]) <= 1024)";
/// Message of [`EXTRA_OPTIONS_BOUNDS_RULE`].
pub const EXTRA_OPTIONS_BOUNDS_MESSAGE: &str =
    "each extraOptions key must be <=256 characters and each value <=1024 characters";
/// Most entries `extraOptions` may hold.
pub const EXTRA_OPTIONS_MAX_PROPERTIES: u32 = 32;
/// Rule: managed (instanceRef) or brownfield (server), exactly one.
pub const OPENBAO_MODE_UNION_RULE: &str = "has(self.instanceRef) != has(self.server)";
/// Message of [`OPENBAO_MODE_UNION_RULE`].
pub const OPENBAO_MODE_UNION_MESSAGE: &str = "exactly one of instanceRef or server must be set";
/// Rule: a managed store uses the `barbican` mount in the root namespace.
pub const OPENBAO_MANAGED_PIN_RULE: &str =
    "!has(self.instanceRef) || (self.kvMountpoint == 'barbican' && !has(self.__namespace__))";
/// Message of [`OPENBAO_MANAGED_PIN_RULE`].
pub const OPENBAO_MANAGED_PIN_MESSAGE: &str = "managed stores (instanceRef) must keep kvMountpoint barbican and leave \
     namespace unset: the self-init contract provisions only the barbican/ mount at the root namespace";
/// Rule: the mount never changes.
pub const KV_MOUNTPOINT_IMMUTABLE_RULE: &str = "self.kvMountpoint == oldSelf.kvMountpoint";
/// Message of [`KV_MOUNTPOINT_IMMUTABLE_RULE`].
pub const KV_MOUNTPOINT_IMMUTABLE_MESSAGE: &str = "kvMountpoint is immutable: the secret material already written under the old mount is not reachable under a new one";
/// Rule: the mode (managed or brownfield) never changes.
pub const OPENBAO_MODE_FROZEN_RULE: &str = "has(self.instanceRef) == has(oldSelf.instanceRef)";
/// Message of [`OPENBAO_MODE_FROZEN_RULE`].
pub const OPENBAO_MODE_FROZEN_MESSAGE: &str =
    "the store mode (instanceRef vs server) is immutable: delete and recreate the store instead";

/// The pattern of an OpenBao path (`kvMountpoint`): segments of letters, digits, `_`, `-` and
/// `.`, none starting with `.` (so never `.` or `..`), joined by single `/`, an optional `/` at
/// the end. No control character or space can reach a header or a URL path.
pub const OPENBAO_PATH_PATTERN: &str =
    r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*/?$";
/// The pattern of `namespace`: an OpenBao path, or empty (the root namespace).
pub const OPENBAO_NAMESPACE_PATTERN: &str =
    r"^([A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*/?)?$";
/// What [`OPENBAO_PATH_PATTERN`] allows, in words.
pub const OPENBAO_PATH_ALLOWED: &str = "must be path segments of letters, digits, '_', '-' and '.', joined by '/', none starting with '.' (no '..'), with no spaces or control characters";
/// The pattern of a brownfield server URL: `https://`, then a host with no userinfo (`@`
/// before the path) and no whitespace.
pub const SERVER_URL_PATTERN: &str = r"^https://[^/?#@\s]+([/?#][^\s]*)?$";

/// Checks an OpenBao path (`kvMountpoint`, a non-empty `namespace`) against
/// [`OPENBAO_PATH_PATTERN`]; the error says what is allowed and never quotes the value.
pub fn check_path(value: &str) -> Result<(), &'static str> {
    let body = value.strip_suffix('/').unwrap_or(value);
    let segment_ok = |segment: &str| {
        !segment.is_empty()
            && !segment.starts_with('.')
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    if body.split('/').all(segment_ok) {
        Ok(())
    } else {
        Err(OPENBAO_PATH_ALLOWED)
    }
}

/// Why a URL carrying userinfo is refused wherever the operator takes one (a store's server,
/// the Keystone endpoints): it would be echoed in errors, rendered into barbican.conf, and
/// (as `www_authenticate_uri`) sent to every client in a 401's WWW-Authenticate header.
pub const USERINFO_REFUSED: &str = "must not carry credentials before the host (user:password@), since the URL is rendered into barbican.conf and sent to clients";

/// Whether a server URL names credentials before its host (`https://user:pass@host`): they
/// would be echoed wherever the URL is (errors, the rendered `vault_url`).
pub fn url_has_userinfo(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority.contains('@')
}

/// The secret-store plugin of a store.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum SecretStoreType {
    /// Barbican's vault plugin against OpenBao, or against HashiCorp Vault: both serve KV v2.
    #[default]
    OpenBao,
}

/// Desired state of one secret store attached to a Barbican.
///
/// The store's `metadata.name` is its identifier in Barbican's config: the suffix of its
/// `[secretstore:<name>]` section and an entry of `stores_lookup_suffix`.
// clippy reads the repeated `type_ = "string"` of separate printcolumn(...) entries as one
// attribute given twice.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "barbican.openstack.c5c3.io",
    version = "v1alpha1",
    kind = "BarbicanSecretStore",
    plural = "barbicansecretstores",
    namespaced,
    status = "BarbicanSecretStoreStatus",
    derive = "PartialEq",
    doc = "BarbicanSecretStore attaches a secret store (OpenBao or Vault) to a Barbican.",
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Ready')].status"
    ),
    printcolumn(name = "Type", type_ = "string", json_path = ".spec.type"),
    printcolumn(name = "Default", type_ = "boolean", json_path = ".spec.isDefault"),
    printcolumn(
        name = "Barbican",
        type_ = "string",
        json_path = ".spec.barbicanRef.name"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = (BARBICAN_REF_IMMUTABLE_RULE, BARBICAN_REF_IMMUTABLE_MESSAGE),
    validation = (TYPE_IMMUTABLE_RULE, TYPE_IMMUTABLE_MESSAGE),
    validation = (TYPE_UNION_RULE, TYPE_UNION_MESSAGE)
)]
pub struct BarbicanSecretStoreSpec {
    /// The Barbican in this namespace the store attaches to. Immutable: delete and recreate to
    /// move a store.
    pub barbican_ref: BarbicanRefSpec,
    /// The plugin; `OpenBao` is the only one. Immutable.
    #[serde(rename = "type")]
    pub store_type: SecretStoreType,
    /// The OpenBao store; required when `type` is `OpenBao`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_bao: Option<OpenBaoStoreSpec>,
    /// Marks the store Barbican's global default (`global_default` in its section). Exactly one
    /// attached, credential-ready store must carry it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_default: bool,
    /// Further `[vault_plugin]` options by bare name. Options the typed spec owns and the
    /// structural wiring keys are refused by the webhook; at most 32 entries, keys up to 256
    /// and values up to 1024 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "maxProperties" = EXTRA_OPTIONS_MAX_PROPERTIES,
        "additionalProperties" = {"type": "string", "pattern": super::config_grammar::OPTION_VALUE_PATTERN},
    ))]
    #[x_kube(validation = (EXTRA_OPTIONS_BOUNDS_RULE, EXTRA_OPTIONS_BOUNDS_MESSAGE))]
    pub extra_options: Option<BTreeMap<String, String>>,
}

/// An OpenBao-backed store, managed (`instanceRef`) or brownfield (`server`).
///
/// Managed: the operator mints the AppRole credentials and owns the KV mount on an
/// OpenBaoCluster in this namespace. Brownfield: the operator only reads the referenced
/// Secrets, checks them against the server, and renders the config; it never writes to the
/// server.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = (OPENBAO_MODE_UNION_RULE, OPENBAO_MODE_UNION_MESSAGE),
    validation = (OPENBAO_MANAGED_PIN_RULE, OPENBAO_MANAGED_PIN_MESSAGE),
    validation = (KV_MOUNTPOINT_IMMUTABLE_RULE, KV_MOUNTPOINT_IMMUTABLE_MESSAGE),
    validation = (OPENBAO_MODE_FROZEN_RULE, OPENBAO_MODE_FROZEN_MESSAGE)
)]
pub struct OpenBaoStoreSpec {
    /// The OpenBaoCluster to provision against (managed mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_ref: Option<InstanceRefSpec>,
    /// A server provisioned outside this operator (brownfield mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<OpenBaoServerSpec>,
    /// Path of the KV v2 engine holding Barbican's material; `barbican` by default and the
    /// only value a managed store may use. Immutable.
    #[serde(default = "default_kv_mountpoint")]
    #[schemars(length(min = 1, max = 255), regex(pattern = OPENBAO_PATH_PATTERN))]
    pub kv_mountpoint: String,
    /// OpenBao/Vault namespace every request is scoped to (brownfield only); path segments
    /// joined by `/`, empty for the root namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255), regex(pattern = OPENBAO_NAMESPACE_PATTERN))]
    pub namespace: Option<String>,
}

fn default_kv_mountpoint() -> String {
    DEFAULT_KV_MOUNTPOINT.to_string()
}

/// An OpenBao or Vault server elsewhere (brownfield). Both Secrets live in the store's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenBaoServerSpec {
    /// API base URL. TLS is mandatory: the AppRole login and every stored secret travel it.
    /// No credentials in it (`user:password@`): they would be echoed wherever the URL is.
    #[schemars(length(min = 1, max = 2048), regex(pattern = SERVER_URL_PATTERN))]
    pub url: String,
    /// Secret with the PEM CA bundle under `ca.crt`; omit it when the pods' system trust store
    /// already trusts the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_bundle_secret_ref: Option<SecretNameRefSpec>,
    /// Secret with the AppRole credentials under `role-id` and `secret-id`, created outside the
    /// operator and only read by it.
    pub credentials_secret_ref: SecretNameRefSpec,
}

/// Observed state of a store; written by the store controller alone.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BarbicanSecretStoreStatus {
    /// `CredentialsReady`, `ProvisioningReady` (managed only), `ConfigProjected` and the
    /// aggregate `Ready`; one entry per type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = kube::core::ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` last reconciled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
