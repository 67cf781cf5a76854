//! Wires both controllers to the runtime ([`super::runtime`]): their watches, their passes,
//! and the tasks they run on. What a pass is framed by (requeues on the clock, a contained
//! panic, supervision) is the runtime's; this module names what each controller watches.

use std::{future::Future, sync::Arc, time::Duration};

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
            Wiring, own_certificates, own_children, own_http_routes, watch_attached_stores,
            watch_eso_stores, watch_input_secrets, watch_mariadb,
        },
        wakes,
    },
    discovery::{probe_gateway_api, serves},
    events::Events,
    pass::Error,
    probe_cache::ProbeCache,
    runtime::{
        cache::{Cache, slim},
        env::Env,
        fanout::{WatchEvents, fan_out},
        held,
        scheduling::{Requeues, Runtime, forget_deleted},
        scope::{WatchScope, dynamic, typed},
        supervision::{Stopped, supervise},
        watched::{meaningful_change, observe},
    },
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
    /// The platform's ceiling on a Barbican's SQL user's `max_user_connections`
    /// (`--max-user-connections`; `None`: the sizing alone).
    pub max_user_connections: Option<i64>,
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
            max_user_connections: None,
        }
    }
}

/// One pass of the Barbican controller, in the runtime's frame.
async fn pass(barbican: Arc<Barbican>, runtime: Arc<Runtime<Barbican>>) -> Result<Action, Error> {
    let object = barbican.clone();
    let reconcile = reconcile(runtime.env.clone(), barbican);
    runtime.pass("barbican", &object, reconcile).await
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
        max_user_connections: settings.max_user_connections,
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
            .modify(|secret| {
                held::forget_foreign_labels(
                    secret,
                    super::barbican::labels::MANAGED_BY,
                    &Barbican::group(&()),
                )
            })
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
    let controller = own_http_routes(controller, &wiring, &gateway_api).await;
    let controller = watch_mariadb(controller, &wiring).await;
    let controller = own_certificates(controller, &wiring).await;
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

/// What the BarbicanSecretStore controller shares with the Barbican controller: the two
/// caches, and its halves of the watches of the stores, the Barbicans and the Secrets.
struct Shared {
    stores: reflector::Store<BarbicanSecretStore>,
    barbicans: reflector::Store<Barbican>,
    own: WatchEvents<BarbicanSecretStore>,
    parents: WatchEvents<Barbican>,
    secrets: WatchEvents<PartialObjectMeta<Secret>>,
}

/// One pass of the BarbicanSecretStore controller, in the runtime's frame.
async fn store_pass(
    store: Arc<BarbicanSecretStore>,
    runtime: Arc<Runtime<BarbicanSecretStore, Verified>>,
) -> Result<Action, Error> {
    let object = store.clone();
    let reconcile =
        super::secretstore::reconcile::reconcile(runtime.env.clone(), &runtime.state, store);
    runtime.pass("secretstore", &object, reconcile).await
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
