//! Runs the Barbican controller: the watches, the passes, and the requeues.
//!
//! Requeues ride on the operator's [`Clock`], not on kube-runtime's scheduler (which sleeps on
//! tokio time): a pass returns "wait for a change" to kube-runtime and this module sleeps on the
//! clock before feeding the object back in. On a virtual clock, "10 seconds later" then happens
//! when the scenario says so, and never on the wall clock.

use std::{
    collections::HashMap,
    future::Future,
    hash::{Hash, Hasher},
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::{FutureExt, StreamExt, channel::mpsc};
use k8s_openapi::api::core::v1::Secret;
use kube::core::PartialObjectMeta;
use kube::{
    Client, Resource, ResourceExt,
    api::DynamicObject,
    runtime::{
        Controller, WatchStreamExt,
        controller::{self, Action},
        reflector::{self, ObjectRef},
        watcher,
    },
};

use super::{
    barbican::{
        health::PROBE_TIMEOUT,
        reconcile::reconcile,
        triggers::{
            Wiring, own_children, own_http_routes, watch_attached_stores, watch_eso_stores,
            watch_input_secrets, watch_mariadb,
        },
        wakes,
    },
    cache::{Cache, slim},
    discovery::{probe_gateway_api, serves},
    env::Env,
    events::Events,
    fanout::{WatchEvents, fan_out},
    pass::{Error, Next},
    probe_cache::ProbeCache,
    scope::{WatchScope, dynamic, typed},
    secretstore::verified::Verified,
};
use crate::{
    api::{barbican::Barbican, secret_store::BarbicanSecretStore},
    clock::Clock,
    metrics::Metrics,
    resolve::Resolve,
};

/// The periodic re-reconcile of every CR (the reference's `--sync-period`).
pub const RESYNC: Duration = Duration::from_secs(600);
/// How many passes of each controller run at once by default (`--max-concurrent-reconciles`).
/// Unbounded, a thousand CRs created together start a thousand passes, each with its reads,
/// writes and OpenBao logins in flight: memory and the peers' load grow with N instead of
/// staying flat, and the cluster converges later, not sooner.
pub const CONCURRENT_RECONCILES: u16 = 16;
/// The first retry after a failed pass; it doubles per consecutive failure.
pub const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// The longest retry interval after failures.
pub const BACKOFF_MAX: Duration = Duration::from_secs(300);

/// What the controller is started with besides the client.
#[derive(Clone)]
pub struct Settings {
    /// Where time is read.
    pub clock: Arc<dyn Clock>,
    /// Name resolution for the health probe.
    pub resolver: Arc<dyn Resolve>,
    /// The metrics registry.
    pub metrics: Arc<Metrics>,
    /// The namespace the operator runs in.
    pub operator_namespace: String,
    /// This replica's name, on events.
    pub instance: String,
    /// How long a health probe may take.
    pub probe_timeout: Duration,
    /// How often every CR is reconciled regardless of events.
    pub resync: Duration,
    /// The registered target clusters.
    pub clusters: crate::clusters::Registry,
    /// The namespaces watched on the management cluster.
    pub watch_scope: WatchScope,
    /// How many passes of each controller run at once (0: unbounded).
    pub concurrency: u16,
}

impl Settings {
    /// Production settings on `clock` and `resolver`.
    pub fn new(clock: Arc<dyn Clock>, resolver: Arc<dyn Resolve>, metrics: Arc<Metrics>) -> Self {
        let clusters = crate::clusters::Registry::default().counting(metrics.count_requests());
        Self {
            clock,
            resolver,
            metrics,
            operator_namespace: "barbican-system".into(),
            instance: "barbican-operator".into(),
            probe_timeout: PROBE_TIMEOUT,
            resync: RESYNC,
            clusters,
            watch_scope: WatchScope::All,
            concurrency: CONCURRENT_RECONCILES,
        }
    }
}

/// The retry interval after `failures` consecutive failed passes.
pub fn backoff(failures: u32) -> Duration {
    BACKOFF_BASE
        .saturating_mul(2u32.saturating_pow(failures.saturating_sub(1)))
        .min(BACKOFF_MAX)
}

/// The pending wake-up of each CR: which scheduling it is (so a fired task removes only its
/// own entry) and its task.
type Pending<K> = HashMap<ObjectRef<K>, (u64, tokio::task::AbortHandle)>;

/// Requeues on the operator's clock: at most one pending wake-up per CR, the newest wins.
/// Both maps stay as small as the set of live CRs: a wake-up's entry goes when it fires, and a
/// deleted CR's entries go when its deletion is observed ([`Requeues::forget`]).
struct Requeues<K: Resource<DynamicType = ()>> {
    clock: Arc<dyn Clock>,
    wake: mpsc::UnboundedSender<ObjectRef<K>>,
    pending: Arc<Mutex<Pending<K>>>,
    failures: Mutex<HashMap<ObjectRef<K>, u32>>,
    scheduled: std::sync::atomic::AtomicU64,
}

impl<K: Resource<DynamicType = ()> + 'static> Requeues<K> {
    /// Requeues waking through a new channel, and the stream of its wake-ups.
    fn new(clock: Arc<dyn Clock>) -> (Self, mpsc::UnboundedReceiver<ObjectRef<K>>) {
        let (wake, woken) = mpsc::unbounded();
        (
            Self {
                clock,
                wake,
                pending: Arc::default(),
                failures: Mutex::default(),
                scheduled: Default::default(),
            },
            woken,
        )
    }

    fn schedule(&self, key: ObjectRef<K>, after: Duration) {
        let id = self
            .scheduled
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (sleep, wake, target) = (self.clock.sleep(after), self.wake.clone(), key.clone());
        let pending = self.pending.clone();
        // Held until the entry is in the map, so a zero-length sleep cannot fire before it.
        let mut entries = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let task = tokio::spawn(async move {
            sleep.await;
            {
                let mut entries = pending.lock().unwrap_or_else(|p| p.into_inner());
                if entries
                    .get(&target)
                    .is_some_and(|(current, _)| *current == id)
                {
                    entries.remove(&target);
                }
            }
            let _ = wake.unbounded_send(target);
        });
        if let Some((_, previous)) = entries.insert(key, (id, task.abort_handle())) {
            previous.abort();
        }
    }

    /// Drops what is kept for a CR that is gone: its pending wake-up and its failure count.
    fn forget(&self, key: &ObjectRef<K>) {
        if let Some((_, task)) = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key)
        {
            task.abort();
        }
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }

    /// How many CRs have something kept (a pending wake-up or a failure count).
    #[cfg(test)]
    fn kept(&self) -> usize {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        pending
            .keys()
            .chain(failures.keys())
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    fn failed(&self, key: &ObjectRef<K>) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let count = failures.entry(key.clone()).or_default();
        *count = count.saturating_add(1);
        backoff(*count)
    }

    fn succeeded(&self, key: &ObjectRef<K>) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }
}

