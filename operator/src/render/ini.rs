//! INI documents as oslo.config reads them, written deterministically and refusing anything
//! that would read back as a different structure.
//!
//! oslo.config's parser takes `[section]` lines, `key = value` (or `key: value`) lines split at
//! the first `=` or `:`, `#`/`;` comment lines, and continuation lines that start with
//! whitespace. So a line break anywhere, a `=` or `:` in a key, brackets in a section name, or
//! surrounding whitespace would make the file mean something other than the data it was
//! written from. [`Ini::render`] refuses those instead of writing them.

use std::collections::BTreeMap;

/// A name or value that cannot be written without changing the document's structure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {problem}")]
pub struct SyntaxError {
    /// `[section]` or `[section] key`.
    pub location: String,
    /// What is wrong and what is allowed.
    pub problem: String,
}

/// Why a section name cannot be written, if it cannot.
pub fn section_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("section names must not be empty")
    } else if name.contains(['\n', '\r']) {
        Some("section names must not contain a newline or carriage return")
    } else if name.contains(['[', ']']) {
        Some("section names must not contain '[' or ']'")
    } else if name.trim() != name {
        Some("section names must not start or end with whitespace")
    } else {
        None
    }
}

/// Why an option name cannot be written, if it cannot.
pub fn key_problem(key: &str) -> Option<&'static str> {
    if key.is_empty() {
        Some("option names must not be empty")
    } else if key.contains(['\n', '\r']) {
        Some("option names must not contain a newline or carriage return")
    } else if key.contains(['=', ':']) {
        Some("option names must not contain '=' or ':', which end the name when the file is read")
    } else if key.trim() != key {
        Some("option names must not start or end with whitespace")
    } else if key.starts_with(['#', ';', '[']) {
        Some("option names must not start with '#', ';' or '['")
    } else {
        None
    }
}

/// Why a value cannot be written, if it cannot. Leading and trailing whitespace would be
/// stripped on read, so it is refused too: the file must say exactly what the spec says.
pub fn value_problem(value: &str) -> Option<&'static str> {
    if value.contains(['\n', '\r']) {
        Some("values must not contain a newline or carriage return")
    } else if value.trim() != value {
        Some(
            "values must not start or end with whitespace, which is stripped when the file is read",
        )
    } else {
        None
    }
}

/// Section name to option name to value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ini {
    sections: BTreeMap<String, BTreeMap<String, String>>,
}

impl Ini {
    /// An empty document.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `[section] key = value`, replacing an earlier value.
    pub fn set(&mut self, section: &str, key: &str, value: impl Into<String>) {
        self.sections
            .entry(section.to_string())
            .or_default()
            .insert(key.to_string(), value.into());
    }

    /// Makes sure `[section]` exists, even without options.
    pub fn ensure_section(&mut self, section: &str) {
        self.sections.entry(section.to_string()).or_default();
    }

    /// Copies every option of `other` over this document: `other` wins on a collision.
    pub fn overlay(&mut self, other: &Ini) {
        for (section, options) in &other.sections {
            let target = self.sections.entry(section.clone()).or_default();
            for (key, value) in options {
                target.insert(key.clone(), value.clone());
            }
        }
    }

    /// The value of `[section] key`.
    pub fn get(&self, section: &str, key: &str) -> Option<&str> {
        self.sections
            .get(section)
            .and_then(|s| s.get(key))
            .map(String::as_str)
    }

    /// The sections and their options.
    pub fn sections(&self) -> &BTreeMap<String, BTreeMap<String, String>> {
        &self.sections
    }

    /// The file: sections and keys sorted (byte order, so `DEFAULT` comes first), `key = value`,
    /// a blank line between sections. Refuses any name or value that would read back as
    /// something else.
    pub fn render(&self) -> Result<String, SyntaxError> {
        let mut out = String::new();
        for (i, (section, options)) in self.sections.iter().enumerate() {
            if let Some(problem) = section_name_problem(section) {
                return Err(SyntaxError {
                    location: format!("[{}]", section.escape_debug()),
                    problem: problem.into(),
                });
            }
            if i > 0 {
                out.push('\n');
            }
            out.push('[');
            out.push_str(section);
            out.push_str("]\n");
            for (key, value) in options {
                let problem = key_problem(key).or_else(|| value_problem(value));
                if let Some(problem) = problem {
                    return Err(SyntaxError {
                        location: format!("[{section}] {}", key.escape_debug()),
                        problem: problem.into(),
                    });
                }
                out.push_str(key);
                out.push_str(" = ");
                out.push_str(value);
                out.push('\n');
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_sorted_with_default_first() {
        let mut ini = Ini::new();
        ini.set("secretstore", "b", "2");
        ini.set("DEFAULT", "z", "1");
        ini.set("secretstore", "a", "x = y");
        assert_eq!(
            ini.render().unwrap(),
            "[DEFAULT]\nz = 1\n\n[secretstore]\na = x = y\nb = 2\n"
        );
    }

    #[test]
    fn overlay_wins_on_collision() {
        let mut base = Ini::new();
        base.set("s", "k", "base");
        base.set("s", "only", "kept");
        let mut top = Ini::new();
        top.set("s", "k", "top");
        base.overlay(&top);
        assert_eq!(base.get("s", "k"), Some("top"));
        assert_eq!(base.get("s", "only"), Some("kept"));
    }

    #[test]
    fn structure_changing_names_and_values_are_refused() {
        for (section, key, value, problem) in [
            ("s\n[DEFAULT]", "k", "v", "newline"),
            ("a]b", "k", "v", "'[' or ']'"),
            (" s", "k", "v", "whitespace"),
            ("s", "host_href=evil", "v", "'=' or ':'"),
            ("s", "a:b", "v", "'=' or ':'"),
            ("s", "#k", "v", "must not start with"),
            ("s", "k", "v\nroot_token_id = x", "newline"),
            ("s", "k", " v", "whitespace"),
            ("s", "", "v", "must not be empty"),
        ] {
            let mut ini = Ini::new();
            ini.set(section, key, value);
            let error = ini.render().unwrap_err();
            assert!(
                error.problem.contains(problem),
                "{section:?} {key:?} {value:?}: {error}"
            );
        }
    }
}
