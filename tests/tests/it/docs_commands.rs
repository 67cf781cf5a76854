//! Every command the README and the guides show (their `sh` blocks) is checked against what it
//! names, so a renamed flag, package, test target, script or example breaks this test, not a
//! reader's first try:
//!
//! - `barbican-sim …` and `barbican-operator …` (as `target/*/…`, bare, or `cargo run -p … --`)
//!   run with `--help` appended: clap parses and validates every flag and value before it
//!   prints the help, so the command line is one the binary accepts;
//! - `cargo` commands name packages and `--test` targets of this workspace (`kube*`: the
//!   outside suites the sim guide runs in kube-rs' own checkout), and fuzz targets that exist;
//! - scripts (`ci/…`) exist and are executable, and the files `kubectl`, `helm`, `docker` and
//!   `python3` are given exist.
//!
//! Optional parts written `[--flag value]`, alternatives `a|b` and `NS[,NS...]` are read as the
//! first choice. Commands of other tools (`curl`, `perf`, `kubectl get`, …) name nothing here
//! beyond their files. Running each command for real is the job of the tests of what it runs
//! (the demo, the features, the chart install in `ci/test.sh`).

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    process::Command,
};

use barbican_features::install_steps::command_lines;
use barbican_tests::{docs::documents, workspace_root};