/// What the passes of one controller share: the environment, the requeues, the resync, and
/// the controller's own memory across passes (`S`; the store controller's verdicts).
struct Runtime<K: Resource<DynamicType = ()>, S = ()> {
    env: Arc<Env>,
    requeues: Requeues<K>,
    resync: Duration,
    state: S,
}

impl<K: Resource<DynamicType = ()> + 'static, S> Runtime<K, S> {
    /// Schedules the next pass after `outcome`: when the pass asked (never later than the
    /// resync), at the resync when it waits for a change, with backoff after a failure.
    fn settle(&self, key: ObjectRef<K>, outcome: &Result<Next, Error>) {
        match outcome {
            Ok(next) => {
                self.requeues.succeeded(&key);
                let after = match next {
                    Next::After(after) => (*after).min(self.resync),
                    Next::AwaitChange => self.resync,
                };
                self.requeues.schedule(key, after);
            }
            Err(error) => {
                let backoff = self.requeues.failed(&key);
                let after = error.retry_cap().map_or(backoff, |cap| backoff.min(cap));
                tracing::warn!(object = %key, %error, retry_in = ?after, "reconcile failed");
                self.requeues.schedule(key, after);
            }
        }
    }
}

/// Runs one pass, containing a panic: it becomes this CR's failure alone ([`Error::Panicked`],
/// counted by controller and retried with backoff), never the end of the task that runs every
/// other CR's passes. kube-runtime re-raises a panicking reconcile on the controller's task,
/// which would stop both controllers while the process looked healthy.
pub async fn contained(
    controller: &'static str,
    metrics: &Metrics,
    pass: impl Future<Output = Result<Next, Error>>,
) -> Result<Next, Error> {
    match std::panic::AssertUnwindSafe(pass).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(_) => {
            // The payload is not logged: it may quote a tenant's input. The panic hook the
            // binary installs logs where it happened.
            metrics.panicked(controller);
            Err(Error::Panicked)
        }
    }
}

