//! The edit-sequence check behind `barbican-sim soak --edits`: the property this operator must
//! hold is that after any sequence of admitted edits, its children equal what a fresh install
//! of the final spec produces.
//!
//! A seed fixes a sequence ([`generate::sequence`]): a first Barbican with its stores and
//! `steps` edits of it. Many sequences run side by side, one namespace each, on one simulated
//! cluster: every version is applied as a user would (stores deleted first, the old default
//! switched off before a new one is set, the Barbican server-side applied whole), and the
//! operator converges after each ([`converge`]). Then [`compare_with_fresh`] reads what each
//! namespace ended with, installs only that on a fresh cluster, and compares the children of
//! both ([`compare`]). A sequence that differs is shrunk ([`shrink`]) to the fewest versions
//! that still differ and printed as a scenario for `features/` ([`scenario`]), whose steps
//! repeat the run.

pub mod compare;
pub mod generate;
mod side;

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use barbican_operator::{
    api::{Barbican, BarbicanSecretStore, names::db_sync_job_name},
    controller::barbican::{job_metrics::LAST_DB_SYNC_JOB_ANNOTATION, jobs},
};
use k8s_openapi::api::batch::v1::Job;
use kube::{Api, ResourceExt};
use serde_json::json;

use crate::{
    examples::{FULL_PREREQUISITES, in_namespace},
    sim_env::{Error, MINIMAL_PREREQUISITES, SimEnv},
};
pub use generate::{NAME, Store, Version, Write};

/// How long one convergence may take, in virtual time.
pub const CONVERGE_WITHIN: Duration = Duration::from_secs(20 * 60);
/// How long the operator must write nothing (virtual time) for a convergence to count.
pub const QUIET_FOR: Duration = Duration::from_secs(60);
/// How long a pass that has not run every step on the current spec must stay quiet before it
/// counts as converged all the same (a pending retry fires well within it).
pub const COMPLETE_OR_QUIET_FOR: Duration = Duration::from_secs(5 * 60);
/// The external OpenBao every brownfield store talks to.
const EXTERNAL: &str = "vault";

/// The namespace a seed's sequence runs in.
pub fn namespace_of(seed: u64) -> String {
    format!("edits-{seed}")
}

/// What one sequence found.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The seed.
    pub seed: u64,
    /// Its versions, the first install first.
    pub versions: Vec<Version>,
    /// How the children after the edits differ from a fresh install of the last version.
    pub differences: Vec<String>,
    /// Why the sequence could not be compared: the API server refused one of its edits, or
    /// the last version did not install (its fresh install is not Ready; the spec keeps the
    /// last good children after the edits).
    pub not_installable: Option<String>,
}

