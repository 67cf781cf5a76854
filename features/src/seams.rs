//! The operator's seams, served by the sim: its virtual clock as the operator's [`Clock`], its
//! service registry as the operator's [`Resolve`]. Test wiring only; the operator never
//! depends on the sim.

use std::{net::SocketAddr, time::Duration};

use barbican_operator::{
    clock::{Clock, Sleep},
    resolve::Resolve,
};
use barbican_sim::services::ServiceRegistry;

/// The sim's clock, read by the operator.
#[derive(Clone, Debug)]
pub struct SimClock(pub barbican_sim::clock::Clock);

impl Clock for SimClock {
    fn now(&self) -> jiff::Timestamp {
        self.0.now()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        Box::pin(self.0.sleep(duration))
    }
}

/// The sim's service registry, consulted by the operator's HTTP clients.
#[derive(Clone, Debug)]
pub struct SimResolver(pub ServiceRegistry);

impl Resolve for SimResolver {
    fn resolve(&self, host: &str, port: u16) -> Option<SocketAddr> {
        self.0.resolve(host, port)
    }
}
