//! Runs `features/*.feature` with cucumber, one test per feature file.
//!
//! cucumber brings its own runner, so this binary speaks the part of libtest's command line
//! that cargo-nextest uses: `--list --format terse` lists one test per feature file,
//! `--list --ignored` lists none, and `--exact <name>` runs one file. Without arguments (plain
//! `cargo test`) it runs every file. `--tags <expr>` / `FEATURES_TAGS` and `--name <text>` /
//! `FEATURES_SCENARIO` choose scenarios (see [`barbican_features::runner`]);
//! `FEATURES_JUNIT_DIR` collects a JUnit file per feature; the last line gives the timings.

use std::path::{Path, PathBuf};

use barbican_features::{
    BarbicanWorld,
    runner::{self, Selection},
};
use cucumber::{World, writer::Stats as _};

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
    let selection = match Selection::from(&args, |v| std::env::var(v).ok()) {
        Ok(selection) => selection,
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
            Some(name) if exact => test_name(f) == *name,
            Some(name) => test_name(f).contains(name.as_str()),
        })
        .collect();
    // The operator's log lines, kept for the steps that check what it never says and for the
    // failure report.
    barbican_features::log_capture::install();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let junit_dir = std::env::var_os("FEATURES_JUNIT_DIR").map(PathBuf::from);
    let started = std::time::Instant::now();
    let mut all = Vec::new();
    let mut failed = false;
    for file in chosen {
        let selection = selection.clone();
        let result = runtime.block_on(
            BarbicanWorld::cucumber()
                // The command line is this harness's (libtest's), not cucumber's.
                .with_default_cli()
                .fail_on_skipped()
                .max_concurrent_scenarios(2)
                .before(runner::before)
                .after(runner::after)
                .filter_run(file, move |feature, rule, scenario| {
                    selection.selects(feature, rule, scenario)
                }),
        );
        let outcomes = runner::take_outcomes();
        if let Some(dir) = &junit_dir {
            let _ = std::fs::create_dir_all(dir);
            let path = dir.join(format!("{}.xml", test_name(file)));
            if let Err(e) = std::fs::write(&path, runner::junit(&test_name(file), &outcomes)) {
                eprintln!("writing {}: {e}", path.display());
            }
        }
        failed |= result.execution_has_failed() || result.parsing_errors() > 0;
        all.extend(outcomes);
    }
    println!(
        "scenario timings: {} in {:.1}s of wall time",
        runner::timings(&all),
        started.elapsed().as_secs_f64()
    );
    if failed {
        std::process::exit(1);
    }
}
