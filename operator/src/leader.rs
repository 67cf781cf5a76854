//! Leader election on a Lease (kube-lease-manager), so two replicas never both reconcile.
//!
//! A replica waits until it holds the Lease, then runs the controllers until it is told to
//! stop or loses the Lease; a replica that lost it stops reconciling at once and exits, as
//! controller-runtime's managers do, so a restarted pod rejoins the election cleanly.

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::{
    Api, Client,
    runtime::{WatchStreamExt, watcher},
};
use kube_lease_manager::{LeaseCreateMode, LeaseManagerBuilder, LeaseManagerError};
use tokio::sync::watch;

/// Where the Lease lives and who this replica is.
#[derive(Clone, Debug)]
pub struct Election {
    /// The Lease's name.
    pub lease: String,
    /// Its namespace.
    pub namespace: String,
    /// This replica's identity (its pod name, made unique).
    pub identity: String,
    /// How long a held Lease lasts without renewal, in seconds.
    pub duration_seconds: u64,
    /// How long before expiry the holder renews, in seconds.
    pub grace_seconds: u64,
}

/// The default Lease name.
pub const LEASE_NAME: &str = "barbican-operator-leader";

impl Election {
    /// The defaults: a 15 s Lease renewed 5 s before it lapses.
    pub fn new(namespace: &str, identity: &str) -> Self {
        Self {
            lease: LEASE_NAME.into(),
            namespace: namespace.into(),
            identity: identity.into(),
            duration_seconds: 15,
            grace_seconds: 5,
        }
    }
}

/// A held Lease. Dropping it releases the Lease.
pub struct Leadership {
    state: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<Result<kube_lease_manager::LeaseManager, LeaseManagerError>>,
}

impl Leadership {
    /// Completes when the Lease is lost.
    pub async fn lost(&mut self) {
        let _ = self.state.wait_for(|leader| !*leader).await;
    }

    /// Gives the Lease up and waits until it is released.
    pub async fn release(self) {
        let Self { state, task } = self;
        drop(state);
        let _ = task.await;
    }
}

/// Waits until this replica holds the Lease.
///
/// kube-lease-manager wakes a waiting replica only when the Lease it last read would expire,
/// up to `duration_seconds` later; a holder that lets go on shutdown would leave the Lease
/// free for that long. So the waiting replica also watches the Lease, and when another
/// replica lets it go (no holder) or it is deleted, starts a fresh manager, which takes a free
/// Lease at once: a rolling update or a deleted leader pod hands over in about a second, as
/// client-go's 2 s retry period does, not after a Lease duration.
pub async fn acquire(client: Client, election: &Election) -> Result<Leadership, LeaseManagerError> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), &election.namespace);
    let mut freed = watcher::watch_object(leases, &election.lease)
        .default_backoff()
        .boxed();
    let mut watching = true;
    // The holder the watch last showed. Only another replica letting go (or the Lease's
    // deletion) restarts the manager: the manager takes a Lease that is free when it starts,
    // and restarting on its own release would chase its own events.
    let mut holder: Option<String> = None;
    loop {
        let manager = LeaseManagerBuilder::new(client.clone(), &election.lease)
            .with_namespace(&election.namespace)
            .with_identity(&election.identity)
            .with_duration(election.duration_seconds)
            .with_grace(election.grace_seconds)
            .with_create_mode(LeaseCreateMode::AutoCreate)
            .build()
            .await?;
        let (mut state, task) = manager.watch().await;
        loop {
            if *state.borrow_and_update() {
                return Ok(Leadership { state, task });
            }
            tokio::select! {
                changed = state.changed() => if changed.is_err() {
                    return match task.await {
                        Ok(Err(e)) => Err(e),
                        _ => Err(LeaseManagerError::InconsistentState(
                            "the lease watcher stopped".into(),
                        )),
                    };
                },
                event = freed.next(), if watching => match event {
                    Some(Ok(lease)) => {
                        let now = holder_of(lease.as_ref());
                        let before = std::mem::replace(&mut holder, now.clone());
                        if let (Some(before), None) = (before, now)
                            && before != election.identity
                        {
                            break;
                        }
                    }
                    Some(Err(_)) => {}
                    // The watch cannot end while it is polled, but if it did, the manager's
                    // own timer still takes the Lease when it lapses.
                    None => watching = false,
                },
            }
        }
        // Start over. Dropping the receiver makes the old manager release the Lease, which
        // it does only if it became the holder in the meantime; the new one retakes it.
        drop(state);
        let _ = task.await;
    }
}

/// Who holds a Lease: `None` when it is deleted or let go.
fn holder_of(lease: Option<&Lease>) -> Option<String> {
    lease
        .and_then(|l| l.spec.as_ref())
        .and_then(|s| s.holder_identity.clone())
        .filter(|h| !h.is_empty())
}