/// Gives `namespace` everything any generated spec or store reads: the minimal example's
/// prerequisites, the full example's, a PriorityClass, and an external OpenBao provisioned for
/// it (an OpenBao namespace of the same name, a KV mount, AppRole credentials, its CA).
pub async fn prerequisites(env: &SimEnv, namespace: &str) -> Result<(), Error> {
    env.apply_yaml(&in_namespace(MINIMAL_PREREQUISITES, namespace))
        .await?;
    env.apply_yaml(
        &FULL_PREREQUISITES.replace("namespace: full", &format!("namespace: {namespace}")),
    )
    .await?;
    // A secretStoreRef whose kind is taken away names a ClusterSecretStore of that name.
    env.apply(
        json!({"apiVersion": "external-secrets.io/v1", "kind": "ClusterSecretStore",
        "metadata": {"name": "openstack-tenant-store"},
        "spec": {"provider": {"vault": {"server": "https://openbao.openbao.svc:8200"}}}}),
    )
    .await?;
    env.apply(
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": generate::PRIORITY_CLASS}, "value": 1000}),
    )
    .await?;
    env.apply(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": generate::AUDIT_TRANSPORT, "namespace": namespace},
        "stringData": {"transport_url": "rabbit://audit:broker-pw@rabbitmq.openstack:5672/"}}))
        .await?;
    // The Secret a `tls.secretName` names, issued by the full example's CA for the Service.
    env.apply(
        json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": {"name": generate::SERVED_TLS, "namespace": namespace},
        "spec": {"secretName": generate::SERVED_TLS, "issuerRef": {"name": "openstack-ca"},
            "dnsNames": [format!("barbican.{namespace}.svc"),
                format!("barbican.{namespace}.svc.cluster.local")]}}),
    )
    .await?;
    // The service users a sequence names may register the catalog, in the region named after
    // its namespace: the site's Keystone knows them, with the password the prerequisites'
    // Secret holds and the admin role.
    let keystone =
        Api::<k8s_openapi::api::core::v1::Secret>::namespaced(env.scenario_client(), namespace)
            .get(generate::SERVICE_USER_SECRET)
            .await
            .map_err(|e| format!("reading Secret {}: {e}", generate::SERVICE_USER_SECRET))?;
    let password = keystone
        .data
        .and_then(|d| d.get("password").cloned())
        .map(|p| String::from_utf8_lossy(&p.0).into_owned())
        .unwrap_or_default();
    env.here().keystone.add_region(namespace);
    for name in generate::SERVICE_USERS {
        env.here()
            .keystone
            .add_user(barbican_fakes::keystone::User {
                name: name.to_string(),
                password: password.clone(),
                project: "service".into(),
                roles: vec!["admin".into(), "service".into()],
            });
    }
    if env.external_openbao(EXTERNAL).is_none() {
        env.start_external_openbao(EXTERNAL, "vault", "vault")
            .await?;
        env.expose_external_openbao(EXTERNAL, "vault.example.com", 8200)?;
    }
    env.provision_external_openbao(EXTERNAL, "secret-barbican", namespace)?;
    env.issue_external_credentials(EXTERNAL, namespace, "vault-barbican-approle", namespace)
        .await?;
    env.publish_external_ca(EXTERNAL, "vault-ca", namespace)
        .await?;
    if let Some(neighbour) = neighbour(namespace) {
        crate::neighbours::plant(env, namespace, &[neighbour]).await?;
    }
    Ok(())
}

/// The children a spec asks for or not as its optional blocks come and go (`autoscaling`,
/// `networkPolicy`, `gateway`): the ones the operator deletes when a block goes away, the
/// class in which a by-name delete would take someone else's object.
pub const OPTIONAL_CHILDREN: [&str; 3] = ["HorizontalPodAutoscaler", "NetworkPolicy", "HTTPRoute"];

/// Team B's object beside the sequence in `namespace`, as (kind, name), if it has one: every
/// other seed runs beside team B's object under one of its optional children's names
/// ([`OPTIONAL_CHILDREN`], named [`NAME`]), the kind chosen by seed, so a shrunk finding
/// replays with it. (One kind, not all three: a last version that asks for that child does
/// not install, and is not compared with a fresh install.)
pub fn neighbour(namespace: &str) -> Option<(&'static str, String)> {
    let seed = namespace.strip_prefix("edits-")?.parse::<u64>().ok()?;
    if seed % 2 != 0 {
        return None;
    }
    let kind = OPTIONAL_CHILDREN.get(usize::try_from(seed / 2 % 3).ok()?)?;
    Some((kind, NAME.to_string()))
}

/// How often an apply is made again when the API server could not reach a webhook in time.
const WEBHOOK_ATTEMPTS: usize = 3;

