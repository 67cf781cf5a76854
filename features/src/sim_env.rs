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
    mariadb::MariaDbOperator,
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
        scope::WatchScope,
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

/// Starts the operator's Barbican controller against `cluster`, reporting into `metrics`, with
/// the registry of target clusters following the registration Secrets in
/// [`CLUSTERS_NAMESPACE`] (a fresh registry per start, as in a new process).
fn start_operator(
    cluster: &Cluster,
    client: Client,
    clock: Arc<SimClock>,
    metrics: Arc<Metrics>,
    watch_scope: WatchScope,
    concurrency: u16,
) -> tokio::task::JoinHandle<()> {
    let mut settings = Settings::new(clock, Arc::new(SimResolver(cluster.services())), metrics);
    settings.probe_timeout = Duration::from_secs(2);
    settings.watch_scope = watch_scope;
    settings.concurrency = concurrency;
    let registry = run_registry(
        client.clone(),
        CLUSTERS_NAMESPACE.to_string(),
        settings.clusters.clone(),
        std::future::pending(),
    );
    let controllers = run_barbican_controller(client, settings, std::future::pending());
    tokio::spawn(async move {
        // The registry runs until the task is aborted; the controllers must too. One that stops
        // on its own is a failure the scenario must see.
        tokio::select! {
            () = registry => {}
            outcome = controllers => if let Err(stopped) = outcome {
                panic!("the operator under test stopped: {stopped}");
            },
        }
    })
}

/// The namespace registration Secrets live in (the operator's default).
pub const CLUSTERS_NAMESPACE: &str = DEFAULT_CLUSTERS_NAMESPACE;

/// A simulated API server with the Deployment, Job, CronJob and HPA controllers, the
/// third-party CRDs and the operator's, and the fakes that play the other operators on it.
pub struct Site {
    /// The simulated cluster. On a real API server (see [`crate::backend`]) this is the host
    /// side only: the registry of the fakes' services and the wall clock; everything the
    /// scenario and the operator read and write goes to the real API server.
    pub cluster: Cluster,
    /// The fake External Secrets operator.
    pub external_secrets: ExternalSecrets,
    /// The barbican API stand-ins.
    pub barbican_api: BarbicanApi,
    /// The fake mariadb-operator.
    pub mariadb: MariaDbOperator,
    /// The Gateway API route controller, when the cluster serves the Gateway API.
    pub gateway: Option<GatewayApi>,
    /// The fake OpenBao operator and the OpenBao behind each OpenBaoCluster.
    pub openbao: OpenBaoOperator,
}

impl Site {
    /// A site on `clock`; its fakes present `token` when the cluster requires one.
    pub fn start(clock: &Clock, gateway_api: bool, token: &str) -> Result<Self, Error> {
        let cluster = Cluster::with_clock(clock.clone());
        cluster.set_controllers(Controllers {
            deployments: Some(Rollouts::default()),
            ..Controllers::all()
        });
        crds::install(&cluster, gateway_api)?;
        for definition in crd::definitions() {
            let definition = serde_json::to_value(definition).map_err(text)?;
            cluster
                .install_crd(definition)
                .map_err(|e| format!("{e:?}"))?;
        }
        let fakes = cluster.client_with_token("fakes", token);
        Ok(Self::with_fakes(cluster, fakes, clock, gateway_api))
    }

    /// A site on the real API server `client` talks to: the third-party CRDs and the
    /// operator's are created where missing, and the fakes run here, on the host, on the wall
    /// clock.
    async fn on_api_server(client: Client, gateway_api: bool) -> Result<Self, Error> {
        let clock = Clock::wall();
        let mut definitions = crds::served(gateway_api);
        for definition in crd::definitions() {
            definitions.push(serde_json::to_value(definition).map_err(text)?);
        }
        crate::backend::ensure_crds(&client, definitions).await?;
        let host = Cluster::with_clock(clock.clone());
        Ok(Self::with_fakes(host, client, &clock, gateway_api))
    }

