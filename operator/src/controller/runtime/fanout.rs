//! One watch, several consumers: the two controllers both follow the Barbicans, the
//! BarbicanSecretStores and the Secrets, and each kind is watched once, not once per
//! controller (a watch is a long-lived connection and a full list on every relist).
//!
//! The source stream (typically a watch already written into its reflector store) is driven
//! on a task of its own; every event goes to each consumer's channel in order. Watch errors
//! stop at the fan-out: the source's backoff has seen them, and a controller only logs them.
//! Every cached watch goes through here, with one consumer or several (see
//! [`super::scope::filling`]).

use futures::{Stream, StreamExt, stream::BoxStream};
use kube::runtime::watcher;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

/// The watch events of one kind, as one consumer of a fan-out receives them.
pub type WatchEvents<K> = BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>;

/// The `N` consumers' streams of `source`'s events. The source is driven on a task of its
/// own, apart from the controllers: a watch read on the controllers' task falls behind while
/// their passes run (at 1,000 Barbicans the Barbicans' watch was read a minute late, so the
/// API server closed it and passes worked from a cache that old). The task ends when the
/// source does or when no consumer is left.
pub fn fan_out<K, const N: usize>(
    source: impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
) -> [WatchEvents<K>; N]
where
    K: Clone + Send + 'static,
{
    let channels: [_; N] = std::array::from_fn(|_| unbounded_channel::<watcher::Event<K>>());
    let senders: Vec<UnboundedSender<watcher::Event<K>>> =
        channels.iter().map(|(sender, _)| sender.clone()).collect();
    tokio::spawn(drive(source, senders));
    channels.map(|(_, mut receiver)| {
        futures::stream::poll_fn(move |cx| receiver.poll_recv(cx))
            .map(Ok::<_, watcher::Error>)
            .boxed()
    })
}

/// Hands each of `source`'s events to every sender, in order, until the source ends or every
/// receiver is gone.
async fn drive<K: Clone>(
    source: impl Stream<Item = Result<watcher::Event<K>, watcher::Error>>,
    senders: Vec<UnboundedSender<watcher::Event<K>>>,
) {
    let mut source = std::pin::pin!(source);
    let abandoned = futures::future::join_all(senders.iter().map(|s| s.closed()));
    let mut abandoned = std::pin::pin!(abandoned);
    loop {
        tokio::select! {
            event = source.next() => match event {
                Some(Ok(event)) => {
                    for sender in &senders {
                        // A consumer that has stopped (shutdown) no longer listens.
                        let _ = sender.send(event.clone());
                    }
                }
                // Watch errors stop here: the source's backoff has seen them, and a
                // controller would only log them.
                Some(Err(error)) => tracing::debug!(%error, "watch error"),
                None => return,
            },
            _ = &mut abandoned => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;
    use k8s_openapi::api::core::v1::Secret;
    use std::sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    };

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
        let streams = fan_out::<_, 2>(source);
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

    /// Tells when the stream holding it is dropped.
    struct Dropped(Arc<AtomicBool>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn the_watch_is_dropped_once_no_consumer_is_left() {
        let dropped = Arc::new(AtomicBool::new(false));
        let guard = Dropped(dropped.clone());
        // A watch that never ends by itself.
        let source =
            stream::pending::<Result<watcher::Event<Secret>, watcher::Error>>().map(move |event| {
                let _ = &guard;
                event
            });
        let [first, second] = fan_out::<_, 2>(source);
        drop(first);
        tokio::task::yield_now().await;
        assert!(
            !dropped.load(Ordering::SeqCst),
            "one consumer still listens"
        );
        drop(second);
        for _ in 0..100 {
            if dropped.load(Ordering::SeqCst) {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the watch outlived its consumers");
    }

    #[tokio::test]
    async fn the_watch_is_read_while_its_consumers_are_busy() {
        // Nobody reads the consumer's stream, yet the source is driven to its end: on a
        // task of its own, not when the controller gets round to it.
        let read = Arc::new(AtomicBool::new(false));
        let seen = read.clone();
        let source = stream::iter(vec![Ok(watcher::Event::Apply(named("a")))]).map(move |e| {
            seen.store(true, Ordering::SeqCst);
            e
        });
        let [events] = fan_out::<_, 1>(source);
        for _ in 0..100 {
            if read.load(Ordering::SeqCst) {
                drop(events);
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the source was not driven");
    }
}
