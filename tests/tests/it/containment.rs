//! A pass that panics is its CR's failure alone. kube-runtime's Controller re-raises a
//! panicking reconcile on the task that runs every pass; wrapped in the operator's
//! `contained`, the panic becomes an error of that object, retried by the error policy, while
//! the other objects (including ones created after the panic) keep reconciling.

use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use barbican_operator::{
    controller::{
        pass::{Error, Next},
        runtime::supervision::contained,
    },
    metrics::Metrics,
};
use barbican_sim::Cluster;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, ResourceExt,
    api::{Patch, PatchParams},
    runtime::{Controller, controller::Action, watcher},
};
use serde_json::json;

struct Context {
    metrics: Metrics,
    reconciled: Mutex<BTreeSet<String>>,
}

async fn pass(object: Arc<ConfigMap>, context: Arc<Context>) -> Result<Action, Error> {
    let name = object.name_any();
    contained("barbican", &context.metrics, async {
        if name == "hostile" {
            panic!("a value only this tenant wrote broke the pass");
        }
        context
            .reconciled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.clone());
        Ok(Next::AwaitChange)
    })
    .await
    .map(|_| Action::await_change())
}

async fn apply(api: &Api<ConfigMap>, name: &str) {
    api.patch(
        name,
        &PatchParams::apply("test"),
        &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_panicking_pass_leaves_the_controller_running_for_every_other_object() {
    let cluster = Cluster::new();
    let client = cluster.client();
    barbican_tests::namespace(&client, "tenants").await;
    let api: Api<ConfigMap> = Api::namespaced(client, "tenants");
    apply(&api, "hostile").await;
    apply(&api, "victim").await;
    let context = Arc::new(Context {
        metrics: Metrics::new(),
        reconciled: Mutex::default(),
    });
    let controller = tokio::spawn(
        Controller::new(api.clone(), watcher::Config::default())
            .run(
                pass,
                |_, _, _| Action::requeue(Duration::from_millis(20)),
                context.clone(),
            )
            .for_each(|_| async {}),
    );
    let reconciled = |name: &str| {
        context
            .reconciled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(name)
    };
    for _ in 0..500 {
        if reconciled("victim") && context.metrics.panics("barbican") >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(reconciled("victim"), "the victim was never reconciled");
    assert!(
        context.metrics.panics("barbican") >= 2,
        "the hostile object was not retried after its panic"
    );
    // Created after the panics: the controller still runs.
    apply(&api, "late").await;
    for _ in 0..500 {
        if reconciled("late") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        reconciled("late"),
        "a CR created after a panic was never reconciled"
    );
    assert!(!controller.is_finished(), "the controller's task ended");
    controller.abort();
}
