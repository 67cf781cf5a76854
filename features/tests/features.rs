//! Runs `features/*.feature` with cucumber, one test per feature file.
//!
//! cucumber brings its own runner, so this binary speaks the part of libtest's command line
//! that cargo-nextest uses: `--list --format terse` lists one test per feature file,
//! `--list --ignored` lists none, and `--exact <name>` runs one file. Without arguments (plain
//! `cargo test`) it runs every file. `--tags <expr>` / `FEATURES_TAGS` and `--name <text>` /
//! `FEATURES_SCENARIO` choose scenarios (see [`barbican_features::runner`]);
//! `FEATURES_JUNIT_DIR` collects a JUnit file per feature; the last line gives the timings.

use std::path::PathBuf;

use barbican_features::{
    backend::REAL_BARBICAN,
    runner::{self, Selection},
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    let files = runner::feature_files();
    if flag("--list") {
        if !flag("--ignored") {
            for file in &files {
                println!("{}: test", runner::test_name(file));
            }
        }
        return;
    }
    // Scenarios with real barbican processes have a binary of their own (real_barbican.rs).
    let selection = match Selection::from(&args, |v| std::env::var(v).ok()) {
        Ok(selection) => selection.excluding(REAL_BARBICAN),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    // A filter is the first argument that is neither a flag nor a flag's value (cargo test
    // <filter>, nextest --exact <name>).
    let values = ["--tags", "--name"];
    let filter = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || !values.contains(&args[i - 1].as_str())))
        .map(|(_, a)| a.clone());
    let exact = flag("--exact");
    let chosen: Vec<&PathBuf> = files
        .iter()
        .filter(|f| match &filter {
            None => true,
            Some(name) if exact => runner::test_name(f) == *name,
            Some(name) => runner::test_name(f).contains(name.as_str()),
        })
        .collect();
    let failed = runner::run_files(&chosen, &selection, 2);
    if failed {
        std::process::exit(1);
    }
}
