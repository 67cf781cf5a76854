//! Tests of `barbican_sim::kubelet::logs`.

use barbican_sim::kubelet::logs::*;

#[test]
fn tail_lines_come_before_limit_bytes() {
    let text = "one\ntwo\nthree\n";
    assert_eq!(tail(text, Some(2), None), "two\nthree\n");
    assert_eq!(tail(text, Some(2), Some(5)), "two\nt");
    assert_eq!(tail(text, None, None), text);
    assert_eq!(tail(text, Some(10), None), text);
}

#[test]
fn a_pod_of_several_containers_needs_one_named() {
    let logs = PodLogs::default();
    let containers = vec!["a".to_string(), "b".to_string()];
    let error = logs
        .read("ns", "p", &containers, None, None, None)
        .unwrap_err();
    assert!(
        error.message.contains("choose one of: [a b]"),
        "{}",
        error.message
    );
    let waiting = logs
        .read("ns", "p", &containers, Some("a"), None, None)
        .unwrap_err();
    assert!(
        waiting.message.contains("waiting to start"),
        "{}",
        waiting.message
    );
    let invalid = logs
        .read("ns", "p", &containers, Some("c"), None, None)
        .unwrap_err();
    assert!(invalid.message.contains("not valid"), "{}", invalid.message);
}
