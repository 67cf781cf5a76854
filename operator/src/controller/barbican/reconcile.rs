//! One pass over one Barbican: the finalizer, the pipeline, and the status write on every exit
//! path (skipped when the pass changed nothing).

use std::{sync::Arc, time::Duration};

use kube::{Api, ResourceExt, api::ListParams};
use serde_json::json;

use super::{pipeline, state::State};
use crate::{
    api::conditions::EventReason,
    api::conditions::{BarbicanConditionType, Reason},
    api::{
        barbican::Barbican,
        names::{BARBICAN_FINALIZER, REMOTE_CHILDREN_FINALIZER},
    },
    clusters::UNRESOLVED_REQUEUE,
    controller::{
        events::{Severity, reference},
        pass::{Error, FINALIZER_BOUND, Next, api_failed, failure_kind, past_finalizer_bound},
        probe_cache::cache_key,
        runtime::cache::current,
        runtime::children::{Children, label_owner_refusal, owned_by, owner_selector},
        runtime::env::Env,
        runtime::writes::{patch_metadata, write_finalizers, write_status},
        status::{Report, conclude, set},
    },
};

/// How long the finalizer holds while the MariaDB CRs tear down.
pub const FINALIZER_HOLD: Duration = Duration::from_secs(30);
/// The finalizers this operator puts on a Barbican.
fn ours(finalizer: &str) -> bool {
    finalizer == BARBICAN_FINALIZER || finalizer == REMOTE_CHILDREN_FINALIZER
}

/// The finalizers a Barbican needs before its first child write: the database's, and the
/// remote children's when they live on a target cluster.
fn wanted_finalizers(placed_remotely: bool) -> Vec<&'static str> {
    let mut wanted = vec![BARBICAN_FINALIZER];
    if placed_remotely {
        wanted.push(REMOTE_CHILDREN_FINALIZER);
    }
    wanted
}

/// Drops this operator's finalizers (guarded by the resourceVersion read).
async fn drop_finalizers(env: &Env, barbican: &Barbican) -> Result<bool, Error> {
    let (name, namespace) = (
        barbican.name_any(),
        barbican.namespace().unwrap_or_default(),
    );
    let remaining: Vec<String> = barbican
        .finalizers()
        .iter()
        .filter(|f| !ours(f))
        .cloned()
        .collect();
    let api: Api<Barbican> = Api::namespaced(env.client.clone(), &namespace);
    if !write_finalizers(
        &env.writes,
        &api,
        &name,
        barbican.resource_version(),
        remaining,
    )
    .await
    .map_err(api_failed("releasing the finalizer"))?
    {
        return Ok(false);
    }
    env.probes.evict(&cache_key(&namespace, &name));
    env.probes
        .evict(&super::keystone_catalog::cache_key(&namespace, &name));
    env.metrics.forget_barbican(&name, &namespace);
    Ok(true)
}

/// Deletes every object of the projected kinds `barbican` owns in its namespace on the target
/// (by the owner labels, or a controller ownerReference an older operator left). It does not
/// wait for children with finalizers of their own. Returns how many deletes it issued.
async fn sweep(children: &Children, barbican: &Barbican) -> Result<usize, kube::Error> {
    let mut deleted: usize = 0;
    // A target without the Gateway API (or cert-manager) answers 404 for HTTPRoutes (or
    // Certificates), and the sweep moves on.
    for kind in super::projected_kinds(true) {
        let api = children.dynamic(&kind);
        let objects = match api.list(&ListParams::default()).await {
            Ok(list) => list.items,
            // A kind the target does not serve holds nothing of ours.
            Err(kube::Error::Api(s)) if s.code == 404 => continue,
            Err(e) => return Err(e),
        };
        for object in objects.iter().filter(|o| owned_by(*o, barbican)) {
            if children.delete_dynamic(&kind, &object.name_any()).await? {
                deleted = deleted.saturating_add(1);
            }
        }
    }
    Ok(deleted)
}

/// What a Barbican whose target stayed unresolvable leaves behind, for the event.
fn abandoned_note(cluster: &str, barbican: &Barbican, why: &str) -> String {
    let (name, namespace) = (
        barbican.name_any(),
        barbican.namespace().unwrap_or_default(),
    );
    format!(
        "target cluster {cluster:?} stayed unresolvable ({why}) past both 5-minute windows; the finalizers are released without cleanup. Left behind on {cluster:?} in namespace {namespace:?}: the MariaDB Database, User and Grant {name:?} and every object labelled {}",
        owner_selector("Barbican", &name, &namespace)
    )
}

