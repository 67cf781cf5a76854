//! Tests of `barbican_sim::controllers::jobs`.

use serde_json::json;

use barbican_sim::controllers::{Outcome, jobs::ended};

#[test]
fn a_job_that_completes_after_failed_pods_keeps_their_count() {
    let running = json!({"spec": {"backoffLimit": 4},
        "status": {"startTime": "2026-01-01T00:00:00Z", "active": 1, "failed": 2}});
    let done = ended(&running, Outcome::Complete, "2026-01-01T00:05:00Z");
    assert_eq!(done["failed"], 2);
    assert_eq!(done["succeeded"], 1);
    assert_eq!(done["startTime"], "2026-01-01T00:00:00Z");
    let clean = json!({"spec": {}, "status": {"startTime": "2026-01-01T00:00:00Z", "active": 1}});
    let done = ended(&clean, Outcome::Complete, "2026-01-01T00:05:00Z");
    assert!(
        done.get("failed").is_none(),
        "no failed pods, no count: {done}"
    );
    let failed = ended(&running, Outcome::Fail, "2026-01-01T00:05:00Z");
    assert_eq!(failed["failed"], 5, "backoffLimit + 1 pods failed");
}
