//! What the soak watches while the schedule runs: its own watches on Jobs and NetworkPolicies,
//! and the [`Observer`] that checks every [`Invariant`] after each step of virtual time.

use super::*;

/// A Job as the soak's own watch saw it.
#[derive(Clone, Debug, Default)]
pub(super) struct SeenJob {
    pub(super) site: String,
    pub(super) namespace: String,
    pub(super) name: String,
    pub(super) image: String,
    pub(super) succeeded: bool,
    pub(super) failed: bool,
}

/// Every Job any site ran, by site and uid, kept after the Jobs are deleted.
pub(super) type Ledger = Arc<Mutex<BTreeMap<(String, String), SeenJob>>>;

/// Watches the Jobs of `client`'s cluster into `ledger` until dropped.
pub(super) fn watch_jobs(
    site: &str,
    client: Client,
    ledger: Ledger,
) -> tokio::task::JoinHandle<()> {
    let site = site.to_string();
    tokio::spawn(async move {
        let mut stream =
            std::pin::pin!(watcher(Api::<Job>::all(client), watcher::Config::default()));
        while let Some(event) = stream.next().await {
            let job = match event {
                Ok(watcher::Event::Apply(job) | watcher::Event::InitApply(job)) => job,
                _ => continue,
            };
            let status = job.status.clone().unwrap_or_default();
            let holds = |kind: &str| {
                status
                    .conditions
                    .iter()
                    .flatten()
                    .any(|c| c.type_ == kind && c.status == "True")
            };
            let image = job
                .spec
                .as_ref()
                .and_then(|s| s.template.spec.as_ref())
                .and_then(|s| s.containers.first())
                .and_then(|c| c.image.clone())
                .unwrap_or_default();
            let seen = SeenJob {
                site: site.clone(),
                namespace: job.namespace().unwrap_or_default(),
                name: job.name_any(),
                image,
                succeeded: holds("Complete"),
                failed: holds("Failed"),
            };
            let key = (site.clone(), job.uid().unwrap_or_default());
            let mut ledger = ledger.lock().unwrap_or_else(|p| p.into_inner());
            let entry = ledger.entry(key).or_insert(seen.clone());
            entry.succeeded |= seen.succeeded;
            entry.failed |= seen.failed;
        }
    })
}

/// Every version of a NetworkPolicy named like the examples' Barbicans, as (namespace, egress
/// ports), in the order the soak's watches saw them: a widening the operator undoes within
/// milliseconds is still seen.
pub(super) type PolicyVersions = Arc<Mutex<Vec<(String, BTreeSet<i32>)>>>;

/// Watches the NetworkPolicies of `client`'s cluster into `versions` until dropped.
pub(super) fn watch_policies(
    client: Client,
    versions: PolicyVersions,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(watcher(
            Api::<NetworkPolicy>::all(client),
            watcher::Config::default()
        ));
        while let Some(event) = stream.next().await {
            if let Ok(watcher::Event::Apply(p) | watcher::Event::InitApply(p)) = event
                && p.name_any() == NAME
            {
                versions
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((p.namespace().unwrap_or_default(), egress_ports(&p)));
            }
        }
    })
}

/// A Barbican of the examples and where its children are.
#[derive(Clone)]
pub(super) struct Subject {
    pub(super) namespace: &'static str,
    /// `None` for the management cluster, else the target cluster's name.
    pub(super) site: Option<&'static str>,
}

pub(super) const SUBJECTS: [Subject; 3] = [
    Subject {
        namespace: NAMESPACE,
        site: None,
    },
    Subject {
        namespace: LEGACY,
        site: None,
    },
    Subject {
        namespace: FULL,
        site: Some(REGION),
    },
];

