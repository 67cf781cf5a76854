//! The management cluster's site and the target clusters: started, registered, focused on.

use super::*;

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
    /// The barbican API stand-ins (none when a kubelet runs real barbican).
    pub barbican_api: Option<BarbicanApi>,
    /// The fake mariadb-operator.
    pub mariadb: MariaDbOperator,
    /// The Gateway API route controller, when the cluster serves the Gateway API.
    pub gateway: Option<GatewayApi>,
    /// The fake OpenBao operator and the OpenBao behind each OpenBaoCluster.
    pub openbao: OpenBaoOperator,
    /// What runs barbican for real ([`Backend::RealBarbican`]).
    pub real: Option<RealBarbican>,
    /// The fake Keystone, as `keystone.openstack.svc:5000`: what barbican's authtoken asks
    /// (with real barbican) and where the operator registers `spec.keystone.catalog`.
    pub keystone: FakeKeystone,
    /// The fake cert-manager: the API's certificate (`spec.tls.issuerRef`), the chart's
    /// webhook certificate. `None` where the API server brings its own (the served sim the
    /// chart is installed on).
    pub cert_manager: Option<barbican_fakes::cert_manager::CertManager>,
    /// Volumes for claims, on a real API server without a provisioner (a control plane of
    /// Kubernetes' own binaries); `None` on the sim and where a storage class provisions.
    pub volumes: Option<barbican_fakes::volumes::Provisioner>,
}

/// The parts of a site that run real processes: the kubelet with its pods and the MariaDB
/// server behind the fake mariadb-operator.
pub struct RealBarbican {
    /// The kubelet.
    pub kubelet: barbican_sim::kubelet::Kubelet,
    /// The MariaDB server.
    pub mariadb: Arc<tokio::sync::Mutex<MariaDbServer>>,
    /// The scenario's directory (pods, the database's data), removed with the site.
    pub dir: std::path::PathBuf,
    /// Where the cluster is served on loopback and the kubeconfig for it, once asked for.
    served: tokio::sync::OnceCell<std::path::PathBuf>,
}

impl RealBarbican {
    /// Whether [`RealBarbican::kubeconfig`] has served the cluster.
    pub fn is_served(&self) -> bool {
        self.served.initialized()
    }

    /// A kubeconfig for the cluster served on a loopback port (HTTP, as its administrator),
    /// the first call starting the listener: what `helm` and `kubectl` are given.
    pub async fn kubeconfig(&self, cluster: &Cluster) -> Result<std::path::PathBuf, Error> {
        self.served
            .get_or_try_init(|| async {
                let addr = cluster.serve_on_loopback().await.map_err(text)?;
                let path = self.dir.join("kubeconfig");
                let config = crate::backend::kubeconfig(&format!("http://{addr}"), None);
                std::fs::write(&path, config).map_err(text)?;
                Ok(path)
            })
            .await
            .cloned()
    }

