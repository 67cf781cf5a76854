//! `ci/`: the scripts whose decisions change what CI checks. `ci/python-checks-key.sh` decides
//! whether the option-catalog check and the render conformance run again (ci/test.sh skips them
//! while the key equals the one recorded at their last pass), so it must change with every
//! input of those checks and with nothing else.

use std::path::Path;
use std::process::Command;

use barbican_tests::workspace_root;

/// Copies a file or directory tree of the workspace into `into`, at the same relative path.
fn copy(relative: &str, into: &Path) {
    let from = workspace_root().join(relative);
    let to = into.join(relative);
    if from.is_dir() {
        for entry in std::fs::read_dir(&from).expect("read a directory") {
            let name = entry.expect("a directory entry").file_name();
            let name = name.to_str().expect("a UTF-8 file name");
            if name != "__pycache__" {
                copy(&format!("{relative}/{name}"), into);
            }
        }
    } else {
        std::fs::create_dir_all(to.parent().expect("a parent")).expect("create a directory");
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("copy {relative}: {e}"));
    }
}

fn key(root: &Path) -> String {
    key_with(root, &[])
}

/// The key with `extra` files named on the command line (as ci/test.sh names the fakes' binary).
fn key_with(root: &Path, extra: &[&Path]) -> String {
    let out = Command::new("bash")
        .arg(root.join("ci/python-checks-key.sh"))
        .args(extra)
        .current_dir(root)
        .output()
        .expect("run ci/python-checks-key.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .trim()
        .to_owned();
    assert_eq!(key.len(), 64, "a SHA-256 in hex: {key:?}");
    key
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create a directory");
    std::fs::write(path, text).expect("write a file");
}

#[test]
fn the_python_checks_key_follows_their_inputs_and_nothing_else() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    for input in [
        "ci/python-checks-key.sh",
        "ci/check-catalogs.sh",
        "ci/conformance",
        "operator/catalogs",
        "tests/golden/render",
    ] {
        copy(input, root);
    }
    let site = "target/catalog-venvs/2026.2/lib/python3.13/site-packages";
    write(
        root,
        &format!("{site}/oslo_config-10.0.0.dist-info/METADATA"),
        "",
    );
    let base = key(root);
    assert_eq!(key(root), base, "the same inputs give the same key");

    // Outside its inputs: the Rust code, bytecode caches, a venv's files other than its
    // distributions' names and versions.
    write(root, "operator/src/render/mod.rs", "// one line\n");
    write(
        root,
        "operator/catalogs/__pycache__/generate.cpython-313.pyc",
        "bytecode",
    );
    write(
        root,
        &format!("{site}/oslo_config/__init__.py"),
        "# edited\n",
    );
    assert_eq!(
        key(root),
        base,
        "files the checks do not read leave the key alone"
    );

    // Each input.
    let golden = "tests/golden/render/2026.2/minimal/barbican.conf";
    let original = std::fs::read_to_string(root.join(golden)).expect("the golden config");
    let edits: [(&str, String); 5] = [
        (golden, format!("{original}# edited\n")),
        (
            "tests/golden/render/2026.2/new-case/barbican.conf",
            String::new(),
        ),
        ("ci/conformance/load_config.py", "# edited\n".into()),
        (
            "operator/catalogs/2026.2.constraints.txt",
            "oslo.config===1.0.0\n".into(),
        ),
        (
            &format!("{site}/oslo_config-10.0.1.dist-info/METADATA"),
            String::new(),
        ),
    ];
    for (path, text) in &edits {
        let previous = std::fs::read(root.join(path)).ok();
        write(root, path, text);
        assert_ne!(key(root), base, "{path} is an input of the Python checks");
        match previous {
            Some(bytes) => std::fs::write(root.join(path), bytes).expect("restore a file"),
            None => {
                // The new file and its directory (a dist-info directory counts by its name).
                let path = root.join(path);
                std::fs::remove_file(&path).expect("remove a file");
                std::fs::remove_dir(path.parent().expect("a parent"))
                    .expect("remove its directory");
            }
        }
        assert_eq!(key(root), base, "restoring {path} restores the key");
    }

    // A file named on the command line is an input by its content.
    let binary = root.join("target/debug/barbican-fakes");
    write(root, "target/debug/barbican-fakes", "one build");
    let with_binary = key_with(root, &[&binary]);
    assert_ne!(with_binary, base, "a named file is an input");
    write(root, "target/debug/barbican-fakes", "one build");
    assert_eq!(key_with(root, &[&binary]), with_binary, "rewritten alike");
    write(root, "target/debug/barbican-fakes", "another build");
    assert_ne!(
        key_with(root, &[&binary]),
        with_binary,
        "a relinked binary changes the key"
    );
}

/// `ci/check-file-sizes.sh` fails on a non-test source file past 800 lines, naming it, and
/// counts neither test modules nor tests directories nor files git does not track.
#[test]
fn the_file_size_check_names_a_source_file_past_800_lines_and_skips_tests() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    copy("ci/check-file-sizes.sh", root);
    let lines = |n: usize| "// a line\n".repeat(n);
    write(root, "src/small.rs", &lines(800));
    write(root, "src/tests.rs", &lines(2000));
    write(root, "src/render_tests.rs", &lines(2000));
    write(root, "crate/tests/it/long.rs", &lines(2000));
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    let check = || {
        Command::new("bash")
            .arg(root.join("ci/check-file-sizes.sh"))
            .current_dir(root)
            .output()
            .expect("run ci/check-file-sizes.sh")
    };
    let passed = check();
    assert!(
        passed.status.success(),
        "{}",
        String::from_utf8_lossy(&passed.stdout)
    );
    write(root, "src/big.rs", &lines(801));
    git(&["add", "src/big.rs"]);
    let failed = check();
    let said = String::from_utf8_lossy(&failed.stdout);
    assert!(!failed.status.success(), "{said}");
    assert!(said.contains("src/big.rs: 801 lines"), "{said}");
    assert!(
        !said.contains("small.rs") && !said.contains("tests"),
        "{said}"
    );
}
