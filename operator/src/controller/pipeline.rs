//! The table-driven pipeline: an ordered list of steps, each with a name and the condition type
//! it owns, then a parallel group.
//!
//! The runner runs the sequence in order; the first step that asks for a requeue or fails ends
//! the pass. Then it runs the parallel group's members concurrently, each on its own copy of the
//! context, and merges each member's own condition back even when a peer failed; the shortest
//! requeue wins. Every step that runs is timed, and every failure counted, through a
//! [`Recorder`] (the metrics module's, in the operator).

use std::{
    future::Future,
    pin::Pin,
    time::{Duration, Instant},
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::{api::conditions::ConditionType, controller::step_error::StepError};

/// What a step decided when it did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done for this pass: go on.
    Done,
    /// Come back after this long; the sequence stops here.
    Requeue(Duration),
}

/// The future a step returns.
pub type StepFuture<'a> = Pin<Box<dyn Future<Output = Result<Outcome, StepError>> + Send + 'a>>;

/// What the steps work on: at least the conditions they set.
pub trait Context: Clone + Send {
    /// The condition types of the CR the pass is over.
    type Condition: ConditionType;
    /// The conditions of the CR being reconciled.
    fn conditions(&self) -> &[Condition];
    /// The same, to change.
    fn conditions_mut(&mut self) -> &mut Vec<Condition>;
    /// Shows `error`, a failure of the step that owns `condition`, on that condition when it is
    /// the CR's to read there (a foreign object in a child's place); the runner calls it for
    /// every failure, before the pass ends.
    fn report_failure(&mut self, condition: Self::Condition, error: &StepError) {
        let _ = (condition, error);
    }
}

/// One step of the table.
pub struct Step<C: Context> {
    /// The `sub_reconciler` label.
    pub name: &'static str,
    /// The condition it reports through.
    pub condition: C::Condition,
    /// What it does.
    pub run: for<'a> fn(&'a mut C) -> StepFuture<'a>,
}

/// A row of the table.
pub fn step<C: Context>(
    name: &'static str,
    condition: C::Condition,
    run: for<'a> fn(&'a mut C) -> StepFuture<'a>,
) -> Step<C> {
    Step {
        name,
        condition,
        run,
    }
}

/// Where step timings and failures go.
pub trait Recorder: Send + Sync {
    /// A step ran for `elapsed`.
    fn duration(&self, step: &'static str, elapsed: Duration);
    /// A step failed with `error`; `condition` is the type it reports through.
    fn error(&self, step: &'static str, condition: &'static str, error: &StepError);
}

/// The operator's recorder: `barbican_operator_reconcile_duration_seconds` and
/// `barbican_operator_reconcile_errors_total{sub_reconciler,condition_type,kind}`.
impl Recorder for crate::metrics::Metrics {
    fn duration(&self, step: &'static str, elapsed: Duration) {
        self.step_duration(step, elapsed);
    }