/// Server-side applies `object`, again (up to [`WEBHOOK_ATTEMPTS`] times in all) when the API
/// server answers that it could not call an admission webhook: that is a stall of a loaded
/// machine (measured: a 10 s webhook timeout passed with two checks and a compiler sharing two
/// cores, which ended a 2,000-sequence run), not a refusal, and a user would apply again.
async fn apply_reaching_webhooks(env: &SimEnv, object: serde_json::Value) -> Result<(), Error> {
    let mut unreachable = String::new();
    for _ in 0..WEBHOOK_ATTEMPTS {
        match env.apply(object.clone()).await {
            Ok(_) => return Ok(()),
            Err(e) if webhook_unreachable(&e) => unreachable = e,
            Err(e) => return Err(e),
        }
    }
    Err(format!("{WEBHOOK_ATTEMPTS} attempts: {unreachable}"))
}

/// Whether an apply failed because the API server could not call a webhook (kube-apiserver's
/// 500 `failed calling webhook`), as opposed to a webhook's or the schema's refusal.
pub fn webhook_unreachable(error: &str) -> bool {
    error.contains("failed calling webhook")
}

/// Makes the writes that take `namespace` from `from` to `to`, waiting for each deleted store
/// to be gone before going on (a store of the same name may be created next).
pub async fn apply_version(
    env: &SimEnv,
    namespace: &str,
    from: Option<&Version>,
    to: &Version,
) -> Result<(), Error> {
    let stores: Api<BarbicanSecretStore> = Api::namespaced(env.client.clone(), namespace);
    for write in generate::writes(from, to) {
        match write {
            Write::DeleteStore(name) => {
                stores
                    .delete(&name, &Default::default())
                    .await
                    .map_err(|e| format!("deleting the store {namespace}/{name}: {e}"))?;
                env.eventually(Duration::from_secs(600), || {
                    let (stores, name) = (stores.clone(), name.clone());
                    async move {
                        match stores.get_opt(&name).await {
                            Ok(None) => Ok(()),
                            Ok(Some(_)) => Err(format!("the store {name} is still there")),
                            Err(e) => Err(e.to_string()),
                        }
                    }
                })
                .await?;
            }
            Write::ApplyStore(name, store) => {
                apply_reaching_webhooks(env, generate::store(namespace, &name, store)).await?;
            }
            Write::ApplyBarbican(spec) => {
                apply_reaching_webhooks(env, generate::barbican(namespace, &spec)).await?;
            }
        }
    }
    Ok(())
}

/// Whether every Barbican and store has observed its generation; with `every_step`, whether
/// each Barbican's every condition was also set on it (every step of the pipeline ran on the
/// current spec, not only those up to one that waits).
async fn generations_observed(env: &SimEnv, every_step: bool) -> Result<(), Error> {
    let barbicans = Api::<Barbican>::all(env.client.clone())
        .list(&Default::default())
        .await
        .map_err(|e| e.to_string())?;
    for b in barbicans {
        let status = b.status.clone().unwrap_or_default();
        if status.observed_generation != b.metadata.generation {
            return Err(format!(
                "the Barbican {} has not observed its generation",
                b.name_any()
            ));
        }
        if every_step
            && let Some(c) = status
                .conditions
                .iter()
                .find(|c| c.observed_generation != b.metadata.generation)
        {
            return Err(format!(
                "the Barbican {}/{}: {} was last set on an older generation ({} {}: {})",
                b.namespace().unwrap_or_default(),
                b.name_any(),
                c.type_,
                c.status,
                c.reason,
                c.message
            ));
        }
    }
    let stores = Api::<BarbicanSecretStore>::all(env.client.clone())
        .list(&Default::default())
        .await
        .map_err(|e| e.to_string())?;
    for s in stores {
        let observed = s.status.as_ref().and_then(|s| s.observed_generation);
        if observed != s.metadata.generation {
            return Err(format!(
                "the store {} has not observed its generation",
                s.name_any()
            ));
        }
    }
    Ok(())
}