/// The deletion of a Barbican carrying this operator's finalizers: the by-name cleanups, then
/// the sweep of a target cluster, then the finalizers released. A target that does not resolve
/// holds the finalizers (15 s requeues) until both windows have run out, then they go without
/// cleanup.
async fn finalize(env: &Arc<Env>, barbican: Arc<Barbican>) -> Result<Next, Error> {
    let target = barbican
        .spec
        .target_cluster_ref
        .as_ref()
        .map(|t| t.name.clone());
    let now = env.clock.now();
    let children = match env.place(barbican.as_ref(), target.as_deref()) {
        Ok(children) => children,
        Err(unresolved) => {
            let cluster = target.unwrap_or_default();
            if env.clusters.gives_up_on(&cluster, &barbican.metadata, now) {
                if drop_finalizers(env, &barbican).await? {
                    env.events
                        .publish(
                            &reference(barbican.as_ref()),
                            Severity::Warning,
                            EventReason::RemoteChildrenAbandoned,
                            &abandoned_note(&cluster, &barbican, &unresolved.to_string()),
                        )
                        .await;
                }
                return Ok(Next::AwaitChange);
            }
            gate(
                env,
                &barbican,
                format!(
                    "waiting for target cluster {cluster:?} to delete the children: {unresolved}"
                ),
            )
            .await?;
            return Ok(Next::After(UNRESOLVED_REQUEUE));
        }
    };
    let state = State::new(env.clone(), barbican.clone(), children);
    let deleted_at = barbican.metadata.deletion_timestamp.as_ref().map(|t| t.0);
    let cleaned = match clean_up(&state, &barbican).await {
        Ok(cleaned) => cleaned,
        // A target that is registered but refuses, forbids or lies outside its namespaces
        // fails every pass: past the bound the finalizers go, and a Warning says what stays.
        Err(failure) if past_finalizer_bound(deleted_at, now) => {
            if drop_finalizers(env, &barbican).await? {
                state
                    .event(
                        Severity::Warning,
                        abandoned_reason(&state),
                        &failed_cleanup_note(&state, &failure),
                    )
                    .await;
            }
            return Ok(Next::AwaitChange);
        }
        // Before it, the pass comes back every 30 s (not on the error backoff, whose 5-minute
        // steps would carry the wait past the bound), the condition saying what it waits for.
        Err(failure) => {
            tracing::warn!(barbican = %state.name(), namespace = %state.namespace(), error = %failure.error, "the deletion's cleanup failed; retrying until the finalizer bound");
            if let Some(cluster) = state.children.cluster() {
                let message = format!(
                    "waiting for target cluster {cluster:?} to delete the children: {}",
                    failure.doing
                );
                gate(env, &barbican, message).await?;
            }
            return Ok(Next::After(FINALIZER_HOLD));
        }
    };
    match cleaned {
        Cleaned::Waiting(left) if past_finalizer_bound(deleted_at, now) => {
            if drop_finalizers(env, &barbican).await? {
                state
                    .event(
                        Severity::Warning,
                        EventReason::DatabaseAbandoned,
                        &format!(
                            "the MariaDB {} {:?} did not go within {} minutes of the deletion (a finalizer of its own, or no mariadb-operator to remove it); the finalizer is released and they are left behind",
                            left.join(", "),
                            state.name(),
                            FINALIZER_BOUND.as_secs() / 60
                        ),
                    )
                    .await;
            }
            Ok(Next::AwaitChange)
        }
        Cleaned::Waiting(_) => {
            state
                .event(
                    Severity::Normal,
                    EventReason::FinalizingDatabase,
                    "deleting the MariaDB Database, User and Grant before releasing the finalizer",
                )
                .await;
            Ok(Next::After(FINALIZER_HOLD))
        }
        Cleaned::Done => {
            if drop_finalizers(env, &barbican).await? {
                state
                    .event(
                        Severity::Normal,
                        EventReason::DatabaseFinalized,
                        "nothing left to clean up; the finalizer is released",
                    )
                    .await;
            }
            Ok(Next::AwaitChange)
        }
    }
}