    fn error(&self, step: &'static str, condition: &'static str, error: &StepError) {
        self.step_error(step, condition, error.metric_label());
    }
}

/// The table.
pub struct Pipeline<C: Context> {
    /// Run in order, stopping at the first requeue or failure.
    pub sequence: Vec<Step<C>>,
    /// Run concurrently after the sequence, each on its own copy.
    pub parallel: Vec<Step<C>>,
}

/// What a pass came to.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pass {
    /// The requeue asked for (the shortest one, in the parallel group).
    pub requeue: Option<Duration>,
    /// The steps that failed, with their errors.
    pub errors: Vec<(&'static str, StepError)>,
    /// The steps that ran, in order (the parallel group's in table order).
    pub ran: Vec<&'static str>,
}

async fn timed<C: Context>(
    step: &Step<C>,
    context: &mut C,
    recorder: &dyn Recorder,
) -> Result<Outcome, StepError> {
    let started = Instant::now();
    let outcome = (step.run)(context).await;
    recorder.duration(step.name, started.elapsed());
    if let Err(error) = &outcome {
        recorder.error(step.name, step.condition.as_str(), error);
        context.report_failure(step.condition, error);
    }
    outcome
}

impl<C: Context> Pipeline<C> {
    /// Runs one pass over `context`.
    pub async fn run(&self, context: &mut C, recorder: &dyn Recorder) -> Pass {
        let mut pass = Pass::default();
        for step in &self.sequence {
            pass.ran.push(step.name);
            match timed(step, context, recorder).await {
                Ok(Outcome::Done) => {}
                Ok(Outcome::Requeue(after)) => {
                    pass.requeue = Some(after);
                    return pass;
                }
                Err(error) => {
                    pass.errors.push((step.name, error));
                    return pass;
                }
            }
        }
        let members = self.parallel.iter().map(|step| {
            let mut copy = context.clone();
            async move {
                let outcome = timed(step, &mut copy, recorder).await;
                (step, copy, outcome)
            }
        });
        for (step, copy, outcome) in futures::future::join_all(members).await {
            pass.ran.push(step.name);
            // Each member owns one condition: merge it back whatever its peers did.
            if let Some(own) = copy
                .conditions()
                .iter()
                .find(|c| c.type_ == step.condition.as_str())
            {
                let conditions = context.conditions_mut();
                match conditions.iter_mut().find(|c| c.type_ == own.type_) {
                    Some(existing) => *existing = own.clone(),
                    None => conditions.push(own.clone()),
                }
            }
            match outcome {
                Ok(Outcome::Done) => {}
                Ok(Outcome::Requeue(after)) => {
                    pass.requeue = Some(pass.requeue.map_or(after, |r| r.min(after)));
                }
                Err(error) => pass.errors.push((step.name, error)),
            }
        }
        pass
    }
}

#[cfg(test)]
mod tests {
    use crate::controller::step_error::ErrorKind;
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::{
        api::conditions::{BarbicanConditionType as T, Reason},
        controller::status::{Report, set},
    };

    #[derive(Clone, Default)]
    struct Ctx {
        conditions: Vec<Condition>,
        scratch: Vec<&'static str>,
        barrier: Option<Arc<tokio::sync::Barrier>>,
    }

    impl Context for Ctx {
        type Condition = T;
        fn conditions(&self) -> &[Condition] {
            &self.conditions
        }
        fn conditions_mut(&mut self) -> &mut Vec<Condition> {
            &mut self.conditions
        }
    }

    fn report(ctx: &mut Ctx, t: T, ready: bool) {
        let now = "2026-01-01T00:00:00Z".parse().unwrap();
        let r = if ready {
            Report::ready(t, Reason::AllReady, "")
        } else {
            Report::not_ready(t, Reason::NotAllReady, "")
        };
        set(&mut ctx.conditions, &r, Some(1), now);
    }

    /// Steps timed, and failures counted.
    type Log = (Vec<&'static str>, Vec<(&'static str, &'static str)>);

    #[derive(Default)]
    struct Recorded(Mutex<Log>);

    impl Recorder for Recorded {
        fn duration(&self, step: &'static str, _: Duration) {
            self.0.lock().unwrap().0.push(step);
        }
        fn error(&self, step: &'static str, condition: &'static str, error: &StepError) {
            assert_eq!(
                error.metric_label(),
                "api",
                "the test steps fail as API errors"
            );
            self.0.lock().unwrap().1.push((step, condition));
        }
    }

    fn secrets(ctx: &mut Ctx) -> StepFuture<'_> {
        Box::pin(async move {
            report(ctx, T::SecretsReady, true);
            Ok(Outcome::Done)
        })
    }

    fn database_waits(ctx: &mut Ctx) -> StepFuture<'_> {
        Box::pin(async move {
            report(ctx, T::DatabaseReady, false);
            Ok(Outcome::Requeue(Duration::from_secs(30)))
        })
    }

