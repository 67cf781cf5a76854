//! Tests of `barbican_sim::memo`.

use barbican_sim::memo::*;

/// A text is compiled once however often it is used, and the memo never holds more than
/// its limit.
#[test]
fn compiles_each_text_once_and_stays_bounded() {
    let mut memo = Memo::default();
    let mut compiled = 0;
    for _ in 0..3 {
        let length = memo.with(
            "^[a-z]+$",
            |t| {
                compiled += 1;
                t.len()
            },
            |n| *n,
        );
        assert_eq!(length, 8);
    }
    assert_eq!(compiled, 1);
    for i in 0..Memo::<usize>::LIMIT + 10 {
        memo.with(&format!("p{i}"), |t| t.len(), |_| ());
        assert!(memo.len() <= Memo::<usize>::LIMIT);
    }
    assert!(!memo.is_empty());
}
