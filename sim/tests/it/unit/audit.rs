//! Tests of `barbican_sim::audit`.

use barbican_sim::audit::*;

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
