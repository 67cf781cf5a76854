//! The loop every fake controller shares: watch one kind through kube::Client, and for each
//! object, after a delay on the cluster's clock, set a condition (Ready, Available, ...) True;
//! hold chosen objects not-ready (an outage); add a finalizer and, on deletion, remove it after
//! a teardown delay. What differs per fake is a [`Behaviour`] and an optional hook.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use barbican_sim::clock::Clock;
use futures::StreamExt;
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DynamicObject, Patch, PatchParams},
    runtime::{WatchStreamExt, watcher},
};
use serde_json::{Value, json};

/// How one fake controller behaves; tests may change it while it runs.
#[derive(Clone, Debug)]
pub struct Behaviour {
    /// The condition it sets (`Ready`, `Available`).
    pub condition: &'static str,
    /// The reason when True.
    pub ready_reason: &'static str,
    /// How long after an object appears the condition turns True.
    pub ready_after: Duration,
    /// The finalizer it adds, if any; on deletion it is removed after `teardown`.
    pub finalizer: Option<String>,
    /// How long a deletion takes.
    pub teardown: Duration,
}

impl Behaviour {
    /// Ready at once, no finalizer.
    pub fn ready(condition: &'static str, reason: &'static str) -> Self {
        Self {
            condition,
            ready_reason: reason,
            ready_after: Duration::ZERO,
            finalizer: None,
            teardown: Duration::ZERO,
        }
    }
}

/// Something a fake does beyond the condition, when an object is (or becomes) ready.
pub type Hook = Arc<
    dyn Fn(DynamicObject) -> futures::future::BoxFuture<'static, Result<(), String>> + Send + Sync,
>;

/// What a fake does for real (a database created in a real server, say): `realize` runs
/// before an object turns ready and again on each later change; an error keeps it not-ready
/// (reason `Failed`, the error as the message) and is retried. `remove` runs before the
/// finalizer is released, retried until it succeeds.
pub trait Realizer: Send + Sync + 'static {
    /// Makes `object` real (idempotent).
    fn realize(
        &self,
        object: DynamicObject,
    ) -> futures::future::BoxFuture<'static, Result<(), String>>;
    /// Takes `object` away for real (idempotent).
    fn remove(
        &self,
        object: DynamicObject,
    ) -> futures::future::BoxFuture<'static, Result<(), String>>;
}

/// How long a failed realization or removal waits before the next attempt.
pub const REALIZE_RETRY: Duration = Duration::from_secs(10);

/// `(namespace, name)`.
type Key = (String, String);

struct Inner {
    api_resource: ApiResource,
    client: Client,
    clock: Clock,
    behaviour: Mutex<Behaviour>,
    /// Objects held not-ready, with the reason and message to show.
    held: Mutex<BTreeMap<Key, (String, String)>>,
    /// Objects with a pending "becomes ready" or "teardown" task.
    pending: Mutex<BTreeSet<(Key, bool)>>,
    hook: Option<Hook>,
    realizer: Option<Arc<dyn Realizer>>,
}

/// A running fake controller. Dropping it stops it.
pub struct FakeController {
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeController {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn key(object: &DynamicObject) -> Key {
    (object.namespace().unwrap_or_default(), object.name_any())
}

impl FakeController {
    /// Starts watching `api_resource` (cluster-wide) through `client`.
    pub fn start(
        client: Client,
        clock: Clock,
        api_resource: ApiResource,
        behaviour: Behaviour,
        hook: Option<Hook>,
    ) -> Self {
        Self::start_realizing(client, clock, api_resource, behaviour, hook, None)
    }

    /// Like [`FakeController::start`], doing what `realizer` does for real.
    pub fn start_realizing(
        client: Client,
        clock: Clock,
        api_resource: ApiResource,
        behaviour: Behaviour,
        hook: Option<Hook>,
        realizer: Option<Arc<dyn Realizer>>,
    ) -> Self {
        let inner = Arc::new(Inner {
            api_resource,
            client,
            clock,
            behaviour: Mutex::new(behaviour),
            held: Mutex::new(BTreeMap::new()),
            pending: Mutex::new(BTreeSet::new()),
            hook,
            realizer,
        });
        let watching = inner.clone();
        let task = tokio::spawn(async move {
            let api: Api<DynamicObject> =
                Api::all_with(watching.client.clone(), &watching.api_resource);
            let mut events = watcher(api, watcher::Config::default())
                .default_backoff()
                .applied_objects()
                .boxed();
            while let Some(event) = events.next().await {
                if let Ok(object) = event {
                    react(&watching, object).await;
                }
            }
        });
        Self { inner, task }
    }

    /// Changes how it behaves from now on.
    pub fn set_behaviour(&self, change: impl FnOnce(&mut Behaviour)) {
        change(
            &mut self
                .inner
                .behaviour
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
    }

    /// Holds an object not-ready (condition False with `reason`), as during an outage.
    pub async fn hold(&self, namespace: &str, name: &str, reason: &str, message: &str) {
        self.inner
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                (namespace.into(), name.into()),
                (reason.into(), message.into()),
            );
        let _ = set_condition(&self.inner, namespace, name, false, reason, message).await;
    }

    /// Lets a held object become ready again.
    pub async fn release(&self, namespace: &str, name: &str) {
        self.inner
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(namespace.to_string(), name.to_string()));
        let behaviour = self.behaviour();
        let _ = set_condition(
            &self.inner,
            namespace,
            name,
            true,
            behaviour.ready_reason,
            "",
        )
        .await;
    }

    /// How it behaves now.
    pub fn behaviour(&self) -> Behaviour {
        self.inner
            .behaviour
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn api_for(inner: &Inner, namespace: &str) -> Api<DynamicObject> {
    if namespace.is_empty() {
        Api::all_with(inner.client.clone(), &inner.api_resource)
    } else {
        Api::namespaced_with(inner.client.clone(), namespace, &inner.api_resource)
    }
}

/// Whether `condition` was set for the object's current generation (its spec unchanged since).
fn observed_current(object: &DynamicObject, condition: &str) -> bool {
    let observed = object.data["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == condition))
        .and_then(|c| c["observedGeneration"].as_i64());
    observed.is_some() && observed == object.metadata.generation
}

fn condition_holds(object: &DynamicObject, condition: &str) -> Option<bool> {
    object.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == condition)
        .map(|c| c["status"] == "True")
}

/// Writes the condition (replacing the status's condition of that type).
async fn set_condition(
    inner: &Inner,
    namespace: &str,
    name: &str,
    ready: bool,
    reason: &str,
    message: &str,
) -> Result<(), kube::Error> {
    let behaviour = inner
        .behaviour
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let api = api_for(inner, namespace);
    let Some(current) = api.get_opt(name).await? else {
        return Ok(());
    };
    let mut conditions: Vec<Value> = current.data["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c["type"] != behaviour.condition)
        .collect();
    conditions.push(json!({
        "type": behaviour.condition, "status": if ready { "True" } else { "False" },
        "reason": reason, "message": message,
        "lastTransitionTime": inner.clock.rfc3339(),
        "observedGeneration": current.metadata.generation,
    }));
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"conditions": conditions}})),
    )
    .await?;
    Ok(())
}

