//! The grammar of tenants' config names and values against oslo.config itself: every Unicode
//! code point, leading, trailing and inside a section name, an option name and a value, is
//! read by oslo.config's own `ConfigParser` (`ci/conformance/oslo_reads.py`, oslo.config from
//! `ci/install-oslo-config.sh`) and by the operator's model of it
//! (`properties::oslo_reads`), and the two must agree document for document. What the grammar
//! admits must then read back exactly as written. The proptests and the fuzz target run the
//! same property on the model, which this test makes a stand-in for the real parser.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use barbican_operator::api::config_grammar::{
    option_name_problem, section_name_problem, value_problem,
};
use barbican_operator::properties::{admitted_options_read_back, oslo_reads};
use barbican_tests::workspace_root;
use serde_json::{Value, json};

/// The document of one probe: `c` at both ends and inside the section name, the option name
/// and the value, as the operator's INI writer lays a section out.
fn document(c: char) -> (String, String, String, String) {
    let section = format!("{c}s{c}s{c}");
    let key = format!("{c}log_config_append{c}k{c}");
    let value = format!("{c}v{c}v{c}");
    let text = format!("[{section}]\n{key} = {value}\n");
    (text, section, key, value)
}

/// The model's reading in the script's shape: sorted triples, or `["error", message]`.
fn modelled(text: &str) -> Value {
    match oslo_reads(text) {
        Ok(mut read) => {
            read.sort();
            json!(read)
        }
        Err(message) => json!(["error", message]),
    }
}

/// `ci/conformance/oslo_reads.py` started on `python`, its stdin and stdout piped.
fn oslo_reads_py(python: &std::path::Path) -> std::process::Child {
    Command::new(python)
        .arg(workspace_root().join("ci/conformance/oslo_reads.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting oslo_reads.py")
}

fn python() -> std::path::PathBuf {
    let python = workspace_root().join("target/tools-venv/bin/python");
    let fine = Command::new(&python)
        .args(["-c", "import oslo_config"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        fine,
        "{} cannot import oslo_config: ci/install-oslo-config.sh installs it",
        python.display()
    );
    python
}

#[test]
fn every_code_point_reads_the_same_in_oslo_config_and_in_the_model_and_admitted_ones_read_back() {
    let probes: Vec<char> = (0..=0x10_ffff).filter_map(char::from_u32).collect();
    let mut child = oslo_reads_py(&python());
    let mut stdin = child.stdin.take().expect("stdin");
    let documents: Vec<String> = probes.iter().map(|&c| document(c).0).collect();
    let feeder = std::thread::spawn(move || {
        let mut out = std::io::BufWriter::new(&mut stdin);
        for text in &documents {
            serde_json::to_writer(&mut out, text).expect("a JSON string");
            out.write_all(b"\n").expect("writing to oslo_reads.py");
        }
    });
    let answers = BufReader::new(child.stdout.take().expect("stdout"));
    let (mut compared, mut admitted, mut differing) = (0usize, 0usize, Vec::new());
    for (&c, answer) in probes.iter().zip(answers.lines()) {
        let answer: Value = serde_json::from_str(&answer.expect("a line")).expect("JSON");
        let (text, section, key, value) = document(c);
        if modelled(&text) != answer && differing.len() < 10 {
            differing.push(format!(
                "U+{:04X}: oslo.config {answer}, the model {}",
                c as u32,
                modelled(&text)
            ));
        }
        compared += 1;
        // What the grammar admits reads back unchanged: oslo.config's own reading.
        let grammar_admits = section_name_problem(&section).is_none()
            && option_name_problem(&key).is_none()
            && value_problem(&value).is_none();
        if grammar_admits {
            admitted += 1;
            assert_eq!(
                answer,
                json!([[section, key, value]]),
                "U+{:04X} is admitted and read back otherwise",
                c as u32
            );
        }
    }
    feeder.join().expect("the feeder");
    assert!(child.wait().expect("oslo_reads.py").success());
    assert!(differing.is_empty(), "{}", differing.join("\n"));
    assert_eq!(
        compared,
        probes.len(),
        "oslo_reads.py answered every document"
    );
    // Only what may start an identifier fits all three positions: ASCII letters and '_'.
    assert_eq!(admitted, 26 * 2 + 1, "the admitted code points");
}

#[test]
fn the_reported_smuggled_names_are_refused_and_oslo_config_reads_them_as_the_real_option() {
    let python = python();
    for (section, key) in [
        ("DEFAULT", "log_config_append\u{1f}"),
        ("DEFAULT", "\u{1c}log_config_append"),
        ("p11_crypto_plugin", "library_path\u{1e}"),
    ] {
        assert!(option_name_problem(key).is_some(), "{key:?} is admitted");
        // oslo.config strips them: the name would have been the real option's.
        let text = format!("[{section}]\n{key} = /etc/barbican/barbican.conf\n");
        let mut child = oslo_reads_py(&python);
        writeln!(child.stdin.take().unwrap(), "{}", json!(text)).unwrap();
        let output = child.wait_with_output().unwrap();
        let read: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(
            read,
            json!([[
                section,
                key.trim_matches(|c: char| c < ' '),
                "/etc/barbican/barbican.conf"
            ]])
        );
        assert_eq!(modelled(&text), read);
        assert_eq!(admitted_options_read_back(section, key, "x"), Ok(()));
    }
}