    fn with_fakes(cluster: Cluster, fakes: Client, clock: &Clock, gateway_api: bool) -> Self {
        Self {
            external_secrets: ExternalSecrets::start(fakes.clone(), clock.clone()),
            barbican_api: BarbicanApi::start(fakes.clone(), cluster.services()),
            mariadb: MariaDbOperator::start(fakes.clone(), clock.clone()),
            openbao: OpenBaoOperator::start(fakes.clone(), clock.clone(), cluster.services()),
            gateway: gateway_api.then(|| GatewayApi::start(fakes, clock.clone())),
            cluster,
        }
    }
}

/// A registered target cluster: a [`Site`] served over loopback HTTPS (a TLS front with a CA
/// of its own, as the operator accepts registrations only over `https://` with an inline
/// `certificate-authority-data`) that requires bearer tokens, registered on the management
/// cluster by a Secret whose kubeconfig carries one.
pub struct TargetCluster {
    /// The cluster and its fakes.
    pub site: Arc<Site>,
    /// The scenario's client on it.
    pub client: Client,
    /// Where it is served over HTTPS.
    pub addr: std::net::SocketAddr,
    /// The TLS front, taken down with the cluster.
    pub front: barbican_fakes::tls::Front,
    /// The PEM CA the front's certificate is signed by.
    pub ca_pem: String,
    /// The token the fakes and the scenario present.
    pub local_token: String,
    /// The token the registration's kubeconfig carries now.
    pub operator_token: Mutex<String>,
}

impl TargetCluster {
    /// The kubeconfig a registration of this cluster carries, authenticating with `token`.
    pub fn kubeconfig(&self, token: &str) -> String {
        crate::backend::kubeconfig_with_ca(
            &format!("https://{}", self.addr),
            Some(token),
            Some(&self.ca_pem),
        )
    }

    /// Takes the cluster down (`true`: its API server and its front refuse connections) or
    /// brings it back.
    pub fn set_outage(&self, down: bool) {
        self.site.cluster.set_outage(down);
        self.front.set_down(down);
    }

    /// Accepts exactly `operator_tokens` from the operator (besides the local token).
    pub fn accept(&self, operator_tokens: &[&str]) {
        let mut tokens: Vec<String> = operator_tokens.iter().map(|t| t.to_string()).collect();
        tokens.push(self.local_token.clone());
        self.site.cluster.require_bearer_tokens(tokens);
    }
}

impl Drop for SimEnv {
    fn drop(&mut self) {
        self.operator.abort();
    }
}

