//! A simulated cluster with its fakes and the operator running in-process on the sim's virtual
//! clock: what a scenario on the sim starts from.
//!
//! Waiting is on virtual time. [`SimEnv::eventually`] checks, gives the operator a few real
//! milliseconds for its HTTP round trips, and only then moves the virtual clock a second, so
//! "within 2 minutes" means two virtual minutes and a scenario never sleeps on the wall clock
//! for the operator's requeues.

use std::{
    collections::BTreeMap,
    future::Future,
    sync::{Arc, Mutex},
    time::Duration,
};

use barbican_fakes::{
    barbican_api::BarbicanApi,
    crds,
    external_secrets::ExternalSecrets,
    gateway_api::GatewayApi,
    keystone::FakeKeystone,
    mariadb::MariaDbOperator,
    mariadb_server::MariaDbServer,
    openbao::{
        FakeOpenBao,
        policy::Policy,
        state::{AppRole, SecretId},
    },
    openbao_cluster::OpenBaoOperator,
};
use barbican_operator::{
    api::Barbican,
    clusters::{DEFAULT_CLUSTERS_NAMESPACE, REGISTRATION_LABEL, run_registry},
    controller::{
        manager::{CONCURRENT_RECONCILES, Settings, run_barbican_controller},
        runtime::scope::WatchScope,
    },
    crd,
    metrics::Metrics,
};
use barbican_sim::{
    Cluster,
    audit::Entry,
    clock::Clock,
    controllers::{Controllers, Rollouts},
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DynamicObject, Patch, PatchParams},
};
use serde_json::Value;

use crate::{
    backend::{Backend, SIM_ONLY},
    seams::{SimClock, SimResolver},
};

mod external;
mod installed;
mod observe;
mod operator;
use operator::start_operator;
mod targets;
mod waiting;
pub use self::targets::{CLUSTERS_NAMESPACE, Site, TargetCluster};

/// What `deploy/examples/barbican.yaml` needs before it can become ready: its namespace (and
/// the operator's), the MariaDB it names, the External Secrets store, the two credential
/// Secrets, and the OpenBaoCluster the managed store provisions against.
pub const MINIMAL_PREREQUISITES: &str = "\
apiVersion: v1
kind: Namespace
metadata: {name: openstack}
---
apiVersion: v1
kind: Namespace
metadata: {name: barbican-system}
---
apiVersion: k8s.mariadb.com/v1alpha1
kind: MariaDB
metadata: {name: openstack-mariadb, namespace: openstack}
spec: {replicas: 1}
---
apiVersion: external-secrets.io/v1
kind: ClusterSecretStore
metadata: {name: openbao-cluster-store}
spec: {provider: {vault: {server: 'https://openbao.openbao.svc:8200'}}}
---
apiVersion: v1
kind: Secret
metadata: {name: barbican-db, namespace: openstack}
stringData: {username: barbican, password: demo-db-password}
---
apiVersion: v1
kind: Secret
metadata: {name: barbican-keystone, namespace: openstack}
stringData: {password: demo-keystone-password}
---
apiVersion: openbao.org/v1alpha1
kind: OpenBaoCluster
metadata: {name: openbao-instance, namespace: openstack}
spec: {}
";

/// The service user's password in [`MINIMAL_PREREQUISITES`]' `barbican-keystone` Secret.
pub const SERVICE_USER_PASSWORD: &str = "demo-keystone-password";

/// The user agent of the operator's client: the audit log tells its requests apart by it.
pub const OPERATOR_AGENT: &str = "barbican-operator";
/// The user agent of the scenario's own client.
pub const SCENARIO_AGENT: &str = "scenario";
/// How far the virtual clock moves between checks.
pub const TICK: Duration = Duration::from_secs(1);
/// Makes every poke of [`SimEnv::full_pass`] a change.
static POKES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Real time the operator gets between checks for its round trips.
pub const REAL_PAUSE: Duration = Duration::from_millis(15);

/// How long [`SimEnv::operator_quiet`] wants the operator to have written nothing: twenty
/// real pauses, longer than a pass's round trips take even on a loaded machine.
pub const QUIET: Duration = Duration::from_millis(300);

