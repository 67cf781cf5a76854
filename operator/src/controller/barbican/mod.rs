//! The Barbican controller: its step table, one module per step, the pure builders the steps
//! use, and [`reconcile`] (one pass: finalizer, pipeline, status write).

pub mod backend_tls;
pub mod catalog_plan;
pub mod config;
pub mod credential_env;
pub mod database;
pub mod db_backup;
pub mod db_clean;
pub mod deployment;
pub mod dsn;
pub mod handoffs;
pub mod health;
pub mod hpa;
pub mod http_route;
pub mod job_metrics;
pub mod jobs;
pub mod keystone_catalog;
pub mod labels;
pub mod network_policy;
pub mod pdb;
pub mod pod;
pub mod projection;
pub mod reconcile;
pub mod release;
pub mod secret_stores;
pub mod secrets;
pub mod service;
pub mod state;
pub mod sweep;
pub mod tls;
pub mod triggers;
pub mod uwsgi;
pub mod wakes;

use crate::{
    api::conditions::BarbicanConditionType as T,
    controller::pipeline::{Handoff, Pipeline, step},
};
use handoffs::{ApiTls, AuditTransportDigest, AuthtokenDigest, ConfigSecret, DbConnectionDigest};
use projection::Projection;
use state::State;

/// The kinds a Barbican projects (onto its own cluster or a target) besides the MariaDB CRs,
/// with the other operators' kinds (the Gateway API's HTTPRoute, cert-manager's Certificate)
/// when `with_custom`: what the deletion sweep looks through and what the watches on a target
/// cluster follow.
pub fn projected_kinds(with_custom: bool) -> Vec<kube::api::ApiResource> {
    let mut kinds: Vec<_> = sweep::built_in_kinds()
        .into_iter()
        .map(|(kind, _)| kind)
        .collect();
    if with_custom {
        kinds.push(crate::controller::discovery::http_route_resource());
        kinds.push(crate::controller::discovery::certificate_resource());
        kinds.push(backend_tls::backend_tls_policy_resource());
    }
    kinds
}

/// The step table, in the spec's order. DBClean runs ahead of Database so the clean-up
/// CronJob is suspended for the whole of a migration, during which the pass stops at Database.
/// What each step hands on is a type in [`handoffs`] (or the stores' [`Projection`]), declared
/// by the row that gives it and by each row that needs it; [`Pipeline::check`] proves every
/// need has an earlier giver.
#[rustfmt::skip]
pub fn pipeline() -> Pipeline<State> {
    let (authtoken, dsn) = (Handoff::of::<AuthtokenDigest>(), Handoff::of::<DbConnectionDigest>());
    let (projection, config) = (Handoff::of::<Projection>(), Handoff::of::<ConfigSecret>());
    let (audit, tls) = (Handoff::of::<AuditTransportDigest>(), Handoff::of::<ApiTls>());
    Pipeline {
        sequence: vec![
            step("Secrets",            T::SecretsReady,      secrets::secrets)
                .gives(&[authtoken, audit]).makes(&["Secret"]),
            step("DBConnectionSecret", T::SecretsReady,      secrets::db_connection)
                .gives(&[dsn]).makes(&["Secret"]),
            step("SecretStores",       T::SecretStoresReady, secret_stores::secret_stores)
                .gives(&[projection]),
            step("Config",             T::SecretsReady,      config::config)
                .needs(&[projection]).gives(&[config]).makes(&["Secret"]),
            step("DBClean",            T::DBCleanReady,      db_clean::db_clean)
                .needs(&[config]).makes(&["CronJob"]),
            step("Database",           T::DatabaseReady,     database::database)
                .needs(&[config]).makes(&["Database", "User", "Grant"]),
            step("TLS",                T::TLSReady,          tls::tls)
                .gives(&[tls]).makes(&["Certificate"]),
            step("Deployment",         T::DeploymentReady,   deployment::deployment_step)
                .needs(&[authtoken, audit, dsn, projection, config, tls])
                .makes(&["Deployment", "Service", "PodDisruptionBudget"]),
        ],
        // Run concurrently once the sequence has gone through, each on its own copy.
        parallel: vec![
            step("HTTPRoute",          T::HTTPRouteReady,     http_route::http_route)
                .needs(&[tls]).makes(&["HTTPRoute", "BackendTLSPolicy", "ConfigMap"]),
            step("HealthCheck",        T::BarbicanAPIReady,   health::health_check)
                .needs(&[tls]),
            step("HPA",                T::HPAReady,           hpa::hpa)
                .makes(&["HorizontalPodAutoscaler"]),
            step("NetworkPolicy",      T::NetworkPolicyReady, network_policy::network_policy)
                .needs(&[projection]).makes(&["NetworkPolicy"]),
            step("KeystoneCatalog",    T::KeystoneCatalogReady, keystone_catalog::keystone_catalog),
        ],
    }
}

#[cfg(test)]
mod tests {
    /// Every value a step reads is given by an earlier step, and by one only.
    #[test]
    fn the_step_table_is_well_formed() {
        assert_eq!(super::pipeline().check(), Ok(()));
    }

    /// Every kind the sweep lists is made by a row of the table (or the sweep could never
    /// take it), and every kind a row makes is one the sweep lists (or a child of it would
    /// linger once the spec dropped it).
    #[test]
    fn the_swept_kinds_are_the_kinds_the_steps_make() {
        let table = super::pipeline();
        let mut made: Vec<&str> = table
            .sequence
            .iter()
            .chain(&table.parallel)
            .flat_map(|s| s.makes.clone())
            .collect();
        made.sort_unstable();
        made.dedup();
        let mut swept = super::sweep::swept_kinds();
        swept.sort_unstable();
        assert_eq!(made, swept);
    }
}
