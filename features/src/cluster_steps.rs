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

use barbican_operator::api::barbican::Barbican;

use crate::{
    sim_env::{CLUSTERS_NAMESPACE, OPERATOR_AGENT, SimEnv},
    world::BarbicanWorld,
};

/// The audit marks of the target clusters taken when a scenario last touched a Secret to see
/// who wakes (one per cluster, `touch-mark/<cluster>`).
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
    for name in env.target_names() {
        let mark = env
            .target(&name)
            .expect("a started target")
            .site
            .cluster
            .audit_mark();
        env.remember(&format!("{TOUCH_MARK}/{name}"), mark.to_string());
    }
    let patch = json!({"metadata": {"annotations": {
        "barbican-features.example/touched": env.clock().rfc3339()}}});
    Api::<Secret>::namespaced(target.client.clone(), &namespace)
        .patch(&secret, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("touching the Secret");
}

/// Whether a pass over the Barbican ran since the last touch, within [`WAKE_WINDOW`] of real
/// time and without moving the virtual clock: whether the operator sent its target cluster a
/// request in the Barbican's namespace (a pass reads its children there; on the management
/// cluster a converged pass reads only its watch cache, so it leaves no trace there).
async fn read_since_touch(env: &SimEnv, namespace: &str, name: &str) -> bool {
    let barbican = Api::<Barbican>::namespaced(env.client.clone(), namespace)
        .get(name)
        .await
        .expect("the Barbican");
    let cluster = barbican
        .spec
        .target_cluster_ref
        .expect("the wake-up steps follow a Barbican placed on a target cluster")
        .name;
    let mark: u64 = env
        .remembered(&format!("{TOUCH_MARK}/{cluster}"))
        .expect("a Secret was touched first")
        .parse()
        .expect("a mark");
    let target = env.target(&cluster).expect("the Barbican's target cluster");
    let scope = format!("/namespaces/{namespace}/");
    let deadline = tokio::time::Instant::now() + WAKE_WINDOW;
    loop {
        let read = target.site.cluster.requests_since(mark).iter().any(|e| {
            e.user_agent.starts_with(OPERATOR_AGENT) && !e.is_watch() && e.path.contains(&scope)
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
