//! `barbican-sim soak`: one short seed runs end to end, reports no violation, and writes its
//! report as JSON.

#[test]
fn a_short_soak_reports_each_seed_and_no_violation() {
    let json = std::env::temp_dir().join(format!("soak-{}.json", std::process::id()));
    let text = super::common::run_ok(&[
        "soak".as_ref(),
        "--seeds".as_ref(),
        "1".as_ref(),
        "--first-seed".as_ref(),
        "5".as_ref(),
        "--faults-for".as_ref(),
        "3m".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    assert!(text.contains("seed 5: "), "{text}");
    assert!(
        text.contains("soak: 1 seed(s) from 5, 0 violation(s)"),
        "{text}"
    );
    let reports: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    assert_eq!(reports[0]["seed"], 5);
    assert_eq!(reports[0]["violations"], serde_json::json!([]));
    assert!(
        reports[0]["convergedAfterSeconds"].as_u64().is_some(),
        "{reports}"
    );
    assert!(
        reports[0]["schedule"].as_array().is_some_and(|s| s
            .last()
            .is_some_and(|l| l.as_str().unwrap_or("").ends_with("Repair"))),
        "{reports}"
    );
}