/// The text of every `sh` block of `markdown`.
fn sh_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_start()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(_), fence) if fence.starts_with("```") => blocks.extend(current.take()),
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The commands of a block: its command lines (continuations joined, quotes and comments as a
/// shell reads them) split at `&&`, `||`, `;`, `|` and `&`, with the placeholders of optional
/// parts and alternatives resolved to their first choice.
fn commands(block: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    for line in command_lines(block).unwrap_or_else(|e| panic!("{e} in:\n{block}")) {
        let mut command = Vec::new();
        for word in line {
            let (word, ends) = match word.strip_suffix(';') {
                Some(w) => (w.to_string(), true),
                None => (word, false),
            };
            if ["&&", "||", ";", "|", "&"].contains(&word.as_str()) || word.starts_with("2>") {
                commands.push(std::mem::take(&mut command));
                continue;
            }
            command.extend(resolve(&word));
            if ends {
                commands.push(std::mem::take(&mut command));
            }
        }
        commands.push(command);
    }
    commands.retain(|c| !c.is_empty());
    commands
}

/// A word with its placeholders resolved: `[--flag` → `--flag`, `value]` → `value`,
/// `NS[,NS...]` → `ns`, `text|json` → `text`.
fn resolve(word: &str) -> Option<String> {
    let mut word = word.trim_start_matches('[').to_string();
    if let Some(open) = word.find('[') {
        word.truncate(open);
    }
    let word = word.trim_end_matches(']');
    let word = match word.split_once('|') {
        Some((first, _)) if !word.contains('{') && !word.contains('\'') => first,
        _ => word,
    };
    // A metavariable (`NS`, `PATH`) stands for a value of its kind: its lowercase spelling is one.
    let metavariable = word.len() > 1 && word.chars().all(|c| c.is_ascii_uppercase() || c == '_');
    match metavariable {
        true => Some(word.to_ascii_lowercase()),
        false => (!word.is_empty()).then(|| word.to_string()),
    }
}

/// Checks commands against the workspace: its packages and test targets, its files, and the
/// argument parsers of its binaries.
struct Checker {
    root: PathBuf,
    /// Workspace packages, each with its test targets.
    packages: Vec<(String, BTreeSet<String>)>,
    checked: usize,
}

impl Checker {
    fn new(root: PathBuf) -> Self {
        let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args([
                "metadata",
                "--no-deps",
                "--format-version",
                "1",
                "--offline",
            ])
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(output.status.success(), "cargo metadata failed");
        let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let packages = metadata["packages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let tests = p["targets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|t| {
                        t["kind"]
                            .as_array()
                            .is_some_and(|k| k.contains(&"test".into()))
                    })
                    .map(|t| t["name"].as_str().unwrap().to_string())
                    .collect();
                (p["name"].as_str().unwrap().to_string(), tests)
            })
            .collect();
        Self {
            root,
            packages,
            checked: 0,
        }
    }

    /// Checks `words` (one command); returns what is wrong with it.
    fn check(&mut self, words: &[String], dir: &mut PathBuf) -> Result<(), String> {
        let mut words: Vec<&str> = words.iter().map(String::as_str).collect();
        // Environment assignments and sudo change how it runs, not what it names.
        while let Some(first) = words.first() {
            let assignment = first.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            });
            if assignment || *first == "sudo" {
                words.remove(0);
            } else {
                break;
            }
        }
        let Some((&program, args)) = words.split_first() else {
            return Ok(());
        };
        if args.iter().any(|a| a.contains("$(")) || program.contains("$(") {
            // A command substitution: another tool's output feeds it.
            return Ok(());
        }
        let name = program.rsplit('/').next().unwrap_or(program);
        match name {
            "barbican-sim" | "barbican-operator" => self.parses(name, args),
            "cargo" => self.cargo(args, dir),
            "cd" => {
                let to = dir.join(args.first().ok_or("cd to nowhere")?);
                if !to.is_dir() {
                    return Err(format!("cd {}: no such directory", to.display()));
                }
                *dir = to;
                Ok(())
            }
            _ if program.starts_with("ci/") => self.script(program),
            "python3" | "python" if args.first().is_some_and(|a| a.starts_with("ci/")) => {
                self.file(dir, args[0])
            }
            // kubectl's files follow -f (`deploy/x` alone is a resource); helm's chart is a path.
            "kubectl" | "helm" => {
                for (i, arg) in args.iter().enumerate() {
                    let file_flag = i > 0 && matches!(args[i - 1], "-f" | "--filename");
                    if file_flag || (name == "helm" && arg.starts_with("deploy/")) {
                        self.file(dir, arg)?;
                    }
                }
                Ok(())
            }
            "docker" if args.first() == Some(&"build") => {
                let context = args.last().ok_or("docker build of nothing")?;
                self.file(&dir.join(context), "Dockerfile")
            }
            _ => Ok(()),
        }
    }

    fn file(&mut self, dir: &Path, path: &str) -> Result<(), String> {
        self.checked += 1;
        match dir.join(path).exists() {
            true => Ok(()),
            false => Err(format!("{path}: no such file")),
        }
    }

    fn script(&mut self, path: &str) -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        self.checked += 1;
        let meta = std::fs::metadata(self.root.join(path)).map_err(|e| format!("{path}: {e}"))?;
        match meta.permissions().mode() & 0o111 {
            0 => Err(format!("{path} is not executable")),
            _ => Ok(()),
        }
    }

    /// Runs our binary `name` with `args` and `--help`: clap refuses an unknown flag or a bad
    /// value before it prints the help.
    fn parses(&mut self, name: &str, args: &[&str]) -> Result<(), String> {
        self.checked += 1;
        let binary = binary(name);
        let output = Command::new(&binary)
            .args(args)
            .arg("--help")
            .output()
            .map_err(|e| format!("running {}: {e}", binary.display()))?;
        match output.status.success() {
            true => Ok(()),
            false => Err(format!(
                "{name} refuses {args:?}: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )),
        }
    }

    fn cargo(&mut self, args: &[&str], dir: &Path) -> Result<(), String> {
        let Some((&subcommand, rest)) = args.split_first() else {
            return Ok(());
        };
        if subcommand == "fuzz" {
            self.checked += 1;
            let target = rest.get(1).ok_or("cargo fuzz run of no target")?;
            return self.file(dir, &format!("fuzz_targets/{target}.rs"));
        }
        if !["run", "build", "test", "nextest"].contains(&subcommand) {
            return Ok(());
        }
        let (ours, theirs) = match rest.iter().position(|a| *a == "--") {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &[][..]),
        };
        let flag_values = |flag: &str| -> Vec<&str> {
            ours.windows(2)
                .filter(|w| w[0] == flag)
                .map(|w| w[1])
                .collect()
        };
        let packages = flag_values("-p");
        for package in &packages {
            self.checked += 1;
            if package.starts_with("kube") {
                continue;
            }
            let Some((_, tests)) = self.packages.iter().find(|(n, _)| n == package) else {
                return Err(format!("no package {package} in the workspace"));
            };
            for test in flag_values("--test") {
                if !tests.contains(test) {
                    return Err(format!("{package} has no test target {test}"));
                }
            }
        }
        if subcommand == "run" {
            let binary = match packages.as_slice() {
                ["barbican-sim-cli"] => "barbican-sim",
                ["barbican-operator"] => "barbican-operator",
                other => return Err(format!("cargo run of {other:?}")),
            };
            return self.parses(binary, theirs);
        }
        Ok(())
    }
}