/// The running environment.
pub struct SimEnv {
    /// The management cluster: where the operator runs and the CRs live.
    pub cluster: Cluster,
    /// The scenario's client on the management cluster.
    pub client: Client,
    /// The operator's metrics.
    pub metrics: Arc<Metrics>,
    /// The management cluster and its fakes.
    pub site: Arc<Site>,
    /// External (brownfield) OpenBao servers, by the scenario's name for them.
    externals: Mutex<BTreeMap<String, Arc<FakeOpenBao>>>,
    /// The target clusters started, by name.
    targets: Mutex<BTreeMap<String, Arc<TargetCluster>>>,
    /// The target cluster the scenario's children and inputs steps work on; `None` for the
    /// management cluster.
    focus: Mutex<Option<Arc<TargetCluster>>>,
    /// Values a scenario noted to compare against later.
    notes: Mutex<BTreeMap<String, String>>,
    /// The in-process operator, or what stands for it here when it runs elsewhere.
    operator: tokio::task::JoinHandle<()>,
    /// The client the operator talks to the management cluster with.
    operator_client: Client,
    clock_seam: Arc<SimClock>,
    /// Whether the management cluster is the sim or a real API server.
    backend: Backend,
    /// What the scenario applied on a real API server, for [`SimEnv::clean_up`].
    applied: Mutex<Vec<Applied>>,
    /// The namespaces the operator watches.
    watch_scope: WatchScope,
    /// How many passes of each controller run at once.
    concurrency: u16,
    /// The chart's admission webhooks in front of the simulated management cluster (on a real
    /// API server, whatever that cluster has installed).
    _admission: Option<crate::admission::Admission>,
    /// The webhook configurations a scenario deleted, restored by [`SimEnv::clean_up`] so the
    /// next scenario on a shared (real) cluster runs behind them again.
    uninstalled: Mutex<Vec<Value>>,
    /// On a real API server: the `rbac.secretStoreNamespaces` the chart's identity has been
    /// installed with so far (see [`SimEnv::grant_store`]).
    store_grants: Mutex<crate::chart_identity::StoreGrants>,
}

/// Where an applied object is.
#[derive(Clone, Debug)]
pub struct Applied {
    /// Its resource.
    pub resource: ApiResource,
    /// Its namespace (`None` for a cluster-scoped object).
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

impl Applied {
    /// The API that reaches the object through `client`.
    pub fn api(&self, client: Client) -> Api<DynamicObject> {
        match &self.namespace {
            Some(ns) => Api::namespaced_with(client, ns, &self.resource),
            None => Api::all_with(client, &self.resource),
        }
    }
}

/// The resource of `api_version`/`kind` on the cluster `client` talks to, from discovery.
pub async fn discover(
    client: &Client,
    api_version: &str,
    kind: &str,
) -> Result<ApiResource, Error> {
    let list = if api_version.contains('/') {
        client.list_api_group_resources(api_version).await
    } else {
        client.list_core_api_resources(api_version).await
    }
    .map_err(|e| format!("discovering {api_version}: {e}"))?;
    let found = list
        .resources
        .iter()
        .find(|r| r.kind == kind && !r.name.contains('/'))
        .ok_or_else(|| format!("{api_version} serves no {kind}"))?;
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (String::new(), api_version.to_string()),
    };
    Ok(ApiResource {
        group,
        version,
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        plural: found.name.clone(),
    })
}

/// Server-side applies `object` through `client` as the field manager `manager` (forcing
/// conflicts): where it went, and what the server stored.
pub async fn apply_object(
    client: Client,
    manager: &str,
    object: Value,
) -> Result<(Applied, DynamicObject), Error> {
    let object: DynamicObject = serde_json::from_value(object).map_err(text)?;
    let types = object
        .types
        .clone()
        .ok_or("the object has no apiVersion/kind")?;
    let applied = Applied {
        resource: discover(&client, &types.api_version, &types.kind).await?,
        namespace: object.namespace(),
        name: object.name_any(),
    };
    let stored = applied
        .api(client)
        .patch(
            &applied.name,
            &PatchParams::apply(manager).force(),
            &Patch::Apply(&object),
        )
        .await
        .map_err(|e| format!("applying {} {}: {e}", types.kind, applied.name))?;
    Ok((applied, stored))
}

/// [`apply_object`] for every document of `yaml`.
pub async fn apply_yaml_as(client: &Client, manager: &str, yaml: &str) -> Result<(), Error> {
    let documents: Vec<Value> = serde_saphyr::from_multiple(yaml).map_err(text)?;
    for document in documents.into_iter().filter(|d| !d.is_null()) {
        apply_object(client.clone(), manager, document).await?;
    }
    Ok(())
}

impl std::fmt::Debug for SimEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimEnv")
            .field("now", &self.cluster.clock().rfc3339())
            .finish_non_exhaustive()
    }
}

