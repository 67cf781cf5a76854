//! oslo.log settings.
//!
//! The defaulting webhook materialises the block and the validating webhook checks it, but the
//! renderer does not read it yet: logging options go through `spec.extraConfig` until it is
//! wired.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Layout of log records.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// oslo.log's standard line format. The default.
    #[default]
    Text,
    /// One JSON object per record.
    Json,
}

/// An oslo.log level.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum LogLevel {
    /// Everything.
    Debug,
    /// The default.
    #[default]
    Info,
    /// Warnings and worse.
    Warning,
    /// Errors and worse.
    Error,
    /// Critical only.
    Critical,
}

impl LogLevel {
    /// Every level, in the spelling oslo.log uses.
    pub const ALL: [&'static str; 5] = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"];
}

/// oslo.log output of the API container.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoggingSpec {
    /// `text` (the default) or `json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<LogFormat>,
    /// Root logger level; `INFO` by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<LogLevel>,
    /// oslo.log `debug`, which gates extra-verbose code paths independently of `level`; false
    /// by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<bool>,
    /// Levels of named loggers (oslo.log `default_log_levels`), e.g.
    /// `sqlalchemy.engine: WARNING`. Names must be non-empty and values one of the levels;
    /// the validating webhook checks both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_logger_levels: Option<BTreeMap<String, String>>,
}
