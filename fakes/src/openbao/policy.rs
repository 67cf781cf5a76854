//! ACL policies: which capabilities a set of policies grants on a path, as OpenBao decides it.
//! A rule's path is exact, ends in `*` (a prefix), or has `+` for one whole segment.

use std::collections::{BTreeMap, BTreeSet};

/// A capability.
pub const CAPABILITIES: &[&str] = &[
    "create", "read", "update", "patch", "delete", "list", "sudo",
];

/// One policy: path patterns and the capabilities each grants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// `(pattern, capabilities)`, in the order written.
    pub rules: Vec<(String, BTreeSet<String>)>,
}

impl Policy {
    /// A policy from `(pattern, capabilities)` pairs.
    pub fn new(rules: &[(&str, &[&str])]) -> Self {
        Self {
            rules: rules
                .iter()
                .map(|(p, caps)| (p.to_string(), caps.iter().map(|c| c.to_string()).collect()))
                .collect(),
        }
    }
}

fn matches(pattern: &str, path: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        return segments_match(prefix, path, true);
    }
    segments_match(pattern, path, false)
}

/// Compares segment by segment, `+` matching any one segment; with `prefix`, the last pattern
/// segment need only begin the path's.
fn segments_match(pattern: &str, path: &str, prefix: bool) -> bool {
    let pattern: Vec<&str> = pattern.split('/').collect();
    let path: Vec<&str> = path.split('/').collect();
    if (!prefix && pattern.len() != path.len()) || pattern.len() > path.len() {
        return false;
    }
    let last = pattern.len() - 1;
    pattern
        .iter()
        .zip(&path)
        .enumerate()
        .all(|(i, (p, s))| *p == "+" || (prefix && i == last && s.starts_with(p)) || p == s)
        && (prefix || pattern.len() == path.len())
}

/// How specific a pattern is, for choosing among several that match (fewer wildcards and a
/// longer literal prefix win).
fn specificity(pattern: &str) -> (usize, usize, usize) {
    let wildcards = pattern.matches('+').count() + usize::from(pattern.ends_with('*'));
    let literal = pattern.find(['+', '*']).unwrap_or(pattern.len());
    (usize::MAX - wildcards, literal, pattern.len())
}

/// The capabilities `policies` (by name, looked up in `known`) grant on `path`: `root` grants
/// everything, no matching rule grants `deny`. Of the matching rules in one policy the most
/// specific decides; across policies the grants add up.
pub fn capabilities(
    known: &BTreeMap<String, Policy>,
    policies: &[String],
    path: &str,
) -> Vec<String> {
    if policies.iter().any(|p| p == "root") {
        return vec!["root".into()];
    }
    let mut granted = BTreeSet::new();
    for policy in policies.iter().filter_map(|p| known.get(p)) {
        if let Some((_, caps)) = policy
            .rules
            .iter()
            .filter(|(pattern, _)| matches(pattern, path))
            .max_by_key(|(pattern, _)| specificity(pattern))
        {
            if caps.contains("deny") {
                return vec!["deny".into()];
            }
            granted.extend(caps.iter().cloned());
        }
    }
    if granted.is_empty() {
        vec!["deny".into()]
    } else {
        CAPABILITIES
            .iter()
            .filter(|c| granted.contains(**c))
            .map(|c| c.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> BTreeMap<String, Policy> {
        BTreeMap::from([
            (
                "barbican-secretstore".to_string(),
                Policy::new(&[
                    (
                        "barbican/data/*",
                        &["create", "read", "update", "delete", "list"],
                    ),
                    ("barbican/metadata/*", &["create", "read", "update", "list"]),
                ]),
            ),
            (
                "reader".to_string(),
                Policy::new(&[
                    ("barbican/data/+/public", &["read"]),
                    ("barbican/data/secret", &["deny"]),
                ]),
            ),
        ])
    }

    #[test]
    fn globs_segments_and_root() {
        let known = known();
        let store = ["barbican-secretstore".to_string()];
        assert_eq!(
            capabilities(&known, &store, "barbican/data/probe"),
            ["create", "read", "update", "delete", "list"]
        );
        assert_eq!(
            capabilities(&known, &store, "barbican/metadata/a/b"),
            ["create", "read", "update", "list"]
        );
        assert_eq!(capabilities(&known, &store, "other/data/x"), ["deny"]);
        let reader = ["reader".to_string()];
        assert_eq!(
            capabilities(&known, &reader, "barbican/data/x/public"),
            ["read"]
        );
        assert_eq!(
            capabilities(&known, &reader, "barbican/data/x/y/public"),
            ["deny"]
        );
        assert_eq!(
            capabilities(&known, &reader, "barbican/data/secret"),
            ["deny"]
        );
        assert_eq!(capabilities(&known, &["root".into()], "anything"), ["root"]);
        assert_eq!(capabilities(&known, &[], "barbican/data/x"), ["deny"]);
    }
}
