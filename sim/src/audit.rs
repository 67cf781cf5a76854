//! The audit log: which client sent which request, as kube-apiserver's audit log records it
//! (user agent, verb, path, response code). Tests read it to count the writes a controller
//! issues, for example that a steady-state pass writes nothing.

use std::collections::VecDeque;

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

/// The most recent requests, oldest first, and a running total.
#[derive(Debug, Default)]
pub struct Audit {
    recent: VecDeque<Entry>,
    total: u64,
}

impl Audit {
    /// Records a request.
    pub fn record(&mut self, entry: Entry) {
        if self.recent.len() == CAPACITY {
            self.recent.pop_front();
        }
        self.recent.push_back(entry);
        self.total += 1;
    }

    /// How many requests were ever recorded.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The kept requests after the first `since` ever recorded.
    pub fn since(&self, since: u64) -> Vec<Entry> {
        let dropped = self.total - self.recent.len() as u64;
        let skip = since.saturating_sub(dropped) as usize;
        self.recent.iter().skip(skip).cloned().collect()
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
    }
}
