//! The side stream of the generated edit sequences: the spec blocks added after the check's
//! seeds were chosen, each drawn from a stream of its own so the seeds keep meaning what they
//! meant.

use serde_json::{Value, json};

use crate::rng::Rng;

/// Properties added after the check's seeds were chosen, drawn from a side stream: a copy of
/// the main stream's state, mixed, that leaves the main stream where it was. So every seed
/// draws the same edits of [`super::generate::BLOCKS`] as before, and the seeds the check and its tests name
/// keep meaning what they meant; each side block is switched on and off on its own.
pub const SIDE_BLOCKS: [&str; 4] = ["audit", "keystone", "tls", "dbBackup"];

/// The TLS Secret a `tls.secretName` names (the prerequisites have cert-manager issue it).
pub const SERVED_TLS: &str = "served-tls";

/// The Secret holding the audit transport URL a `messaging` audit names (the prerequisites
/// make it).
pub const AUDIT_TRANSPORT: &str = "rabbitmq-audit";

/// A Keystone region no sequence's prerequisites make.
pub const MISSING_REGION: &str = "RegionNowhere";

/// The side stream of `rng` for `name`.
pub(super) fn side(rng: &Rng, name: &str) -> Rng {
    let salt = name
        .bytes()
        .fold(0xA0D1_7EDD_u64, |h, b| h.rotate_left(5) ^ u64::from(b));
    Rng(rng.0.rotate_left(29) ^ salt)
}

/// A side block's value, or `None` to leave it out. A catalog registration goes to the region
/// named after the sequence's `namespace` (the prerequisites make it), or to one Keystone
/// does not have: the sequences of a batch share one Keystone, and one registration per
/// region wins, so a region of their own keeps each sequence's outcome its own.
pub(super) fn side_block(rng: &Rng, name: &str, namespace: &str) -> Option<Value> {
    let mut side = side(rng, name);
    if side.one_in(2) {
        return None;
    }
    match name {
        "audit" => Some(
            side.pick(&[
                json!({}),
                json!({"driver": "log"}),
                json!({"driver": "messaging", "transportUrlSecretRef": {"name": AUDIT_TRANSPORT}}),
            ])
            .clone(),
        ),
        // The URLs are derived from the exposure or given.
        "keystone" => Some(
            side.pick(&[
                json!({}),
                json!({"catalog": {"region": namespace}}),
                json!({"catalog": {"region": MISSING_REGION}}),
                json!({"catalog": {"region": namespace, "publicUrl": "https://kms.example.com",
                    "internalUrl": "http://barbican-internal.example:9311"}}),
            ])
            .clone(),
        ),
        // Issued by the prerequisites' CA, named, or by an issuer that does not exist (the
        // certificate never comes: the Deployment is held where it is).
        "tls" => Some(
            side.pick(&[
                json!({"issuerRef": {"name": "openstack-ca"}}),
                json!({"issuerRef": {"name": "openstack-ca"}, "dnsNames": ["kms.example.com"]}),
                json!({"secretName": SERVED_TLS}),
                json!({"issuerRef": {"name": "no-such-issuer"}}),
            ])
            .clone(),
        ),
        // Onto the claim the prerequisites make; an upgrade waits for its dump.
        "dbBackup" => Some(
            side.pick(&[
                json!({"persistentVolumeClaim": {"claimName": "barbican-db-backups"}}),
                json!({"persistentVolumeClaim": {"claimName": "barbican-db-backups"}, "keep": 1}),
                json!({"persistentVolumeClaim": {"claimName": "barbican-db-backups"},
                    "keep": 10, "image": "registry.example.com/mariadb:11.4"}),
            ])
            .clone(),
        ),
        _ => None,
    }
}