async fn pass(barbican: Arc<Barbican>, runtime: Arc<Runtime<Barbican>>) -> Result<Action, Error> {
    // Not before the watch cache's first lists (see [`super::cache`]).
    runtime.env.cache.listed().await;
    let key = ObjectRef::from_obj(barbican.as_ref());
    let outcome = contained(
        "barbican",
        &runtime.env.metrics,
        reconcile(runtime.env.clone(), barbican),
    )
    .await;
    runtime.settle(key, &outcome);
    outcome.map(|_| Action::await_change())
}

/// What wakes the controller for a change to the CR itself: spec (generation), labels,
/// annotations, finalizers, deletion. A status-only update changes none of them.
pub fn meaningful_change<K: Resource>(object: &K) -> Option<u64> {
    let meta = object.meta();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    meta.generation.hash(&mut hasher);
    meta.labels.hash(&mut hasher);
    meta.annotations.hash(&mut hasher);
    meta.finalizers.hash(&mut hasher);
    meta.deletion_timestamp.is_some().hash(&mut hasher);
    meta.uid.hash(&mut hasher);
    Some(hasher.finish())
}

/// Notes each CR the watch delivers (see [`super::cache::OwnWrites`]); a deleted one is forgotten.
fn observe<K: Resource>(
    env: Arc<Env>,
) -> impl Fn(&Result<watcher::Event<K>, watcher::Error>) + Send + 'static {
    move |event| match event {
        Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => {
            env.writes.observed(object)
        }
        // The store now holds what the list found: no older than any write answered before
        // the list began (a watch that fell behind relists and skips the versions between).
        Ok(watcher::Event::InitDone) => env.writes.relisted(),
        Ok(watcher::Event::Delete(object)) => {
            if let Some(uid) = object.meta().uid.as_deref() {
                env.writes.forget(uid);
            }
        }
        _ => {}
    }
}

/// Forgets the requeue state of each CR whose deletion the watch delivers.
fn forget_deleted<K: Resource<DynamicType = ()> + 'static, S: Send + Sync + 'static>(
    runtime: Arc<Runtime<K, S>>,
) -> impl Fn(&Result<watcher::Event<K>, watcher::Error>) + Send + 'static {
    move |event| {
        if let Ok(watcher::Event::Delete(object)) = event {
            runtime.requeues.forget(&ObjectRef::from_obj(object));
        }
    }
}