/// What the checks remember from one step to the next.
pub(super) struct Observer {
    pub(super) seed: u64,
    pub(super) started: jiff::Timestamp,
    pub(super) ledger: Ledger,
    pub(super) _watches: Vec<tokio::task::JoinHandle<()>>,
    pub(super) violations: Vec<Violation>,
    pub(super) reported: BTreeSet<(Invariant, String)>,
    pub(super) log_offset: usize,
    /// The installedRelease each Barbican had at the last step, and changes still to confirm.
    pub(super) releases: BTreeMap<&'static str, Option<String>>,
    pub(super) promotions: Vec<(&'static str, String, Option<String>)>,
    /// Egress ports allowed per Barbican, and the ports seen at the last step (checked one
    /// step later, once the pass that wrote them has also written its record).
    pub(super) allowed_ports: BTreeMap<&'static str, BTreeSet<i32>>,
    pub(super) policy_versions: PolicyVersions,
    pub(super) pending_ports: Vec<(String, BTreeSet<i32>)>,
    /// The config Secret each Deployment mounted at the last step.
    pub(super) mounted: BTreeMap<&'static str, String>,
    pub(super) audit_marks: BTreeMap<String, u64>,
    /// Jobs counted by operator processes that were since restarted, per (namespace, kind).
    pub(super) counted_before: BTreeMap<(&'static str, usize), u64>,
    /// db-sync/db-clean counts seen at the last step, confirmed one step later.
    pub(super) pending_counts: Vec<(&'static str, usize, u64)>,
    pub(super) last_restart: jiff::Timestamp,
}

impl Observer {
    pub(super) fn violation(
        &mut self,
        env: &SimEnv,
        invariant: Invariant,
        subject: &str,
        detail: String,
    ) {
        if self.reported.insert((invariant, subject.to_string())) {
            self.violations.push(Violation {
                seed: self.seed,
                at: elapsed(env, self.started),
                invariant,
                detail,
            });
        }
    }
}

pub(super) fn elapsed(env: &SimEnv, since: jiff::Timestamp) -> u64 {
    env.clock()
        .now()
        .duration_since(since)
        .as_secs()
        .max(0)
        .unsigned_abs()
}

/// The cluster that holds a subject's children.
pub(super) fn children_client(env: &SimEnv, subject: &Subject) -> Result<Client, Error> {
    match subject.site {
        None => Ok(env.client.clone()),
        Some(name) => Ok(env.target(name)?.client.clone()),
    }
}

/// The port a URL reaches: its own, else the scheme's.
pub fn url_port(url: &str) -> Option<i32> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    match authority.rsplit_once(':') {
        Some((_, port)) => port.parse().ok(),
        None if url.starts_with("http://") => Some(80),
        None => Some(443),
    }
}

pub(super) fn egress_ports(policy: &NetworkPolicy) -> BTreeSet<i32> {
    policy
        .spec
        .iter()
        .flat_map(|s| s.egress.iter().flatten())
        .flat_map(|rule| rule.ports.iter().flatten())
        .filter_map(|p| match &p.port {
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(n)) => Some(*n),
            _ => None,
        })
        .collect()
}

/// Every value that must never leave the Secrets that hold it: the secret IDs every OpenBao
/// issued and the passwords of the examples' input Secrets.
pub(super) async fn secret_material(env: &SimEnv) -> Vec<String> {
    let mut material = env.issued_secret_ids();
    for subject in &SUBJECTS {
        let Ok(client) = children_client(env, subject) else {
            continue;
        };
        let secrets = Api::<Secret>::namespaced(client, subject.namespace);
        for name in ["barbican-db", "barbican-keystone"] {
            if let Ok(Some(secret)) = secrets.get_opt(name).await
                && let Some(password) = secret.data.unwrap_or_default().get("password")
            {
                material.push(String::from_utf8_lossy(&password.0).into_owned());
            }
        }
    }
    material.retain(|m| m.len() >= 8);
    material.sort();
    material.dedup();
    material
}

impl Observer {
    pub(super) async fn start(env: &SimEnv, seed: u64) -> Result<Self, Error> {
        let ledger: Ledger = Arc::default();
        let policy_versions: PolicyVersions = Arc::default();
        let mut watches = vec![
            watch_jobs("management", env.client.clone(), ledger.clone()),
            watch_policies(env.client.clone(), policy_versions.clone()),
        ];
        if let Ok(target) = env.target(REGION) {
            watches.push(watch_jobs(REGION, target.client.clone(), ledger.clone()));
            watches.push(watch_policies(
                target.client.clone(),
                policy_versions.clone(),
            ));
        }
        Ok(Self {
            seed,
            started: env.clock().now(),
            ledger,
            _watches: watches,
            violations: Vec::new(),
            reported: BTreeSet::new(),
            log_offset: crate::log_capture::since(usize::MAX).1,
            releases: BTreeMap::new(),
            promotions: Vec::new(),
            allowed_ports: BTreeMap::new(),
            policy_versions,
            pending_ports: Vec::new(),
            mounted: BTreeMap::new(),
            audit_marks: BTreeMap::new(),
            counted_before: BTreeMap::new(),
            pending_counts: Vec::new(),
            last_restart: env.clock().now(),
        })
    }