/// Whether the cluster's own work has been seen through: no Job still runs, and every finished
/// db-sync Job has been recorded on its Barbican (the operator's `last-db-sync-job-uid`
/// annotation), so the pass that acts on its end has run. Without this, a loaded machine lets
/// [`QUIET_FOR`] of virtual time pass between a migration's end and the pass that unsuspends
/// the db-clean CronJob (seed 10898 of the 10,000-sequence record compared too early).
async fn jobs_settled(env: &SimEnv) -> Result<(), Error> {
    let jobs = Api::<Job>::all(env.client.clone())
        .list(&Default::default())
        .await
        .map_err(|e| e.to_string())?;
    let barbicans = Api::<Barbican>::all(env.client.clone())
        .list(&Default::default())
        .await
        .map_err(|e| e.to_string())?;
    for job in &jobs {
        let (namespace, name) = (job.namespace().unwrap_or_default(), job.name_any());
        if !jobs::state(job).finished() {
            return Err(format!("the Job {namespace}/{name} still runs"));
        }
        let recorded = barbicans.iter().find(|b| {
            b.namespace().as_deref() == Some(namespace.as_str())
                && db_sync_job_name(&b.name_any()) == name
        });
        if let Some(b) = recorded
            && b.annotations().get(LAST_DB_SYNC_JOB_ANNOTATION) != job.uid().as_ref()
        {
            return Err(format!(
                "the end of the Job {namespace}/{name} is not yet recorded on its Barbican"
            ));
        }
    }
    Ok(())
}

/// Moves virtual time until every CR has observed its generation and the operator has written
/// nothing for [`QUIET_FOR`]: the operator has converged on what it was given. With
/// `every_step`, each Barbican's pipeline must also have run to its end on the current spec, or
/// the operator must have been quiet for [`COMPLETE_OR_QUIET_FOR`]: a pass held at a step by
/// a pending retry would otherwise look converged.
pub async fn converge(env: &SimEnv, every_step: bool) -> Result<(), Error> {
    let cluster = env.needs_sim("waiting for the operator to converge")?;
    let step = Duration::from_secs(10);
    let (mut quiet, mut waited) = (Duration::ZERO, Duration::ZERO);
    let mut last = String::new();
    while waited < CONVERGE_WITHIN {
        let mark = cluster.audit_mark();
        let target_marks = env.target_marks();
        env.let_time_pass(step).await;
        waited += step;
        // A TokenRequest stores nothing: a store that logs in to provision on a schedule is
        // not a change still under way. A write to a target cluster is a change under way.
        // A refused write changes nothing either: a child whose name another team's object
        // holds is created again on each retry of its pass, and refused (409) each time.
        let mut writes = env.operator_writes_since(mark);
        writes.extend(env.target_writes_since(&target_marks));
        let wrote = writes.into_iter().rfind(|w| {
            w.code < 300
                && !w
                    .path
                    .split('?')
                    .next()
                    .unwrap_or_default()
                    .ends_with("/token")
        });
        match (wrote, generations_observed(env, false).await) {
            (None, Ok(())) => {
                quiet += step;
                // A spec that holds its pass at a step for good (one naming an input that
                // does not exist) is converged too, once quiet for long enough.
                // The same holds for a Job the operator never gets to see the end of.
                let complete = quiet >= COMPLETE_OR_QUIET_FOR
                    || (jobs_settled(env).await.is_ok()
                        && (!every_step || generations_observed(env, true).await.is_ok()));
                if quiet >= QUIET_FOR && complete {
                    return Ok(());
                }
            }
            (wrote, observed) => {
                quiet = Duration::ZERO;
                last = match (wrote, observed) {
                    (_, Err(e)) => e,
                    (Some(w), _) => format!("the operator still writes: {w}"),
                    (None, Ok(())) => String::new(),
                };
            }
        }
    }
    Err(format!(
        "the operator did not converge within {}s of virtual time: {last}",
        CONVERGE_WITHIN.as_secs()
    ))
}

