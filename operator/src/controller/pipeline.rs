//! The table-driven pipeline: an ordered list of steps, each with a name and the condition type
//! it owns, then a parallel group.
//!
//! The runner runs the sequence in order; the first step that asks for a requeue or fails ends
//! the pass. Then it runs the parallel group's members concurrently, each on its own copy of the
//! context, and merges each member's own condition back even when a peer failed; the shortest
//! requeue wins. Every step that runs is timed, and every failure counted, through a
//! [`Recorder`] (the metrics module's, in the operator).
//!
//! Steps hand values on by type, not through fields read by convention: a row declares what it
//! `gives` and what it `needs`, [`Pipeline::check`] proves every need is given by an earlier row
//! (a test runs it over each controller's table), and [`Handoffs`] refuses, while the pass runs,
//! a read the running step did not declare and a value it gives without declaring.

use std::{
    any::{Any, TypeId},
    collections::HashMap,
    future::Future,
    pin::Pin,
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::{
    api::conditions::ConditionType,
    controller::step_error::{ErrorKind, StepError},
};

/// The type of a value one step hands to later ones.
#[derive(Clone, Copy, Debug)]
pub struct Handoff {
    /// The type's name, for messages.
    name: &'static str,
    id: TypeId,
}

impl Handoff {
    /// The hand-off of values of type `T`.
    pub fn of<T: Any>() -> Self {
        let full = std::any::type_name::<T>();
        Self {
            name: full.rsplit("::").next().unwrap_or(full),
            id: TypeId::of::<T>(),
        }
    }
}

impl PartialEq for Handoff {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

/// The values the steps of one pass have handed on, one per type, and the declaration of the
/// step running now, against which every read and every hand-off is checked.
#[derive(Clone, Default)]
pub struct Handoffs {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    running: Option<Running>,
    /// Hand-offs the running step made without declaring them.
    undeclared: Vec<&'static str>,
}

/// The declaration of the step that is running.
#[derive(Clone)]
struct Running {
    step: &'static str,
    needs: Vec<Handoff>,
    gives: Vec<Handoff>,
}

impl Handoffs {
    /// Hands `value` on to the later steps that need a `T`.
    pub fn give<T: Any + Send + Sync>(&mut self, value: T) {
        let handoff = Handoff::of::<T>();
        if let Some(running) = &self.running
            && !running.gives.contains(&handoff)
        {
            self.undeclared.push(handoff.name);
        }
        self.values.insert(handoff.id, Arc::new(value));
    }

    /// The `T` an earlier step gave; an error when the running step does not declare it needs
    /// one, or when none was given (the table is wrong: [`Pipeline::check`] catches both).
    pub fn need<T: Any + Send + Sync>(&self) -> Result<&T, StepError> {
        let handoff = Handoff::of::<T>();
        let step = self.running.as_ref().map_or("(none)", |r| r.step);
        if let Some(running) = &self.running
            && !running.needs.contains(&handoff)
        {
            return Err(StepError::new(
                ErrorKind::Internal,
                format!("step {step} reads a {} it does not declare", handoff.name),
            ));
        }
        self.values
            .get(&handoff.id)
            .and_then(|value| value.downcast_ref::<T>())
            .ok_or_else(|| {
                StepError::new(
                    ErrorKind::Internal,
                    format!("step {step} needs a {} no earlier step gave", handoff.name),
                )
            })
    }

    /// Whether a `T` was given (for the pass's caller, after the run).
    pub fn has<T: Any>(&self) -> bool {
        self.values.contains_key(&TypeId::of::<T>())
    }

    fn enter<C: Context>(&mut self, step: &Step<C>) {
        self.running = Some(Running {
            step: step.name,
            needs: step.needs.clone(),
            gives: step.gives.clone(),
        });
        self.undeclared.clear();
    }

    /// Ends the running step: what it gave without declaring, and what it declared but did
    /// not give when it went through, as an error of the operator's own table.
    fn leave<C: Context>(&mut self, step: &Step<C>, went_through: bool) -> Option<StepError> {
        self.running = None;
        let missing: Vec<&str> = step
            .gives
            .iter()
            .filter(|g| went_through && !self.values.contains_key(&g.id))
            .map(|g| g.name)
            .collect();
        let undeclared = std::mem::take(&mut self.undeclared);
        if undeclared.is_empty() && missing.is_empty() {
            return None;
        }
        Some(StepError::new(
            ErrorKind::Internal,
            format!(
                "step {} gave {undeclared:?} without declaring them and did not give {missing:?}",
                step.name
            ),
        ))
    }
}

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
    /// The values the steps handed on.
    fn handoffs(&self) -> &Handoffs;
    /// The same, to change.
    fn handoffs_mut(&mut self) -> &mut Handoffs;
    /// Shows `error`, a failure of the step that owns `condition`, on that condition when it is
    /// the CR's to read there (a foreign object in a child's place); the runner calls it for
    /// every failure, before the pass ends.
    fn report_failure(&mut self, condition: Self::Condition, error: &StepError) {
        let _ = (condition, error);
    }
    /// Takes from `member`, the copy a parallel step owning `condition` ran on, the status
    /// that step owns besides its condition (a record only it writes); the runner calls it
    /// after merging the condition back. Nothing by default: most members own a condition
    /// only.
    fn merge_member(&mut self, condition: Self::Condition, member: &Self) {
        let _ = (condition, member);
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
    /// The values it reads from earlier steps.
    pub needs: Vec<Handoff>,
    /// The values it hands on when it goes through.
    pub gives: Vec<Handoff>,
    /// The kinds of child it makes: a kind is swept after a pass in which every step that
    /// makes it went through (see [`Pipeline::sweepable`]).
    pub makes: Vec<&'static str>,
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
        needs: Vec::new(),
        gives: Vec::new(),
        makes: Vec::new(),
    }
}

impl<C: Context> Step<C> {
    /// The row, reading `needs` from earlier steps.
    pub fn needs(mut self, needs: &[Handoff]) -> Self {
        self.needs = needs.to_vec();
        self
    }

    /// The row, handing `gives` on.
    pub fn gives(mut self, gives: &[Handoff]) -> Self {
        self.gives = gives.to_vec();
        self
    }

    /// The row, making children of the kinds `makes`.
    pub fn makes(mut self, makes: &[&'static str]) -> Self {
        self.makes = makes.to_vec();
        self
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
    /// The steps that went through: ran and neither failed nor asked to come back.
    pub through: Vec<&'static str>,
}

async fn timed<C: Context>(
    step: &Step<C>,
    context: &mut C,
    recorder: &dyn Recorder,
) -> Result<Outcome, StepError> {
    let started = Instant::now();
    context.handoffs_mut().enter(step);
    let mut outcome = (step.run)(context).await;
    let went_through = matches!(outcome, Ok(Outcome::Done));
    if let Some(wrong) = context.handoffs_mut().leave(step, went_through) {
        outcome = Err(wrong);
    }
    recorder.duration(step.name, started.elapsed());
    if let Err(error) = &outcome {
        recorder.error(step.name, step.condition.as_str(), error);
        context.report_failure(step.condition, error);
    }
    outcome
}

impl<C: Context> Pipeline<C> {
    /// Whether the table is well formed: every value a row needs is given by an earlier row of
    /// the sequence (a member of the parallel group reads only what the sequence gave), and no
    /// value has two givers. The error names the row and the value.
    pub fn check(&self) -> Result<(), String> {
        let mut given: Vec<(Handoff, &'static str)> = Vec::new();
        let rows = self.sequence.iter().map(|s| (s, true));
        let members = self.parallel.iter().map(|s| (s, false));
        for (step, in_sequence) in rows.chain(members) {
            for need in &step.needs {
                if !given.iter().any(|(g, _)| g == need) {
                    return Err(format!(
                        "{} needs a {} that no earlier step of the sequence gives",
                        step.name, need.name
                    ));
                }
            }
            for give in &step.gives {
                if let Some((_, giver)) = given.iter().find(|(g, _)| g == give) {
                    return Err(format!(
                        "{} and {giver} both give a {}",
                        step.name, give.name
                    ));
                }
                if !in_sequence {
                    return Err(format!(
                        "{} gives a {} from the parallel group, where no step can read it",
                        step.name, give.name
                    ));
                }
                given.push((*give, step.name));
            }
        }
        Ok(())
    }

    /// The kinds of child `pass` may sweep: those every step that makes them went through.
    /// A step that stopped, failed or asks to come back may not have applied or kept all of
    /// its children yet, so its kinds wait for a pass it goes through; the other steps' kinds
    /// are swept meanwhile (one step's trouble does not hold back another's removal).
    pub fn sweepable(&self, pass: &Pass) -> Vec<&'static str> {
        let rows: Vec<&Step<C>> = self.sequence.iter().chain(&self.parallel).collect();
        let mut kinds: Vec<&'static str> = rows.iter().flat_map(|s| s.makes.clone()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds.retain(|kind| {
            rows.iter()
                .filter(|s| s.makes.contains(kind))
                .all(|s| pass.through.contains(&s.name))
        });
        kinds
    }

    /// Runs one pass over `context`.
    pub async fn run(&self, context: &mut C, recorder: &dyn Recorder) -> Pass {
        let mut pass = Pass::default();
        for step in &self.sequence {
            pass.ran.push(step.name);
            match timed(step, context, recorder).await {
                Ok(Outcome::Done) => pass.through.push(step.name),
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
            context.merge_member(step.condition, &copy);
            match outcome {
                Ok(Outcome::Done) => pass.through.push(step.name),
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
mod tests;
