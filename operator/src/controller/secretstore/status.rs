//! A store's status, decided purely: what a pass found becomes the spec's four conditions, the
//! aggregate `Ready` over the sub-conditions of the store's mode, and the Warning events a pass
//! raises when it enters a failure.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::{
    api::{
        conditions::{Reason, StoreConditionType as T},
        secret_store::BarbicanSecretStoreStatus,
    },
    controller::status::{Report, aggregate_over, differs, set},
};

/// A condition report about a store.
pub type StoreReport = Report<T>;

/// What one pass of a mode's flow found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Findings {
    /// CredentialsReady; `None` keeps a True condition as it stands (a managed store whose
    /// instance went away keeps the credentials the pods hold until they are refused) and
    /// reads WaitingForCredentials otherwise.
    pub credentials: Option<StoreReport>,
    /// ProvisioningReady, managed mode only; `None` leaves it as it stands.
    pub provisioning: Option<StoreReport>,
    /// Whether this is a managed store (a brownfield store has no ProvisioningReady).
    pub managed: bool,
    /// When to look again.
    pub requeue: Duration,
}

impl Findings {
    /// The credentials are in hand and accepted.
    pub fn available(managed: bool, message: impl Into<String>, requeue: Duration) -> Self {
        Self {
            credentials: Some(Report::ready(
                T::CredentialsReady,
                Reason::CredentialsAvailable,
                message,
            )),
            provisioning: managed.then(provisioned),
            managed,
            requeue,
        }
    }

    /// The credentials are not usable, for `reason`.
    pub fn credentials_failed(
        managed: bool,
        reason: Reason,
        message: impl Into<String>,
        requeue: Duration,
    ) -> Self {
        Self {
            credentials: Some(Report::not_ready(T::CredentialsReady, reason, message)),
            provisioning: managed.then(provisioned),
            managed,
            requeue,
        }
    }

    /// A managed store's instance is not ready for provisioning, for `reason`.
    pub fn provisioning_failed(
        reason: Reason,
        message: impl Into<String>,
        requeue: Duration,
    ) -> Self {
        Self {
            credentials: None,
            provisioning: Some(Report::not_ready(T::ProvisioningReady, reason, message)),
            managed: true,
            requeue,
        }
    }
}

fn provisioned() -> StoreReport {
    Report::ready(
        T::ProvisioningReady,
        Reason::Provisioned,
        "the instance is Available and carries the barbican KV mount and AppRole",
    )
}

/// The sub-conditions the aggregate `Ready` of a store in this mode is derived from.
pub fn aggregated(managed: bool) -> &'static [T] {
    if managed {
        &[
            T::CredentialsReady,
            T::ProvisioningReady,
            T::ConfigProjected,
        ]
    } else {
        &[T::CredentialsReady, T::ConfigProjected]
    }
}

/// The status to write after a pass, or `None` when it is what is stored.
///
/// - `findings` sets CredentialsReady and ProvisioningReady.
/// - Without a credentials verdict, anything but accepted credentials reads
///   WaitingForCredentials.
/// - A brownfield store loses ProvisioningReady.
/// - `projected` is ConfigProjected.
/// - `Ready` is the aggregate over the mode's sub-conditions.
pub fn conclude(
    before: &BarbicanSecretStoreStatus,
    findings: &Findings,
    projected: &StoreReport,
    generation: Option<i64>,
    now: Timestamp,
) -> Option<BarbicanSecretStoreStatus> {
    let mut after = before.clone();
    let conditions = &mut after.conditions;
    match &findings.credentials {
        Some(report) => set(conditions, report, generation, now),
        // Only credentials already accepted are kept; a stale failure (WaitingForParent, say)
        // would name a cause that is gone.
        None if !conditions
            .iter()
            .any(|c| c.type_ == T::CredentialsReady.as_str() && c.status == "True") =>
        {
            let waiting = Report::not_ready(
                T::CredentialsReady,
                Reason::WaitingForCredentials,
                "no credentials are minted until the instance is provisioned",
            );
            set(conditions, &waiting, generation, now);
        }
        None => {}
    }
    if findings.managed {
        if let Some(report) = &findings.provisioning {
            set(conditions, report, generation, now);
        }
    } else {
        conditions.retain(|c| c.type_ != T::ProvisioningReady.as_str());
    }
    set(conditions, projected, generation, now);
    let ready = aggregate_over(conditions, aggregated(findings.managed), T::Ready);
    set(conditions, &ready, generation, now);
    after.observed_generation = generation;
    let unchanged = !differs(&before.conditions, &after.conditions)
        && before.observed_generation == after.observed_generation;
    (!unchanged).then_some(after)
}

/// The failures a pass entered: CredentialsReady or ProvisioningReady False with a reason or
/// message they did not carry before. Each becomes a Warning event named after its reason, so
/// a store stuck in one state raises it once, not every 30 seconds.
pub fn new_failures(before: &[Condition], after: &[Condition]) -> Vec<(Reason, String)> {
    [T::CredentialsReady, T::ProvisioningReady]
        .iter()
        .filter_map(|t| {
            let now = after.iter().find(|c| c.type_ == t.as_str())?;
            let was = before.iter().find(|c| c.type_ == t.as_str());
            let entered = now.status == "False"
                && was.is_none_or(|w| {
                    w.status != now.status || w.reason != now.reason || w.message != now.message
                });
            // Every reason this controller writes is in the vocabulary; one that is not (a
            // status edited by hand) is not announced.
            let reason = Reason::parse(&now.reason)?;
            entered.then(|| (reason, now.message.clone()))
        })
        .collect()
}