/// The version `namespace` holds now: the Barbican's spec and the stores attached to it.
pub async fn live_version(env: &SimEnv, namespace: &str) -> Result<Version, Error> {
    let barbican = env.barbican(namespace, NAME).await?;
    let spec = serde_json::to_value(&barbican.spec).map_err(|e| e.to_string())?;
    let stores = Api::<BarbicanSecretStore>::namespaced(env.client.clone(), namespace)
        .list(&Default::default())
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|s| {
            let store = Store {
                brownfield: s.spec.open_bao.as_ref().is_some_and(|o| o.server.is_some()),
                default: s.spec.is_default,
            };
            (s.name_any(), store)
        })
        .collect();
    Ok(Version { spec, stores })
}

/// `spec` as the chart's defaulting webhook leaves it (the function the webhook runs).
fn webhook_defaulted(spec: &serde_json::Value) -> Result<serde_json::Value, Error> {
    let mut typed: barbican_operator::api::BarbicanSpec =
        serde_json::from_value(spec.clone()).map_err(|e| format!("a generated spec: {e}"))?;
    barbican_operator::admission::defaulting::default_barbican(&mut typed);
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

/// Installs each version, and only that, in its namespace on a fresh cluster, and waits for
/// the operator to converge.
pub async fn fresh_install(finals: &[(String, Version)]) -> Result<SimEnv, Error> {
    let fresh = SimEnv::start(true).await?;
    for (namespace, version) in finals {
        prerequisites(&fresh, namespace).await?;
        apply_version(&fresh, namespace, None, version).await?;
    }
    converge(&fresh, true)
        .await
        .map_err(|e| format!("the fresh install: {e}"))?;
    Ok(fresh)
}

/// How the children of each of `namespaces` on `env` differ from those on `fresh`.
pub async fn differences(
    env: &SimEnv,
    fresh: &SimEnv,
    namespaces: &[String],
) -> Result<BTreeMap<String, Vec<String>>, Error> {
    let mut found = BTreeMap::new();
    for namespace in namespaces {
        let after_edits = compare::snapshot(env, namespace).await?;
        let installed = compare::snapshot(fresh, namespace).await?;
        found.insert(
            namespace.clone(),
            compare::differences(&after_edits, &installed),
        );
    }
    Ok(found)
}

/// Installs what each of `namespaces` holds on `env` now, and only that, on a fresh cluster,
/// and compares the children of both: the differences per namespace.
pub async fn compare_with_fresh(
    env: &SimEnv,
    namespaces: &[String],
) -> Result<BTreeMap<String, Vec<String>>, Error> {
    converge(env, true).await?;
    let mut finals = Vec::new();
    for namespace in namespaces {
        finals.push((namespace.clone(), live_version(env, namespace).await?));
    }
    let fresh = fresh_install(&finals).await?;
    differences(env, &fresh, namespaces).await
}

/// Runs the sequences side by side, one namespace each, on one cluster, and compares each with
/// a fresh install of its last version (made on a second cluster meanwhile).
pub async fn run(sequences: &[(u64, Vec<Version>)]) -> Result<Vec<Finding>, Error> {
    let finals: Vec<(String, Version)> = sequences
        .iter()
        .filter_map(|(seed, versions)| Some((namespace_of(*seed), versions.last()?.clone())))
        .collect();
    let (history, fresh) = tokio::join!(edited(sequences), fresh_install(&finals));
    let ((history, refused), fresh) = (history?, fresh?);
    let namespaces: Vec<String> = finals.iter().map(|(n, _)| n.clone()).collect();
    for (namespace, version) in &finals {
        if refused.keys().any(|seed| namespace_of(*seed) == *namespace) {
            continue;
        }
        let live = live_version(&history, namespace).await?;
        // What the API server stores: the version with the schema's defaults and the
        // defaulting webhook's.
        let mut expected = generate::barbican(namespace, &version.spec);
        barbican_sim::schema::apply_defaults(&generate::barbican_schema(), &mut expected);
        expected["spec"] = webhook_defaulted(&expected["spec"])?;
        let spec_differences = compare::differences(
            &compare::Snapshot::from([("spec".to_string(), live.spec.clone())]),
            &compare::Snapshot::from([("spec".to_string(), expected["spec"].clone())]),
        );
        if !spec_differences.is_empty() {
            return Err(format!(
                "{namespace} holds another spec after its edits than its last version: {}",
                spec_differences.join("; ")
            ));
        }
        if live.stores != version.stores {
            return Err(format!(
                "{namespace} holds the stores {:?} after its edits, not the last version's {:?}",
                live.stores, version.stores
            ));
        }
    }
    let mut found = differences(&history, &fresh, &namespaces).await?;
    // Whatever the history, team B's objects beside a sequence are never touched; this holds
    // for a last version that does not install as well.
    let mut neighbours_touched = BTreeMap::new();
    for namespace in &namespaces {
        let Some(neighbour) = neighbour(namespace) else {
            continue;
        };
        let (kind, name) = neighbour;
        let neighbour = crate::neighbours::Neighbour::new(kind, namespace, &name);
        let touched = crate::neighbours::touched(&history, &[neighbour]).await?;
        if !touched.is_empty() {
            neighbours_touched.insert(namespace.clone(), touched);
        }
    }
    let mut findings = Vec::new();
    for (seed, versions) in sequences {
        let namespace = namespace_of(*seed);
        let conditions = fresh.conditions("Barbican", &namespace, NAME).await?;
        // A fresh install held only by team B's object under a child's name (every condition
        // that is not True says NameTaken) installs as far as it can, as the edited one must:
        // it is compared.
        // Nor is one whose only other condition not True is the catalog registration's: it
        // writes to Keystone, not a child (the batch's sequences share one Keystone, where
        // one registration per region wins).
        let held_by_neighbour = conditions
            .iter()
            .filter(|c| c.type_ != "Ready" && c.status != "True")
            .filter(|c| c.type_ != "KeystoneCatalogReady")
            .all(|c| c.reason == "NameTaken");
        let not_installable = refused.get(seed).cloned().or_else(|| {
            conditions
                .iter()
                .find(|c| c.type_ == "Ready" && c.status != "True" && !held_by_neighbour)
                .map(|c| c.message.clone())
        });
        findings.push(Finding {
            seed: *seed,
            versions: versions.clone(),
            differences: match not_installable {
                Some(_) => Vec::new(),
                None => found.remove(&namespace).unwrap_or_default(),
            }
            .into_iter()
            .chain(
                neighbours_touched
                    .remove(&namespace)
                    .into_iter()
                    .flatten()
                    .map(|touched| format!("team B's {touched}")),
            )
            .collect(),
            not_installable,
        });
    }
    Ok(findings)
}

/// A cluster on which every sequence was applied a version at a time, converging after each,
/// and the seeds whose edits the API server refused (with why): the schema check of a
/// server-side apply sees the stored object, defaults included, which the generator's check
/// of the applied configuration does not (a `secretStoreRef` whose `name` is no longer applied
/// keeps its defaulted `kind` and lacks a name). A user gets the same refusal: the mutating
/// webhook, which runs before the schema check, cannot read the merged object, and says so;
/// without the webhooks the schema check's 422 says it.
async fn edited(
    sequences: &[(u64, Vec<Version>)],
) -> Result<(SimEnv, BTreeMap<u64, String>), Error> {
    let env = SimEnv::start(true).await?;
    for (seed, _) in sequences {
        prerequisites(&env, &namespace_of(*seed)).await?;
    }
    let mut refused = BTreeMap::new();
    let longest = sequences.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    for step in 0..longest {
        for (seed, versions) in sequences {
            let Some(to) = versions.get(step) else {
                continue;
            };
            if refused.contains_key(seed) {
                continue;
            }
            let from = step.checked_sub(1).and_then(|i| versions.get(i));
            if let Err(e) = apply_version(&env, &namespace_of(*seed), from, to).await {
                if refused_by_schema(&e) {
                    refused.insert(*seed, format!("version {step} was refused: {e}"));
                } else {
                    return Err(format!("seed {seed}, version {step}: {e}"));
                }
            }
        }
        converge(&env, step + 1 == longest)
            .await
            .map_err(|e| format!("after version {step}: {e}"))?;
    }
    Ok((env, refused))
}

/// Whether an apply failed because the merged object breaks the CRD's schema: the schema
/// check's 422 (`is invalid`) or the mutating webhook's refusal of an object it cannot read.
pub fn refused_by_schema(error: &str) -> bool {
    error.contains("is invalid") || error.contains("does not match the schema")
}

/// Whether `versions` is a sequence the check covers: every step admitted, and the last one
/// installable (see [`generate::installs`]).
fn admissible(namespace: &str, versions: &[Version]) -> bool {
    versions.last().is_some_and(generate::installs)
        && versions
            .windows(2)
            .all(|pair| matches!(pair, [from, to] if generate::release_follows(from, to)))
        && versions.iter().enumerate().all(|(i, v)| {
            let from = i.checked_sub(1).and_then(|j| versions.get(j));
            generate::admitted(namespace, from, v).is_ok()
        })
}

/// The fewest versions of `finding` that still differ: versions are taken out one at a time,
/// keeping each removal after which the sequence is still admitted and still differs, until
/// no single removal does.
pub async fn shrink(finding: &Finding) -> Result<Finding, Error> {
    let namespace = namespace_of(finding.seed);
    let mut best = finding.clone();
    loop {
        let mut smaller = None;
        for skip in 0..best.versions.len() {
            let mut candidate = best.versions.clone();
            candidate.remove(skip);
            if !admissible(&namespace, &candidate) {
                continue;
            }
            let found = run(&[(finding.seed, candidate.clone())]).await?;
            if let Some(f) = found.into_iter().find(|f| !f.differences.is_empty()) {
                smaller = Some(f);
                break;
            }
        }
        match smaller {
            Some(f) => best = f,
            None => return Ok(best),
        }
    }
}

/// `finding` as a scenario for a feature file with the Background `Given a simulated cluster
/// with the operator running`: its steps repeat the sequence and the comparison.
pub fn scenario(finding: &Finding) -> String {
    let namespace = namespace_of(finding.seed);
    let mut text = format!(
        "  @sim-only\n  Scenario: the edit sequence of seed {} ({} versions) converges as a fresh install does\n    Given the edit-sequence prerequisites in \"{namespace}\"\n",
        finding.seed,
        finding.versions.len()
    );
    let docstring = |objects: Vec<serde_json::Value>| {
        let yaml = serde_saphyr::to_string_multiple(&objects).unwrap_or_default();
        let body: String = yaml.lines().map(|l| format!("      {l}\n")).collect();
        format!("      \"\"\"\n{body}      \"\"\"\n")
    };
    for (i, version) in finding.versions.iter().enumerate() {
        let from = i.checked_sub(1).and_then(|j| finding.versions.get(j));
        let mut batch = Vec::new();
        let flush = |batch: &mut Vec<serde_json::Value>, text: &mut String| {
            if !batch.is_empty() {
                text.push_str("    When the following is applied:\n");
                text.push_str(&docstring(std::mem::take(batch)));
            }
        };
        for write in generate::writes(from, version) {
            match write {
                Write::DeleteStore(name) => {
                    flush(&mut batch, &mut text);
                    text.push_str(&format!(
                        "    When the BarbicanSecretStore \"{name}\" in \"{namespace}\" is deleted\n    Then within 10 minutes the BarbicanSecretStore \"{name}\" in \"{namespace}\" is gone\n"
                    ));
                }
                Write::ApplyStore(name, store) => {
                    batch.push(generate::store(&namespace, &name, store));
                }
                Write::ApplyBarbican(spec) => batch.push(generate::barbican(&namespace, &spec)),
            }
        }
        flush(&mut batch, &mut text);
        text.push_str(&format!(
            "    And the operator converges on \"{namespace}\"\n"
        ));
    }
    text.push_str(&format!(
        "    Then the children in \"{namespace}\" equal a fresh install of what it holds\n"
    ));
    text
}

/// What a run of many seeds found, and how long it took.
#[derive(Debug)]
pub struct Report {
    /// Every sequence that differed, shrunk when asked.
    pub findings: Vec<Finding>,
    /// How many sequences ran.
    pub sequences: usize,
    /// The seeds not compared, with why (an edit refused, or a last version that does not
    /// install).
    pub not_installable: Vec<(u64, String)>,
    /// Wall-clock time.
    pub wall: Duration,
}

/// What a long run has done so far, told after every batch and before each
/// shrink, so that a run of thousands of sequences shows whether it is shrinking a finding
/// or simply still running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// `done` of `total` sequences ran; `differing` and `not_compared` so far.
    Ran {
        /// Sequences run so far.
        done: usize,
        /// Sequences in the run.
        total: usize,
        /// Sequences found differing so far.
        differing: usize,
        /// Sequences not compared so far.
        not_compared: usize,
    },
    /// The sequence of `seed` differs; shrinking it starts.
    Shrinking {
        /// The differing sequence's seed.
        seed: u64,
        /// The differences as found, before shrinking (a run of hours may be stopped before it
        /// prints its report; what differed must be visible at once).
        differences: Vec<String>,
    },
}

