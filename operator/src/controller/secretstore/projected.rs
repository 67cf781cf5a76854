//! The ConfigProjected step: whether the parent's Deployment mounts a barbican.conf that
//! carries the store's section, observed by reading the mounted config Secret.

use k8s_openapi::api::{apps::v1::Deployment, core::v1::Secret};

use super::{
    handoffs::Placed,
    managed,
    state::StoreState,
    status::{StoreReport, projects},
};
use crate::{
    api::{
        conditions::{Reason, StoreConditionType as T},
        names::mounted_config,
    },
    controller::{
        pipeline::{Outcome, StepFuture},
        runtime::children::Children,
        status::Report,
        step_error::api_error,
    },
};

/// ConfigProjected, observed by reading the barbican.conf the parent's Deployment mounts.
async fn config_projected(
    children: &Children,
    parent: &str,
    store: &str,
) -> Result<StoreReport, kube::Error> {
    let waiting = |message: String| {
        Report::not_ready(T::ConfigProjected, Reason::WaitingForProjection, message)
    };
    // The parent's Deployment is this operator's own child: the cache's "absent" is believed
    // (every store pass until the Deployment exists read it from the API server: 11.5 GETs
    // per Barbican while converging, docs/performance.md).
    let Some(deployment) = children.get_own_child::<Deployment>(parent).await? else {
        return Ok(waiting(format!("Deployment {parent:?} does not exist yet")));
    };
    let Some(config) = mounted_config(&deployment) else {
        return Ok(waiting(format!(
            "Deployment {parent:?} mounts no config Secret"
        )));
    };
    let secret = children.get::<Secret>(&config).await?;
    let conf = managed::text(secret.as_ref(), "barbican.conf").unwrap_or_default();
    Ok(if projects(&conf, store) {
        Report::ready(
            T::ConfigProjected,
            Reason::ConfigProjected,
            format!("Deployment {parent:?} mounts {config:?}, which carries [secretstore:{store}]"),
        )
    } else {
        waiting(format!(
            "the mounted {config:?} does not carry [secretstore:{store}] yet"
        ))
    })
}

/// The ConfigProjected step.
pub fn config_projected_step(state: &mut StoreState) -> StepFuture<'_> {
    Box::pin(async move {
        let Placed(children) = state.handoffs.need::<Placed>()?;
        let report = config_projected(children, &state.parent_name(), &state.name())
            .await
            .map_err(|e| api_error("reading the parent's mounted config", e))?;
        state.projected = Some(report);
        Ok(Outcome::Done)
    })
}
