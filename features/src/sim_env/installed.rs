//! The operator as the chart installed it on a served sim ([`crate::backend::INSTALLED_OPERATOR_VAR`]):
//! the harness runs no operator, and names the fakes it runs to that sim, whose kubelet's
//! pods (the operator's among them) then reach them as a cluster's DNS and kube-proxy would.

use std::net::SocketAddr;

use barbican_sim::services::ServiceRegistry;

use super::Error;

/// The address of a control API given as `http://<ip>:<port>[/]`.
pub(super) fn control_addr(url: &str) -> Result<SocketAddr, Error> {
    url.strip_prefix("http://")
        .map(|rest| rest.trim_end_matches('/'))
        .and_then(|authority| authority.parse().ok())
        .ok_or_else(|| {
            format!(
                "${} is {url:?}: it names a served sim's control API as http://<ip>:<port>",
                crate::backend::INSTALLED_OPERATOR_VAR
            )
        })
}

/// Sends the names `services` holds to the served sim's control API (`PUT /services/peers`)
/// now, and again on every change, until the task is aborted (with the scenario).
pub(super) async fn name_fakes_to(
    services: ServiceRegistry,
    control: SocketAddr,
) -> Result<tokio::task::JoinHandle<()>, Error> {
    // Subscribed first: a name registered while the first send is under way is sent again.
    let mut changes = services.subscribe();
    send(&services, control).await?;
    Ok(tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            if let Err(e) = send(&services, control).await {
                // The next change sends the whole set again.
                eprintln!("naming the fakes to the served sim: {e}");
            }
        }
    }))
}

async fn send(services: &ServiceRegistry, control: SocketAddr) -> Result<(), Error> {
    let answer = crate::http::request(
        control,
        "barbican-sim-control",
        "PUT",
        "/services/peers",
        &[],
        Some(services.overrides()),
    )
    .await?;
    match answer.status {
        200 => Ok(()),
        status => Err(format!(
            "PUT /services/peers on the served sim's control API answered {status}"
        )),
    }
}