/// Whether a rendered barbican.conf carries the store's section header, as a whole line.
pub fn projects(conf: &str, store: &str) -> bool {
    let header = format!("[secretstore:{store}]");
    conf.lines().any(|line| line.trim() == header)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> Timestamp {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    fn projected(yes: bool) -> StoreReport {
        if yes {
            Report::ready(T::ConfigProjected, Reason::ConfigProjected, "")
        } else {
            Report::not_ready(T::ConfigProjected, Reason::WaitingForProjection, "")
        }
    }

    fn condition(status: &BarbicanSecretStoreStatus, t: T) -> Option<(&str, &str)> {
        status
            .conditions
            .iter()
            .find(|c| c.type_ == t.as_str())
            .map(|c| (c.status.as_str(), c.reason.as_str()))
    }

    #[test]
    fn a_managed_store_is_ready_when_all_three_are_and_not_before() {
        let found = Findings::available(true, "ok", Duration::from_secs(60));
        let waiting = conclude(
            &Default::default(),
            &found,
            &projected(false),
            Some(1),
            t0(),
        )
        .expect("a first pass writes");
        assert_eq!(
            condition(&waiting, T::Ready),
            Some(("False", "NotAllReady"))
        );
        assert_eq!(
            condition(&waiting, T::ProvisioningReady),
            Some(("True", "Provisioned"))
        );
        let ready = conclude(&waiting, &found, &projected(true), Some(1), t0()).unwrap();
        assert_eq!(condition(&ready, T::Ready), Some(("True", "AllReady")));
        assert_eq!(ready.observed_generation, Some(1));
        // The same findings again write nothing.
        assert_eq!(
            conclude(&ready, &found, &projected(true), Some(1), t0()),
            None
        );
    }

    #[test]
    fn a_brownfield_store_drops_provisioning_ready_and_aggregates_over_two() {
        let managed = conclude(
            &Default::default(),
            &Findings::available(true, "ok", Duration::ZERO),
            &projected(true),
            Some(1),
            t0(),
        )
        .unwrap();
        let brownfield = conclude(
            &managed,
            &Findings::available(false, "ok", Duration::ZERO),
            &projected(true),
            Some(1),
            t0(),
        )
        .unwrap();
        assert_eq!(condition(&brownfield, T::ProvisioningReady), None);
        assert_eq!(condition(&brownfield, T::Ready), Some(("True", "AllReady")));
    }

    #[test]
    fn a_provisioning_failure_keeps_the_credentials_held_and_a_first_one_waits() {
        let failed =
            Findings::provisioning_failed(Reason::WaitingForInstance, "not yet", RETRY_FOR_TEST);
        let first = conclude(
            &Default::default(),
            &failed,
            &projected(false),
            Some(1),
            t0(),
        )
        .unwrap();
        assert_eq!(
            condition(&first, T::CredentialsReady),
            Some(("False", "WaitingForCredentials"))
        );
        let ready = conclude(
            &Default::default(),
            &Findings::available(true, "ok", Duration::ZERO),
            &projected(true),
            Some(1),
            t0(),
        )
        .unwrap();
        let parentless = conclude(
            &Default::default(),
            &Findings {
                credentials: Some(Report::not_ready(
                    T::CredentialsReady,
                    Reason::WaitingForParent,
                    "",
                )),
                ..failed.clone()
            },
            &projected(false),
            Some(1),
            t0(),
        )
        .unwrap();
        let found_parent =
            conclude(&parentless, &failed, &projected(false), Some(1), t0()).unwrap();
        assert_eq!(
            condition(&found_parent, T::CredentialsReady),
            Some(("False", "WaitingForCredentials")),
            "a stale failure is not kept"
        );
        let blip = conclude(&ready, &failed, &projected(true), Some(1), t0()).unwrap();
        assert_eq!(
            condition(&blip, T::CredentialsReady),
            Some(("True", "CredentialsAvailable")),
            "the projection keeps the credentials the pods hold"
        );
        assert_eq!(
            condition(&blip, T::ProvisioningReady),
            Some(("False", "WaitingForInstance"))
        );
        assert_eq!(condition(&blip, T::Ready), Some(("False", "NotAllReady")));
    }

    const RETRY_FOR_TEST: Duration = Duration::from_secs(30);

    #[test]
    fn a_failure_raises_its_event_once() {
        let failed = Findings::credentials_failed(
            false,
            Reason::InvalidCredentials,
            "rejected",
            RETRY_FOR_TEST,
        );
        let first = conclude(
            &Default::default(),
            &failed,
            &projected(false),
            Some(1),
            t0(),
        )
        .unwrap();
        assert_eq!(
            new_failures(&[], &first.conditions),
            [(Reason::InvalidCredentials, "rejected".to_string())]
        );
        assert!(new_failures(&first.conditions, &first.conditions).is_empty());
        let ok = conclude(
            &first,
            &Findings::available(false, "ok", Duration::ZERO),
            &projected(false),
            Some(1),
            t0(),
        )
        .unwrap();
        assert!(new_failures(&first.conditions, &ok.conditions).is_empty());
    }

    #[test]
    fn the_section_header_must_be_a_whole_line() {
        let conf =
            "[secretstore]\nstores_lookup_suffix = a\n\n[secretstore:a]\nglobal_default = True\n";
        assert!(projects(conf, "a"));
        assert!(!projects(conf, "b"));
        assert!(!projects("# [secretstore:b] was here\n", "b"));
    }
}
