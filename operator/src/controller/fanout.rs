//! One watch, several consumers: the two controllers both follow the Barbicans, the
//! BarbicanSecretStores and the Secrets, and each kind is watched once, not once per
//! controller (a watch is a long-lived connection and a full list on every relist).
//!
//! The source stream (typically a watch already written into its reflector store) is driven
//! by one future; every event goes to each consumer's channel in order. Watch errors stop at
//! the fan-out: the source's backoff has seen them, and a controller only logs them.

use futures::{
    FutureExt, Stream, StreamExt,
    channel::mpsc::{UnboundedSender, unbounded},
    future::BoxFuture,
    stream::BoxStream,
};
use kube::runtime::watcher;

/// The watch events of one kind, as one consumer of a fan-out receives them.
pub type WatchEvents<K> = BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>;

/// The `N` consumers' streams of `source`'s events, and the future that drives it (to run
/// beside the consumers; it ends when the source does).
pub fn fan_out<K, const N: usize>(
    source: impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
) -> ([WatchEvents<K>; N], BoxFuture<'static, ()>)
where
    K: Clone + Send + 'static,
{
    let channels: [_; N] = std::array::from_fn(|_| unbounded::<watcher::Event<K>>());
    let senders: Vec<UnboundedSender<watcher::Event<K>>> =
        channels.iter().map(|(sender, _)| sender.clone()).collect();
    let driver = source.for_each(move |event| {
        match event {
            Ok(event) => {
                for sender in &senders {
                    // A consumer that has stopped (shutdown) no longer listens.
                    let _ = sender.unbounded_send(event.clone());
                }
            }
            Err(error) => tracing::debug!(%error, "watch error"),
        }
        futures::future::ready(())
    });
    let streams = channels.map(|(_, receiver)| receiver.map(Ok::<_, watcher::Error>).boxed());
    (streams, FutureExt::boxed(driver))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;
    use k8s_openapi::api::core::v1::Secret;

    fn named(name: &str) -> Secret {
        let mut secret = Secret::default();
        secret.metadata.name = Some(name.into());
        secret
    }

    #[tokio::test]
    async fn every_consumer_gets_every_event_in_order_and_errors_stop_at_the_fan_out() {
        let source = stream::iter(vec![
            Ok(watcher::Event::Init),
            Ok(watcher::Event::InitApply(named("a"))),
            Ok(watcher::Event::InitDone),
            Err(watcher::Error::NoResourceVersion),
            Ok(watcher::Event::Apply(named("b"))),
            Ok(watcher::Event::Delete(named("a"))),
        ]);
        let (streams, driver) = fan_out::<_, 2>(source);
        driver.await;
        for stream in streams {
            let seen: Vec<String> = stream
                .map(|e| match e.unwrap() {
                    watcher::Event::Init => "init".to_string(),
                    watcher::Event::InitApply(s) => format!("list {}", s.metadata.name.unwrap()),
                    watcher::Event::InitDone => "listed".to_string(),
                    watcher::Event::Apply(s) => format!("apply {}", s.metadata.name.unwrap()),
                    watcher::Event::Delete(s) => format!("delete {}", s.metadata.name.unwrap()),
                })
                .collect()
                .await;
            assert_eq!(
                seen,
                ["init", "list a", "listed", "apply b", "delete a"],
                "each consumer, in order, without the error"
            );
        }
    }
}
