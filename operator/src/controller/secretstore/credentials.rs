//! The Provision and Credentials steps: a managed store's instance provisioned and its AppRole
//! secret ID minted ([`super::managed`]), or a brownfield store's own credentials validated
//! ([`super::brownfield`]). A failure of either is the store's finding, not the pass's end:
//! ConfigProjected is still observed.

use super::{
    approle::RETRY,
    brownfield,
    handoffs::{Placed, Provisioned},
    managed::{self, Provision},
    state::{StoreState, instance},
    status::Findings,
};
use crate::{
    api::conditions::{Reason, StoreConditionType as T},
    controller::{
        pipeline::{Outcome, StepFuture},
        status::Report,
        step_error::api_error,
    },
};

/// The Provision step: for a managed store, the instance Available, its CA, no foreign Secret
/// in `<store>-approle`'s place, and a provisioner login that finds the KV mount and AppRole;
/// a verdict earned from the same inputs is reused instead. A store without `spec.openBao`
/// ends the pass here.
pub fn provision(state: &mut StoreState) -> StepFuture<'_> {
    Box::pin(async move {
        if state.store.spec.open_bao.is_none() {
            state.findings = Findings::credentials_failed(
                false,
                Reason::WaitingForCredentials,
                "spec.openBao is missing",
                RETRY,
            );
            state.projected = Some(Report::not_ready(
                T::ConfigProjected,
                Reason::WaitingForProjection,
                "",
            ));
            return Ok(Outcome::Requeue(RETRY));
        }
        let Some(instance) = instance(&state.store) else {
            state.handoffs.give(Provisioned::Brownfield);
            return Ok(Outcome::Done);
        };
        let Placed(children) = state.handoffs.need::<Placed>()?;
        let provision = managed::provision(
            &state.env,
            &state.verified,
            &state.store,
            children,
            &instance,
        )
        .await
        .map_err(|e| api_error("provisioning against the instance", e))?;
        match provision {
            Provision::Found(findings) => {
                state.findings = findings;
                state.handoffs.give(Provisioned::Settled);
            }
            Provision::Session(session) => state.handoffs.give(Provisioned::Session(session)),
        }
        Ok(Outcome::Done)
    })
}

/// The Credentials step: the ladder over `<store>-approle` with the provisioner's session, or
/// a brownfield store's credentials logged in with and their capabilities checked.
pub fn credentials(state: &mut StoreState) -> StepFuture<'_> {
    Box::pin(async move {
        let Placed(children) = state.handoffs.need::<Placed>()?;
        let found = match state.handoffs.need::<Provisioned>()? {
            Provisioned::Settled => return Ok(Outcome::Done),
            Provisioned::Session(session) => {
                managed::credentials(&state.env, &state.verified, &state.store, children, session)
                    .await
            }
            Provisioned::Brownfield => {
                let Some(spec) = state.store.spec.open_bao.as_ref() else {
                    return Ok(Outcome::Done);
                };
                brownfield::pass(&state.env, &state.verified, &state.store, children, spec).await
            }
        };
        state.findings = found.map_err(|e| api_error("working on the store's Secrets", e))?;
        Ok(Outcome::Done)
    })
}
