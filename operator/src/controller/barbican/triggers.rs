//! What wakes a Barbican: each trigger of the Barbican controller as a named function that
//! adds its watch to the controller. The children are owned (a change wakes the owner); the
//! inputs are watched and mapped to the CRs that read them (see [`super::wakes`]).
//! Kinds that come from other operators are watched only when the API server serves them.

use futures::{Stream, StreamExt};
use k8s_openapi::api::{
    apps::v1::Deployment,
    autoscaling::v2::HorizontalPodAutoscaler,
    batch::v1::{CronJob, Job},
    core::v1::{ConfigMap, Secret, Service},
    networking::v1::NetworkPolicy,
    policy::v1::PodDisruptionBudget,
};
use kube::{
    Api, Client, ResourceExt,
    api::DynamicObject,
    core::PartialObjectMeta,
    runtime::{
        Controller, WatchStreamExt,
        reflector::{self, ObjectRef},
        watcher,
    },
};

use super::wakes;
use crate::api::{barbican::Barbican, refs::SecretStoreKind, secret_store::BarbicanSecretStore};
use crate::controller::{
    discovery::{GatewayApi, certificate_resource, http_route_resource, serves},
    runtime::cache::Cache,
    runtime::fanout::WatchEvents,
    runtime::scope::{WatchScope, dynamic, filling, typed},
};

/// What the Barbican controller's triggers are wired from.
pub struct Wiring {
    /// The management cluster's client.
    pub client: Client,
    /// The namespaces watched.
    pub scope: WatchScope,
    /// The watch configuration.
    pub config: watcher::Config,
    /// The operator's cache the watches fill.
    pub cache: Cache,
    /// The cached Barbicans, to map an input to the CRs that read it.
    pub barbicans: reflector::Store<Barbican>,
}

/// The children a pass applies, each watched into the operator's cache: a change to one
/// wakes its owner.
///
/// Every child but the db-sync Job carries `app.kubernetes.io/managed-by`, so those kinds are
/// watched by that label and the Deployments and Services of other applications never reach
/// the operator. Jobs are watched as metadata, with copies of the operator's own held (see
/// [`crate::controller::runtime::held`]): the db-sync Job has no labels (as the reference makes it).
/// The held Jobs keep what the steps read of them ([`super::jobs::as_read`]).
pub fn own_children(controller: Controller<Barbican>, w: &Wiring) -> Controller<Barbican> {
    let (client, scope, cache) = (&w.client, &w.scope, &w.cache);
    let config = &own_children_config(&w.config);
    controller
        .owns_stream(scope.cached(typed(client), config, cache.writer::<Deployment>()))
        .owns_stream(scope.cached(typed(client), config, cache.writer::<Service>()))
        .owns_stream(scope.cached(typed(client), config, cache.writer::<PodDisruptionBudget>()))
        .owns_stream(scope.cached(
            typed(client),
            config,
            cache.writer::<HorizontalPodAutoscaler>(),
        ))
        .owns_stream(scope.cached(typed(client), config, cache.writer::<NetworkPolicy>()))
        .owns_stream(scope.cached(typed(client), config, cache.writer::<CronJob>()))
        .owns_stream(scope.cached(typed(client), config, cache.writer::<ConfigMap>()))
        .owns_stream(filling(
            scope
                .events(typed::<PartialObjectMeta<Job>>(client), &w.config)
                .inspect(cache.forget_deleted::<Job>()),
            cache.trimmed_metadata_writer::<Job>(super::jobs::as_read),
        ))
}

/// The watch of the children that carry the operator's `managed-by` label: that label
/// selects them (a child whose label is taken away leaves the watch, which wakes its owner,
/// whose next apply puts it back).
pub fn own_children_config(config: &watcher::Config) -> watcher::Config {
    config.clone().labels(&format!(
        "app.kubernetes.io/managed-by={}",
        super::labels::MANAGED_BY
    ))
}

/// A store wakes the Barbican it names.
pub fn watch_attached_stores(
    controller: Controller<Barbican>,
    stores: impl Stream<Item = Result<BarbicanSecretStore, watcher::Error>> + Send + 'static,
) -> Controller<Barbican> {
    controller.watches_stream(stores, |store: BarbicanSecretStore| {
        store
            .namespace()
            .map(|ns| ObjectRef::new(&store.spec.barbican_ref.name).within(&ns))
    })
}

/// A Secret wakes the Barbicans and stores placed on this (the management) cluster that read
/// it; one snapshot of the Barbicans serves both placements.
pub fn watch_input_secrets(
    controller: Controller<Barbican>,
    secrets: WatchEvents<PartialObjectMeta<Secret>>,
    w: &Wiring,
    stores: reflector::Store<BarbicanSecretStore>,
) -> Controller<Barbican> {
    let barbicans = w.barbicans.clone();
    controller.watches_stream(
        secrets.touched_objects(),
        move |secret: PartialObjectMeta<Secret>| {
            let owner = wakes::controlling_barbican(&secret);
            let all = barbicans.state();
            wakes::for_secret(
                &secret.namespace().unwrap_or_default(),
                &secret.name_any(),
                owner.as_deref(),
                &wakes::placed_on(&all, None),
                &wakes::stores_placed_on(&stores.state(), &all, None),
            )
        },
    )
}