    /// Records the converged state the invariants compare against: each Barbican's release
    /// and its NetworkPolicy's egress ports.
    pub(super) async fn baseline(&mut self, env: &SimEnv) -> Result<(), Error> {
        for subject in &SUBJECTS {
            let barbican = env.barbican(subject.namespace, NAME).await?;
            let status = barbican.status.unwrap_or_default();
            self.releases
                .insert(subject.namespace, status.installed_release.clone());
            let policies =
                Api::<NetworkPolicy>::namespaced(children_client(env, subject)?, subject.namespace);
            let ports = policies
                .get_opt(NAME)
                .await
                .map_err(|e| e.to_string())?
                .map(|p| egress_ports(&p))
                .unwrap_or_default();
            self.allowed_ports.insert(subject.namespace, ports);
        }
        for site in self.sites(env) {
            self.audit_marks.insert(site.0.clone(), site.1.audit_mark());
        }
        // What the policies were while converging is the baseline's own history.
        self.policy_versions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.started = env.clock().now();
        Ok(())
    }

    pub(super) fn sites(&self, env: &SimEnv) -> Vec<(String, barbican_sim::Cluster)> {
        let mut sites = vec![("management".to_string(), env.cluster.clone())];
        if let Ok(target) = env.target(REGION) {
            sites.push((REGION.to_string(), target.site.cluster.clone()));
        }
        sites
    }

    /// The operator is about to be restarted: its metrics go with it.
    pub(super) fn before_restart(&mut self, env: &SimEnv) {
        for subject in &SUBJECTS {
            for kind in [JobKind::DbSync, JobKind::DbClean] {
                *self
                    .counted_before
                    .entry((subject.namespace, kind as usize))
                    .or_default() += env.metrics.jobs_counted(kind, NAME, subject.namespace);
            }
        }
        self.last_restart = env.clock().now();
    }

    /// Checks every invariant once.
    pub(super) async fn check(&mut self, env: &SimEnv) {
        self.check_secret_material(env).await;
        self.check_mounted_config(env).await;
        self.check_egress(env).await;
        self.check_releases(env).await;
        self.check_job_counts(env);
        self.check_terminating(env).await;
    }

    pub(super) async fn check_secret_material(&mut self, env: &SimEnv) {
        let material = secret_material(env).await;
        if material.is_empty() {
            return;
        }
        let mut places: Vec<(String, String)> = Vec::new();
        let (log, end) = crate::log_capture::since(self.log_offset);
        places.push(("the operator's log".into(), log));
        self.log_offset = end;
        for subject in &SUBJECTS {
            let Ok(client) = children_client(env, subject) else {
                continue;
            };
            let prefix = format!("{NAME}-config-");
            if let Ok(list) = Api::<Secret>::namespaced(client, subject.namespace)
                .list(&ListParams::default())
                .await
            {
                for secret in list
                    .items
                    .iter()
                    .filter(|s| s.name_any().starts_with(&prefix))
                {
                    let content: String = secret
                        .data
                        .iter()
                        .flatten()
                        .map(|(_, v)| String::from_utf8_lossy(&v.0).into_owned())
                        .collect();
                    places.push((
                        format!("Secret {}/{}", subject.namespace, secret.name_any()),
                        content,
                    ));
                }
            }
        }
        if let Ok(events) = Api::<k8s_openapi::api::events::v1::Event>::all(env.client.clone())
            .list(&ListParams::default())
            .await
        {
            for event in events.items {
                places.push((
                    format!(
                        "event {} about {}",
                        event.reason.clone().unwrap_or_default(),
                        event
                            .regarding
                            .as_ref()
                            .and_then(|r| r.name.clone())
                            .unwrap_or_default()
                    ),
                    event.note.unwrap_or_default(),
                ));
            }
        }
        for kind in ["Barbican", "BarbicanSecretStore"] {
            for subject in &SUBJECTS {
                if let Ok(api) = env.api_of(kind, subject.namespace).await
                    && let Ok(list) = api.list(&ListParams::default()).await
                {
                    for object in list.items {
                        places.push((
                            format!(
                                "status of {kind} {}/{}",
                                subject.namespace,
                                object.name_any()
                            ),
                            object.data["status"].to_string(),
                        ));
                    }
                }
            }
        }
        let leaks: Vec<(String, String)> = places
            .into_iter()
            .filter(|(_, content)| material.iter().any(|m| content.contains(m.as_str())))
            .collect();
        for (place, _) in leaks {
            self.violation(
                env,
                Invariant::NoSecretMaterial,
                &place,
                format!("secret material appears in {place}"),
            );
        }
    }

