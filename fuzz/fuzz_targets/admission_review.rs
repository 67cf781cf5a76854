//! Any bytes as an AdmissionReview body: every endpoint answers, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    if let Err(violation) = barbican_operator::properties::every_body_is_answered(body) {
        panic!("{violation}");
    }
});