    fn database_fails(_: &mut Ctx) -> StepFuture<'_> {
        Box::pin(async move {
            Err(StepError::new(
                ErrorKind::Api,
                "the MariaDB API is unreachable",
            ))
        })
    }

    fn deployment(ctx: &mut Ctx) -> StepFuture<'_> {
        Box::pin(async move {
            report(ctx, T::DeploymentReady, true);
            Ok(Outcome::Done)
        })
    }

    /// Meets its peers at the barrier: finishes only if they run at the same time.
    async fn meet(ctx: &mut Ctx, t: T, name: &'static str) {
        ctx.scratch.push(name);
        if let Some(barrier) = ctx.barrier.clone() {
            barrier.wait().await;
        }
        report(ctx, t, true);
    }

    fn route(ctx: &mut Ctx) -> StepFuture<'_> {
        Box::pin(async move {
            meet(ctx, T::HTTPRouteReady, "route").await;
            Ok(Outcome::Requeue(Duration::from_secs(10)))
        })
    }

    fn health(ctx: &mut Ctx) -> StepFuture<'_> {
        Box::pin(async move {
            meet(ctx, T::BarbicanAPIReady, "health").await;
            Ok(Outcome::Requeue(Duration::from_secs(30)))
        })
    }

    fn hpa_fails(ctx: &mut Ctx) -> StepFuture<'_> {
        Box::pin(async move {
            meet(ctx, T::HPAReady, "hpa").await;
            report(ctx, T::HPAReady, false);
            Err(StepError::new(
                ErrorKind::Api,
                "autoscaling/v2 refused the object",
            ))
        })
    }

    fn netpol(ctx: &mut Ctx) -> StepFuture<'_> {
        Box::pin(async move {
            meet(ctx, T::NetworkPolicyReady, "netpol").await;
            // Writes another member's condition on its copy: it must not leak.
            report(ctx, T::HTTPRouteReady, false);
            Ok(Outcome::Done)
        })
    }

    fn pipeline(database: for<'a> fn(&'a mut Ctx) -> StepFuture<'a>) -> Pipeline<Ctx> {
        Pipeline {
            sequence: vec![
                step("Secrets", T::SecretsReady, secrets),
                step("Database", T::DatabaseReady, database),
                step("Deployment", T::DeploymentReady, deployment),
            ],
            parallel: vec![
                step("HTTPRoute", T::HTTPRouteReady, route),
                step("HealthCheck", T::BarbicanAPIReady, health),
                step("HPA", T::HPAReady, hpa_fails),
                step("NetworkPolicy", T::NetworkPolicyReady, netpol),
            ],
        }
    }

    fn status_of(ctx: &Ctx, t: T) -> Option<&str> {
        ctx.conditions
            .iter()
            .find(|c| c.type_ == t.as_str())
            .map(|c| c.status.as_str())
    }

    #[tokio::test]
    async fn a_requeue_ends_the_pass_where_it_is_asked() {
        let recorded = Recorded::default();
        let mut ctx = Ctx::default();
        let pass = pipeline(database_waits).run(&mut ctx, &recorded).await;
        assert_eq!(pass.ran, ["Secrets", "Database"]);
        assert_eq!(pass.requeue, Some(Duration::from_secs(30)));
        assert!(pass.errors.is_empty());
        assert_eq!(status_of(&ctx, T::DatabaseReady), Some("False"));
        assert_eq!(recorded.0.lock().unwrap().0, ["Secrets", "Database"]);
    }

    #[tokio::test]
    async fn an_error_ends_the_pass_and_is_counted_under_its_condition() {
        let recorded = Recorded::default();
        let mut ctx = Ctx::default();
        let pass = pipeline(database_fails).run(&mut ctx, &recorded).await;
        assert_eq!(pass.ran, ["Secrets", "Database"]);
        assert_eq!(
            pass.errors,
            [(
                "Database",
                StepError::new(ErrorKind::Api, "the MariaDB API is unreachable")
            )]
        );
        assert_eq!(
            recorded.0.lock().unwrap().1,
            [("Database", "DatabaseReady")]
        );
    }

    #[tokio::test]
    async fn the_parallel_group_runs_together_on_copies_and_merges_its_own_conditions() {
        let recorded = Recorded::default();
        let mut ctx = Ctx {
            barrier: Some(Arc::new(tokio::sync::Barrier::new(4))),
            ..Ctx::default()
        };
        let pass = tokio::time::timeout(
            Duration::from_secs(10),
            pipeline(|ctx| {
                Box::pin(async move {
                    report(ctx, T::DatabaseReady, true);
                    Ok(Outcome::Done)
                })
            })
            .run(&mut ctx, &recorded),
        )
        .await
        .expect("the four members meet at the barrier, so they ran concurrently");
        assert_eq!(
            pass.ran,
            [
                "Secrets",
                "Database",
                "Deployment",
                "HTTPRoute",
                "HealthCheck",
                "HPA",
                "NetworkPolicy"
            ]
        );
        assert_eq!(
            pass.requeue,
            Some(Duration::from_secs(10)),
            "the shortest requeue wins"
        );
        assert_eq!(pass.errors.len(), 1);
        assert_eq!(recorded.0.lock().unwrap().1, [("HPA", "HPAReady")]);
        // Every member's own condition is merged back, the failed one's included; the
        // HTTPRoute condition the NetworkPolicy member wrote on its copy is not.
        assert_eq!(status_of(&ctx, T::HTTPRouteReady), Some("True"));
        assert_eq!(status_of(&ctx, T::BarbicanAPIReady), Some("True"));
        assert_eq!(status_of(&ctx, T::HPAReady), Some("False"));
        assert_eq!(status_of(&ctx, T::NetworkPolicyReady), Some("True"));
        assert!(ctx.scratch.is_empty(), "the members worked on copies");
        assert_eq!(
            recorded.0.lock().unwrap().0.len(),
            7,
            "every step that ran is timed"
        );
    }

    fn config_refuses(_: &mut Ctx) -> StepFuture<'_> {
        Box::pin(async move {
            Err(StepError::invalid_input(
                "spec.policyOverrides.configMapRef: the ConfigMap does not exist",
            ))
        })
    }

    #[tokio::test]
    async fn a_failure_is_counted_under_its_step_condition_and_kind() {
        let pipeline = Pipeline {
            sequence: vec![step("Config", T::SecretsReady, config_refuses)],
            parallel: vec![step("HPA", T::HPAReady, hpa_fails)],
        };
        let metrics = crate::metrics::Metrics::new();
        let pass = pipeline.run(&mut Ctx::default(), &metrics).await;
        assert_eq!(pass.errors.len(), 1);
        assert_eq!(pass.errors[0].1.kind, ErrorKind::InvalidInput);
        let text = metrics.render();
        assert!(
            text.contains(
                "barbican_operator_reconcile_errors_total{condition_type=\"SecretsReady\",kind=\"invalid_input\",sub_reconciler=\"Config\"} 1"
            ),
            "{text}"
        );
        assert!(
            !text.contains("sub_reconciler=\"HPA\""),
            "the parallel group did not run after the sequence failed: {text}"
        );
    }

    /// A store's pass: the same runner over another kind's condition types.
    #[derive(Clone, Default)]
    struct StoreCtx {
        conditions: Vec<Condition>,
    }

    impl Context for StoreCtx {
        type Condition = crate::api::conditions::StoreConditionType;
        fn conditions(&self) -> &[Condition] {
            &self.conditions
        }
        fn conditions_mut(&mut self) -> &mut Vec<Condition> {
            &mut self.conditions
        }
    }

    fn credentials_fail(_: &mut StoreCtx) -> StepFuture<'_> {
        Box::pin(async move { Err(StepError::new(ErrorKind::Api, "OpenBao did not answer")) })
    }

    #[tokio::test]
    async fn the_runner_serves_any_kinds_condition_types() {
        use crate::api::conditions::StoreConditionType as S;
        let pipeline = Pipeline {
            sequence: vec![step("Credentials", S::CredentialsReady, credentials_fail)],
            parallel: vec![],
        };
        let recorded = Recorded::default();
        let pass = pipeline.run(&mut StoreCtx::default(), &recorded).await;
        assert_eq!(pass.ran, ["Credentials"]);
        assert_eq!(
            recorded.0.lock().unwrap().1,
            [("Credentials", "CredentialsReady")]
        );
    }
}