    pub(super) async fn check_mounted_config(&mut self, env: &SimEnv) {
        // Deletions since the last step, from each cluster's audit log.
        let mut deleted: Vec<(String, String)> = Vec::new();
        for (site, cluster) in self.sites(env) {
            let mark = self.audit_marks.get(&site).copied().unwrap_or_default();
            for entry in cluster.requests_since(mark) {
                if entry.method == "DELETE"
                    && entry.code < 300
                    && let Some(rest) = entry.path.split('?').next()
                    && let Some((_, tail)) = rest.split_once("/api/v1/namespaces/")
                    && let Some((namespace, name)) = tail.split_once("/secrets/")
                {
                    deleted.push((namespace.to_string(), name.to_string()));
                }
            }
            self.audit_marks.insert(site, cluster.audit_mark());
        }
        for subject in &SUBJECTS {
            let Ok(client) = children_client(env, subject) else {
                continue;
            };
            let deployment = match Api::<Deployment>::namespaced(client.clone(), subject.namespace)
                .get_opt(NAME)
                .await
            {
                Ok(Some(d)) => d,
                _ => continue,
            };
            if deployment.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let Some(now) = mounted_config(&deployment) else {
                continue;
            };
            let before = self.mounted.insert(subject.namespace, now.clone());
            for name in [Some(now.clone()), before].into_iter().flatten() {
                if deleted
                    .iter()
                    .any(|(ns, n)| ns == subject.namespace && *n == name)
                {
                    self.violation(
                        env,
                        Invariant::MountedConfigKept,
                        &format!("{}/{name}", subject.namespace),
                        format!(
                            "the config Secret {}/{name} was deleted while the Deployment mounted it",
                            subject.namespace
                        ),
                    );
                }
            }
            if let Ok(None) = Api::<Secret>::namespaced(client, subject.namespace)
                .get_opt(&now)
                .await
            {
                self.violation(
                    env,
                    Invariant::MountedConfigKept,
                    &format!("{}/{now}", subject.namespace),
                    format!(
                        "the Deployment {}/{NAME} mounts {now}, which does not exist",
                        subject.namespace
                    ),
                );
            }
        }
    }

