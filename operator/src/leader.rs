//! Leader election on a Lease (kube-lease-manager), so two replicas never both reconcile.
//!
//! A replica waits until it holds the Lease, then runs the controllers until it is told to
//! stop or loses the Lease; a replica that lost it stops reconciling at once and exits, as
//! controller-runtime's managers do, so a restarted pod rejoins the election cleanly.

use kube::Client;
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
pub async fn acquire(client: Client, election: &Election) -> Result<Leadership, LeaseManagerError> {
    let manager = LeaseManagerBuilder::new(client, &election.lease)
        .with_namespace(&election.namespace)
        .with_identity(&election.identity)
        .with_duration(election.duration_seconds)
        .with_grace(election.grace_seconds)
        .with_create_mode(LeaseCreateMode::AutoCreate)
        .build()
        .await?;
    let (mut state, task) = manager.watch().await;
    while !*state.borrow_and_update() {
        if state.changed().await.is_err() {
            return match task.await {
                Ok(Err(e)) => Err(e),
                _ => Err(LeaseManagerError::InconsistentState(
                    "the lease watcher stopped".into(),
                )),
            };
        }
    }
    Ok(Leadership { state, task })
}
