//! The simulator's own unit tests, one module per module of `src/`.
//!
//! They live here rather than in `#[cfg(test)]` modules so that the simulator is not compiled a
//! second time as a test harness (docs/performance.md, "the lib-test units").

mod apply;
mod audit;
mod clock;
mod cluster_narrow;
mod cluster_negotiation;
mod cluster_routing;
mod cluster_scale;
mod cluster_watches;
mod controllers;
mod controllers_cronjobs;
mod controllers_jobs;
mod defaults;
mod durations;
mod errors;
mod faults;
mod field_validation;
mod kubelet;
mod kubelet_api_access;
mod kubelet_env;
mod kubelet_firewall;
mod kubelet_id_ranges;
mod kubelet_logs;
mod kubelet_probes;
mod kubelet_proxy;
mod kubelet_rollout;
mod kubelet_sandbox;
mod kubelet_volumes;
mod leftovers;
mod listener;
mod memo;
mod pod_security;
mod portforward;
mod printers;
mod protobuf;
mod protobuf_table;
mod proxy;
mod rbac;
mod resources;
mod schema;
mod selectors;
mod services;
mod store;
mod strategic;
mod table;
mod tokens;
mod validation;
mod validation_cel;
mod versions;
mod webhooks;
mod wire_order;

use barbican_sim::resources::{ResourceType, builtins};

/// The built-in kind served as `plural` (the first version, should there be several).
fn builtin_type(plural: &str) -> ResourceType {
    builtins()
        .into_iter()
        .find(|t| t.plural == plural)
        .unwrap_or_else(|| panic!("no built-in {plural}"))
}