/// Claims a pending task for `key`; false when one is already scheduled.
fn claim(inner: &Inner, key: &Key, teardown: bool) -> bool {
    inner
        .pending
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert((key.clone(), teardown))
}

fn unclaim(inner: &Inner, key: &Key, teardown: bool) {
    inner
        .pending
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&(key.clone(), teardown));
}

async fn react(inner: &Arc<Inner>, object: DynamicObject) {
    let behaviour = inner
        .behaviour
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let key = key(&object);
    let finalizers = object.finalizers().to_vec();
    if object.metadata.deletion_timestamp.is_some() {
        let Some(finalizer) = behaviour.finalizer.clone() else {
            return;
        };
        if !finalizers.contains(&finalizer) || !claim(inner, &key, true) {
            return;
        }
        let inner = inner.clone();
        tokio::spawn(async move {
            inner.clock.sleep(behaviour.teardown).await;
            if let Some(realizer) = &inner.realizer {
                while realizer.remove(object.clone()).await.is_err() {
                    inner.clock.sleep(REALIZE_RETRY).await;
                }
            }
            let api = api_for(&inner, &key.0);
            if let Ok(Some(current)) = api.get_opt(&key.1).await {
                let left: Vec<String> = current
                    .finalizers()
                    .iter()
                    .filter(|f| **f != finalizer)
                    .cloned()
                    .collect();
                let _ = api
                    .patch(
                        &key.1,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"metadata": {"finalizers": left,
                            "resourceVersion": current.metadata.resource_version}})),
                    )
                    .await;
            }
            unclaim(&inner, &key, true);
        });
        return;
    }
    if let Some(finalizer) = &behaviour.finalizer
        && !finalizers.contains(finalizer)
    {
        let mut with = finalizers.clone();
        with.push(finalizer.clone());
        let _ = api_for(inner, &key.0)
            .patch(
                &key.1,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"finalizers": with}})),
            )
            .await;
    }
    let held = inner
        .held
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .cloned();
    if let Some((reason, message)) = held {
        if condition_holds(&object, behaviour.condition) != Some(false) {
            let _ = set_condition(inner, &key.0, &key.1, false, &reason, &message).await;
        }
        return;
    }
    if condition_holds(&object, behaviour.condition) == Some(true) {
        // Realized already for this generation: the event is the condition's own write.
        if let Some(realizer) = &inner.realizer
            && !observed_current(&object, behaviour.condition)
            && let Err(message) = realizer.realize(object.clone()).await
        {
            let _ = set_condition(inner, &key.0, &key.1, false, "Failed", &message).await;
            return;
        }
        if let Some(hook) = &inner.hook {
            let _ = hook(object).await;
        }
        return;
    }
    if !claim(inner, &key, false) {
        return;
    }
    let inner = inner.clone();
    tokio::spawn(async move {
        inner.clock.sleep(behaviour.ready_after).await;
        let still_held = inner
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(&key);
        if !still_held {
            realized(&inner, &key, object).await;
        }
        unclaim(&inner, &key, false);
    });
}

/// Turns `object` ready once its realizer (if any) has made it real, retrying a failed
/// realization every [`REALIZE_RETRY`] with the error shown as `Failed`, until it succeeds, the
/// object is held or deleted.
async fn realized(inner: &Arc<Inner>, key: &Key, object: DynamicObject) {
    let behaviour = inner
        .behaviour
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let Some(realizer) = &inner.realizer else {
        let _ = set_condition(inner, &key.0, &key.1, true, behaviour.ready_reason, "").await;
        return;
    };
    let mut object = object;
    loop {
        match realizer.realize(object.clone()).await {
            Ok(()) => {
                let _ =
                    set_condition(inner, &key.0, &key.1, true, behaviour.ready_reason, "").await;
                return;
            }
            Err(message) => {
                let _ = set_condition(inner, &key.0, &key.1, false, "Failed", &message).await;
            }
        }
        inner.clock.sleep(REALIZE_RETRY).await;
        let held = inner
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(key);
        match api_for(inner, &key.0).get_opt(&key.1).await {
            Ok(Some(current)) if !held && current.metadata.deletion_timestamp.is_none() => {
                object = current;
            }
            _ => return,
        }
    }
}
