//! The runner's rules, the hand-offs' and the table check's.

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
    handoffs: Handoffs,
}

impl Context for Ctx {
    type Condition = T;
    fn conditions(&self) -> &[Condition] {
        &self.conditions
    }
    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.conditions
    }
    fn handoffs(&self) -> &Handoffs {
        &self.handoffs
    }
    fn handoffs_mut(&mut self) -> &mut Handoffs {
        &mut self.handoffs
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
    assert_eq!(
        pass.through,
        ["Secrets"],
        "the step that asked to come back is not through"
    );
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
    assert_eq!(pass.through, ["Secrets"]);
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
    assert!(
        !pass.through.contains(&"HPA"),
        "a failed member is not through"
    );
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
async fn a_kind_is_sweepable_once_every_step_that_makes_it_went_through() {
    let table = |database: for<'a> fn(&'a mut Ctx) -> StepFuture<'a>| Pipeline {
        sequence: vec![
            step("Secrets", T::SecretsReady, secrets).makes(&["Secret"]),
            step("Database", T::DatabaseReady, database).makes(&["Database", "Secret"]),
        ],
        parallel: vec![
            step("HTTPRoute", T::HTTPRouteReady, route).makes(&["HTTPRoute"]),
            step("NetworkPolicy", T::NetworkPolicyReady, netpol).makes(&["NetworkPolicy"]),
            step("HealthCheck", T::BarbicanAPIReady, health),
        ],
    };
    let pipeline = table(database_synced);
    let pass = pipeline
        .run(&mut Ctx::default(), &Recorded::default())
        .await;
    assert_eq!(pass.through, ["Secrets", "Database", "NetworkPolicy"]);
    // The route asks to come back: its kind waits; the others' are swept.
    assert_eq!(
        pipeline.sweepable(&pass),
        ["Database", "NetworkPolicy", "Secret"]
    );

    let pipeline = table(database_waits);
    let pass = pipeline
        .run(&mut Ctx::default(), &Recorded::default())
        .await;
    assert_eq!(pass.through, ["Secrets"]);
    assert!(
        pipeline.sweepable(&pass).is_empty(),
        "a kind two steps make waits for both: {:?}",
        pipeline.sweepable(&pass)
    );
}

fn database_synced(ctx: &mut Ctx) -> StepFuture<'_> {
    Box::pin(async move {
        report(ctx, T::DatabaseReady, true);
        Ok(Outcome::Done)
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
    handoffs: Handoffs,
}

impl Context for StoreCtx {
    type Condition = crate::api::conditions::StoreConditionType;
    fn conditions(&self) -> &[Condition] {
        &self.conditions
    }
    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.conditions
    }
    fn handoffs(&self) -> &Handoffs {
        &self.handoffs
    }
    fn handoffs_mut(&mut self) -> &mut Handoffs {
        &mut self.handoffs
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

/// A value one step hands to another in the tests below.
#[derive(Debug, PartialEq)]
struct Rendered(&'static str);

/// A second kind of value, which no test step declares.
struct Digest;

fn renders(ctx: &mut Ctx) -> StepFuture<'_> {
    Box::pin(async move {
        ctx.handoffs.give(Rendered("kms-config-1"));
        Ok(Outcome::Done)
    })
}

fn mounts(ctx: &mut Ctx) -> StepFuture<'_> {
    Box::pin(async move {
        let rendered = ctx.handoffs.need::<Rendered>()?.0;
        ctx.scratch.push(rendered);
        report(ctx, T::DeploymentReady, true);
        Ok(Outcome::Done)
    })
}

fn reads_undeclared(ctx: &mut Ctx) -> StepFuture<'_> {
    Box::pin(async move {
        ctx.handoffs.need::<Digest>()?;
        Ok(Outcome::Done)
    })
}

fn gives_nothing(_: &mut Ctx) -> StepFuture<'_> {
    Box::pin(async move { Ok(Outcome::Done) })
}

fn gives_undeclared(ctx: &mut Ctx) -> StepFuture<'_> {
    Box::pin(async move {
        ctx.handoffs.give(Digest);
        Ok(Outcome::Done)
    })
}

fn rendered() -> Handoff {
    Handoff::of::<Rendered>()
}

#[tokio::test]
async fn a_value_handed_on_reaches_the_step_that_declares_it_needs_it() {
    let pipeline = Pipeline {
        sequence: vec![
            step("Config", T::SecretsReady, renders).gives(&[rendered()]),
            step("Deployment", T::DeploymentReady, mounts).needs(&[rendered()]),
        ],
        parallel: vec![],
    };
    assert_eq!(pipeline.check(), Ok(()));
    let mut ctx = Ctx::default();
    let pass = pipeline.run(&mut ctx, &Recorded::default()).await;
    assert!(pass.errors.is_empty(), "{:?}", pass.errors);
    assert_eq!(ctx.scratch, ["kms-config-1"]);
    assert!(ctx.handoffs.has::<Rendered>());
}

#[tokio::test]
async fn a_read_or_a_hand_off_the_table_does_not_declare_fails_the_step_as_internal() {
    let cases: [(&str, Step<Ctx>); 3] = [
        (
            "reads a Digest it does not declare",
            step("Deployment", T::DeploymentReady, reads_undeclared),
        ),
        (
            "did not give [\"Rendered\"]",
            step("Config", T::SecretsReady, gives_nothing).gives(&[rendered()]),
        ),
        (
            "gave [\"Digest\"] without declaring them",
            step("Config", T::SecretsReady, gives_undeclared),
        ),
    ];
    for (message, row) in cases {
        let pipeline = Pipeline {
            sequence: vec![row],
            parallel: vec![],
        };
        let metrics = crate::metrics::Metrics::new();
        let pass = pipeline.run(&mut Ctx::default(), &metrics).await;
        let (_, error) = pass.errors.first().expect("the step failed");
        assert_eq!(error.kind, ErrorKind::Internal, "{error}");
        assert!(error.to_string().contains(message), "{error}");
        assert!(
            metrics.render().contains("kind=\"internal\""),
            "counted as the operator's own fault"
        );
    }
}

#[test]
fn the_table_check_names_a_need_without_an_earlier_giver_and_a_value_given_twice() {
    let before_giver = Pipeline {
        sequence: vec![
            step("Deployment", T::DeploymentReady, mounts).needs(&[rendered()]),
            step("Config", T::SecretsReady, renders).gives(&[rendered()]),
        ],
        parallel: vec![],
    };
    assert_eq!(
        before_giver.check(),
        Err("Deployment needs a Rendered that no earlier step of the sequence gives".into())
    );
    let twice = Pipeline {
        sequence: vec![
            step("Config", T::SecretsReady, renders).gives(&[rendered()]),
            step("Secrets", T::SecretsReady, renders).gives(&[rendered()]),
        ],
        parallel: vec![],
    };
    assert_eq!(
        twice.check(),
        Err("Secrets and Config both give a Rendered".into())
    );
    let from_parallel = Pipeline {
        sequence: vec![],
        parallel: vec![step("HPA", T::HPAReady, renders).gives(&[rendered()])],
    };
    assert!(
        from_parallel
            .check()
            .is_err_and(|e| e.contains("from the parallel group"))
    );
    let parallel_reads = Pipeline {
        sequence: vec![step("Config", T::SecretsReady, renders).gives(&[rendered()])],
        parallel: vec![step("NetworkPolicy", T::NetworkPolicyReady, mounts).needs(&[rendered()])],
    };
    assert_eq!(parallel_reads.check(), Ok(()));
}
