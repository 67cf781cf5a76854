//! Any JSON as the object of a Barbican CREATE: every endpoint answers, and whatever both
//! webhooks admit renders faithfully (or is refused by the renderer naming a field).
#![no_main]

use barbican_operator::properties::{
    admitted_barbicans_render_faithfully, create_review, every_body_is_answered,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(object) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Err(violation) = every_body_is_answered(&create_review(&object)) {
        panic!("{violation}");
    }
    if let Err(violation) = admitted_barbicans_render_faithfully(&object) {
        panic!("{violation}");
    }
});
