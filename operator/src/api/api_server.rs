//! uWSGI process tuning of the API server.
//!
//! Barbican ships a WSGI application and no eventlet server, so uWSGI is the only process
//! model and there is no launch mode or worker count outside it.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Rule: `httpKeepAliveTimeout` only with keep-alive on (an unset `httpKeepAlive` means on).
pub const UWSGI_KEEPALIVE_TIMEOUT_RULE: &str =
    "!has(self.httpKeepAliveTimeout) || !has(self.httpKeepAlive) || self.httpKeepAlive";
/// Message of [`UWSGI_KEEPALIVE_TIMEOUT_RULE`].
pub const UWSGI_KEEPALIVE_TIMEOUT_MESSAGE: &str =
    "httpKeepAliveTimeout may only be set when httpKeepAlive is true";

/// Worker processes when `processes` is unset.
pub const DEFAULT_UWSGI_PROCESSES: i32 = 2;
/// Threads per worker when `threads` is unset.
pub const DEFAULT_UWSGI_THREADS: i32 = 1;

/// Most uwsgi worker processes per pod: each holds a database connection per thread on a
/// MariaDB server other tenants share, so a tenant cannot size it without bound.
pub const MAX_UWSGI_PROCESSES: i32 = 64;
/// Most threads per uwsgi worker, for the same reason.
pub const MAX_UWSGI_THREADS: i32 = 64;
/// The longest timeout in seconds a tenant may set (an hour): uwsgi's harakiri and keep-alive
/// timeout, the pods' grace period and preStop sleep.
pub const MAX_SECONDS: i32 = 3600;

/// Tuning of the API server process.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiServerSpec {
    /// uWSGI parameters. When present the defaulting webhook fills processes 2, threads 1
    /// and httpKeepAlive true; when absent the reconciler applies the same values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uwsgi: Option<UwsgiSpec>,
}

/// uWSGI application-server parameters, each mapping to one command-line flag.
///
/// Every worker holds at least one database connection once its app has loaded, so the
/// operator sizes the SQL user's `max_user_connections` from `processes` and `threads`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = (UWSGI_KEEPALIVE_TIMEOUT_RULE, UWSGI_KEEPALIVE_TIMEOUT_MESSAGE))]
pub struct UwsgiSpec {
    /// Worker processes (`--processes`); 2 when unset, at most 64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_UWSGI_PROCESSES))]
    pub processes: Option<i32>,
    /// Threads per worker (`--threads`); 1 when unset, at most 64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_UWSGI_THREADS))]
    pub threads: Option<i32>,
    /// `--http-keepalive`; unset means true, an explicit false drops the flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_keep_alive: Option<bool>,
    /// Per-request worker lifetime cap in seconds (`--harakiri`); no flag when unset. Must be
    /// below terminationGracePeriodSeconds − preStopSleepSeconds so a killed request still fits
    /// the drain window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_SECONDS))]
    pub harakiri: Option<i32>,
    /// Idle timeout of keep-alive connections in seconds (`--http-keepalive-timeout`); no flag
    /// when unset. Zero is refused: it would mean unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_SECONDS))]
    pub http_keep_alive_timeout: Option<i32>,
}
