//! The operator's clock: every timestamp, TTL and requeue decision reads it.
//!
//! In production it is the system clock. Tests hand the operator a virtual clock (the sim's,
//! through an adapter in the test crates), so "20 minutes pass" takes milliseconds and a
//! secret-id TTL or a requeue interval fires exactly when the scenario says.

use std::{future::Future, pin::Pin, time::Duration};

/// A future the clock completes.
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Where the operator reads time.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> jiff::Timestamp;

    /// Completes after `duration` by this clock.
    fn sleep(&self, duration: Duration) -> Sleep;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> jiff::Timestamp {
        jiff::Timestamp::now()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        Box::pin(tokio::time::sleep(duration))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_system_clock_reads_and_sleeps_on_wall_time() {
        let clock: &dyn Clock = &SystemClock;
        let before = clock.now();
        clock.sleep(Duration::from_millis(20)).await;
        let elapsed = clock.now().duration_since(before);
        assert!(
            elapsed >= jiff::SignedDuration::from_millis(20),
            "{elapsed}"
        );
    }
}
