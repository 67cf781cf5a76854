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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(method: &str, path: &str) -> Entry {
        Entry {
            user_agent: "op".into(),
            method: method.into(),
            path: path.into(),
            code: 200,
            body: String::new(),
        }
    }

    #[test]
    fn reads_and_dry_runs_are_not_writes() {
        assert!(!entry("GET", "/api/v1/secrets").is_write());
        assert!(!entry("PATCH", "/api/v1/namespaces/a/secrets/b?dryRun=All").is_write());
        assert!(entry("PATCH", "/api/v1/namespaces/a/secrets/b").is_write());
    }

    #[test]
    fn since_counts_from_a_mark_even_past_the_capacity() {
        let mut audit = Audit::default();
        audit.record(entry("GET", "/a"));
        let mark = audit.total();
        audit.record(entry("POST", "/b"));
        assert_eq!(audit.since(mark), [entry("POST", "/b")]);
        for _ in 0..CAPACITY {
            audit.record(entry("GET", "/c"));
        }
        assert_eq!(audit.since(mark).len(), CAPACITY);
        assert_eq!(audit.since(audit.total()).len(), 0);
        let tally = audit.tally();
        let key = |verb: &str| ("op".to_string(), verb.to_string(), "-".to_string());
        assert_eq!(
            tally[&key("get")],
            CAPACITY as u64 + 1,
            "/a and /c are not resources"
        );
        assert_eq!(tally[&key("post")], 1);
    }

    /// A write received before a mark and answered after it belongs before the mark, in the
    /// tally and in the log; one received after the mark is after it however it interleaves.
    #[test]
    fn a_request_is_placed_where_it_was_received() {
        let mut audit = Audit::default();
        let write = audit.receive("op", "PATCH", "/b");
        let mark = audit.total();
        let tally = audit.tally();
        let read = audit.receive("op", "GET", "/c");
        audit.complete(write, entry("PATCH", "/b"));
        audit.complete(read, entry("GET", "/c"));
        assert_eq!(audit.since(mark), [entry("GET", "/c")]);
        assert_eq!(audit.since(0).len(), 2);
        let key = |verb: &str| ("op".to_string(), verb.to_string(), "-".to_string());
        assert_eq!(tally.get(&key("patch")), Some(&1));
        assert_eq!(tally.get(&key("get")), None);
    }

    #[test]
    fn the_tally_counts_by_agent_verb_and_resource_past_the_capacity() {
        let mut audit = Audit::default();
        for _ in 0..CAPACITY + 5 {
            audit.record(entry("GET", "/api/v1/namespaces/a/secrets/s"));
        }
        audit.record(entry(
            "GET",
            "/apis/apps/v1/deployments?watch=true&resourceVersion=1",
        ));
        audit.record(entry("PATCH", "/apis/x.io/v1/namespaces/a/things/t/status"));
        let tally = audit.tally();
        let count = |verb: &str, resource: &str| {
            tally
                .get(&("op".to_string(), verb.to_string(), resource.to_string()))
                .copied()
        };
        assert_eq!(count("get", "/secrets"), Some(CAPACITY as u64 + 5));
        assert_eq!(count("watch", "apps/deployments"), Some(1));
        assert_eq!(count("patch", "x.io/things/status"), Some(1));
    }
}