/// A bound token of the ServiceAccount `namespace/name`, valid for 30 days, from the cluster
/// `client` talks to.
async fn service_account_token(
    client: Client,
    namespace: &str,
    name: &str,
) -> Result<String, Error> {
    let request: k8s_openapi::api::authentication::v1::TokenRequest =
        serde_json::from_value(serde_json::json!({"spec": {"expirationSeconds": 30 * 24 * 3600}}))
            .map_err(text)?;
    Api::<k8s_openapi::api::core::v1::ServiceAccount>::namespaced(client, namespace)
        .create_token_request(name, &Default::default(), &request)
        .await
        .map_err(|e| format!("a token for ServiceAccount {namespace}/{name}: {e}"))?
        .status
        .and_then(|s| s.token)
        .ok_or_else(|| "the TokenRequest returned no token".to_string())
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
        let backend = crate::backend::current().clone();
        let (site, client, operator_client) = match &backend {
            Backend::Sim => {
                let site = Site::start(&Clock::virtual_time(), gateway_api, "")?;
                let (client, operator) = (
                    site.cluster.client_as(SCENARIO_AGENT),
                    site.cluster.client_as(OPERATOR_AGENT),
                );
                (site, client, operator)
            }
            Backend::Cluster { .. } if !gateway_api => {
                return Err(format!(
                    "a cluster without the Gateway API needs the sim: tag the scenario @{SIM_ONLY}"
                ));
            }
            Backend::Cluster { kubeconfig, .. } => {
                let client = crate::backend::client(kubeconfig).await?;
                let site = Site::on_api_server(client.clone(), gateway_api).await?;
                (site, client.clone(), client)
            }
        };
        let site = Arc::new(site);
        let cluster = site.cluster.clone();
        let metrics = Arc::new(Metrics::new());
        let clock_seam = Arc::new(SimClock(cluster.clock().clone()));
        let operator = start_operator(
            &cluster,
            operator_client.clone(),
            clock_seam.clone(),
            metrics.clone(),
            WatchScope::All,
            CONCURRENT_RECONCILES,
        );
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
        })
    }

    /// The simulated management cluster, for what only the sim does (the audit log, faults,
    /// its controllers, the virtual clock); on a real API server, an error naming `what`.
    pub fn needs_sim(&self, what: &str) -> Result<&Cluster, Error> {
        match &self.backend {
            Backend::Sim => Ok(&self.cluster),
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
        let applied = std::mem::take(&mut *self.applied.lock().unwrap_or_else(|p| p.into_inner()));
        let is_cr = |a: &&Applied| {
            a.resource.kind == "Barbican" || a.resource.kind == "BarbicanSecretStore"
        };
        let crs: Vec<&Applied> = applied.iter().filter(is_cr).collect();
        let cluster_scoped: Vec<&Applied> = applied
            .iter()
            .filter(|a| a.namespace.is_none() && !is_cr(a))
            .collect();
        for batch in [crs, cluster_scoped] {
            for object in &batch {
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
            for object in &batch {
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
        }
        Ok(())
    }

    /// Whether the management cluster is a real API server.
    pub fn on_real_cluster(&self) -> bool {
        self.backend != Backend::Sim
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

    /// Starts the target cluster `name` (with the Gateway API), accepting `token` from the
    /// operator, without registering it.
    pub async fn start_target(&self, name: &str, token: &str) -> Result<Arc<TargetCluster>, Error> {
        self.start_target_with(name, token, true).await
    }

    /// [`SimEnv::start_target`], with or without the Gateway API's CRDs.
    pub async fn start_target_with(
        &self,
        name: &str,
        token: &str,
        gateway_api: bool,
    ) -> Result<Arc<TargetCluster>, Error> {
        self.needs_sim("a second simulated cluster")?;
        let local_token = format!("{name}-local");
        let site = Site::start(self.clock(), gateway_api, &local_token)?;
        let plain = site.cluster.serve_on_loopback().await.map_err(text)?;
        let authority = Arc::new(barbican_fakes::tls::Authority::new());
        let ca_pem = authority.ca_pem();
        let front = barbican_fakes::tls::Front::start(authority, plain)
            .await
            .map_err(text)?;
        let target = Arc::new(TargetCluster {
            client: site.cluster.client_with_token(SCENARIO_AGENT, &local_token),
            site: Arc::new(site),
            addr: front.addr(),
            front,
            ca_pem,
            local_token,
            operator_token: Mutex::new(token.to_string()),
        });
        target.accept(&[token]);
        self.targets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), target.clone());
        Ok(target)
    }

    /// Registers the target cluster `name` (started first if it is not running) with a
    /// kubeconfig carrying its current operator token.
    pub async fn register_target(&self, name: &str) -> Result<Arc<TargetCluster>, Error> {
        self.register_target_for(name, None).await
    }

    /// [`SimEnv::register_target`] with the registration's `namespaces` list.
    pub async fn register_target_for(
        &self,
        name: &str,
        namespaces: Option<&str>,
    ) -> Result<Arc<TargetCluster>, Error> {
        let target = match self.target(name) {
            Ok(target) => target,
            Err(_) => self.start_target(name, &format!("{name}-operator")).await?,
        };
        let token = target
            .operator_token
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        self.register(name, &target.kubeconfig(&token), namespaces)
            .await?;
        Ok(target)
    }

    /// Writes the registration Secret of `name` with `kubeconfig` (and a `namespaces` list).
    pub async fn register(
        &self,
        name: &str,
        kubeconfig: &str,
        namespaces: Option<&str>,
    ) -> Result<(), Error> {
        let mut data = serde_json::json!({"kubeconfig": kubeconfig});
        if let Some(namespaces) = namespaces {
            data["namespaces"] = serde_json::json!(namespaces);
        }
        // On the management cluster, wherever the scenario works.
        let management = self.client.clone();
        self.apply_with(
            management.clone(),
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": CLUSTERS_NAMESPACE}}),
        )
        .await?;
        self.apply_with(
            management,
            serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": CLUSTERS_NAMESPACE,
                "labels": {REGISTRATION_LABEL: "true"}},
            "stringData": data}),
        )
        .await
        .map(|_| ())
    }

    /// Makes the operator reach the target cluster `name` (started if need be) as the
    /// ServiceAccount `namespace/account` there, which must exist, with that cluster enforcing
    /// RBAC from now on: a registration written afterwards carries the account's token.
    pub async fn run_target_operator_as(
        &self,
        name: &str,
        namespace: &str,
        account: &str,
    ) -> Result<Arc<TargetCluster>, Error> {
        let target = match self.target(name) {
            Ok(target) => target,
            Err(_) => self.start_target(name, &format!("{name}-operator")).await?,
        };
        let token = service_account_token(target.client.clone(), namespace, account).await?;
        target.site.cluster.enforce_rbac();
        *target
            .operator_token
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = token;
        Ok(target)
    }

    /// The names of the target clusters started so far.
    pub fn target_names(&self) -> Vec<String> {
        self.targets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// The target cluster `name`.
    pub fn target(&self, name: &str) -> Result<Arc<TargetCluster>, Error> {
        self.targets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
            .ok_or_else(|| format!("no target cluster {name:?} was started"))
    }

    /// Stops the operator and starts a new one, as a restarted pod would: nothing carries
    /// over but what the cluster stores, and the new process has fresh metrics.
    pub fn restart_operator(&mut self) {
        self.operator.abort();
        self.metrics = Arc::new(Metrics::new());
        self.operator = start_operator(
            &self.cluster,
            self.operator_client.clone(),
            self.clock_seam.clone(),
            self.metrics.clone(),
            self.watch_scope.clone(),
            self.concurrency,
        );
    }

    /// Restarts the operator running at most `concurrency` passes of each controller at once
    /// (`--max-concurrent-reconciles`).
    pub fn set_concurrency(&mut self, concurrency: u16) {
        self.concurrency = concurrency;
        self.restart_operator();
    }

    /// Restarts the operator watching only `scope` (`--watch-namespaces`).
    pub fn set_watch_scope(&mut self, scope: WatchScope) {
        self.watch_scope = scope;
        self.restart_operator();
    }

    /// Restarts the operator as the ServiceAccount `namespace/name` (which must exist), with
    /// the cluster enforcing RBAC from now on: the operator may do only what the stored
    /// ClusterRoles and Roles bound to that account grant, as in a real deployment. Returns
    /// the account's token, which the operator presents.
    pub async fn run_operator_as(&mut self, namespace: &str, name: &str) -> Result<String, Error> {
        let token = service_account_token(self.client.clone(), namespace, name).await?;
        self.cluster.enforce_rbac();
        self.operator_client = self.cluster.client_with_token(OPERATOR_AGENT, &token);
        self.restart_operator();
        Ok(token)
    }

    /// The virtual clock.
    pub fn clock(&self) -> &Clock {
        self.cluster.clock()
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
        let (applied, object) = apply_object(client, SCENARIO_AGENT, object).await?;
        if self.on_real_cluster() {
            self.applied
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(applied);
        }
        Ok(object)
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

    /// Checks `check` until it holds, moving virtual time one [`TICK`] (or a hundredth of
    /// `within`, if longer) at a time for at most `within` of it. The error carries the last
    /// answer.
    pub async fn eventually<F, Fut>(&self, within: Duration, mut check: F) -> Result<(), Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<(), Error>>,
    {
        let deadline = self.clock().now() + jiff::SignedDuration::try_from(within).map_err(text)?;
        // A second at a time, or a hundredth of a long wait: "within 25 minutes" then checks a
        // hundred times instead of fifteen hundred.
        let step = TICK.max(within / 100);
        loop {
            // A few real pauses per tick: the operator's passes run over real I/O.
            for _ in 0..4 {
                match check().await {
                    Ok(()) => return Ok(()),
                    Err(last) if self.clock().now() >= deadline => {
                        let time = if self.clock().is_virtual() {
                            "virtual time"
                        } else {
                            "wall time"
                        };
                        return Err(format!(
                            "still not so after {}s of {time}: {last}",
                            within.as_secs()
                        ));
                    }
                    Err(_) => tokio::time::sleep(REAL_PAUSE).await,
                }
            }
            self.clock().advance(step).await;
        }
    }

    /// Moves virtual time on by `span` the way [`SimEnv::eventually`] does, a step at a time
    /// with real pauses for the operator's round trips, so what the operator does within the
    /// span happens at its time, not all at the end.
    pub async fn let_time_pass(&self, span: Duration) {
        if !self.clock().is_virtual() {
            tokio::time::sleep(span).await;
            return;
        }
        let step = TICK.max(span / 100);
        let mut passed = Duration::ZERO;
        while passed < span {
            let next = step.min(span - passed);
            tokio::time::sleep(REAL_PAUSE).await;
            self.clock().advance(next).await;
            passed += next;
        }
    }

    /// How many passes the operator has started (the Secrets step leads every pass).
    pub fn passes(&self) -> u64 {
        self.metrics.step_runs("Secrets")
    }

    /// Brings one full pass over the Barbican and waits until its parallel group has run. The
    /// pass is woken by an annotation the scenario sets, not by moving time, so nothing that
    /// time would bring (a CronJob firing, a TTL) happens in between.
    pub async fn full_pass(&self, namespace: &str, name: &str) -> Result<(), Error> {
        const PARALLEL: [&str; 4] = ["HTTPRoute", "HealthCheck", "HPA", "NetworkPolicy"];
        let before: Vec<u64> = PARALLEL.iter().map(|s| self.metrics.step_runs(s)).collect();
        let poke = serde_json::json!({"metadata": {"annotations": {
            "barbican-features.example/poke": POKES.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string()
        }}});
        self.patch_barbican(namespace, name, &poke).await?;
        self.eventually(Duration::from_secs(60), || {
            let before = before.clone();
            async move {
                let done = PARALLEL
                    .iter()
                    .zip(&before)
                    .all(|(s, b)| self.metrics.step_runs(s) > *b);
                if done {
                    Ok(())
                } else {
                    Err("no full pass has run".into())
                }
            }
        })
        .await
    }

    /// Waits, without moving virtual time, until the operator has written nothing for a
    /// stretch of real time ([`QUIET`]), so writes still draining from what came before (a
    /// store's ConfigProjected catching up with a roll the scenario waited for) are over
    /// before a window that must be write-free opens. Fails after a minute of real time.
    pub async fn operator_quiet(&self) -> Result<(), Error> {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let mark = self.cluster.audit_mark();
            tokio::time::sleep(QUIET).await;
            let Some(last) = self.operator_writes_since(mark).pop() else {
                return Ok(());
            };
            if std::time::Instant::now() >= deadline {
                return Err(format!(
                    "the operator kept writing with virtual time standing still, last: {last}"
                ));
            }
        }
    }

    /// The operator's writes since `mark` (see [`Cluster::audit_mark`]).
    pub fn operator_writes_since(&self, mark: u64) -> Vec<Entry> {
        self.cluster
            .requests_since(mark)
            .into_iter()
            .filter(|e| e.user_agent == OPERATOR_AGENT && e.is_write())
            .collect()
    }

    /// The operator's reads of the management cluster after `mark` other than watches: the
    /// gets and lists a watch cache would have answered.
    pub fn operator_reads_since(&self, mark: u64) -> Vec<Entry> {
        self.cluster
            .requests_since(mark)
            .into_iter()
            .filter(|e| e.user_agent == OPERATOR_AGENT && !e.is_write() && !e.is_watch())
            .collect()
    }
}

