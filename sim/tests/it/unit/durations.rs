//! Tests of `barbican_sim::durations`.

use barbican_sim::durations::*;

#[test]
fn terms_split_amounts_from_units() {
    assert_eq!(terms("1h30m"), Some(vec![(1, "h"), (30, "m")]));
    assert_eq!(terms("250ms"), Some(vec![(250, "ms")]));
    assert_eq!(terms("90"), Some(vec![(90, "")]));
    assert_eq!(terms(""), None);
    assert_eq!(terms("ms5"), None);
    assert_eq!(terms("soon"), None);
    assert_eq!(terms("99999999999999999999999s"), None);
}