/// Runs the sequences of `seeds` with `steps` edits each, `batch` namespaces per cluster and
/// `parallel` batches at a time; shrinks what differs when `shrink_findings` is set, and tells
/// `progress` how far it got after each batch.
pub async fn check(
    seeds: std::ops::Range<u64>,
    steps: usize,
    batch: usize,
    parallel: usize,
    shrink_findings: bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, Error> {
    let started = Instant::now();
    let (mut findings, mut not_installable) = (Vec::new(), Vec::new());
    let seeds: Vec<u64> = seeds.collect();
    let mut batches = Vec::new();
    for chunk in seeds.chunks(batch.max(1)) {
        let mut sequences = Vec::new();
        for seed in chunk {
            sequences.push((
                *seed,
                generate::sequence(*seed, steps, &namespace_of(*seed))?,
            ));
        }
        batches.push(sequences);
    }
    // Each batch runs on a task of its own, and a new one starts as soon as one ends: a batch
    // waiting for its clusters to settle leaves its core to another (one at a time, 100
    // sequences took 82 s; as pairs awaited together, on one task, 124 s, the last batch
    // alone). A shrink runs while the other batches go on.
    let mut waiting = batches.into_iter();
    let mut running = tokio::task::JoinSet::new();
    for sequences in waiting.by_ref().take(parallel.max(1)) {
        running.spawn(async move { run(&sequences).await });
    }
    let mut done = 0usize;
    while let Some(ended) = running.join_next().await {
        let ran = ended.map_err(|e| format!("a batch of sequences stopped: {e}"))??;
        if let Some(sequences) = waiting.next() {
            running.spawn(async move { run(&sequences).await });
        }
        done = done.saturating_add(ran.len());
        for finding in ran {
            if let Some(why) = &finding.not_installable {
                not_installable.push((finding.seed, why.clone()));
            }
            if finding.differences.is_empty() {
                continue;
            }
            findings.push(if shrink_findings {
                progress(Progress::Shrinking {
                    seed: finding.seed,
                    differences: finding.differences.clone(),
                });
                shrink(&finding).await?
            } else {
                finding
            });
        }
        progress(Progress::Ran {
            done,
            total: seeds.len(),
            differing: findings.len(),
            not_compared: not_installable.len(),
        });
    }
    // Batches end in any order; the report lists seeds in order.
    findings.sort_by_key(|f| f.seed);
    not_installable.sort();
    Ok(Report {
        findings,
        not_installable,
        sequences: seeds.len(),
        wall: started.elapsed(),
    })
}
