//! WSGI middleware and service plugins: the two ways to extend Barbican beyond its own options.

use std::collections::BTreeMap;

use super::config_grammar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a middleware filter goes in the `barbican-api-keystone` pipeline.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PipelinePosition {
    /// Before the base filters.
    Before,
    /// After the base filters, just ahead of the application.
    After,
}

/// A WSGI filter inserted into the pipeline `composite:main` routes `/v1` to.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MiddlewareSpec {
    /// Filter name, used as its paste section `[filter:<name>]` and pipeline entry.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Python entry point of the filter factory (`audit_middleware:filter_factory`).
    #[schemars(length(min = 1, max = 1024))]
    pub filter_factory: String,
    /// `before` or `after` the base filters.
    pub position: PipelinePosition,
    /// Options rendered into the filter's own paste section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<BTreeMap<String, String>>,
}

/// A service plugin or driver configured through its own INI section.
///
/// Plugin sections lose to the operator's defaults on a key collision, and to `extraConfig`
/// on top of that.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginSpec {
    /// Name of the plugin, for the reader.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// The INI section the options are rendered into: one of barbican's plugin groups
    /// (`vault_plugin`, `p11_crypto_plugin`, ...), which the webhook checks against the
    /// release's option catalog. The list-map key, so two plugins cannot claim one section and
    /// server-side apply merges entries by section.
    #[schemars(length(min = 1, max = 253), regex(pattern = PLUGIN_SECTION_PATTERN))]
    pub config_section: String,
    /// Options of the section: at most 128, values up to 4096 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "plugin_config_schema")]
    pub config: Option<BTreeMap<String, String>>,
}

/// What the schema alone can say of a plugin section, so an install without the webhooks
/// still never writes `[DEFAULT]`, logging's `[handlers]` or a store's section through a
/// plugin: ASCII letters, digits and `_`, ending in `_plugin` in any case (oslo.config
/// lowercases group names). The webhook and the renderer hold it to the catalog's groups.
pub const PLUGIN_SECTION_PATTERN: &str = "^[A-Za-z0-9_]*_[Pp][Ll][Uu][Gg][Ii][Nn]$";

/// Most plugin entries `spec.plugins` may hold.
pub const MAX_PLUGINS: u32 = 32;
/// Most options one INI section of `plugins` or `extraConfig` may hold.
pub const MAX_SECTION_OPTIONS: u32 = 128;
/// Most sections `extraConfig` may hold.
pub const MAX_EXTRA_CONFIG_SECTIONS: u32 = 64;
/// The longest option value of `plugins` or `extraConfig`.
pub const MAX_OPTION_VALUE_LENGTH: u32 = 4096;

/// The options of one INI section: bounded, so one CR cannot grow the config Secret every API
/// pod mounts (and the operator's memory) without limit.
/// Its names and values follow [`config_grammar`], in the schema too, so an install without
/// the webhooks never stores a name oslo.config would read as another.
fn section_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "maxProperties": MAX_SECTION_OPTIONS,
        "additionalProperties": {
            "type": "string",
            "maxLength": MAX_OPTION_VALUE_LENGTH,
            "pattern": config_grammar::OPTION_VALUE_PATTERN,
        },
        "x-kubernetes-validations": [
            {"rule": config_grammar::OPTION_NAMES_RULE, "message": config_grammar::OPTION_NAMES_MESSAGE},
        ],
    })
}

fn plugin_config_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::Schema::try_from(section_schema()).unwrap_or_default()
}

/// The schema of `spec.extraConfig`: at most [`MAX_EXTRA_CONFIG_SECTIONS`] sections of
/// bounded options.
pub fn extra_config_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::Schema::try_from(serde_json::json!({
        "type": "object",
        "maxProperties": MAX_EXTRA_CONFIG_SECTIONS,
        "additionalProperties": section_schema(),
        "x-kubernetes-validations": [
            {"rule": config_grammar::SECTION_NAMES_RULE, "message": config_grammar::SECTION_NAMES_MESSAGE},
        ],
    }))
    .unwrap_or_default()
}
