//! `policy.yaml` from the inline rules and the referenced ConfigMap's `policy.yaml`.

use std::collections::BTreeMap;

/// Where the rendered file is mounted; `[oslo_policy] policy_file` points here.
pub const POLICY_FILE_PATH: &str = "/etc/barbican/policy.yaml";

/// The merged rules: ConfigMap entries, overridden by inline rules of the same name.
pub fn merged_rules(
    inline: Option<&BTreeMap<String, String>>,
    from_config_map: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut rules = from_config_map.clone();
    if let Some(inline) = inline {
        rules.extend(inline.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    rules
}

/// The YAML document, rules sorted by name; `None` when there is nothing to render. Every key
/// and value is written as a double-quoted scalar, so no rule text can change the structure.
pub fn render(rules: &BTreeMap<String, String>) -> Option<String> {
    if rules.is_empty() {
        return None;
    }
    let mut out = String::new();
    for (name, rule) in rules {
        out.push_str(&quote(name));
        out.push_str(": ");
        out.push_str(&quote(rule));
        out.push('\n');
    }
    Some(out)
}

/// A YAML double-quoted scalar: JSON string syntax is a subset of it.
fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_rules_win_and_output_is_sorted() {
        let inline = BTreeMap::from([("secrets:get".to_string(), "role:admin".to_string())]);
        let map = BTreeMap::from([
            ("secrets:get".to_string(), "role:member".to_string()),
            ("orders:post".to_string(), "role:creator".to_string()),
        ]);
        let rules = merged_rules(Some(&inline), &map);
        assert_eq!(
            render(&rules).unwrap(),
            "\"orders:post\": \"role:creator\"\n\"secrets:get\": \"role:admin\"\n"
        );
        assert_eq!(render(&BTreeMap::new()), None);
    }

    #[test]
    fn hostile_rule_text_stays_one_scalar() {
        let rules = BTreeMap::from([(
            "a\n\"b\": x".to_string(),
            "role:admin\nevil: \"@\"".to_string(),
        )]);
        let text = render(&rules).unwrap();
        let parsed: BTreeMap<String, String> = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(parsed, rules);
    }
}
