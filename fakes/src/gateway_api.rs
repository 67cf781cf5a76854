//! A fake Gateway API implementation: installs the Gateway and HTTPRoute CRDs when a scenario
//! wants them (a cluster without them is a cluster without Gateway API), and sets each
//! HTTPRoute's `status.parents[].conditions` (Accepted, ResolvedRefs) for every parentRef:
//! Accepted by default, refused for the routes a scenario names.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use barbican_sim::clock::Clock;
use futures::StreamExt;
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DynamicObject, Patch, PatchParams},
    runtime::{WatchStreamExt, watcher},
};
use serde_json::{Value, json};

/// The controller name written into route status.
pub const CONTROLLER_NAME: &str = "barbican-fakes.example/gateway-controller";

fn routes() -> ApiResource {
    ApiResource {
        group: "gateway.networking.k8s.io".into(),
        version: "v1".into(),
        api_version: "gateway.networking.k8s.io/v1".into(),
        kind: "HTTPRoute".into(),
        plural: "httproutes".into(),
    }
}

/// Routes refused, by `(namespace, name)`, with the reason.
type Refused = Arc<Mutex<BTreeMap<(String, String), String>>>;

/// The running route controller.
pub struct GatewayApi {
    client: Client,
    clock: Clock,
    refused: Refused,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for GatewayApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The status a route should have.
fn parents(route: &DynamicObject, refused: Option<&String>, now: &str) -> Value {
    let generation = route.metadata.generation;
    let (status, reason, message) = match refused {
        Some(reason) => (
            "False",
            reason.as_str(),
            "the route is not allowed by its parent",
        ),
        None => ("True", "Accepted", "Route is accepted"),
    };
    let parents: Vec<Value> = route.data["spec"]["parentRefs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|parent| {
            json!({"parentRef": parent, "controllerName": CONTROLLER_NAME, "conditions": [
                {"type": "Accepted", "status": status, "reason": reason, "message": message,
                    "observedGeneration": generation, "lastTransitionTime": now},
                {"type": "ResolvedRefs", "status": "True", "reason": "ResolvedRefs",
                    "message": "", "observedGeneration": generation, "lastTransitionTime": now},
            ]})
        })
        .collect();
    json!(parents)
}

/// Whether the route's status already says what `wanted` says (times aside).
fn settled(route: &DynamicObject, wanted: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        for parent in v.as_array_mut().into_iter().flatten() {
            for c in parent["conditions"].as_array_mut().into_iter().flatten() {
                c.as_object_mut().map(|c| c.remove("lastTransitionTime"));
            }
        }
        v
    };
    strip(&route.data["status"]["parents"]) == strip(wanted)
}

async fn reconcile(client: &Client, clock: &Clock, refused: &Refused, route: DynamicObject) {
    let key = (route.namespace().unwrap_or_default(), route.name_any());
    let reason = refused
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .cloned();
    let wanted = parents(&route, reason.as_ref(), &clock.rfc3339());
    if settled(&route, &wanted) {
        return;
    }
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &key.0, &routes());
    let _ = api
        .patch_status(
            &key.1,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"parents": wanted}})),
        )
        .await;
}

impl GatewayApi {
    /// Starts the route controller (the CRDs must be installed for routes to exist).
    pub fn start(client: Client, clock: Clock) -> Self {
        let refused: Refused = Arc::default();
        let task = {
            let (client, clock, refused) = (client.clone(), clock.clone(), refused.clone());
            tokio::spawn(async move {
                let api: Api<DynamicObject> = Api::all_with(client.clone(), &routes());
                let mut events = watcher(api, watcher::Config::default())
                    .default_backoff()
                    .applied_objects()
                    .boxed();
                while let Some(event) = events.next().await {
                    if let Ok(route) = event {
                        reconcile(&client, &clock, &refused, route).await;
                    }
                }
            })
        };
        Self {
            client,
            clock,
            refused,
            task,
        }
    }

    /// Refuses (`Some(reason)`, e.g. `NotAllowedByListeners`) or accepts (`None`) a route.
    pub async fn set_refused(&self, namespace: &str, name: &str, reason: Option<&str>) {
        {
            let mut refused = self.refused.lock().unwrap_or_else(|p| p.into_inner());
            match reason {
                Some(reason) => refused.insert((namespace.into(), name.into()), reason.into()),
                None => refused.remove(&(namespace.to_string(), name.to_string())),
            };
        }
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), namespace, &routes());
        if let Ok(Some(route)) = api.get_opt(name).await {
            reconcile(&self.client, &self.clock, &self.refused, route).await;
        }
    }
}
