//! Each kind the operator follows is watched once, however many controllers follow it: the
//! Barbicans, the BarbicanSecretStores and the Secrets feed both controllers from one watch
//! each (a watch is a long-lived connection, and a full list at every relist).

use std::{collections::BTreeMap, time::Duration};

use barbican_features::{
    examples::apply_examples,
    sim_env::{OPERATOR_AGENT, SimEnv},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_is_watched_once() {
    let env = SimEnv::start(true).await.unwrap();
    apply_examples(&env).await.unwrap();
    // Long enough for every watch to open, far shorter than a watch's timeout (so none has
    // reconnected yet).
    env.let_time_pass(Duration::from_secs(20)).await;
    // The registry's watch of the registration Secrets (one namespace, by label) is another
    // watch of another set of objects; only the watches of a whole kind count here.
    let mut watches: BTreeMap<String, u64> = BTreeMap::new();
    let mut selected: BTreeMap<String, String> = BTreeMap::new();
    for request in env.cluster.requests_since(0) {
        if request.user_agent == OPERATOR_AGENT
            && request.is_watch()
            && !request.path.contains("multicluster-runtime-kubeconfig")
        {
            let (path, query) = request.path.split_once('?').unwrap_or((&request.path, ""));
            let kind = path.rsplit('/').next().unwrap_or_default().to_string();
            *watches.entry(kind.clone()).or_default() += 1;
            let selector = query
                .split('&')
                .find_map(|p| p.strip_prefix("labelSelector="))
                .unwrap_or_default();
            selected.insert(kind, selector.replace("%2F", "/").replace("%3D", "="));
        }
    }
    for kind in [
        "barbicans",
        "barbicansecretstores",
        "secrets",
        "deployments",
        "jobs",
    ] {
        assert_eq!(
            watches.get(kind).copied(),
            Some(1),
            "{kind} is watched once: {watches:?}"
        );
    }
    // The children other applications have many of are selected by the label every child
    // of the operator carries; Secrets and Jobs (the db-sync Job has no labels) are watched
    // whole, as metadata (`controller::runtime::held`).
    for kind in ["deployments", "services", "cronjobs", "networkpolicies"] {
        assert_eq!(
            selected[kind], "app.kubernetes.io/managed-by=barbican-operator",
            "{kind}: {selected:?}"
        );
    }
    for kind in ["secrets", "jobs", "barbicans"] {
        assert_eq!(selected[kind], "", "{kind}: {selected:?}");
    }
}
