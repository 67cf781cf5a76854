//! The audit log: which client sent which request, as kube-apiserver's audit log records it
//! (user agent, verb, path, response code). Tests read it to count the writes a controller
//! issues, for example that a steady-state pass writes nothing.

use std::collections::{BTreeMap, VecDeque};

/// How many recent requests the log keeps.
pub const CAPACITY: usize = 20_000;
/// How much of a write's body the log keeps.
pub const BODY_LIMIT: usize = 4096;

/// One request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The `User-Agent` header (empty when absent).
    pub user_agent: String,
    /// The HTTP method.
    pub method: String,
    /// The path and query.
    pub path: String,
    /// The response's status code.
    pub code: u16,
    /// The start of the request body (empty for reads).
    pub body: String,
}

impl Entry {
    /// Whether the request would change something: not a read, not a dry run.
    pub fn is_write(&self) -> bool {
        self.method != "GET" && self.method != "HEAD" && !self.path.contains("dryRun=All")
    }

    /// Whether the request is a watch (kube-apiserver's `watch` verb).
    pub fn is_watch(&self) -> bool {
        crate::rbac::attributes(&self.method, &self.path).is_some_and(|a| a.verb == "watch")
    }
}

impl std::fmt::Display for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} → {} ({})",
            self.method, self.path, self.code, self.user_agent
        )
    }
}

/// Who sent which kind of request: user agent, verb and resource (`group/resource`, with the
/// subresource; `-` for discovery and other non-resource paths).
pub type Tally = BTreeMap<(String, String, String), u64>;

/// The most recent requests, oldest first, a running total, and a tally of every request
/// ever received by agent, verb and resource (which, unlike the recent requests, is never cut).
///
/// A request is counted when it is received and kept when it completes, as kube-apiserver's
/// audit stages `RequestReceived` and `ResponseComplete`: a write's watch event goes out before
/// its response, so a client that took a mark on seeing that event must find the write
/// before its mark, not after it.
#[derive(Debug, Default)]
pub struct Audit {
    recent: VecDeque<(u64, Entry)>,
    total: u64,
    tally: Tally,
}

/// A request counted on arrival, kept by [`Audit::complete`] once answered.
#[derive(Debug)]
#[must_use = "a received request is kept in the log only once completed"]
pub struct Received(u64);

impl Audit {
    /// Counts a request as it arrives: its place in the log and its tally.
    pub fn receive(&mut self, user_agent: &str, method: &str, path: &str) -> Received {
        let (verb, resource) = match crate::rbac::attributes(method, path) {
            Some(a) => (a.verb.clone(), format!("{}/{}", a.group, a.rule_resource())),
            None => (method.to_ascii_lowercase(), "-".to_string()),
        };
        *self
            .tally
            .entry((user_agent.to_string(), verb, resource))
            .or_default() += 1;
        let place = self.total;
        self.total += 1;
        Received(place)
    }

    /// Keeps a received request with its answer.
    pub fn complete(&mut self, received: Received, entry: Entry) {
        if self.recent.len() == CAPACITY {
            self.recent.pop_front();
        }
        self.recent.push_back((received.0, entry));
    }

    /// Records a request received and answered at once.
    pub fn record(&mut self, entry: Entry) {
        let received = self.receive(&entry.user_agent, &entry.method, &entry.path);
        self.complete(received, entry);
    }

    /// Every request ever received, by agent, verb and resource.
    pub fn tally(&self) -> Tally {
        self.tally.clone()
    }

    /// How many requests were ever received.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept requests received after the first `since`, in the order they completed.
    pub fn since(&self, since: u64) -> Vec<Entry> {
        self.recent
            .iter()
            .filter(|(place, _)| *place >= since)
            .map(|(_, entry)| entry.clone())
            .collect()
    }
}