impl Drop for SimEnv {
    fn drop(&mut self) {
        self.operator.abort();
    }
}

/// What a setup step can fail with.
pub type Error = String;

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl SimEnv {
    /// A cluster on a virtual clock with the Deployment, Job, CronJob and HPA controllers, the
    /// third-party CRDs (with the Gateway API unless `gateway_api` is false), the fakes, the
    /// operator's CRDs, and the operator's Barbican controller.
    ///
    /// On a real API server ([`crate::backend::current`]) the operator, the fakes and the
    /// scenario work against it instead, on the wall clock.
    pub async fn start(gateway_api: bool) -> Result<Self, Error> {
        Self::start_with(gateway_api, true).await
    }

    /// A real-barbican site (see [`Backend::RealBarbican`]) with no operator in this process
    /// and no webhook server: the scenario installs the chart with helm
    /// (`crate::install_steps`), and the operator runs as the chart's pods.
    pub async fn start_for_install() -> Result<Self, Error> {
        if !matches!(crate::backend::current(), Backend::RealBarbican { .. }) {
            return Err(format!(
                "installing the chart needs the sim's kubelet: tag the scenario @{}",
                crate::backend::REAL_BARBICAN
            ));
        }
        Self::start_with(true, false).await
    }

    async fn start_with(gateway_api: bool, mut in_process: bool) -> Result<Self, Error> {
        let backend = crate::backend::current().clone();
        let metrics = Arc::new(Metrics::new());
        // What stands for the operator in this process when it runs elsewhere.
        let mut stand_in = None;
        let (site, client, operator_client, admission) = match &backend {
            Backend::Sim => {
                let site = Site::start(&Clock::virtual_time(), gateway_api, "")?;
                let admission = crate::admission::install(&site.cluster).await?;
                let (client, operator) = (
                    site.cluster.client_as(SCENARIO_AGENT),
                    site.cluster.client_as(OPERATOR_AGENT),
                );
                (site, client, operator, Some(admission))
            }
            Backend::RealBarbican {
                runtimes,
                state_dir,
            } => {
                let site = Site::start_real_barbican(runtimes, state_dir).await?;
                let admission = match in_process {
                    true => Some(crate::admission::install(&site.cluster).await?),
                    false => None,
                };
                let (client, operator) = (
                    site.cluster.client_as(SCENARIO_AGENT),
                    site.cluster.client_as(OPERATOR_AGENT),
                );
                (site, client, operator, admission)
            }
            Backend::Cluster { .. } if !gateway_api => {
                return Err(format!(
                    "a cluster without the Gateway API needs the sim: tag the scenario @{SIM_ONLY}"
                ));
            }
            Backend::Cluster {
                kubeconfig,
                installed_operator,
                ..
            } => {
                let client = crate::backend::client(kubeconfig).await?;
                // A served sim with the chart installed runs cert-manager for the chart's
                // webhook certificate already.
                let site =
                    Site::on_api_server(client.clone(), gateway_api, installed_operator.is_none())
                        .await?;
                if let Some(control) = installed_operator {
                    // The chart's pods are the operator; they reach this process's fakes.
                    let control = installed::control_addr(control)?;
                    in_process = false;
                    stand_in =
                        Some(installed::name_fakes_to(site.cluster.services(), control).await?);
                    (site, client.clone(), client, None)
                } else {
                    // The operator is the chart's ServiceAccount with the chart's RBAC, as on
                    // an install of the chart; the cluster enforces it.
                    let token = crate::chart_identity::install_and_token(
                        &client,
                        &crate::chart_identity::StoreGrants::new(),
                    )
                    .await?;
                    let operator =
                        crate::backend::client_with_token(kubeconfig, &token, &metrics).await?;
                    (site, client, operator, None)
                }
            }
        };
        let site = Arc::new(site);
        let cluster = site.cluster.clone();
        let clock_seam = Arc::new(SimClock(cluster.clock().clone()));
        let operator = match in_process {
            true => start_operator(
                &cluster,
                operator_client.clone(),
                clock_seam.clone(),
                metrics.clone(),
                WatchScope::All,
                CONCURRENT_RECONCILES,
            ),
            false => stand_in.unwrap_or_else(|| tokio::spawn(std::future::pending())),
        };
        Ok(Self {
            operator_client,
            client,
            backend,
            applied: Mutex::default(),
            watch_scope: WatchScope::All,
            concurrency: CONCURRENT_RECONCILES,
            cluster,
            metrics,
            site,
            externals: Mutex::default(),
            targets: Mutex::default(),
            focus: Mutex::default(),
            notes: Mutex::default(),
            operator,
            clock_seam,
            _admission: admission,
            uninstalled: Mutex::default(),
            store_grants: Mutex::default(),
        })
    }

    /// The simulated management cluster, for what only the sim does (the audit log, faults,
    /// its controllers, the virtual clock); on a real API server, an error naming `what`.
    pub fn needs_sim(&self, what: &str) -> Result<&Cluster, Error> {
        match &self.backend {
            Backend::Sim | Backend::RealBarbican { .. } => Ok(&self.cluster),
            Backend::Cluster { description, .. } => Err(format!(
                "{what} needs the simulated cluster, and this run is on {description}: tag the scenario @{SIM_ONLY}"
            )),
        }
    }

    /// The simulated site the scenario works on (see [`SimEnv::here`]), for what only the sim
    /// does; on a real API server, an error naming `what`.
    pub fn simulated_here(&self, what: &str) -> Result<Arc<Site>, Error> {
        if self.focused().is_none() {
            self.needs_sim(what)?;
        }
        Ok(self.here())
    }

    /// On a real API server, where the next scenario shares the cluster, deletes what this one
    /// applied: its Barbicans and stores first (the operator, still running, releases their
    /// finalizers), then its cluster-scoped objects and namespaces (with all they hold), and
    /// waits until they are gone. On the sim there is nothing to do: every scenario has a
    /// cluster of its own.
    pub async fn clean_up(&self) -> Result<(), Error> {
        self.reinstall_webhooks().await?;
        let applied = std::mem::take(&mut *self.applied.lock().unwrap_or_else(|p| p.into_inner()));
        let is_cr = |a: &&Applied| {
            a.resource.kind == "Barbican" || a.resource.kind == "BarbicanSecretStore"
        };
        let crs: Vec<&Applied> = applied.iter().filter(is_cr).collect();
        let cluster_scoped: Vec<&Applied> = applied
            .iter()
            .filter(|a| a.namespace.is_none() && !is_cr(a))
            .collect();
        self.delete_and_wait(&crs).await?;
        // Pods go at once (grace 0) before their namespaces: a namespace's deletion otherwise
        // waits out its pods' grace periods, which on a control plane took about 15 s a
        // scenario.
        let namespaces: Vec<&str> = cluster_scoped
            .iter()
            .filter(|a| a.resource.kind == "Namespace")
            .map(|a| a.name.as_str())
            .collect();
        self.delete_pods_now(&namespaces).await;
        self.delete_and_wait(&cluster_scoped).await
    }

    /// Deletes each of `objects` and waits until all are gone (180 s at most).
    async fn delete_and_wait(&self, objects: &[&Applied]) -> Result<(), Error> {
        for object in objects {
            match object
                .api(self.client.clone())
                .delete(&object.name, &Default::default())
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => {
                    return Err(format!(
                        "deleting {} {}: {e}",
                        object.resource.kind, object.name
                    ));
                }
            }
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(180);
        for object in objects {
            let api = object.api(self.client.clone());
            while api.get_opt(&object.name).await.map_err(text)?.is_some() {
                if std::time::Instant::now() > deadline {
                    return Err(format!(
                        "{} {} is still there 180 s after its deletion",
                        object.resource.kind, object.name
                    ));
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
        Ok(())
    }

    /// Deletes every pod of `namespaces` with a grace period of 0; a failure is left to the
    /// namespace's deletion, which takes them in time.
    async fn delete_pods_now(&self, namespaces: &[&str]) {
        for namespace in namespaces {
            let pods: Api<k8s_openapi::api::core::v1::Pod> =
                Api::namespaced(self.client.clone(), namespace);
            let _ = pods
                .delete_collection(
                    &kube::api::DeleteParams {
                        grace_period_seconds: Some(0),
                        ..Default::default()
                    },
                    &Default::default(),
                )
                .await;
        }
    }

    /// Whether the management cluster is a real API server.
    pub fn on_real_cluster(&self) -> bool {
        matches!(self.backend, Backend::Cluster { .. })
    }

    /// The site the scenario's children and inputs steps work on (see [`SimEnv::focus_on`]).
    pub fn here(&self) -> Arc<Site> {
        self.focused()
            .map_or_else(|| self.site.clone(), |t| t.site.clone())
    }

    fn focused(&self) -> Option<Arc<TargetCluster>> {
        self.focus.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The scenario's client on the site it works on.
    pub fn scenario_client(&self) -> Client {
        self.focused()
            .map_or_else(|| self.client.clone(), |t| t.client.clone())
    }

    /// The scenario's client for objects of `kind`: the CRs always live on the management
    /// cluster, everything else where the scenario works.
    fn client_for(&self, kind: &str) -> Client {
        if kind == "Barbican" || kind == "BarbicanSecretStore" {
            self.client.clone()
        } else {
            self.scenario_client()
        }
    }

    /// Makes the steps about children and inputs work on the target cluster `name` (`None`:
    /// the management cluster again).
    pub fn focus_on(&self, name: Option<&str>) -> Result<(), Error> {
        let target = name.map(|n| self.target(n)).transpose()?;
        *self.focus.lock().unwrap_or_else(|p| p.into_inner()) = target;
        Ok(())
    }

    /// The virtual clock.
    pub fn clock(&self) -> &Clock {
        self.cluster.clock()
    }

    /// Deletes the chart's webhook configurations from the management cluster, as a
    /// cluster-admin can: what follows reaches the operator unchecked, as a CR created while
    /// the webhooks were not installed (or failed open) would. For the operator's own defences.
    pub async fn uninstall_webhooks(&self) -> Result<(), Error> {
        for configuration in crate::admission::configurations()? {
            let kind = configuration["kind"].as_str().unwrap_or_default();
            let name = configuration["metadata"]["name"]
                .as_str()
                .unwrap_or_default();
            let api = crate::admission::api(self.client.clone(), kind);
            let Some(stored) = api.get_opt(name).await.map_err(text)? else {
                continue;
            };
            match api.delete(name, &Default::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => continue,
                Err(e) => return Err(format!("deleting the {kind} {name}: {e}")),
            }
            let mut stored = serde_json::to_value(stored).map_err(text)?;
            if let Some(meta) = stored["metadata"].as_object_mut() {
                for server_set in [
                    "resourceVersion",
                    "uid",
                    "creationTimestamp",
                    "managedFields",
                ] {
                    meta.remove(server_set);
                }
            }
            self.uninstalled
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(stored);
        }
        Ok(())
    }

    /// Creates again the webhook configurations [`SimEnv::uninstall_webhooks`] deleted.
    async fn reinstall_webhooks(&self) -> Result<(), Error> {
        let uninstalled =
            std::mem::take(&mut *self.uninstalled.lock().unwrap_or_else(|p| p.into_inner()));
        for configuration in uninstalled {
            let kind = configuration["kind"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let object: DynamicObject = serde_json::from_value(configuration).map_err(text)?;
            crate::admission::api(self.client.clone(), &kind)
                .create(&Default::default(), &object)
                .await
                .map_err(|e| format!("restoring the {kind}: {e}"))?;
        }
        Ok(())
    }

    /// Server-side applies every document of `yaml` as the scenario.
    pub async fn apply_yaml(&self, yaml: &str) -> Result<(), Error> {
        let documents: Vec<Value> = serde_saphyr::from_multiple(yaml).map_err(text)?;
        for document in documents.into_iter().filter(|d| !d.is_null()) {
            self.apply(document).await?;
        }
        Ok(())
    }

    /// Server-side applies one object as the scenario: a CR on the management cluster,
    /// anything else where the scenario works.
    pub async fn apply(&self, object: Value) -> Result<DynamicObject, Error> {
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        self.apply_with(self.client_for(&kind), object).await
    }

    /// Server-side applies one object through `client` as the scenario.
    pub async fn apply_with(&self, client: Client, object: Value) -> Result<DynamicObject, Error> {
        self.grant_store(&object).await?;
        let (applied, object) = apply_object(client, SCENARIO_AGENT, object).await?;
        if self.on_real_cluster() {
            self.applied
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(applied);
        }
        Ok(object)
    }

    /// On a real API server, where the operator is the chart's ServiceAccount: a store's
    /// OpenBaoCluster joins the chart's `rbac.secretStoreNamespaces` before the store is
    /// applied, as the platform team lists it in the release's values (without it the store
    /// reports `ProvisioningDenied`), applied as helm applies it. Against an installed
    /// operator that is what a `helm upgrade` naming the namespace renders; a scenario's
    /// namespaces, and their Roles, go with its clean-up. On the sim the operator is the
    /// administrator.
    async fn grant_store(&self, object: &Value) -> Result<(), Error> {
        if !self.on_real_cluster() || object["kind"] != "BarbicanSecretStore" {
            return Ok(());
        }
        let (Some(namespace), Some(instance)) = (
            object["metadata"]["namespace"].as_str(),
            object["spec"]["openBao"]["instanceRef"]["name"].as_str(),
        ) else {
            return Ok(());
        };
        let grants = {
            let mut granted = self.store_grants.lock().unwrap_or_else(|p| p.into_inner());
            let instances = granted.entry(namespace.to_string()).or_default();
            if !instances.insert(instance.to_string()) {
                return Ok(());
            }
            crate::chart_identity::StoreGrants::from([(namespace.to_string(), instances.clone())])
        };
        crate::chart_identity::install(&self.client, &grants).await
    }

    /// The resource of `api_version`/`kind`, from discovery.
    pub async fn resource(&self, api_version: &str, kind: &str) -> Result<ApiResource, Error> {
        discover(&self.client, api_version, kind).await
    }

    /// Reads a Barbican.
    pub async fn barbican(&self, namespace: &str, name: &str) -> Result<Barbican, Error> {
        Api::<Barbican>::namespaced(self.client.clone(), namespace)
            .get(name)
            .await
            .map_err(|e| format!("reading Barbican {namespace}/{name}: {e}"))
    }

    /// The conditions of the `kind` (Barbican or BarbicanSecretStore) `namespace/name`; none
    /// when it has no status yet.
    pub async fn conditions(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<Condition>, Error> {
        let object = self
            .get(kind, namespace, name)
            .await?
            .ok_or_else(|| format!("{kind} {namespace}/{name} does not exist"))?;
        serde_json::from_value(object.data["status"]["conditions"].clone())
            .or_else(|_| Ok(Vec::new()))
    }
}

impl SimEnv {
    /// The API of `kind` (as `apiVersion/kind`, or a bare built-in kind) in `namespace`.
    /// An empty namespace names a cluster-scoped kind (`the PriorityClass "x" in ""`).
    pub async fn api_of(&self, kind: &str, namespace: &str) -> Result<Api<DynamicObject>, Error> {
        let (api_version, kind) = api_version_of(kind)?;
        let resource = self.resource(api_version, kind).await?;
        let client = self.client_for(kind);
        Ok(if namespace.is_empty() {
            Api::all_with(client, &resource)
        } else {
            Api::namespaced_with(client, namespace, &resource)
        })
    }
}

/// The apiVersion and kind of `kind` as the steps name it: a bare kind the scenarios use
/// (`Deployment`, `Barbican`, `MariaDB`, …), or `group/version/Kind`.
pub fn api_version_of(kind: &str) -> Result<(&str, &str), Error> {
    Ok(match kind {
        "Deployment" => ("apps/v1", "Deployment"),
        "Service" | "Secret" | "ConfigMap" | "PersistentVolumeClaim" => ("v1", kind),
        "PodDisruptionBudget" => ("policy/v1", kind),
        "HorizontalPodAutoscaler" => ("autoscaling/v2", kind),
        "NetworkPolicy" => ("networking.k8s.io/v1", kind),
        "HTTPRoute" | "BackendTLSPolicy" => ("gateway.networking.k8s.io/v1", kind),
        "Certificate" | "Issuer" | "ClusterIssuer" => ("cert-manager.io/v1", kind),
        "Barbican" | "BarbicanSecretStore" => ("barbican.openstack.c5c3.io/v1alpha1", kind),
        "Job" | "CronJob" => ("batch/v1", kind),
        "MariaDB" | "Database" | "User" | "Grant" => ("k8s.mariadb.com/v1alpha1", kind),
        "PriorityClass" => ("scheduling.k8s.io/v1", kind),
        other => other
            .rsplit_once('/')
            .ok_or_else(|| format!("name {other} as apiVersion/Kind, e.g. batch/v1/Job"))?,
    })
}

impl SimEnv {
    /// Reads an object of `kind`, `None` when it does not exist.
    pub async fn get(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<DynamicObject>, Error> {
        self.api_of(kind, namespace)
            .await?
            .get_opt(name)
            .await
            .map_err(|e| format!("reading {kind} {namespace}/{name}: {e}"))
    }

    /// Merge-patches a Barbican's spec as the scenario.
    pub async fn patch_barbican(
        &self,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> Result<(), Error> {
        Api::<Barbican>::namespaced(self.client.clone(), namespace)
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map(|_| ())
            .map_err(|e| format!("patching Barbican {namespace}/{name}: {e}"))
    }
}
