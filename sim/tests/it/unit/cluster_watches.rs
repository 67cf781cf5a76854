//! Tests of `barbican_sim::cluster::watches`.

use std::collections::BTreeMap;
use std::time::Duration;

use barbican_sim::cluster::routing::flag;
use barbican_sim::cluster::watches::*;

#[test]
fn bookmarks_come_a_minute_apart_or_two_seconds_before_the_deadline_as_the_cacher_sends_them() {
    let now = tokio::time::Instant::now();
    // No timeoutSeconds: kube-apiserver's bookmarkFrequency, a minute.
    assert_eq!(bookmark_after(now, None), Some(now + BOOKMARK_PERIOD));
    // A deadline far off: still a minute.
    let far = now + Duration::from_secs(290);
    assert_eq!(bookmark_after(now, Some(far)), Some(now + BOOKMARK_PERIOD));
    // A deadline within the minute: two seconds before it.
    let near = now + Duration::from_secs(10);
    assert_eq!(
        bookmark_after(now, Some(near)),
        Some(now + Duration::from_secs(8))
    );
    // Within the last two seconds: no bookmark any more.
    let closing = now + Duration::from_secs(1);
    assert_eq!(bookmark_after(now, Some(closing)), None);
}

#[test]
fn query_booleans_are_true_unless_zero_or_false_in_any_case() {
    let q = |v: &str| BTreeMap::from([("watch".to_string(), v.to_string())]);
    for yes in ["true", "True", "TRUE", "1", "yes", ""] {
        assert!(flag(&q(yes), "watch"), "{yes:?}");
    }
    for no in ["false", "False", "FALSE", "0"] {
        assert!(!flag(&q(no), "watch"), "{no:?}");
    }
    assert!(!flag(&BTreeMap::new(), "watch"));
}