/// Runs the Barbican controller and the BarbicanSecretStore controller beside it (one manager,
/// one client, one set of metrics) until `shutdown` completes.
pub async fn run_barbican_controller(
    client: Client,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) -> Result<(), Stopped> {
    let shutdown = shutdown.shared();
    let gateway_api = probe_gateway_api(&client).await;
    let (stores, store_writer) = reflector::store();
    let (barbicans, writer) = reflector::store();
    let cache = Cache::default();
    let env = Arc::new(Env {
        client: client.clone(),
        clock: settings.clock.clone(),
        resolver: settings.resolver.clone(),
        metrics: settings.metrics.clone(),
        probes: ProbeCache::default(),
        gateway_api: gateway_api.clone(),
        events: Events::new(client.clone(), settings.clock.clone(), &settings.instance),
        operator_namespace: settings.operator_namespace.clone(),
        probe_timeout: settings.probe_timeout,
        stores: stores.clone(),
        barbicans: barbicans.clone(),
        cache: cache.clone(),
        writes: Default::default(),
        clusters: settings.clusters.clone(),
    });
    let (store_requeues, store_woken) = Requeues::new(settings.clock.clone());
    let (requeues, woken) = Requeues::new(settings.clock.clone());
    let runtime = Arc::new(Runtime {
        env,
        requeues,
        resync: settings.resync,
        state: (),
    });
    let store_runtime = Arc::new(Runtime {
        env: runtime.env.clone(),
        requeues: store_requeues,
        resync: settings.resync,
        state: Verified::default(),
    });
    let (remote_barbicans, remotely_woken) = mpsc::unbounded();
    let (remote_stores, remotely_woken_stores) = mpsc::unbounded();

    let config = watcher::Config::default();
    let scope = settings.watch_scope.clone();
    // The Barbicans, the stores and the Secrets are followed by both controllers: one watch
    // each, fanned out (see [`fan_out`]).
    let [barbican_events, parent_events] = fan_out(
        scope
            .events(typed::<Barbican>(&client), &config)
            .modify(slim)
            .reflect(writer)
            .inspect(observe(runtime.env.clone()))
            .inspect({
                // A Barbican that never held a finalizer (gated at create) leaves without a
                // release: its series go when its deletion is observed.
                let env = runtime.env.clone();
                move |event| {
                    if let Ok(watcher::Event::Delete(barbican)) = event {
                        env.metrics.forget_barbican(
                            &barbican.name_any(),
                            &barbican.namespace().unwrap_or_default(),
                        );
                    }
                }
            })
            .inspect(forget_deleted(runtime.clone())),
    );
    let [store_events, own_events] = fan_out(
        scope
            .events(typed::<BarbicanSecretStore>(&client), &config)
            .modify(slim)
            .reflect(store_writer)
            .inspect(observe(runtime.env.clone()))
            .inspect({
                // A deleted store is never reconciled again (it left the cache): its deletion
                // is observed here, and its re-mint series and verdict go with it.
                let store_runtime = store_runtime.clone();
                move |event| {
                    if let Ok(watcher::Event::Delete(store)) = event {
                        super::secretstore::reconcile::forget(
                            &store_runtime.env,
                            &store_runtime.state,
                            store,
                        );
                    }
                }
            })
            .inspect(forget_deleted(store_runtime.clone())),
    );
    let [secret_events, owned_secret_events] = fan_out(
        scope
            .events(typed::<PartialObjectMeta<Secret>>(&client), &config)
            .modify(slim)
            .reflect(cache.metadata_writer::<Secret>())
            .inspect(cache.forget_deleted::<Secret>()),
    );
    let main = barbican_events
        .applied_objects()
        .predicate_filter(meaningful_change, Default::default());
    let store_stream = store_events.touched_objects();

    let barbican_cache = barbicans.clone();
    let wiring = Wiring {
        client: client.clone(),
        scope: scope.clone(),
        config: config.clone(),
        cache: cache.clone(),
        barbicans: barbicans.clone(),
    };
    let controller = Controller::for_stream(main, barbicans.clone());
    let controller = own_children(controller, &wiring);
    let controller = watch_attached_stores(controller, store_stream);
    let controller = watch_input_secrets(controller, secret_events, &wiring, stores.clone());
    let controller = controller.reconcile_on(woken).reconcile_on(remotely_woken);
    let controller = own_http_routes(controller, &wiring, &gateway_api);
    let controller = watch_mariadb(controller, &wiring).await;
    let controller = watch_eso_stores(controller, &wiring).await;
    tracing::info!(gateway_api = ?gateway_api, "Barbican controller starting");
    let barbicans = controller
        .with_config(controller::Config::default().concurrency(settings.concurrency))
        .graceful_shutdown_on(shutdown.clone())
        .run(pass, |_, _, _| Action::await_change(), runtime.clone())
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "controller event");
            }
        });
    let remote = super::remote::run_remote_watches(
        settings.clusters.clone(),
        barbican_cache.clone(),
        stores.clone(),
        super::remote::Wakes {
            barbicans: remote_barbicans,
            stores: remote_stores,
        },
        shutdown.clone(),
    );
    let stores = run_secret_store_controller(
        client,
        scope,
        store_runtime,
        store_woken,
        settings.concurrency,
        Shared {
            stores,
            barbicans: barbican_cache,
            own: own_events,
            parents: parent_events,
            secrets: owned_secret_events,
        },
        remotely_woken_stores,
        shutdown.clone(),
    );
    supervise(
        [
            ("the Barbican controller", barbicans.boxed()),
            ("the BarbicanSecretStore controller", stores.boxed()),
            ("the target-cluster watches", remote.boxed()),
        ],
        shutdown,
    )
    .await
}

