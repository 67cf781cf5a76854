//! The ceiling on every number a tenant sets in a Barbican: the schema's `maximum`, re-checked
//! by the webhook as every schema rule is. Workers, threads and replicas size the connections
//! a Barbican holds on the MariaDB and memcached servers other tenants share.

use crate::admission::verdict::Verdict;
use crate::api::Barbican;

/// The schema's ceiling on every number a tenant sets (re-checked here, as for every schema
/// rule): workers, threads and replicas size connections on servers other tenants share.
pub(super) fn check_ceilings(verdict: &mut Verdict, new: &Barbican) {
    use crate::api::{
        api_server::{MAX_SECONDS, MAX_UWSGI_PROCESSES, MAX_UWSGI_THREADS},
        autoscaling::MAX_UTILIZATION,
        db_clean::MAX_RETENTION_DAYS,
        deployment::MAX_REPLICAS,
    };
    let spec = &new.spec;
    let uwsgi = spec.api_server.as_ref().and_then(|a| a.uwsgi.as_ref());
    let deployment = spec.deployment.as_ref();
    let autoscaling = spec.autoscaling.as_ref();
    let int = |v: Option<i32>| v.map(i64::from);
    for (field, value, max) in [
        (
            "spec.apiServer.uwsgi.processes",
            int(uwsgi.and_then(|u| u.processes)),
            MAX_UWSGI_PROCESSES,
        ),
        (
            "spec.apiServer.uwsgi.threads",
            int(uwsgi.and_then(|u| u.threads)),
            MAX_UWSGI_THREADS,
        ),
        (
            "spec.apiServer.uwsgi.harakiri",
            int(uwsgi.and_then(|u| u.harakiri)),
            MAX_SECONDS,
        ),
        (
            "spec.apiServer.uwsgi.httpKeepAliveTimeout",
            int(uwsgi.and_then(|u| u.http_keep_alive_timeout)),
            MAX_SECONDS,
        ),
        (
            "spec.deployment.replicas",
            int(deployment.and_then(|d| d.replicas)),
            MAX_REPLICAS,
        ),
        (
            "spec.deployment.terminationGracePeriodSeconds",
            deployment.and_then(|d| d.termination_grace_period_seconds),
            MAX_SECONDS,
        ),
        (
            "spec.deployment.preStopSleepSeconds",
            deployment.and_then(|d| d.pre_stop_sleep_seconds),
            MAX_SECONDS,
        ),
        (
            "spec.autoscaling.minReplicas",
            int(autoscaling.and_then(|a| a.min_replicas)),
            MAX_REPLICAS,
        ),
        (
            "spec.autoscaling.maxReplicas",
            int(autoscaling.map(|a| a.max_replicas)),
            MAX_REPLICAS,
        ),
        (
            "spec.autoscaling.targetCPUUtilization",
            int(autoscaling.and_then(|a| a.target_cpu_utilization)),
            MAX_UTILIZATION,
        ),
        (
            "spec.autoscaling.targetMemoryUtilization",
            int(autoscaling.and_then(|a| a.target_memory_utilization)),
            MAX_UTILIZATION,
        ),
        (
            "spec.database.replicas",
            int(spec.database.replicas),
            MAX_REPLICAS,
        ),
        (
            "spec.cache.replicas",
            int(spec.cache.replicas),
            MAX_REPLICAS,
        ),
        (
            "spec.dbClean.retentionDays",
            int(spec.db_clean.as_ref().and_then(|d| d.retention_days)),
            MAX_RETENTION_DAYS,
        ),
    ] {
        if let Some(value) = value.filter(|v| *v > i64::from(max)) {
            verdict.reject(field, value, format!("must be at most {max}"));
        }
    }
}
