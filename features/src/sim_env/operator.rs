//! The operator in this process: started, restarted with other flags or another identity.

use super::*;

/// Starts the operator's Barbican controller against `cluster`, reporting into `metrics`, with
/// the registry of target clusters following the registration Secrets in
/// [`CLUSTERS_NAMESPACE`] (a fresh registry per start, as in a new process).
pub(super) fn start_operator(
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

impl SimEnv {
    /// Whether the operator runs in this process; against the chart's installed pods
    /// ([`crate::backend::INSTALLED_OPERATOR_VAR`]), the error a step of
    /// [`crate::backend::IN_PROCESS_STEPS`] fails with.
    pub fn operator_in_process(&self) -> Result<(), Error> {
        match &self.backend {
            Backend::Cluster {
                installed_operator: Some(_),
                ..
            } => Err(format!(
                "the operator runs as the chart's pods here, not in this process: tag the scenario @{}",
                crate::backend::IN_PROCESS_OPERATOR
            )),
            _ => Ok(()),
        }
    }

    /// The in-process operator's metrics; a step reading them against the chart's installed
    /// pods fails saying so (their counters are in the pods, not here).
    pub fn operator_metrics(&self) -> &Metrics {
        if let Err(e) = self.operator_in_process() {
            panic!("{e}");
        }
        &self.metrics
    }

    /// Stops the operator and starts a new one, as a restarted pod would: nothing carries
    /// over but what the cluster stores, and the new process has fresh metrics.
    pub fn restart_operator(&mut self) {
        if let Err(e) = self.operator_in_process() {
            panic!("{e}");
        }
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
        let token =
            crate::chart_identity::service_account_token(self.client.clone(), namespace, name)
                .await?;
        self.cluster.enforce_rbac();
        self.operator_client = self.cluster.client_with_token(OPERATOR_AGENT, &token);
        self.restart_operator();
        Ok(token)
    }
}