/// Why the controllers returned before the shutdown asked them to.
#[derive(Debug, thiserror::Error)]
#[error("{0} ended before the operator was asked to stop")]
pub struct Stopped(pub &'static str);

/// Runs `parts` each on a task of its own until all end after `shutdown`; the first to end
/// (or panic) before it stops the rest and is returned: a process whose controllers are gone
/// must exit, so Kubernetes restarts it, rather than renew its Lease and answer `/healthz`.
pub async fn supervise(
    parts: impl IntoIterator<Item = (&'static str, futures::future::BoxFuture<'static, ()>)>,
    shutdown: futures::future::Shared<impl Future<Output = ()> + Send + 'static>,
) -> Result<(), Stopped> {
    let mut running = tokio::task::JoinSet::new();
    for (what, part) in parts {
        running.spawn(part.map(move |()| what));
    }
    while let Some(ended) = running.join_next().await {
        if shutdown.clone().now_or_never().is_some() {
            continue;
        }
        running.abort_all();
        let what = ended.unwrap_or("a controller task (it panicked)");
        tracing::error!(part = what, "ended before the operator was asked to stop");
        return Err(Stopped(what));
    }
    Ok(())
}

/// What the BarbicanSecretStore controller shares with the Barbican controller: the two
/// caches, and its halves of the watches of the stores, the Barbicans and the Secrets.
struct Shared {
    stores: reflector::Store<BarbicanSecretStore>,
    barbicans: reflector::Store<Barbican>,
    own: WatchEvents<BarbicanSecretStore>,
    parents: WatchEvents<Barbican>,
    secrets: WatchEvents<PartialObjectMeta<Secret>>,
}

async fn store_pass(
    store: Arc<BarbicanSecretStore>,
    runtime: Arc<Runtime<BarbicanSecretStore, Verified>>,
) -> Result<Action, Error> {
    // Not before the watch cache's first lists (see [`super::cache`]).
    runtime.env.cache.listed().await;
    let key = ObjectRef::from_obj(store.as_ref());
    let outcome = contained(
        "secretstore",
        &runtime.env.metrics,
        super::secretstore::reconcile::reconcile(runtime.env.clone(), &runtime.state, store),
    )
    .await;
    runtime.settle(key, &outcome);
    outcome.map(|_| Action::await_change())
}

/// The BarbicanSecretStore controller: the stores, the `<store>-approle` Secrets they own, the
/// parent Barbicans and the OpenBaoClusters (both without a generation filter: their status
/// flips are the signal), and requeues on the clock.
#[allow(clippy::too_many_arguments)]
async fn run_secret_store_controller(
    client: Client,
    scope: WatchScope,
    runtime: Arc<Runtime<BarbicanSecretStore, Verified>>,
    woken: mpsc::UnboundedReceiver<ObjectRef<BarbicanSecretStore>>,
    concurrency: u16,
    shared: Shared,
    remotely_woken: mpsc::UnboundedReceiver<ObjectRef<BarbicanSecretStore>>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let env_cache = runtime.env.cache.clone();
    let config = watcher::Config::default();
    let Shared {
        stores,
        barbicans,
        own,
        parents,
        secrets,
    } = shared;
    let main = own
        .applied_objects()
        .predicate_filter(meaningful_change, Default::default());
    let mut controller = Controller::for_stream(main, stores.clone())
        .owns_stream(secrets.touched_objects())
        .watches_stream(parents.touched_objects(), {
            let stores = stores.clone();
            move |barbican: Barbican| {
                let namespace = barbican.namespace().unwrap_or_default();
                wakes::stores_of_barbican(&namespace, &barbican.name_any(), &stores.state())
            }
        })
        .reconcile_on(woken)
        .reconcile_on(remotely_woken);
    let instances = super::secretstore::managed::openbao_cluster_resource();
    if serves(&client, &instances).await.unwrap_or(false) {
        controller = controller.watches_stream_with(
            scope.cached(
                dynamic(&client, &instances),
                &config,
                env_cache.dynamic_writer(&instances),
            ),
            move |cluster: DynamicObject| {
                // Only the stores whose parent is placed on this (the management) cluster.
                wakes::stores_of_instance(
                    cluster.namespace().as_deref().unwrap_or_default(),
                    &cluster.name_any(),
                    &wakes::stores_placed_on(&stores.state(), &barbicans.state(), None),
                )
            },
            instances,
        );
    }
    tracing::info!("BarbicanSecretStore controller starting");
    controller
        .with_config(controller::Config::default().concurrency(concurrency))
        .graceful_shutdown_on(shutdown)
        .run(store_pass, |_, _, _| Action::await_change(), runtime)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "secret store controller event");
            }
        })
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_pass_is_that_crs_failure_alone_and_the_next_pass_runs() {
        let metrics = Metrics::new();
        let panicked = contained("barbican", &metrics, async {
            if metrics.panics("barbican") == 0 {
                panic!("a tenant's value broke the pass");
            }
            Ok(Next::AwaitChange)
        })
        .await;
        assert!(matches!(panicked, Err(Error::Panicked)), "{panicked:?}");
        assert_eq!(metrics.panics("barbican"), 1);
        assert!(
            metrics
                .render()
                .contains("barbican_operator_reconcile_panics_total{controller=\"barbican\"} 1")
        );
        // The same task goes on: the next pass (of this CR or another) runs and succeeds.
        let next = contained("barbican", &metrics, async { Ok(Next::AwaitChange) }).await;
        assert!(matches!(next, Ok(Next::AwaitChange)));
        assert_eq!(metrics.panics("secretstore"), 0);
    }

    #[tokio::test]
    async fn a_panicking_pass_is_retried_with_backoff_and_other_crs_are_untouched() {
        let clock: Arc<dyn Clock> = Arc::new(crate::clock::SystemClock);
        let (requeues, _woken) = Requeues::<Barbican>::new(clock);
        let (hostile, victim) = (
            ObjectRef::new("hostile").within("tenant-a"),
            ObjectRef::new("victim").within("tenant-b"),
        );
        let metrics = Metrics::new();
        for expected in [1, 2, 4] {
            let outcome = contained("barbican", &metrics, async { panic!("again") }).await;
            assert!(outcome.is_err());
            assert_eq!(requeues.failed(&hostile), Duration::from_secs(expected));
        }
        assert_eq!(
            requeues.failed(&victim),
            Duration::from_secs(1),
            "its own count"
        );
    }

    #[tokio::test]
    async fn a_part_that_ends_or_panics_before_the_shutdown_stops_the_rest() {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shutdown = async move {
            let _ = stopped.await;
        }
        .boxed()
        .shared();
        let ended = supervise(
            [
                ("the forever part", futures::future::pending().boxed()),
                ("the part that ends", async {}.boxed()),
            ],
            shutdown.clone(),
        )
        .await;
        assert_eq!(ended.unwrap_err().0, "the part that ends");
        let panicked = supervise(
            [
                ("the forever part", futures::future::pending().boxed()),
                ("the part that panics", async { panic!("a bug") }.boxed()),
            ],
            shutdown.clone(),
        )
        .await;
        assert_eq!(panicked.unwrap_err().0, "a controller task (it panicked)");
        // Asked to stop, the parts end and that is no failure.
        let _ = stop.send(());
        let asked = supervise([("the part that ends", async {}.boxed())], shutdown).await;
        assert!(asked.is_ok());
    }

    #[tokio::test]
    async fn requeue_state_goes_when_a_wake_up_fires_or_the_cr_is_deleted() {
        let clock: Arc<dyn Clock> = Arc::new(crate::clock::SystemClock);
        let (requeues, mut woken) = Requeues::<Barbican>::new(clock);
        let gone = ObjectRef::new("gone").within("ns");
        requeues.schedule(gone.clone(), Duration::from_secs(3600));
        let _ = requeues.failed(&gone);
        assert_eq!(requeues.kept(), 1);
        requeues.forget(&gone);
        assert_eq!(requeues.kept(), 0, "a deleted CR leaves nothing behind");
        let soon = ObjectRef::new("soon").within("ns");
        requeues.schedule(soon.clone(), Duration::ZERO);
        assert_eq!(woken.next().await, Some(soon));
        tokio::task::yield_now().await;
        assert_eq!(requeues.kept(), 0, "a fired wake-up leaves nothing behind");
    }

    #[test]
    fn backoff_doubles_from_one_second_up_to_five_minutes() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(2), Duration::from_secs(2));
        assert_eq!(backoff(4), Duration::from_secs(8));
        assert_eq!(backoff(20), BACKOFF_MAX);
    }

    #[test]
    fn a_status_only_update_is_not_a_meaningful_change() {
        let mut barbican = crate::api::fixtures::barbican();
        barbican.metadata.generation = Some(1);
        let before = meaningful_change(&barbican);
        barbican.status = Some(Default::default());
        barbican.metadata.resource_version = Some("9".into());
        assert_eq!(meaningful_change(&barbican), before);
        barbican.metadata.generation = Some(2);
        assert_ne!(meaningful_change(&barbican), before);
        barbican.metadata.generation = Some(1);
        barbican.metadata.finalizers = Some(vec!["x".into()]);
        assert_ne!(meaningful_change(&barbican), before);
    }
}
