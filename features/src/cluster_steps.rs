//! Steps about target clusters: starting, registering, deregistering and re-keying a second
//! simulated API server on the same virtual clock, pointing the children-and-inputs steps at
//! it, and telling which events wake which Barbican.

use std::time::Duration;

use cucumber::{given, then, when};
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api,
    api::{DeleteParams, Patch, PatchParams},
};
use serde_json::json;

use crate::{
    sim_env::{CLUSTERS_NAMESPACE, OPERATOR_AGENT, SimEnv},
    world::BarbicanWorld,
};

/// The audit mark taken when a scenario last touched a Secret to see who wakes.
const TOUCH_MARK: &str = "touch-mark";
/// Real time a woken pass gets to start (no virtual time moves meanwhile).
const WAKE_WINDOW: Duration = Duration::from_millis(800);

#[given(expr = "the target cluster {string} is running but not registered")]
async fn target_running(world: &mut BarbicanWorld, name: String) {
    world
        .env()
        .start_target(&name, &format!("{name}-operator"))
        .await
        .expect("starting the target cluster");
}

#[given(expr = "the target cluster {string} without the Gateway API is registered")]
async fn target_without_gateway(world: &mut BarbicanWorld, name: String) {
    let env = world.env();
    env.start_target_with(&name, &format!("{name}-operator"), false)
        .await
        .expect("starting the target cluster");
    env.register_target(&name)
        .await
        .expect("registering the target cluster");
}

#[given(expr = "the target cluster {string} is registered")]
#[when(expr = "the target cluster {string} is registered")]
async fn target_registered(world: &mut BarbicanWorld, name: String) {
    world
        .env()
        .register_target(&name)
        .await
        .expect("registering the target cluster");
}

#[given(expr = "the target cluster {string} is registered for the namespaces {string}")]
#[when(expr = "the target cluster {string} is registered for the namespaces {string}")]
async fn target_registered_for(world: &mut BarbicanWorld, name: String, namespaces: String) {
    world
        .env()
        .register_target_for(&name, Some(&namespaces))
        .await
        .expect("registering the target cluster");
}

#[when(expr = "the target cluster {string} is deregistered")]
async fn target_deregistered(world: &mut BarbicanWorld, name: String) {
    Api::<Secret>::namespaced(world.env().client.clone(), CLUSTERS_NAMESPACE)
        .delete(&name, &DeleteParams::default())
        .await
        .expect("deleting the registration Secret");
}

#[given(expr = "the scenario works on the target cluster {string}")]
#[when(expr = "the scenario works on the target cluster {string}")]
async fn focus_target(world: &mut BarbicanWorld, name: String) {
    world
        .env()
        .focus_on(Some(&name))
        .expect("a started target cluster");
}

#[given("the scenario works on the management cluster")]
#[when("the scenario works on the management cluster")]
async fn focus_management(world: &mut BarbicanWorld) {
    world.env().focus_on(None).expect("the management cluster");
}

#[when(expr = "the registration of {string} is rotated to a new token")]
async fn rotate(world: &mut BarbicanWorld, name: String) {
    let env = world.env();
    let target = env.target(&name).expect("a started target cluster");
    let token = {
        let mut current = target
            .operator_token
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        *current = format!("{current}-rotated");
        current.clone()
    };
    // The old token stops working at once: only a re-engaged client gets through.
    target.accept(&[&token]);
    env.register_target(&name)
        .await
        .expect("rewriting the registration");
}

#[given(expr = "the target cluster {string} rejects the operator's token")]
#[when(expr = "the target cluster {string} rejects the operator's token")]
async fn rejects(world: &mut BarbicanWorld, name: String) {
    let target = world.env().target(&name).expect("a started target cluster");
    target.accept(&[]);
}

#[when(expr = "the Secret {string} in {string} on the target cluster {string} changes")]
async fn touch(world: &mut BarbicanWorld, secret: String, namespace: String, cluster: String) {
    let env = world.env();
    let target = env.target(&cluster).expect("a started target cluster");
    env.remember(TOUCH_MARK, env.cluster.audit_mark().to_string());
    let patch = json!({"metadata": {"annotations": {
        "barbican-features.example/touched": env.clock().rfc3339()}}});
    Api::<Secret>::namespaced(target.client.clone(), &namespace)
        .patch(&secret, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("touching the Secret");
}

/// Whether the operator read the Barbican since the last touch, within [`WAKE_WINDOW`] of
/// real time and without moving the virtual clock.
async fn read_since_touch(env: &SimEnv, namespace: &str, name: &str) -> bool {
    let mark: u64 = env
        .remembered(TOUCH_MARK)
        .expect("a Secret was touched first")
        .parse()
        .expect("a mark");
    let path = format!("/namespaces/{namespace}/barbicans/{name}");
    let deadline = tokio::time::Instant::now() + WAKE_WINDOW;
    loop {
        let read = env.cluster.requests_since(mark).iter().any(|e| {
            e.user_agent == OPERATOR_AGENT && e.method == "GET" && e.path.ends_with(&path)
        });
        if read || tokio::time::Instant::now() >= deadline {
            return read;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[then(expr = "the change wakes the Barbican {string} in {string}")]
async fn wakes(world: &mut BarbicanWorld, name: String, namespace: String) {
    assert!(
        read_since_touch(world.env(), &namespace, &name).await,
        "the operator did not look at Barbican {namespace}/{name} after the change"
    );
}

#[then(expr = "the change does not wake the Barbican {string} in {string}")]
async fn does_not_wake(world: &mut BarbicanWorld, name: String, namespace: String) {
    assert!(
        !read_since_touch(world.env(), &namespace, &name).await,
        "the operator looked at Barbican {namespace}/{name} after a change on a cluster it does not name"
    );
}