    /// Stops the pods (gracefully, as a kubelet does), the MariaDB server, and removes the
    /// site's directory.
    pub async fn stop(&self) {
        self.kubelet.stop_pods().await;
        self.mariadb.lock().await.stop().await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for RealBarbican {
    fn drop(&mut self) {
        // The kubelet stops its pods on its own task; the directory goes once they are gone,
        // or with the run's private namespace.
        let _ = std::fs::remove_dir_all(self.dir.join("mariadb"));
    }
}

/// A simulated cluster on `clock` with the Deployment, Job, CronJob and HPA controllers, the
/// third-party CRDs (the Gateway API's when `gateway_api`) and the operator's.
fn simulated_cluster(clock: &Clock, gateway_api: bool) -> Result<Cluster, Error> {
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
    Ok(cluster)
}

impl Site {
    /// A site on `clock`; its fakes present `token` when the cluster requires one.
    pub fn start(clock: &Clock, gateway_api: bool, token: &str) -> Result<Self, Error> {
        let cluster = simulated_cluster(clock, gateway_api)?;
        let fakes = cluster.client_with_token("fakes", token);
        Self::with_fakes(cluster, fakes, clock, gateway_api, true)
    }

    /// A site on the wall clock whose kubelet runs the images `runtimes` maps for real, with
    /// a real MariaDB behind the fake mariadb-operator and a fake Keystone registered as
    /// `keystone.openstack.svc:5000`; everything it keeps is under a directory of its own in
    /// `state_dir`.
    pub(super) async fn start_real_barbican(
        runtimes: &[barbican_sim::kubelet::Runtime],
        state_dir: &std::path::Path,
    ) -> Result<Self, Error> {
        static SITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let clock = Clock::wall();
        let cluster = simulated_cluster(&clock, true)?;
        let n = SITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = state_dir.join(format!("site-{n}"));
        let server = MariaDbServer::start(&dir.join("mariadb"))
            .await
            .map_err(text)?;
        let mariadb = Arc::new(tokio::sync::Mutex::new(server));
        let keystone = start_keystone(&cluster, &clock)?;
        let kubelet = barbican_sim::kubelet::Kubelet::start(
            &cluster,
            barbican_sim::kubelet::KubeletConfig::new(runtimes.to_vec(), dir.join("pods")),
        )
        .await
        .map_err(text)?;
        let fakes = cluster.client_as("fakes");
        Ok(Self {
            external_secrets: ExternalSecrets::start(fakes.clone(), clock.clone()),
            barbican_api: None,
            mariadb: MariaDbOperator::start_real(
                fakes.clone(),
                clock.clone(),
                mariadb.clone(),
                cluster.services(),
            ),
            openbao: OpenBaoOperator::start(fakes.clone(), clock.clone(), cluster.services()),
            gateway: Some(GatewayApi::start(fakes.clone(), clock.clone())),
            keystone,
            real: Some(RealBarbican {
                kubelet,
                mariadb,
                dir,
                served: tokio::sync::OnceCell::new(),
            }),
            cert_manager: Some(barbican_fakes::cert_manager::CertManager::start(
                fakes.clone(),
                clock.clone(),
            )),
            volumes: None,
            cluster,
        })
    }

    /// A site on the real API server `client` talks to: the third-party CRDs and the
    /// operator's are created where missing, and the fakes run here, on the host, on the wall
    /// clock (cert-manager's only when `cert_manager`: not where the API server runs one).
    pub(super) async fn on_api_server(
        client: Client,
        gateway_api: bool,
        cert_manager: bool,
    ) -> Result<Self, Error> {
        let clock = Clock::wall();
        let mut definitions = crds::served(gateway_api);
        for definition in crd::definitions() {
            definitions.push(serde_json::to_value(definition).map_err(text)?);
        }
        crate::backend::ensure_crds(&client, definitions).await?;
        let host = Cluster::with_clock(clock.clone());
        let volumes =
            barbican_fakes::volumes::Provisioner::start_where_served(client.clone()).await;
        let mut site = Self::with_fakes(host, client, &clock, gateway_api, cert_manager)?;
        site.volumes = volumes;
        Ok(site)
    }

    pub(super) fn with_fakes(
        cluster: Cluster,
        fakes: Client,
        clock: &Clock,
        gateway_api: bool,
        cert_manager: bool,
    ) -> Result<Self, Error> {
        Ok(Self {
            cert_manager: cert_manager.then(|| {
                barbican_fakes::cert_manager::CertManager::start(fakes.clone(), clock.clone())
            }),
            keystone: start_keystone(&cluster, clock)?,
            external_secrets: ExternalSecrets::start(fakes.clone(), clock.clone()),
            barbican_api: Some(BarbicanApi::start(fakes.clone(), cluster.services())),
            mariadb: MariaDbOperator::start(fakes.clone(), clock.clone()),
            openbao: OpenBaoOperator::start(fakes.clone(), clock.clone(), cluster.services()),
            gateway: gateway_api.then(|| GatewayApi::start(fakes, clock.clone())),
            real: None,
            volumes: None,
            cluster,
        })
    }
}

/// A fake Keystone on `clock`, registered on `cluster` as `keystone.openstack.svc:5000` (the
/// examples' `keystoneEndpoint`); its version documents and catalog name it so, as pods and
/// the operator reach it, not by its loopback listener.
fn start_keystone(cluster: &Cluster, clock: &Clock) -> Result<FakeKeystone, Error> {
    let keystone = FakeKeystone::start_now(clock.clone()).map_err(text)?;
    keystone.set_public_url("http://keystone.openstack.svc:5000");
    cluster
        .services()
        .register("openstack", "keystone", 5000, keystone.addr());
    Ok(keystone)
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

impl SimEnv {
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
        let token =
            crate::chart_identity::service_account_token(target.client.clone(), namespace, account)
                .await?;
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

    /// Audit marks of every started target cluster, for [`SimEnv::target_writes_since`].
    pub fn target_marks(&self) -> Vec<(Arc<TargetCluster>, u64)> {
        self.targets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|t| (t.clone(), t.site.cluster.audit_mark()))
            .collect()
    }

    /// The operator's writes to the target clusters since `marks` (their audit marks), so
    /// that waiting for quiet also waits for a pass that writes only to a target cluster.
    pub fn target_writes_since(&self, marks: &[(Arc<TargetCluster>, u64)]) -> Vec<Entry> {
        marks
            .iter()
            .flat_map(|(target, mark)| target.site.cluster.requests_since(*mark))
            .filter(|e| e.user_agent.starts_with(OPERATOR_AGENT) && e.is_write())
            .collect()
    }
}
