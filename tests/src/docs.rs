//! The project's Markdown: which files a reader follows (the README, the step library, the
//! guides under `docs/`), their prose outside code blocks, and their headings' anchors as
//! GitHub makes them. What the documentation tests (links, commands, the alerts' runbooks)
//! read.

use std::{collections::BTreeSet, path::PathBuf};

use crate::workspace_root;

/// The Markdown files a reader follows links through.
pub fn documents() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut files = vec![root.join("README.md"), root.join("features/README.md")];
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guides.sort();
    files.extend(guides);
    files
}

/// The lines of `text` outside fenced code blocks.
pub fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as
/// `-`; a repeated anchor gets `-1`, `-2`, ….
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in prose(text) {
        let Some(heading) = line
            .strip_prefix('#')
            .map(|h| h.trim_start_matches('#'))
            .filter(|h| h.starts_with(' '))
        else {
            continue;
        };
        let slug: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut unique = slug.clone();
        let mut n = 0;
        while seen.contains(&unique) {
            n += 1;
            unique = format!("{slug}-{n}");
        }
        seen.insert(unique);
    }
    seen
}
