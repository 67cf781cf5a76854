//! The operator's layering, read from its source: the controllers' frame (the files directly
//! in `src/controller/`, and the generic runtime in `src/controller/runtime/`) imports neither
//! controller; the two controllers (`barbican/`,
//! `secretstore/`) do not import each other (what both need, names and URLs, lives in `api/`);
//! `api/` and `render/` import no controller. [`ALLOWED`] names each exception and why, so the
//! list can only shrink.

use std::path::{Path, PathBuf};

/// Files that may import a controller they are not part of, and why.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "controller/manager.rs",
        "barbican",
        "the composition root: it starts both controllers",
    ),
    (
        "controller/manager.rs",
        "secretstore",
        "the composition root: it starts both controllers",
    ),
    (
        "controller/remote.rs",
        "barbican",
        "wires the target clusters' watches to both controllers",
    ),
    (
        "controller/remote.rs",
        "secretstore",
        "wires the target clusters' watches to both controllers",
    ),
];

/// The module path of `file` under `src/` (`controller/env.rs` → `["controller", "env"]`).
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Every path a `use` tree stands for: `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap_or(tree).trim().to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').expect("a closed use group")];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|p| format!("{prefix}{p}"))
        .collect()
}

/// `path` as seen from the module `module`, made absolute (`crate::…` left as it is).
fn absolute(module: &[String], path: &str) -> String {
    let mut segments: Vec<&str> = path.split("::").collect();
    let mut base: Vec<String> = match segments.first() {
        Some(&"crate") => {
            segments.remove(0);
            Vec::new()
        }
        Some(&"self") => {
            segments.remove(0);
            module.to_vec()
        }
        Some(&"super") => module.to_vec(),
        _ => return path.to_string(),
    };
    while segments.first() == Some(&"super") {
        segments.remove(0);
        base.pop();
    }
    base.extend(segments.iter().map(|s| s.to_string()));
    format!("crate::{}", base.join("::"))
}

/// The source without comments (line comments; the operator has no block comments).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The absolute paths `text` (the file `file` under `src/`) names: its `use` trees and its
/// inline `crate::`/`super::` paths.
fn paths(file: &str, text: &str) -> Vec<String> {
    let module = module_of(file);
    let code = code(text);
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("use ") {
        let boundary = at == 0 || !rest.as_bytes()[at - 1].is_ascii_alphanumeric();
        let tail = &rest[at + 4..];
        let Some(end) = tail.find(';') else { break };
        if boundary {
            found.extend(expand(&tail[..end]).iter().map(|p| absolute(&module, p)));
        }
        rest = &tail[end..];
    }
    for start in ["crate::", "super::"] {
        let mut rest = code.as_str();
        while let Some(at) = rest.find(start) {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            found.push(absolute(&module, tail[..end].trim_end_matches(':')));
            rest = &tail[end..];
        }
    }
    found
}

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path: PathBuf = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.strip_prefix(root).unwrap().display().to_string();
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The controller `file` is part of (`barbican`, `secretstore`), the frame, or another layer.
fn layer(file: &str) -> &str {
    for controller in ["barbican", "secretstore"] {
        if file.starts_with(&format!("controller/{controller}/")) {
            return controller;
        }
    }
    match file.split_once('/') {
        Some(("controller", _)) => "frame",
        Some((top, _)) => top,
        None => "top",
    }
}

/// What `files` import across the rule: `file imports crate::controller::x::…`.
fn violations(files: &[(String, String)]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (file, text) in files {
        let here = layer(file);
        if !["frame", "barbican", "secretstore", "api", "render"].contains(&here) {
            continue;
        }
        for path in paths(file, text) {
            for controller in ["barbican", "secretstore"] {
                let prefix = format!("crate::controller::{controller}");
                let names = path == prefix || path.starts_with(&format!("{prefix}::"));
                if !names || here == controller {
                    continue;
                }
                let allowed = ALLOWED
                    .iter()
                    .any(|(f, c, _)| f == file && *c == controller);
                let line = format!("{file} imports {path}");
                if !allowed && !wrong.contains(&line) {
                    wrong.push(line);
                }
            }
        }
    }
    wrong
}

#[test]
fn the_frame_imports_no_controller_and_the_controllers_not_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    assert!(files.len() > 80, "the sources are found");
    let wrong = violations(&files);
    assert!(
        wrong.is_empty(),
        "imports across the layers:\n{}",
        wrong.join("\n")
    );
    // Every allowance still names an import that exists: a fixed one leaves the list.
    for (file, controller, why) in ALLOWED {
        let text = &files.iter().find(|(f, _)| f == file).expect(file).1;
        let prefix = format!("crate::controller::{controller}");
        assert!(
            paths(file, text).iter().any(|p| p.starts_with(&prefix)),
            "{file} no longer imports {controller} ({why}): take it off ALLOWED"
        );
    }
}

/// The modules holding each controller's pipeline steps. A step reads what an earlier one found
/// through the runner's typed hand-offs (`controller/pipeline.rs`), never by importing it.
const STEPS: &[(&str, &[&str])] = &[
    (
        "barbican",
        &[
            "secrets",
            "secret_stores",
            "config",
            "db_clean",
            "database",
            "deployment",
            "http_route",
            "health",
            "hpa",
            "network_policy",
        ],
    ),
    ("secretstore", &["parent", "credentials", "projected"]),
];

/// What the step modules among `files` import of another step: `file imports crate::…`.
fn step_imports(files: &[(String, String)]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (controller, steps) in STEPS {
        for step in *steps {
            let file = format!("controller/{controller}/{step}.rs");
            let Some((_, text)) = files.iter().find(|(f, _)| *f == file) else {
                wrong.push(format!("{file} is missing"));
                continue;
            };
            for path in paths(&file, text) {
                for other in steps.iter().filter(|o| *o != step) {
                    let prefix = format!("crate::controller::{controller}::{other}");
                    if path == prefix || path.starts_with(&format!("{prefix}::")) {
                        wrong.push(format!("{file} imports {path}"));
                    }
                }
            }
        }
    }
    wrong
}

#[test]
fn no_step_imports_another_step() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let wrong = step_imports(&files);
    assert!(
        wrong.is_empty(),
        "steps importing steps:\n{}",
        wrong.join("\n")
    );
    // The check sees a relative import and an inline path.
    let planted = vec![
        (
            "controller/barbican/deployment.rs".to_string(),
            "fn f() { super::hpa::hpa_spec(); }\n".to_string(),
        ),
        (
            "controller/secretstore/projected.rs".to_string(),
            "use super::{credentials::provision, state::StoreState};\n".to_string(),
        ),
    ];
    files.retain(|(f, _)| !planted.iter().any(|(p, _)| p == f));
    files.extend(planted);
    assert_eq!(
        step_imports(&files),
        [
            "controller/barbican/deployment.rs imports crate::controller::barbican::hpa::hpa_spec",
            "controller/secretstore/projected.rs imports crate::controller::secretstore::credentials::provision",
        ]
    );
}

#[test]
fn the_check_sees_grouped_relative_and_inline_imports() {
    let files = vec![
        (
            "controller/events.rs".to_string(),
            "use super::{\n    cache::Cache,\n    barbican::{wakes, labels::MANAGED_BY},\n};\n".to_string(),
        ),
        (
            "controller/barbican/projection.rs".to_string(),
            "fn f() { crate::controller::secretstore::managed::url(); }\n".to_string(),
        ),
        (
            "controller/secretstore/reconcile.rs".to_string(),
            "use crate::{api::barbican::Barbican, controller::{barbican::pod::x, cache}};\n"
                .to_string(),
        ),
        (
            "api/names.rs".to_string(),
            "// use crate::controller::barbican; in a comment is no import\nuse super::barbican::Barbican;\n"
                .to_string(),
        ),
    ];
    assert_eq!(
        violations(&files),
        [
            "controller/events.rs imports crate::controller::barbican::wakes",
            "controller/events.rs imports crate::controller::barbican::labels::MANAGED_BY",
            "controller/barbican/projection.rs imports crate::controller::secretstore::managed::url",
            "controller/secretstore/reconcile.rs imports crate::controller::barbican::pod::x",
        ]
    );
}