    pub(super) async fn check_egress(&mut self, env: &SimEnv) {
        // The ports the valid projections named, from the records and the rendered configs.
        for subject in &SUBJECTS {
            if let Ok(barbican) = env.barbican(subject.namespace, NAME).await {
                let hosts = barbican
                    .status
                    .unwrap_or_default()
                    .projected_secret_store_hosts;
                let allowed = self.allowed_ports.entry(subject.namespace).or_default();
                allowed.extend(hosts.iter().filter_map(|h| url_port(h)));
            }
        }
        for (namespace, ports) in std::mem::take(&mut self.pending_ports) {
            let Some(subject) = SUBJECTS.iter().find(|s| s.namespace == namespace) else {
                continue;
            };
            let allowed = self
                .allowed_ports
                .get(subject.namespace)
                .cloned()
                .unwrap_or_default();
            let outside: Vec<i32> = ports.difference(&allowed).copied().collect();
            if !outside.is_empty() {
                self.violation(
                    env,
                    Invariant::EgressWithinProjection,
                    &namespace,
                    format!(
                        "the NetworkPolicy {namespace}/{NAME} allowed egress to {outside:?}, which no valid projection named (allowed: {allowed:?})"
                    ),
                );
            }
        }
        // Checked at the next step, once the pass that wrote a version has written its record.
        self.pending_ports = std::mem::take(
            &mut *self
                .policy_versions
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
    }

    pub(super) async fn check_releases(&mut self, env: &SimEnv) {
        for (namespace, release, image) in std::mem::take(&mut self.promotions) {
            let subject = SUBJECTS.iter().find(|s| s.namespace == namespace);
            let site = subject.and_then(|s| s.site).unwrap_or("management");
            let synced = self
                .ledger
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .values()
                .any(|job| {
                    job.site == site
                        && job.namespace == namespace
                        && job.name == format!("{NAME}-db-sync")
                        && job.succeeded
                        && job.image.ends_with(&format!(":{release}"))
                });
            if !synced {
                self.violation(
                    env,
                    Invariant::ReleaseAfterSync,
                    namespace,
                    format!(
                        "the Barbican {namespace}/{NAME} reports installedRelease {release} (image {image:?}) and no db-sync Job on that image succeeded"
                    ),
                );
            }
        }
        for subject in &SUBJECTS {
            let Ok(barbican) = env.barbican(subject.namespace, NAME).await else {
                continue;
            };
            let status = barbican.status.unwrap_or_default();
            let before = self
                .releases
                .insert(subject.namespace, status.installed_release.clone())
                .flatten();
            if let Some(now) = status.installed_release
                && before.as_ref() != Some(&now)
            {
                self.promotions
                    .push((subject.namespace, now, status.installed_image.clone()));
            }
        }
    }

    pub(super) fn check_job_counts(&mut self, env: &SimEnv) {
        let ledger = self
            .ledger
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for (namespace, kind, counted) in std::mem::take(&mut self.pending_counts) {
            let subject = SUBJECTS.iter().find(|s| s.namespace == namespace);
            let site = subject.and_then(|s| s.site).unwrap_or("management");
            let ran = ledger
                .values()
                .filter(|job| {
                    job.site == site
                        && job.namespace == namespace
                        && (job.succeeded || job.failed)
                        && if kind == JobKind::DbSync as usize {
                            job.name == format!("{NAME}-db-sync")
                        } else {
                            job.name.starts_with(&format!("{NAME}-db-clean-"))
                        }
                })
                .count() as u64;
            if counted > ran {
                let what = if kind == JobKind::DbSync as usize {
                    "db-sync"
                } else {
                    "db-clean"
                };
                self.violation(
                    env,
                    Invariant::JobsCountedOnce,
                    &format!("{namespace}/{what}"),
                    format!(
                        "the operator counted {counted} {what} Jobs for {namespace}/{NAME}, and {ran} finished"
                    ),
                );
            }
        }
        for subject in &SUBJECTS {
            for kind in [JobKind::DbSync, JobKind::DbClean] {
                let counted = env.metrics.jobs_counted(kind, NAME, subject.namespace)
                    + self
                        .counted_before
                        .get(&(subject.namespace, kind as usize))
                        .copied()
                        .unwrap_or_default();
                self.pending_counts
                    .push((subject.namespace, kind as usize, counted));
            }
        }
    }

    pub(super) async fn check_terminating(&mut self, env: &SimEnv) {
        // The longest the spec holds a deletion: the five-minute window a lost target cluster
        // gets, counted from when this operator process first failed to reach it (a restart
        // starts its own), plus the 30-second requeues and a minute of slack.
        let window = jiff::SignedDuration::from_secs(5 * 60 + 90);
        let now = env.clock().now();
        let mut terminating: Vec<(String, jiff::Timestamp)> = Vec::new();
        for subject in &SUBJECTS {
            for kind in ["Barbican", "BarbicanSecretStore"] {
                let Ok(api) = env.api_of(kind, subject.namespace).await else {
                    continue;
                };
                let Ok(list) = api.list(&ListParams::default()).await else {
                    continue;
                };
                terminating.extend(list.items.into_iter().filter_map(|object| {
                    let since = object.metadata.deletion_timestamp.as_ref()?.0;
                    Some((
                        format!("{kind} {}/{}", subject.namespace, object.name_any()),
                        since,
                    ))
                }));
            }
        }
        for (what, since) in terminating {
            let from = since.max(self.last_restart);
            if now.duration_since(from) > window {
                self.violation(
                    env,
                    Invariant::TerminatingBounded,
                    &what,
                    format!("{what} has been Terminating since {since}, past the spec's window"),
                );
            }
        }
    }
}
