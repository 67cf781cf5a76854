//! Tests of `barbican_sim::clock`.

use std::sync::Arc;
use std::sync::Mutex as StdMutex;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use barbican_sim::clock::*;

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[tokio::test]
async fn advancing_fires_due_timers_in_deadline_order_at_their_own_time() {
    let clock = Clock::virtual_time();
    let seen = Arc::new(StdMutex::new(Vec::new()));
    for (label, minutes) in [("c", 30), ("a", 5), ("b", 5), ("late", 90)] {
        let (seen, c) = (seen.clone(), clock.clone());
        clock.at(
            clock.now() + SignedDuration::from_mins(minutes),
            move || seen.lock().unwrap().push((label, c.rfc3339())),
        );
    }
    assert_eq!(clock.advance(Duration::from_secs(3600)).await, 3);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            ("a", "2026-01-01T00:05:00Z".to_string()),
            ("b", "2026-01-01T00:05:00Z".to_string()),
            ("c", "2026-01-01T00:30:00Z".to_string()),
        ]
    );
    assert_eq!(clock.now(), at("2026-01-01T01:00:00Z"));
    assert_eq!(clock.pending(), 1, "the 90-minute timer is still waiting");
}

#[tokio::test]
async fn a_callback_may_set_a_timer_that_fires_in_the_same_advance() {
    let clock = Clock::virtual_time();
    let count = Arc::new(AtomicUsize::new(0));
    fn every_minute(clock: Clock, count: Arc<AtomicUsize>) {
        let next = clock.now() + SignedDuration::from_mins(1);
        let c = clock.clone();
        clock.at(next, move || {
            count.fetch_add(1, Ordering::SeqCst);
            every_minute(c, count);
        });
    }
    every_minute(clock.clone(), count.clone());
    clock.advance(Duration::from_secs(600)).await;
    assert_eq!(count.load(Ordering::SeqCst), 10);
}

#[tokio::test]
async fn a_sleeper_wakes_at_its_deadline_and_sees_it_as_now() {
    let clock = Clock::virtual_time();
    let c = clock.clone();
    let task = tokio::spawn(async move {
        c.sleep(Duration::from_secs(300)).await;
        c.now()
    });
    tokio::task::yield_now().await;
    // Nothing happens in real time while the clock stands still.
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!task.is_finished());
    clock.advance(Duration::from_secs(3600)).await;
    assert_eq!(task.await.unwrap(), at("2026-01-01T00:05:00Z"));
}

#[tokio::test]
async fn a_past_deadline_completes_at_once_and_time_never_runs_backwards() {
    let clock = Clock::virtual_time();
    clock.advance(Duration::from_secs(60)).await;
    clock.sleep_until(at("2025-12-31T00:00:00Z")).await;
    clock.advance_to(at("2025-01-01T00:00:00Z")).await;
    assert_eq!(clock.now(), at("2026-01-01T00:01:00Z"));
}

#[tokio::test]
async fn a_dropped_sleeper_does_not_hold_the_clock_up() {
    let clock = Clock::virtual_time();
    drop(clock.sleep(Duration::from_secs(1)));
    assert_eq!(clock.advance(Duration::from_secs(2)).await, 1);
    assert_eq!(clock.sleepers_running(), 0);
}

#[tokio::test]
async fn a_wall_clock_reads_the_system_time_and_cannot_be_advanced() {
    let clock = Clock::wall();
    assert!(!clock.is_virtual());
    let before = Timestamp::now();
    assert_eq!(clock.advance(Duration::from_secs(3600)).await, 0);
    assert!(clock.now() >= before && clock.now() < before + SignedDuration::from_mins(1));
    let fired = Arc::new(AtomicUsize::new(0));
    let f = fired.clone();
    clock.at(Timestamp::now(), move || {
        f.fetch_add(1, Ordering::SeqCst);
    });
    clock.sleep(Duration::from_millis(50)).await;
    assert_eq!(fired.load(Ordering::SeqCst), 1);
}
