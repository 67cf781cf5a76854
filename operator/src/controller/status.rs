//! The status skeleton's pure rules: setting a condition (the transition time moves only when
//! the status does), the aggregate `Ready` over the eleven sub-conditions, and whether a pass
//! changed anything worth writing.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::api::{
    barbican::BarbicanStatus,
    conditions::{BarbicanConditionType, Reason, StoreConditionType},
};

/// A condition type of either kind.
pub trait ConditionType: Copy {
    /// The string written to the API.
    fn name(self) -> &'static str;
}

impl ConditionType for BarbicanConditionType {
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl ConditionType for StoreConditionType {
    fn name(self) -> &'static str {
        self.as_str()
    }
}

/// A condition as a step reports it, before times and generations are stamped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report<T = BarbicanConditionType> {
    /// The condition type.
    pub type_: T,
    /// True or False.
    pub ready: bool,
    /// The reason, from the spec's vocabulary.
    pub reason: Reason,
    /// A human-readable message.
    pub message: String,
}

impl<T: ConditionType> Report<T> {
    /// A True report.
    pub fn ready(type_: T, reason: Reason, message: impl Into<String>) -> Self {
        Self {
            type_,
            ready: true,
            reason,
            message: message.into(),
        }
    }

    /// A False report.
    pub fn not_ready(type_: T, reason: Reason, message: impl Into<String>) -> Self {
        Self {
            type_,
            ready: false,
            reason,
            message: message.into(),
        }
    }
}

fn status_word(ready: bool) -> &'static str {
    if ready { "True" } else { "False" }
}

/// Sets `report` among `conditions` for `generation` at `now`. The `lastTransitionTime` of an
/// existing condition is kept unless its status changes.
pub fn set<T: ConditionType>(
    conditions: &mut Vec<Condition>,
    report: &Report<T>,
    generation: Option<i64>,
    now: Timestamp,
) {
    let status = status_word(report.ready);
    let type_ = report.type_.name();
    let transition = conditions
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or(Time(now));
    let condition = Condition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: report.reason.as_str().to_string(),
        message: report.message.clone(),
        observed_generation: generation,
        last_transition_time: transition,
    };
    match conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(existing) => *existing = condition,
        None => conditions.push(condition),
    }
}

/// The aggregate `Ready`: True (AllReady) when all eleven sub-conditions are True, else False
/// (NotAllReady) naming the ones that are not. ExtraConfigHealthy never counts.
pub fn aggregate(conditions: &[Condition]) -> Report {
    aggregate_over(
        conditions,
        &BarbicanConditionType::AGGREGATED,
        BarbicanConditionType::Ready,
    )
}

/// The aggregate `ready` condition over the sub-conditions `types` of either kind: AllReady
/// when each is True, else NotAllReady naming the ones that are not.
pub fn aggregate_over<T: ConditionType>(
    conditions: &[Condition],
    types: &[T],
    ready: T,
) -> Report<T> {
    let pending: Vec<&str> = types
        .iter()
        .map(|t| t.name())
        .filter(|t| {
            !conditions
                .iter()
                .any(|c| c.type_ == *t && c.status == "True")
        })
        .collect();
    if pending.is_empty() {
        Report::ready(ready, Reason::AllReady, "all sub-conditions are ready")
    } else {
        Report::not_ready(
            ready,
            Reason::NotAllReady,
            format!("not ready: {}", pending.join(", ")),
        )
    }
}

/// Whether two condition lists differ in anything but order: a pass that changed nothing
/// writes nothing.
pub fn differs(before: &[Condition], after: &[Condition]) -> bool {
    let key = |c: &Condition| {
        (
            c.type_.clone(),
            c.status.clone(),
            c.reason.clone(),
            c.message.clone(),
            c.observed_generation,
            c.last_transition_time.0,
        )
    };
    let mut a: Vec<_> = before.iter().map(key).collect();
    let mut b: Vec<_> = after.iter().map(key).collect();
    a.sort();
    b.sort();
    a != b
}

/// The status to write at the end of a pass, on every exit path: `after` (what the steps left)
/// with the aggregate `Ready` recomputed and `observedGeneration` stamped; `None` when that is
/// what `before` already says, so an idle pass writes nothing.
pub fn conclude(
    before: &BarbicanStatus,
    mut after: BarbicanStatus,
    generation: Option<i64>,
    now: Timestamp,
) -> Option<BarbicanStatus> {
    let ready = aggregate(&after.conditions);
    set(&mut after.conditions, &ready, generation, now);
    after.observed_generation = generation;
    let unchanged = !differs(&before.conditions, &after.conditions)
        && BarbicanStatus {
            conditions: vec![],
            ..before.clone()
        } == BarbicanStatus {
            conditions: vec![],
            ..after.clone()
        };
    (!unchanged).then_some(after)
}

