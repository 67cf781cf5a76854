//! Runs `features/*.feature` with cucumber, one test per feature file.
//!
//! cucumber brings its own runner, so this binary speaks the part of libtest's command line
//! that cargo-nextest uses: `--list --format terse` lists one test per feature file,
//! `--list --ignored` lists none, and `--exact <name>` runs one file. Without arguments (plain
//! `cargo test`) it runs every file.

use std::path::{Path, PathBuf};

use barbican_features::BarbicanWorld;
use cucumber::World;

fn feature_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("features/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "feature"))
        .collect();
    files.sort();
    files
}

fn test_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    let files = feature_files();
    if flag("--list") {
        if !flag("--ignored") {
            for file in &files {
                println!("{}: test", test_name(file));
            }
        }
        return;
    }
    // A filter is the first argument that is not a flag (cargo test <filter>, nextest --exact).
    let filter = args.iter().find(|a| !a.starts_with("--")).cloned();
    let exact = flag("--exact");
    let chosen: Vec<&PathBuf> = files
        .iter()
        .filter(|f| match &filter {
            None => true,
            Some(name) if exact => test_name(f) == *name,
            Some(name) => test_name(f).contains(name.as_str()),
        })
        .collect();
    // The operator's log lines, kept for the steps that check what it never says.
    barbican_features::log_capture::install();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    for file in chosen {
        runtime.block_on(
            BarbicanWorld::cucumber()
                // The command line is this harness's (libtest's), not cucumber's.
                .with_default_cli()
                .fail_on_skipped()
                .max_concurrent_scenarios(2)
                .run_and_exit(file),
        );
    }
}
