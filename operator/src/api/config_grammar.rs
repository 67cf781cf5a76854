//! The grammar of every name and value a tenant writes into `barbican.conf` through
//! `spec.extraConfig` and `spec.plugins`: what is admitted is read back by oslo.config exactly
//! as it was written, so no check of ours ever compares a name oslo.config reads differently.
//!
//! A list of bad characters loses to the next one nobody listed: Rust's `str::trim` keeps
//! U+001C..U+001F, Python's `str.strip()` (which oslo.config's iniparser applies to every key)
//! drops them, and `"log_config_append\u{1f}"` passed a check that compared trimmed names. So
//! names are a closed ASCII grammar instead, the same pattern in the CRD schema (an install
//! without the webhooks is held to it) and here, and values carry no control character and no
//! whitespace or quotes oslo.config would strip. `tests/tests/it/oslo_grammar.rs` feeds every
//! code point through this module and through oslo.config's own parser and checks that what
//! this module admits reads back unchanged.

/// Section names: an identifier (`DEFAULT`, `vault_plugin`, `oslo_messaging_notifications`),
/// or a store's section `secretstore:<store name>` (a Kubernetes object name).
pub const SECTION_NAME_PATTERN: &str =
    "^([A-Za-z_][A-Za-z0-9_]*|secretstore:[a-z0-9]([-a-z0-9.]*[a-z0-9])?)$";
/// Option names: an identifier; `-` as well, as before this grammar (oslo.config 10.7.0 reads
/// `log-date-format` as written, an option barbican does not have, so it sets nothing; the
/// refusal rules fold `-` to `_` all the same, the stricter reading).
pub const OPTION_NAME_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_-]*$";
/// The longest section or option name (barbican's longest option name has 41 characters).
pub const MAX_NAME_LENGTH: usize = 128;
/// What the names' rules say, for messages.
pub const NAME_GRAMMAR: &str =
    "ASCII letters, digits and '_' (option names also '-'), starting with a letter or '_'";

/// The schema rule on an INI section's options: every option name matches
/// [`OPTION_NAME_PATTERN`].
pub const OPTION_NAMES_RULE: &str =
    "self.all(k, size(k) <= 128 && k.matches('^[A-Za-z_][A-Za-z0-9_-]*$'))";
/// The message of [`OPTION_NAMES_RULE`].
pub const OPTION_NAMES_MESSAGE: &str = "option names must be at most 128 characters of ASCII letters, digits, '_' and '-', starting with a letter or '_'";
/// The schema rule on `spec.extraConfig`: every section name matches [`SECTION_NAME_PATTERN`].
pub const SECTION_NAMES_RULE: &str = "self.all(s, size(s) <= 128 && s.matches('^([A-Za-z_][A-Za-z0-9_]*|secretstore:[a-z0-9]([-a-z0-9.]*[a-z0-9])?)$'))";
/// The message of [`SECTION_NAMES_RULE`].
pub const SECTION_NAMES_MESSAGE: &str = "section names must be at most 128 characters of ASCII letters, digits and '_', starting with a letter or '_', or secretstore:<store name>";
/// The schema pattern of every option value: no control character and no line or paragraph
/// separator. A pattern, not a CEL rule: `self.all(k, !self[k].matches(..))` over a section of
/// 128 values of up to 4096 characters, inside 64 sections, exceeds kube-apiserver's CEL cost
/// budget twelvefold and the CRD does not install; a pattern costs no CEL budget.
pub const OPTION_VALUE_PATTERN: &str = "^[^\\x00-\\x1f\\x7f-\\x9f\\x{2028}\\x{2029}]*$";
/// What admission says of a value [`OPTION_VALUE_PATTERN`] refuses.
pub const OPTION_VALUES_MESSAGE: &str =
    "option values must not contain control characters or line separators";

/// Whether `c` is whitespace to Python's `str.isspace()`, which `str.strip()` removes: the
/// characters of Unicode's bidirectional classes WS, B and S and of category Zs. Rust's
/// `char::is_whitespace` lacks U+001C..U+001F of these.
pub fn python_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\u{1c}'..='\u{20}'
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Whether `c` may not appear in a value: a control character (category Cc) or a line or
/// paragraph separator.
fn forbidden_in_value(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

fn identifier(name: &str, extra: &[char]) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || extra.contains(&c))
}

