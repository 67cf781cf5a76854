//! Any section, option and value: what the config grammar admits is read back by oslo.config
//! (the operator's model of its parser, checked against the real one over every code point by
//! tests/tests/it/oslo_grammar.rs) exactly as written. The input is three UTF-8 strings
//! separated by 0xFF, a byte no UTF-8 text holds.
#![no_main]

use barbican_operator::properties::admitted_options_read_back;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.split(|&b| b == 0xff).map(std::str::from_utf8);
    let (Some(Ok(section)), Some(Ok(key)), Some(Ok(value))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return;
    };
    if let Err(violation) = admitted_options_read_back(section, key, value) {
        panic!("{violation}");
    }
});
