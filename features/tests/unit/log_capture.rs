//! Tests of `barbican_features::log_capture`.

use barbican_features::log_capture::*;

#[test]
fn the_operators_lines_are_kept() {
    install();
    tracing::info!(target: "barbican_operator::probe", marker = "capture-check-7", "a line");
    assert!(contents().contains("capture-check-7"), "{}", contents());
}

#[test]
fn a_reader_that_keeps_its_place_reads_each_line_once() {
    install();
    let (_, end) = since(0);
    tracing::info!(target: "barbican_operator::probe", marker = "capture-check-8", "a line");
    let (tail, new_end) = since(end);
    assert!(tail.contains("capture-check-8"), "{tail}");
    assert!(new_end > end);
    assert!(!since(new_end).0.contains("capture-check-8"));
}
