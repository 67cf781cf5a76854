//! The sim's clock: wall time, or a virtual time that moves only when a test advances it.
//!
//! # The choice: a manual virtual clock, not tokio's paused clock
//!
//! tokio's paused clock jumps to the next timer whenever every task is idle, and a task waiting
//! on a loopback socket counts as idle: with the sim and an operator talking HTTP, a paused
//! runtime fires timeouts that never happened. So the sim never pauses tokio. Instead everything
//! that depends on time reads this clock: the API server's timestamps and token expiry, the
//! simulated controllers (rollout delays, Job durations, CronJob schedules, TTLs), and — through
//! the operator's `Clock` seam — an operator running in the same process. I/O stays on real
//! time, which is what makes loopback HTTP safe.
//!
//! A virtual clock stands still until [`Clock::advance`] moves it. Advancing fires every timer
//! that falls due, one at a time in deadline order (ties in the order they were set), with
//! [`Clock::now`] reading the timer's own deadline while it runs. Callbacks ([`Clock::at`]) run
//! inline, so a simulated controller's work at 00:05 is done before the clock reaches 00:06.
//! Async sleepers ([`Clock::sleep`]) are woken and polled before the clock moves on, so a
//! sleeper always observes its deadline as `now`; work it does afterwards over real I/O may
//! observe a later virtual time, as it would on a busy cluster.
//!
//! A wall clock (what `barbican-sim serve` uses with a real operator process) reads the system
//! time, and its timers are real sleeps.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use jiff::{SignedDuration, Timestamp};
use tokio::sync::oneshot;

/// Where a virtual clock starts unless told otherwise: a fixed instant, so runs repeat.
pub const VIRTUAL_EPOCH: &str = "2026-01-01T00:00:00Z";

type Callback = Box<dyn FnOnce() + Send>;

enum Timer {
    Wake(oneshot::Sender<()>),
    Call(Callback),
}

struct State {
    /// `None` for a wall clock.
    virtual_now: Option<Timestamp>,
    /// Pending timers of a virtual clock, by deadline and then by the order they were set.
    timers: BTreeMap<(Timestamp, u64), Timer>,
    next_id: u64,
}

struct Inner {
    state: Mutex<State>,
    /// Sleepers woken by `advance` that have not yet been polled to completion.
    woken: AtomicUsize,
}

/// The clock a cluster (or several sharing it) reads. Cheap to clone; clones share the time.
#[derive(Clone)]
pub struct Clock {
    inner: Arc<Inner>,
}

impl Default for Clock {
    fn default() -> Self {
        Self::wall()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("Clock")
            .field("virtual_now", &state.virtual_now)
            .field("pending_timers", &state.timers.len())
            .finish()
    }
}