/// Whether an object carries the condition `type_` with status True.
pub fn condition_true(object: &serde_json::Value, type_: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == type_ && c["status"] == "True")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_store_counts_as_ready_only_with_ready_true() {
        let ready =
            serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        let not =
            serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}});
        assert!(condition_true(&ready, "Ready"));
        assert!(!condition_true(&not, "Ready"));
        assert!(!condition_true(&serde_json::json!({}), "Ready"));
    }

    use super::*;

    #[test]
    fn a_pass_concludes_with_ready_and_the_generation_and_an_idle_pass_writes_nothing() {
        let t0 = at("2026-01-01T00:00:00Z");
        let mut after = BarbicanStatus::default();
        set(
            &mut after.conditions,
            &Report::ready(
                BarbicanConditionType::SecretsReady,
                Reason::SecretsAvailable,
                "",
            ),
            Some(3),
            t0,
        );
        let written = conclude(&BarbicanStatus::default(), after.clone(), Some(3), t0)
            .expect("a first pass writes");
        assert_eq!(written.observed_generation, Some(3));
        let ready = written
            .conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .unwrap();
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "NotAllReady")
        );

        // The next pass finds the same: nothing to write, even minutes later.
        let later = at("2026-01-01T00:10:00Z");
        assert_eq!(conclude(&written, written.clone(), Some(3), later), None);
        // A new generation is worth a write, and so is another field.
        assert!(conclude(&written, written.clone(), Some(4), later).is_some());
        let endpoint = BarbicanStatus {
            endpoint: Some("http://barbican.openstack.svc:9311".into()),
            ..written.clone()
        };
        assert!(conclude(&written, endpoint, Some(3), later).is_some());
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn the_transition_time_moves_only_with_the_status() {
        let mut conditions = Vec::new();
        let t0 = at("2026-01-01T00:00:00Z");
        let t1 = at("2026-01-01T00:05:00Z");
        let waiting = Report::not_ready(
            BarbicanConditionType::DeploymentReady,
            Reason::WaitingForDeployment,
            "0/3",
        );
        set(&mut conditions, &waiting, Some(1), t0);
        let still = Report {
            message: "1/3".into(),
            ..waiting.clone()
        };
        set(&mut conditions, &still, Some(2), t1);
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0].last_transition_time.0, t0, "status unchanged");
        assert_eq!(conditions[0].message, "1/3");
        assert_eq!(conditions[0].observed_generation, Some(2));
        let ready = Report::ready(
            BarbicanConditionType::DeploymentReady,
            Reason::DeploymentReady,
            "",
        );
        set(&mut conditions, &ready, Some(2), t1);
        assert_eq!(conditions[0].last_transition_time.0, t1, "status flipped");
        assert_eq!(conditions[0].status, "True");
    }

    #[test]
    fn ready_aggregates_the_ten_and_ignores_extra_config() {
        let now = at("2026-01-01T00:00:00Z");
        let mut conditions = Vec::new();
        for t in BarbicanConditionType::AGGREGATED {
            set(
                &mut conditions,
                &Report::ready(t, Reason::AllReady, ""),
                Some(1),
                now,
            );
        }
        set(
            &mut conditions,
            &Report::not_ready(
                BarbicanConditionType::ExtraConfigHealthy,
                Reason::OwnedKeysOverridden,
                "[DEFAULT] debug",
            ),
            Some(1),
            now,
        );
        assert_eq!(aggregate(&conditions).reason, Reason::AllReady);
        set(
            &mut conditions,
            &Report::not_ready(BarbicanConditionType::HPAReady, Reason::NotAllReady, ""),
            Some(1),
            now,
        );
        let report = aggregate(&conditions);
        assert_eq!((report.ready, report.reason), (false, Reason::NotAllReady));
        assert_eq!(report.message, "not ready: HPAReady");
        assert!(
            !aggregate(&[]).ready,
            "missing sub-conditions are not ready"
        );
    }

    #[test]
    fn an_unchanged_pass_is_no_change_whatever_the_order() {
        let now = at("2026-01-01T00:00:00Z");
        let mut a = Vec::new();
        set(
            &mut a,
            &Report::ready(BarbicanConditionType::HPAReady, Reason::HPANotRequired, ""),
            Some(1),
            now,
        );
        set(
            &mut a,
            &Report::ready(
                BarbicanConditionType::NetworkPolicyReady,
                Reason::NetworkPolicyNotRequired,
                "",
            ),
            Some(1),
            now,
        );
        let mut b: Vec<Condition> = a.iter().rev().cloned().collect();
        assert!(!differs(&a, &b));
        set(
            &mut b,
            &Report::ready(BarbicanConditionType::HPAReady, Reason::HPAReady, ""),
            Some(1),
            now,
        );
        assert!(differs(&a, &b));
    }
}