impl SimEnv {
    /// The API of `kind` (as `apiVersion/kind`, or a bare built-in kind) in `namespace`.
    pub async fn api_of(&self, kind: &str, namespace: &str) -> Result<Api<DynamicObject>, Error> {
        let (api_version, kind) = api_version_of(kind)?;
        let resource = self.resource(api_version, kind).await?;
        Ok(Api::namespaced_with(
            self.client_for(kind),
            namespace,
            &resource,
        ))
    }
}

/// The apiVersion and kind of `kind` as the steps name it: a bare kind the scenarios use
/// (`Deployment`, `Barbican`, `MariaDB`, …), or `group/version/Kind`.
pub fn api_version_of(kind: &str) -> Result<(&str, &str), Error> {
    Ok(match kind {
        "Deployment" => ("apps/v1", "Deployment"),
        "Service" | "Secret" | "ConfigMap" => ("v1", kind),
        "PodDisruptionBudget" => ("policy/v1", kind),
        "HorizontalPodAutoscaler" => ("autoscaling/v2", kind),
        "NetworkPolicy" => ("networking.k8s.io/v1", kind),
        "HTTPRoute" => ("gateway.networking.k8s.io/v1", kind),
        "Barbican" | "BarbicanSecretStore" => ("barbican.openstack.c5c3.io/v1alpha1", kind),
        "Job" | "CronJob" => ("batch/v1", kind),
        "MariaDB" | "Database" | "User" | "Grant" => ("k8s.mariadb.com/v1alpha1", kind),
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

    /// Starts an external OpenBao called `name`, reachable as `https://<service>.<namespace>.svc:8200`.
    pub async fn start_external_openbao(
        &self,
        name: &str,
        namespace: &str,
        service: &str,
    ) -> Result<Arc<FakeOpenBao>, Error> {
        let fake = Arc::new(
            FakeOpenBao::start(self.clock().clone())
                .await
                .map_err(text)?,
        );
        self.cluster
            .services()
            .register(namespace, service, 8200, fake.addr());
        self.externals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), fake.clone());
        Ok(fake)
    }

    /// Also serves the external OpenBao `name` as `host:port` (a name outside the cluster,
    /// such as `vault.example.com`); its certificate is issued for whatever name is asked.
    pub fn expose_external_openbao(&self, name: &str, host: &str, port: u16) -> Result<(), Error> {
        let fake = self.started_external(name)?;
        self.cluster
            .services()
            .register_host(host, port, fake.addr());
        Ok(())
    }

    /// Gives the external OpenBao `name` a KV v2 `mount`, a `barbican` policy with the five
    /// capabilities on its data path, and AppRole auth, in its OpenBao `namespace`.
    pub fn provision_external_openbao(
        &self,
        name: &str,
        mount: &str,
        namespace: &str,
    ) -> Result<(), Error> {
        let fake = self.started_external(name)?;
        let path = format!("{mount}/data/*");
        let capabilities = ["create", "read", "update", "delete", "list"];
        fake.with_state(|state| {
            let space = state.space(namespace);
            space.mounts.insert(
                mount.to_string(),
                (
                    "kv".into(),
                    BTreeMap::from([("version".into(), "2".into())]),
                ),
            );
            space.policies.insert(
                "barbican".into(),
                Policy::new(&[(path.as_str(), &capabilities[..])]),
            );
            space.approle_enabled = true;
        });
        Ok(())
    }

    /// Creates the `barbican` AppRole of the external OpenBao `name` in its OpenBao
    /// `namespace`, with one secret ID, and writes the pair into the Secret `secret` in
    /// `secret_namespace` (`role-id`, `secret-id`).
    pub async fn issue_external_credentials(
        &self,
        name: &str,
        namespace: &str,
        secret: &str,
        secret_namespace: &str,
    ) -> Result<(), Error> {
        let fake = self.started_external(name)?;
        let (role_id, secret_id) = fake.with_state(|state| {
            let (role_id, secret_id, accessor) = (state.mint(""), state.mint(""), state.mint(""));
            state.space(namespace).approles.insert(
                "barbican".into(),
                AppRole {
                    role_id: role_id.clone(),
                    token_policies: vec!["barbican".into()],
                    secret_id_ttl: 0,
                    token_ttl: 3600,
                    secret_ids: BTreeMap::from([(
                        secret_id.clone(),
                        SecretId {
                            accessor,
                            expires: None,
                            revoked: false,
                        },
                    )]),
                },
            );
            (role_id, secret_id)
        });
        self.apply(serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": secret, "namespace": secret_namespace},
            "stringData": {"role-id": role_id, "secret-id": secret_id}}))
            .await
            .map(|_| ())
    }

    /// Writes the CA bundle of the external OpenBao `name` as `ca.crt` of the Secret `secret`.
    pub async fn publish_external_ca(
        &self,
        name: &str,
        secret: &str,
        namespace: &str,
    ) -> Result<(), Error> {
        let fake = self.started_external(name)?;
        self.apply(serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": secret, "namespace": namespace},
            "stringData": {"ca.crt": fake.ca_pem()}}))
            .await
            .map(|_| ())
    }

    /// The external OpenBao called `name`, or the error of a scenario that never started it.
    pub fn started_external(&self, name: &str) -> Result<Arc<FakeOpenBao>, Error> {
        self.external_openbao(name)
            .ok_or_else(|| format!("no external OpenBao {name:?} was started"))
    }

    /// The external OpenBao called `name`.
    pub fn external_openbao(&self, name: &str) -> Option<Arc<FakeOpenBao>> {
        self.externals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    /// The config Secret the Deployment `namespace/name` mounts, and its barbican.conf.
    pub async fn mounted_conf(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<(String, String), Error> {
        let deployment = self
            .get("Deployment", namespace, name)
            .await?
            .ok_or_else(|| format!("Deployment {namespace}/{name} does not exist"))?;
        let secret = deployment
            .data
            .pointer("/spec/template/spec/volumes/0/secret/secretName")
            .and_then(|v| v.as_str())
            .ok_or("the Deployment mounts no config Secret")?
            .to_string();
        let config = self
            .get("Secret", namespace, &secret)
            .await?
            .ok_or_else(|| format!("config Secret {secret} does not exist"))?;
        let encoded = config.data["data"]["barbican.conf"]
            .as_str()
            .unwrap_or_default();
        let conf = barbican_sim::tokens::base64_decode(encoded)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        Ok((secret, conf))
    }

    /// Notes `value` under `key`.
    pub fn remember(&self, key: &str, value: String) {
        self.notes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_string(), value);
    }

    /// What was noted under `key`.
    pub fn remembered(&self, key: &str) -> Option<String> {
        self.notes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    /// The value at the JSON `pointer` of an object of `kind` (strings as they are, anything
    /// else as JSON); `None` when the field is not set.
    pub async fn read_pointer(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
        pointer: &str,
    ) -> Result<Option<String>, Error> {
        let object = self
            .get(kind, namespace, name)
            .await?
            .ok_or_else(|| format!("{kind} {namespace}/{name} does not exist"))?;
        let json = serde_json::to_value(&object).map_err(text)?;
        Ok(json.pointer(pointer).map(|v| {
            v.as_str()
                .map(String::from)
                .unwrap_or_else(|| v.to_string())
        }))
    }

    /// Every secret ID any OpenBao of the scenario issued: on the management cluster, on every
    /// target cluster, and the external ones.
    pub(crate) fn issued_secret_ids(&self) -> Vec<String> {
        let mut sites = vec![self.site.clone()];
        sites.extend(
            self.targets
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .values()
                .map(|t| t.site.clone()),
        );
        let mut servers: Vec<Arc<FakeOpenBao>> = sites
            .iter()
            .flat_map(|site| {
                site.openbao
                    .instances
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .values()
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .collect();
        servers.extend(
            self.externals
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .values()
                .cloned(),
        );
        servers
            .iter()
            .flat_map(|s| {
                s.with_state(|state| {
                    state
                        .spaces
                        .values()
                        .flat_map(|space| space.approles.values())
                        .flat_map(|role| role.secret_ids.keys().cloned())
                        .collect::<Vec<_>>()
                })
            })
            .collect()
    }

    /// Checks that no issued secret ID appears in `namespace` outside the Secrets that hold
    /// credentials (a `secret-id` key): not in a config Secret, an event, a condition, a
    /// Deployment's pod template, or the operator's log.
    pub async fn secret_ids_stay_put(&self, namespace: &str) -> Result<(), Error> {
        let ids = self.issued_secret_ids();
        if ids.is_empty() {
            return Err("no OpenBao issued a secret ID: nothing to check".into());
        }
        self.nowhere_in(namespace, &ids, "a secret ID").await
    }

    /// Checks that none of `planted` appears in `namespace` outside the Secrets that hold
    /// credentials (a `secret-id` key) and the registration Secrets: not in another Secret, an
    /// event, a CR or a Deployment, not in the operator's log, and not in its `/metrics`.
    pub async fn nowhere_in(
        &self,
        namespace: &str,
        planted: &[String],
        what: &str,
    ) -> Result<(), Error> {
        let mut places: Vec<(String, String)> = Vec::new();
        places.push(("the operator's /metrics".into(), self.metrics.render()));
        let secrets = Api::<k8s_openapi::api::core::v1::Secret>::namespaced(
            self.scenario_client(),
            namespace,
        )
        .list(&Default::default())
        .await
        .map_err(text)?;
        for secret in secrets.items {
            let data = secret.data.clone().unwrap_or_default();
            if data.contains_key("secret-id") {
                continue;
            }
            let content: String = data
                .values()
                .map(|v| String::from_utf8_lossy(&v.0).into_owned())
                .collect();
            places.push((format!("Secret {}", secret.name_any()), content));
        }
        for (reason, note) in [self.all_events(namespace).await?].concat() {
            places.push((format!("event {reason}"), note));
        }
        for kind in ["Barbican", "BarbicanSecretStore", "Deployment"] {
            let list = self
                .api_of(kind, namespace)
                .await?
                .list(&Default::default())
                .await
                .map_err(text)?;
            for object in list.items {
                // A CR's spec is what its tenant wrote; what the operator wrote is its status.
                let mut json = serde_json::to_value(&object).map_err(text)?;
                if kind != "Deployment"
                    && let Some(fields) = json.as_object_mut()
                {
                    fields.remove("spec");
                }
                places.push((format!("{kind} {}", object.name_any()), json.to_string()));
            }
        }
        let log = crate::log_capture::contents();
        if log.is_empty() {
            return Err("the operator's log is not captured in this process".into());
        }
        places.push(("the operator's log".into(), log));
        let leaks: Vec<String> = places
            .iter()
            .filter(|(_, content)| planted.iter().any(|id| content.contains(id.as_str())))
            .map(|(place, _)| place.clone())
            .collect();
        if leaks.is_empty() {
            Ok(())
        } else {
            Err(format!("{what} appears in: {}", leaks.join(", ")))
        }
    }

    async fn all_events(&self, namespace: &str) -> Result<Vec<(String, String)>, Error> {
        let api =
            Api::<k8s_openapi::api::events::v1::Event>::namespaced(self.client.clone(), namespace);
        Ok(api
            .list(&Default::default())
            .await
            .map_err(text)?
            .items
            .into_iter()
            .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
            .collect())
    }

    /// The Events about `name` in `namespace`.
    async fn events_about(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<k8s_openapi::api::events::v1::Event>, Error> {
        let api =
            Api::<k8s_openapi::api::events::v1::Event>::namespaced(self.client.clone(), namespace);
        let events = api
            .list(&Default::default())
            .await
            .map_err(|e| format!("listing events: {e}"))?;
        Ok(events
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .collect())
    }

    /// The series counts of the `reason` Events about `name` in `namespace`, one entry per
    /// Event object (1 for an Event without a series).
    pub async fn event_counts(
        &self,
        namespace: &str,
        name: &str,
        reason: &str,
    ) -> Result<Vec<i32>, Error> {
        Ok(self
            .events_about(namespace, name)
            .await?
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .map(|e| e.series.map_or(1, |s| s.count))
            .collect())
    }

    /// The reasons of the events about `name` in `namespace` with type `severity`.
    pub async fn event_reasons(
        &self,
        namespace: &str,
        name: &str,
        severity: &str,
    ) -> Result<Vec<(String, String)>, Error> {
        Ok(self
            .events_about(namespace, name)
            .await?
            .into_iter()
            .filter(|e| e.type_.as_deref() == Some(severity))
            .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
            .collect())
    }
}