/// The workspace's debug build of `name`: beside this test's binary (`target/debug/deps`), one
/// directory up (a workspace test build builds every package's binaries).
fn binary(name: &str) -> PathBuf {
    let me = std::env::current_exe().unwrap();
    let deps = me.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|d| d.join(name))
        .find(|b| b.is_file())
        .unwrap_or_else(|| panic!("no {name} binary built beside {}", me.display()))
}

#[test]
fn every_command_a_guide_shows_names_what_exists_and_parses() {
    let root = workspace_root();
    let mut checker = Checker::new(root.clone());
    let mut wrong = Vec::new();
    let mut ours = 0;
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(&root).unwrap().display().to_string();
        for block in sh_blocks(&text) {
            let mut dir = root.clone();
            for command in commands(&block) {
                let program = command.join(" ");
                ours += usize::from(program.contains("barbican-"));
                if let Err(e) = checker.check(&command, &mut dir) {
                    wrong.push(format!("{shown}: `{program}`: {e}"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "commands in the guides that do not work:\n{}",
        wrong.join("\n")
    );
    assert!(
        checker.checked > 40 && ours > 10,
        "the guides' commands are found ({} checked)",
        checker.checked
    );
}

#[test]
fn a_stale_flag_a_missing_script_and_a_renamed_target_are_caught() {
    let root = workspace_root();
    let mut checker = Checker::new(root.clone());
    let check = |checker: &mut Checker, line: &str| {
        let mut dir = root.clone();
        commands(line)
            .iter()
            .map(|c| checker.check(c, &mut dir))
            .collect::<Result<Vec<()>, String>>()
    };
    for (line, expected) in [
        (
            "cargo run -q -p barbican-sim-cli -- serve --no-such-flag\n",
            "barbican-sim refuses",
        ),
        (
            "target/release/barbican-operator run [--log-format xml|json]\n",
            "barbican-operator refuses",
        ),
        ("ci/no-such-script.sh && ci/test.sh\n", "no-such-script.sh"),
        (
            "cargo test -p barbican-features --test no_such_target\n",
            "no test target no_such_target",
        ),
        (
            "kubectl apply -f deploy/examples/none.yaml\n",
            "no such file",
        ),
    ] {
        let found = check(&mut checker, line);
        assert!(
            found.as_ref().is_err_and(|e| e.contains(expected)),
            "{line}: {found:?}"
        );
    }
    for line in [
        "sudo target/debug/barbican-sim demo --installed --kubeconfig-out /tmp/k\n",
        "target/release/barbican-sim bench --barbicans 200 [--steady 10m] [--json report.json] \\\n  [--foreign-secrets 5000]\n",
        "barbican-operator run [--watch-namespaces NS[,NS...]] [--log-format text|json]\n",
        "KUBECONFIG=/tmp/k kubectl apply -f deploy/examples/barbican.yaml   # a comment\n",
    ] {
        assert_eq!(check(&mut checker, line), Ok(vec![()]), "{line}");
    }
}