/// The HTTPRoutes, when the Gateway API is served, and the BackendTLSPolicies, when its
/// version serves them.
pub async fn own_http_routes(
    mut controller: Controller<Barbican>,
    w: &Wiring,
    gateway_api: &GatewayApi,
) -> Controller<Barbican> {
    if *gateway_api != GatewayApi::Installed {
        return controller;
    }
    for kind in [
        http_route_resource(),
        super::backend_tls::backend_tls_policy_resource(),
    ] {
        if !serves(&w.client, &kind).await.unwrap_or(false) {
            continue;
        }
        controller = controller.owns_stream_with(
            w.scope.cached(
                dynamic(&w.client, &kind),
                &own_children_config(&w.config),
                w.cache.dynamic_writer(&kind),
            ),
            kind,
        );
    }
    controller
}

/// The Certificates a Barbican requests (`spec.tls.issuerRef`), when cert-manager is served:
/// one issued, or failing, wakes its owner. (Served later than the operator started, the TLS
/// step's requeue and the issued Secret's watch still bring the pass.)
pub async fn own_certificates(
    controller: Controller<Barbican>,
    w: &Wiring,
) -> Controller<Barbican> {
    let certificates = certificate_resource();
    if !serves(&w.client, &certificates).await.unwrap_or(false) {
        return controller;
    }
    controller.owns_stream_with(
        w.scope.cached(
            dynamic(&w.client, &certificates),
            &own_children_config(&w.config),
            w.cache.dynamic_writer(&certificates),
        ),
        certificates,
    )
}

/// The managed database, when mariadb-operator is served: the MariaDB a Barbican names (an
/// outage shows in DatabaseReady without waiting for a requeue) and the Database/User/Grant
/// it owns.
pub async fn watch_mariadb(
    mut controller: Controller<Barbican>,
    w: &Wiring,
) -> Controller<Barbican> {
    let mariadb = super::database::mariadb_resource("MariaDB", "mariadbs");
    if !serves(&w.client, &mariadb).await.unwrap_or(false) {
        return controller;
    }
    let barbicans = w.barbicans.clone();
    controller = controller.watches_stream_with(
        w.scope.cached(
            dynamic(&w.client, &mariadb),
            &w.config,
            w.cache.dynamic_writer(&mariadb),
        ),
        move |server: DynamicObject| {
            wakes::for_mariadb(
                server.namespace().as_deref().unwrap_or_default(),
                &server.name_any(),
                &wakes::placed_on(&barbicans.state(), None),
            )
        },
        mariadb,
    );
    for (kind, plural) in [
        ("Database", "databases"),
        ("User", "users"),
        ("Grant", "grants"),
    ] {
        let resource = super::database::mariadb_resource(kind, plural);
        controller = controller.owns_stream_with(
            w.scope.cached(
                dynamic(&w.client, &resource),
                &w.config,
                w.cache.dynamic_writer(&resource),
            ),
            resource,
        );
    }
    controller
}

/// The External Secrets stores a Barbican selects, each kind when it is served. A
/// ClusterSecretStore is cluster-scoped: watched whatever the namespaces.
pub async fn watch_eso_stores(
    mut controller: Controller<Barbican>,
    w: &Wiring,
) -> Controller<Barbican> {
    for (kind, plural, store_kind) in [
        (
            "ClusterSecretStore",
            "clustersecretstores",
            SecretStoreKind::ClusterSecretStore,
        ),
        ("SecretStore", "secretstores", SecretStoreKind::SecretStore),
    ] {
        let resource = super::secrets::eso(kind, plural);
        if !serves(&w.client, &resource).await.unwrap_or(false) {
            continue;
        }
        let barbicans = w.barbicans.clone();
        let trigger = match store_kind {
            SecretStoreKind::ClusterSecretStore => filling(
                watcher(
                    Api::<DynamicObject>::all_with(w.client.clone(), &resource),
                    w.config.clone(),
                )
                .backoff(crate::controller::runtime::relist::Relist::default()),
                w.cache.dynamic_writer(&resource),
            ),
            SecretStoreKind::SecretStore => w.scope.cached(
                dynamic(&w.client, &resource),
                &w.config,
                w.cache.dynamic_writer(&resource),
            ),
        };
        controller = controller.watches_stream_with(
            trigger,
            move |store: DynamicObject| {
                let namespace = store.namespace();
                wakes::for_eso_store(
                    store_kind,
                    namespace.as_deref(),
                    &store.name_any(),
                    &wakes::placed_on(&barbicans.state(), None),
                )
            },
            resource,
        );
    }
    controller
}