/// Where a deletion's cleanup stands after one pass.
enum Cleaned {
    /// These MariaDB kinds are still going.
    Waiting(Vec<&'static str>),
    /// Nothing is left.
    Done,
}

/// A cleanup pass that failed: the pass's error, and what it was doing, in the operator's own
/// words (the target's answer is a peer's text and is not repeated in an Event).
struct FailedCleanup {
    doing: String,
    error: Error,
}

/// One pass of a deletion's cleanup: the MariaDB CRs, then (on a target cluster, once they
/// are gone) the sweep of the projected kinds. Whether cleanup remains is judged before the
/// Delete is issued.
async fn clean_up(state: &State, barbican: &Barbican) -> Result<Cleaned, FailedCleanup> {
    if let Some(refusal) = state.children.namespace_refusal() {
        return Err(FailedCleanup {
            doing: refusal.clone(),
            error: Error::Step {
                step: "Finalizer",
                source: crate::controller::step_error::StepError::new(
                    crate::controller::step_error::ErrorKind::Placement,
                    refusal,
                ),
            },
        });
    }
    let mut left = Vec::new();
    let live = super::database::tear_down(state, &mut left)
        .await
        .map_err(|source| FailedCleanup {
            doing: format!(
                "deleting the MariaDB CRs failed ({})",
                source
                    .source
                    .as_ref()
                    .map_or_else(|| source.kind.metric_label().to_string(), failure_kind)
            ),
            error: Error::Step {
                step: "Finalizer",
                source,
            },
        })?;
    if live {
        return Ok(Cleaned::Waiting(left));
    }
    // The catalog entries this Barbican registered go before it does: an endpoint left
    // behind would send Nova and Cinder to a key manager that is gone.
    if let Some(recorded) = &state.status.catalog {
        super::keystone_catalog::deregister(state, recorded)
            .await
            .map_err(|failure| FailedCleanup {
                doing: format!(
                    "deregistering the Keystone catalog endpoints {} failed ({})",
                    recorded
                        .endpoints
                        .iter()
                        .map(|e| e.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    failure.report().reason
                ),
                error: Error::Step {
                    step: "Finalizer",
                    source: crate::controller::step_error::StepError::new(
                        crate::controller::step_error::ErrorKind::DependencyNotReady,
                        failure.report().message,
                    ),
                },
            })?;
    }
    if state.children.cluster().is_some() {
        sweep(&state.children, barbican)
            .await
            .map_err(|source| FailedCleanup {
                doing: format!("sweeping the children failed ({})", failure_kind(&source)),
                error: Error::Api {
                    what: "sweeping the target cluster's children",
                    source,
                },
            })?;
    }
    Ok(Cleaned::Done)
}

/// The Event reason of a cleanup given up on: the remote children's on a target cluster,
/// the database's on the management cluster.
fn abandoned_reason(state: &State) -> EventReason {
    if state.children.cluster().is_some() {
        EventReason::RemoteChildrenAbandoned
    } else {
        EventReason::DatabaseAbandoned
    }
}

/// What a deletion whose cleanup kept failing leaves behind, for the Warning.
fn failed_cleanup_note(state: &State, failure: &FailedCleanup) -> String {
    let (name, namespace) = (state.name(), state.namespace());
    let place = match state.children.cluster() {
        Some(cluster) => format!(
            "on cluster {cluster:?} in namespace {namespace:?}: the MariaDB Database, User and Grant {name:?} and every object labelled {}",
            owner_selector("Barbican", &name, &namespace)
        ),
        None => {
            format!("in namespace {namespace:?}: the MariaDB Database, User and Grant {name:?}")
        }
    };
    format!(
        "cleanup kept failing for {} minutes after the deletion ({}); the finalizers are released without it. Left behind {place}",
        FINALIZER_BOUND.as_secs() / 60,
        failure.doing
    )
}

/// Sets SecretsReady=False/TargetClusterUnavailable with `message` (and nothing else).
async fn gate(env: &Env, barbican: &Barbican, message: String) -> Result<(), Error> {
    let api: Api<Barbican> = Api::namespaced(
        env.client.clone(),
        &barbican.namespace().unwrap_or_default(),
    );
    let before = barbican.status.clone().unwrap_or_default();
    let mut after = before.clone();
    let (generation, now) = (barbican.metadata.generation, env.clock.now());
    set(
        &mut after.conditions,
        &Report::not_ready(
            BarbicanConditionType::SecretsReady,
            Reason::TargetClusterUnavailable,
            message,
        ),
        generation,
        now,
    );
    persist(env, &api, barbican, &before, after, now).await
}

/// Writes `after` over `before` when the pass changed anything worth writing ([`conclude`]),
/// and sets the Barbican's condition series to the conditions that stand now: every exit of a
/// pass that reports conditions goes through here, so the series never lag the status.
async fn persist(
    env: &Env,
    api: &Api<Barbican>,
    barbican: &Barbican,
    before: &crate::api::BarbicanStatus,
    after: crate::api::BarbicanStatus,
    now: jiff::Timestamp,
) -> Result<(), Error> {
    let name = barbican.name_any();
    let concluded = conclude(before, after, barbican.metadata.generation, now);
    if let Some(status) = &concluded {
        write_status(&env.writes, api, &name, before, status)
            .await
            .map_err(api_failed("writing the status"))?;
    }
    env.metrics.conditions(
        "Barbican",
        &name,
        &barbican.namespace().unwrap_or_default(),
        &concluded.as_ref().unwrap_or(before).conditions,
    );
    Ok(())
}

/// Runs one pass over `barbican`.
pub async fn reconcile(env: Arc<Env>, cached: Arc<Barbican>) -> Result<Next, Error> {
    let (name, namespace) = (cached.name_any(), cached.namespace().unwrap_or_default());
    let api: Api<Barbican> = Api::namespaced(env.client.clone(), &namespace);
    // The pass starts from a copy that has seen this operator's last write: a status computed
    // from one that has not would undo it (and move every lastTransitionTime).
    let Some(barbican) = current(&api, &env.barbicans, &env.writes, &namespace, &name)
        .await
        .map_err(api_failed("reading the Barbican"))?
    else {
        return Ok(Next::AwaitChange);
    };
    if barbican.uid() != cached.uid() {
        return Ok(Next::AwaitChange);
    }
    let barbican = Arc::new(barbican);
    if barbican.metadata.deletion_timestamp.is_some() {
        if barbican.finalizers().iter().any(|f| ours(f)) {
            return finalize(&env, barbican).await;
        }
        return Ok(Next::AwaitChange);
    }
    let target = barbican
        .spec
        .target_cluster_ref
        .as_ref()
        .map(|t| t.name.as_str());
    // Ahead of every step and of the finalizers: nothing is created on any cluster.
    let children = match env.place(barbican.as_ref(), target) {
        Ok(children) => children,
        Err(unresolved) => {
            gate(&env, &barbican, unresolved.to_string()).await?;
            return Ok(Next::After(UNRESOLVED_REQUEUE));
        }
    };
    if children.cluster().is_some()
        && let Some(refusal) = label_owner_refusal(&name)
    {
        gate(&env, &barbican, refusal).await?;
        return Ok(Next::After(UNRESOLVED_REQUEUE));
    }
    let missing: Vec<&str> = wanted_finalizers(children.cluster().is_some())
        .into_iter()
        .filter(|w| !barbican.finalizers().iter().any(|f| f == w))
        .collect();
    if !missing.is_empty() {
        // Before the first child write, so nothing is created that deletion would not see.
        let mut finalizers = barbican.finalizers().to_vec();
        finalizers.extend(missing.into_iter().map(String::from));
        let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": barbican.resource_version()}});
        patch_metadata(&env.writes, &api, &name, &patch)
            .await
            .map_err(api_failed("adding the finalizer"))?;
        return Ok(Next::After(Duration::ZERO));
    }

    let mut state = State::new(env.clone(), barbican.clone(), children);
    let table = pipeline();
    let mut pass = table.run(&mut state, env.metrics.as_ref()).await;
    let sweepable = table.sweepable(&pass);
    if !sweepable.is_empty() {
        match super::sweep::sweep(&state, &sweepable).await {
            Ok(deleted) if !deleted.is_empty() => {
                tracing::info!(barbican = %name, %namespace, ?deleted, "swept children the spec no longer asks for");
            }
            Ok(_) => {}
            Err(error) => pass.errors.push(("Sweep", error)),
        }
    }
    let before = barbican.status.clone().unwrap_or_default();
    persist(
        &env,
        &api,
        &barbican,
        &before,
        state.status.clone(),
        env.clock.now(),
    )
    .await?;
    if let Some((step, error)) = pass.errors.into_iter().next() {
        return Err(Error::Step {
            step,
            source: error,
        });
    }
    Ok(after_pass(
        pass.requeue,
        &before.installed_release,
        &state.status.installed_release,
    ))
}

/// What a pass that went through asks of the scheduler: its steps' requeue, or a change to
/// wait for; but at once when it installed a release. DBClean runs ahead of Database (to keep
/// the clean-up suspended for the whole migration), so the pass that saw the migration end
/// suspended the CronJob on the release before; nothing else is bound to wake the Barbican
/// again (a pass woken meanwhile merges into this one), and a loaded machine left the
/// CronJob suspended for good (seeds 54 and 95 of the edit-sequence check).
fn after_pass(
    requeue: Option<Duration>,
    installed_before: &Option<String>,
    installed_after: &Option<String>,
) -> Next {
    if installed_before != installed_after {
        return Next::After(Duration::ZERO);
    }
    requeue.map_or(Next::AwaitChange, Next::After)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass that installs a release comes back at once, so DBClean, which ran ahead of the
    /// migration's end, unsuspends the CronJob; other passes ask what their steps asked.
    #[test]
    fn a_pass_that_installs_a_release_comes_back_at_once() {
        let release = |r: &str| Some(r.to_string());
        let minute = Some(Duration::from_secs(60));
        assert_eq!(
            after_pass(None, &release("2025.1"), &release("2025.2")),
            Next::After(Duration::ZERO)
        );
        assert_eq!(
            after_pass(minute, &None, &release("2025.1")),
            Next::After(Duration::ZERO)
        );
        assert_eq!(
            after_pass(None, &release("2025.2"), &release("2025.2")),
            Next::AwaitChange
        );
        assert_eq!(
            after_pass(minute, &release("2025.2"), &release("2025.2")),
            Next::After(Duration::from_secs(60))
        );
    }
}
