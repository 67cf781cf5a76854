//! A pass's panic contained to its CR, and the controllers' tasks supervised: one that ends
//! before the shutdown ends the process.

use std::future::Future;

use futures::FutureExt;

use crate::{
    controller::pass::{Error, Next},
    metrics::Metrics,
};

/// Runs one pass, containing a panic: it becomes this CR's failure alone ([`Error::Panicked`],
/// counted by controller and retried with backoff), never the end of the task that runs every
/// other CR's passes. kube-runtime re-raises a panicking reconcile on the controller's task,
/// which would stop both controllers while the process looked healthy.
pub async fn contained(
    controller: &'static str,
    metrics: &Metrics,
    pass: impl Future<Output = Result<Next, Error>>,
) -> Result<Next, Error> {
    match std::panic::AssertUnwindSafe(pass).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(_) => {
            // The payload is not logged: it may quote a tenant's input. The panic hook the
            // binary installs logs where it happened.
            metrics.panicked(controller);
            Err(Error::Panicked)
        }
    }
}

/// Why the controllers returned before the shutdown asked them to.
#[derive(Debug, thiserror::Error)]
#[error("{0} ended before the operator was asked to stop")]
pub struct Stopped(pub &'static str);

/// Runs `parts` each on a task of its own until all end after `shutdown`; the first to end
/// (or panic) before it stops the rest and is returned: a process whose controllers are gone
/// must exit, so Kubernetes restarts it, rather than renew its Lease and answer `/healthz`.
pub async fn supervise(
    parts: impl IntoIterator<Item = (&'static str, futures::future::BoxFuture<'static, ()>)>,
    shutdown: futures::future::Shared<impl Future<Output = ()> + Send + 'static>,
) -> Result<(), Stopped> {
    let mut running = tokio::task::JoinSet::new();
    for (what, part) in parts {
        running.spawn(part.map(move |()| what));
    }
    while let Some(ended) = running.join_next().await {
        if shutdown.clone().now_or_never().is_some() {
            continue;
        }
        running.abort_all();
        let what = ended.unwrap_or("a controller task (it panicked)");
        tracing::error!(part = what, "ended before the operator was asked to stop");
        return Err(Stopped(what));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_pass_is_that_crs_failure_alone_and_the_next_pass_runs() {
        let metrics = Metrics::new();
        let panicked = contained("barbican", &metrics, async {
            if metrics.panics("barbican") == 0 {
                panic!("a tenant's value broke the pass");
            }
            Ok(Next::AwaitChange)
        })
        .await;
        assert!(matches!(panicked, Err(Error::Panicked)), "{panicked:?}");
        assert_eq!(metrics.panics("barbican"), 1);
        assert!(
            metrics
                .render()
                .contains("barbican_operator_reconcile_panics_total{controller=\"barbican\"} 1")
        );
        // The same task goes on: the next pass (of this CR or another) runs and succeeds.
        let next = contained("barbican", &metrics, async { Ok(Next::AwaitChange) }).await;
        assert!(matches!(next, Ok(Next::AwaitChange)));
        assert_eq!(metrics.panics("secretstore"), 0);
    }

    #[tokio::test]
    async fn a_part_that_ends_or_panics_before_the_shutdown_stops_the_rest() {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shutdown = async move {
            let _ = stopped.await;
        }
        .boxed()
        .shared();
        let ended = supervise(
            [
                ("the forever part", futures::future::pending().boxed()),
                ("the part that ends", async {}.boxed()),
            ],
            shutdown.clone(),
        )
        .await;
        assert_eq!(ended.unwrap_err().0, "the part that ends");
        let panicked = supervise(
            [
                ("the forever part", futures::future::pending().boxed()),
                ("the part that panics", async { panic!("a bug") }.boxed()),
            ],
            shutdown.clone(),
        )
        .await;
        assert_eq!(panicked.unwrap_err().0, "a controller task (it panicked)");
        // Asked to stop, the parts end and that is no failure.
        let _ = stop.send(());
        let asked = supervise([("the part that ends", async {}.boxed())], shutdown).await;
        assert!(asked.is_ok());
    }
}
