//! The per-release option catalogs: which `[section] option` names barbican reads in each
//! OpenStack release, and which of them oslo.config marks `secret`, generated from barbican's
//! own option definitions by `operator/catalogs/generate.py` and embedded in the binary. The
//! admission webhook checks option names against them; admission and the renderer both read
//! the `secret` marks ([`super::config_ownership::untrusted`]).

use std::{collections::BTreeMap, sync::OnceLock};

use serde::Deserialize;

/// What one release knows.
#[derive(Debug, Deserialize)]
pub struct Catalog {
    /// The OpenStack release.
    pub release: String,
    /// The barbican version it was generated from.
    pub barbican: String,
    /// Section name to its options.
    pub sections: BTreeMap<String, Section>,
}

/// The options of one section.
#[derive(Debug, Deserialize)]
pub struct Section {
    /// Current option names.
    pub options: BTreeMap<String, OptionFacts>,
    /// Deprecated names, each mapped to its replacement (`[section] option`).
    pub deprecated: BTreeMap<String, String>,
}

/// What oslo.config says of one option.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OptionFacts {
    /// Deprecated for removal.
    pub deprecated_for_removal: bool,
    /// Marked `secret=True`: a credential (oslo.config masks it in its own logs).
    pub secret: bool,
    /// The value type oslo.config (or keystoneauth) declares: `URI`, `OptionalURI`, `Port`,
    /// `HostAddress`, `String`, `Boolean`, `str`, ...
    pub value_type: String,
}

const EMBEDDED: &[(&str, &str)] = &[
    ("2025.1", include_str!("../../catalogs/2025.1.json")),
    ("2025.2", include_str!("../../catalogs/2025.2.json")),
    ("2026.1", include_str!("../../catalogs/2026.1.json")),
    ("2026.2", include_str!("../../catalogs/2026.2.json")),
];

/// Every embedded catalog, by release.
pub(crate) fn all() -> &'static BTreeMap<&'static str, Catalog> {
    static CATALOGS: OnceLock<BTreeMap<&'static str, Catalog>> = OnceLock::new();
    CATALOGS.get_or_init(|| {
        EMBEDDED
            .iter()
            .map(|(release, json)| {
                let catalog: Catalog =
                    serde_json::from_str(json).expect("embedded catalogs are generated JSON");
                (*release, catalog)
            })
            .collect()
    })
}

/// The catalog of `release`, if one is embedded.
pub fn for_release(release: &str) -> Option<&'static Catalog> {
    all().get(release)
}

/// Releases with an embedded catalog.
pub fn releases() -> impl Iterator<Item = &'static str> {
    EMBEDDED.iter().map(|(release, _)| *release)
}

/// The catalogs that speak for `release`: its own, or every embedded one when it has none
/// (a release without a catalog is held to what any release knows, so it is no way around a
/// refusal).
pub fn speaking_for(release: &str) -> Vec<&'static Catalog> {
    match for_release(release) {
        Some(catalog) => vec![catalog],
        None => all().values().collect(),
    }
}

/// Prefix of the per-store sections, whose names come from store CRs and no catalog can list.
pub const SECRET_STORE_SECTION_PREFIX: &str = "secretstore:";
