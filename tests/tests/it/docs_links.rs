//! The README, the guides under `docs/` and the step library link only to files that exist and
//! to headings those files have (as GitHub makes anchors of them), so a moved file or heading
//! fails here, not for a reader; and every guide is a chapter of the book (`docs/SUMMARY.md`).

use std::{collections::BTreeSet, path::Path};

use barbican_tests::{
    docs::{anchors, documents, prose},
    workspace_root,
};

/// Every `[text](target)` link of `text`'s prose, as its target.
pub fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    found
}

fn broken_links(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let mut broken = Vec::new();
    for target in links(&text) {
        if target.starts_with("http://")
            || target.starts_with("https://")
            || target.starts_with("mailto:")
        {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (target.as_str(), None),
        };
        let linked = if path.is_empty() {
            file.to_path_buf()
        } else {
            dir.join(path)
        };
        if !linked.exists() {
            broken.push(format!("{target}: no such file"));
            continue;
        }
        if let Some(anchor) = anchor
            && linked.extension().is_some_and(|e| e == "md")
            && !anchors(&std::fs::read_to_string(&linked).unwrap()).contains(anchor)
        {
            broken.push(format!("{target}: no such heading"));
        }
    }
    broken
}

#[test]
fn every_link_of_the_readme_and_the_guides_reaches_a_file_and_heading() {
    let mut broken = Vec::new();
    for file in documents() {
        for problem in broken_links(&file) {
            broken.push(format!("{}: {problem}", file.display()));
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_guide_is_a_chapter_of_the_book() {
    let root = workspace_root();
    let summary = std::fs::read_to_string(root.join("docs/SUMMARY.md")).unwrap();
    let chapters: BTreeSet<String> = links(&summary).into_iter().collect();
    for file in documents() {
        if file.parent() == Some(&root.join("docs")) && !file.ends_with("SUMMARY.md") {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                chapters.contains(&name),
                "docs/{name} is not in docs/SUMMARY.md"
            );
        }
    }
}

#[test]
fn the_checker_finds_what_is_broken() {
    assert_eq!(
        anchors("# A title\n## Install, upgrade (Helm)\n```\n# not a heading\n```\n## A title"),
        BTreeSet::from([
            "a-title".to_string(),
            "install-upgrade-helm".into(),
            "a-title-1".into()
        ])
    );
    assert_eq!(
        links("see [a](docs/a.md#x) and [b](https://x.io)\n```\n[c](d)\n```"),
        vec!["docs/a.md#x".to_string(), "https://x.io".into()]
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.md");
    std::fs::write(
        &file,
        "# Here\n[ok](#here) [gone](#there) [missing](b.md)\n",
    )
    .unwrap();
    assert_eq!(
        broken_links(&file),
        vec![
            "#there: no such heading".to_string(),
            "b.md: no such file".into()
        ]
    );
}

#[test]
fn the_readme_stays_a_five_minute_read() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines: move detail into a guide under docs/"
    );
}