/// A Kubernetes object name as a store's section carries it: lowercase letters, digits, `-`
/// and `.`, starting and ending with a letter or digit.
fn store_name(name: &str) -> bool {
    let edge = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    name.starts_with(edge)
        && name.ends_with(edge)
        && name.chars().all(|c| edge(c) || c == '-' || c == '.')
}

/// Why a tenant's section name is refused, if it is ([`SECTION_NAME_PATTERN`]).
pub fn section_name_problem(name: &str) -> Option<String> {
    let fits = match name.strip_prefix("secretstore:") {
        Some(store) => store_name(store),
        None => identifier(name, &[]),
    };
    (name.len() > MAX_NAME_LENGTH || !fits).then(|| SECTION_NAMES_MESSAGE.to_string())
}

/// Why a tenant's option name is refused, if it is ([`OPTION_NAME_PATTERN`]).
pub fn option_name_problem(name: &str) -> Option<String> {
    (name.len() > MAX_NAME_LENGTH || !identifier(name, &['-']))
        .then(|| OPTION_NAMES_MESSAGE.to_string())
}

/// Why a tenant's option value is refused, if it is: a control character or line separator
/// (which would end or alter the line), whitespace at either end (stripped on read), or
/// matching quotes around it (oslo.config's parser removes them), all of which would make
/// barbican read something other than the spec says.
pub fn value_problem(value: &str) -> Option<String> {
    if value.chars().any(forbidden_in_value) {
        return Some(OPTION_VALUES_MESSAGE.to_string());
    }
    if value.starts_with(python_whitespace) || value.ends_with(python_whitespace) {
        return Some(
            "option values must not start or end with whitespace, which is stripped when the file is read"
                .to_string(),
        );
    }
    let quoted = |q: char| value.starts_with(q) && value.ends_with(q);
    if quoted('"') || quoted('\'') {
        return Some(
            "option values must not be wrapped in matching quotes, which oslo.config removes when it reads the file"
                .to_string(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_characters_python_strips_and_rust_trim_keeps_are_refused() {
        for name in [
            "log_config_append\u{1f}",
            "\u{1c}log_config_append",
            "library_path\u{1e}",
            "log_config_append\u{a0}",
            "log config",
            "\u{212a}ey",
            "",
        ] {
            assert!(option_name_problem(name).is_some(), "{name:?}");
            assert!(section_name_problem(name).is_some(), "{name:?}");
        }
        for value in ["x\u{1f}", "\u{1d}x", "a\u{85}b", "a\u{2028}b", "x\u{3000}"] {
            assert!(value_problem(value).is_some(), "{value:?}");
        }
    }

    #[test]
    fn the_names_barbican_uses_are_admitted() {
        for section in [
            "DEFAULT",
            "vault_plugin",
            "KMIP_PLUGIN",
            "secretstore:openbao-primary",
            "secretstore:a.b",
        ] {
            assert_eq!(section_name_problem(section), None, "{section}");
        }
        for bad in [
            "secretstore:",
            "secretstore:A",
            "secretstore:-a",
            "handler:h",
        ] {
            assert!(section_name_problem(bad).is_some(), "{bad}");
        }
        for option in ["log-file", "enable_multiple_secret_stores", "_x1"] {
            assert_eq!(option_name_problem(option), None, "{option}");
        }
        assert!(option_name_problem("1x").is_some());
        assert!(option_name_problem(&"a".repeat(129)).is_some());
        assert_eq!(option_name_problem(&"a".repeat(128)), None);
    }

    #[test]
    fn values_that_read_back_otherwise_are_refused() {
        for value in ["\"x\"", "'x'", "'", " x", "x\t"] {
            assert!(value_problem(value).is_some(), "{value:?}");
        }
        for value in ["x = y", "'x", "a'b'", "", "%(message)s", "héllo wörld"] {
            assert_eq!(value_problem(value), None, "{value:?}");
        }
    }

    #[test]
    fn python_whitespace_is_rusts_plus_the_four_separators() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let expected = c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c);
            assert_eq!(python_whitespace(c), expected, "{:#x}", c as u32);
        }
    }
}