impl Clock {
    fn with(virtual_now: Option<Timestamp>) -> Self {
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    virtual_now,
                    timers: BTreeMap::new(),
                    next_id: 0,
                }),
                woken: AtomicUsize::new(0),
            }),
        }
    }

    /// The system clock.
    pub fn wall() -> Self {
        Self::with(None)
    }

    /// A virtual clock standing at [`VIRTUAL_EPOCH`].
    pub fn virtual_time() -> Self {
        Self::virtual_at(
            VIRTUAL_EPOCH
                .parse()
                .expect("the epoch is a valid timestamp"),
        )
    }

    /// A virtual clock standing at `start`.
    pub fn virtual_at(start: Timestamp) -> Self {
        Self::with(Some(start))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether time moves only when advanced.
    pub fn is_virtual(&self) -> bool {
        self.lock().virtual_now.is_some()
    }

    /// The current time.
    pub fn now(&self) -> Timestamp {
        self.lock().virtual_now.unwrap_or_else(Timestamp::now)
    }

    /// The current time as Kubernetes writes timestamps: RFC 3339, whole seconds, UTC.
    pub fn rfc3339(&self) -> String {
        rfc3339(self.now())
    }

    /// How many timers wait on a virtual clock.
    pub fn pending(&self) -> usize {
        self.lock().timers.len()
    }

    /// The deadline of the next timer of a virtual clock.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.lock().timers.keys().next().map(|(t, _)| *t)
    }

    /// Runs `callback` at `deadline` (at once if it has passed). On a virtual clock it runs
    /// inside [`Clock::advance`]; on a wall clock on a tokio task, or a thread outside tokio.
    pub fn at(&self, deadline: Timestamp, callback: impl FnOnce() + Send + 'static) {
        let mut state = self.lock();
        if state.virtual_now.is_some() {
            let id = state.next_id;
            state.next_id += 1;
            state
                .timers
                .insert((deadline, id), Timer::Call(Box::new(callback)));
            return;
        }
        drop(state);
        let wait = until(Timestamp::now(), deadline);
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    tokio::time::sleep(wait).await;
                    callback();
                });
            }
            Err(_) => {
                std::thread::spawn(move || {
                    std::thread::sleep(wait);
                    callback();
                });
            }
        }
    }

    /// Completes at `deadline` by this clock.
    pub fn sleep_until(&self, deadline: Timestamp) -> impl Future<Output = ()> + Send + 'static {
        let mut state = self.lock();
        let virtual_wait = state.virtual_now.map(|now| {
            let (tx, rx) = oneshot::channel();
            if deadline <= now {
                let _ = tx.send(());
            } else {
                let id = state.next_id;
                state.next_id += 1;
                state.timers.insert((deadline, id), Timer::Wake(tx));
            }
            rx
        });
        drop(state);
        let inner = self.inner.clone();
        let wall_wait = until(Timestamp::now(), deadline);
        async move {
            match virtual_wait {
                Some(rx) => {
                    // A dropped sender means the clock itself went away: nothing will ever be
                    // due again, so wait forever rather than pretend the deadline came.
                    if rx.await.is_err() {
                        std::future::pending::<()>().await;
                    }
                    // Only sleepers woken by `advance` were counted; one whose deadline had
                    // already passed was not.
                    let _ = inner
                        .woken
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
                }
                None => tokio::time::sleep(wall_wait).await,
            }
        }
    }

    /// Completes after `duration` by this clock.
    pub fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send + 'static {
        self.sleep_until(self.now() + signed(duration))
    }

    /// Moves a virtual clock forward by `duration`, firing every timer that falls due in
    /// deadline order, and returns how many fired. A wall clock cannot be advanced: this
    /// returns 0 at once.
    pub async fn advance(&self, duration: Duration) -> usize {
        let Some(start) = self.lock().virtual_now else {
            return 0;
        };
        self.advance_to(start + signed(duration)).await
    }

    /// Moves a virtual clock forward to `target` (never backwards), firing what falls due.
    pub async fn advance_to(&self, target: Timestamp) -> usize {
        let mut fired = 0;
        loop {
            let timer = {
                let mut state = self.lock();
                let Some(now) = state.virtual_now else {
                    return fired;
                };
                let due = state
                    .timers
                    .first_key_value()
                    .is_some_and(|((deadline, _), _)| *deadline <= target);
                if !due {
                    state.virtual_now = Some(now.max(target));
                    return fired;
                }
                let ((deadline, _), timer) = state.timers.pop_first().expect("checked above");
                state.virtual_now = Some(now.max(deadline));
                timer
            };
            fired += 1;
            match timer {
                Timer::Call(callback) => callback(),
                Timer::Wake(tx) => {
                    self.inner.woken.fetch_add(1, Ordering::SeqCst);
                    if tx.send(()).is_err() {
                        // The sleeper was dropped before its time: nobody to wait for.
                        self.inner.woken.fetch_sub(1, Ordering::SeqCst);
                    }
                    self.let_woken_run().await;
                }
            }
        }
    }

    /// Sleepers woken by [`Clock::advance`] that have not yet been polled to completion: none
    /// once it has returned, a dropped sleeper included.
    pub fn sleepers_running(&self) -> usize {
        self.inner.woken.load(Ordering::SeqCst)
    }

    /// Yields until every woken sleeper has been polled, so each sees its own deadline as now.
    async fn let_woken_run(&self) {
        // A sleeper on another runtime or a stalled executor must not hang the test: after a
        // bounded number of yields the clock moves on.
        for _ in 0..10_000 {
            if self.inner.woken.load(Ordering::SeqCst) == 0 {
                return;
            }
            tokio::task::yield_now().await;
        }
    }
}

/// `time` as Kubernetes writes timestamps: RFC 3339, whole seconds, UTC.
pub fn rfc3339(time: Timestamp) -> String {
    time.round(jiff::Unit::Second).unwrap_or(time).to_string()
}

fn signed(duration: Duration) -> SignedDuration {
    SignedDuration::try_from(duration).unwrap_or(SignedDuration::MAX)
}

fn until(now: Timestamp, deadline: Timestamp) -> Duration {
    Duration::try_from(deadline.duration_since(now)).unwrap_or(Duration::ZERO)
}
