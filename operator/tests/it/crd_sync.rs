//! verify-crd-sync: the committed `deploy/crds/` files are exactly what the generator prints.
//!
//! When this fails, regenerate with
//! `cargo run -q -p barbican-operator -- crd --out-dir deploy/crds` and commit the result.

use std::{path::PathBuf, process::Command};

use barbican_operator::crd;

fn crds_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/crds")
}

#[test]
fn committed_crds_match_the_generator() {
    let manifests = crd::manifests().expect("CRDs render");
    assert_eq!(manifests.len(), 2);
    for manifest in &manifests {
        let path = crds_dir().join(&manifest.file_name);
        let committed = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{} is missing ({e}); run the generator", path.display()));
        assert!(
            committed == manifest.yaml,
            "{} differs from the generator; run `cargo run -q -p barbican-operator -- crd --out-dir deploy/crds`",
            path.display()
        );
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(crds_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut generated: Vec<String> = manifests.iter().map(|m| m.file_name.clone()).collect();
    generated.sort();
    assert_eq!(
        on_disk, generated,
        "deploy/crds holds files the generator does not write"
    );
}

#[test]
fn the_crd_command_prints_the_committed_files() {
    let output = Command::new(env!("CARGO_BIN_EXE_barbican-operator"))
        .arg("crd")
        .output()
        .expect("the binary runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8(output.stdout).unwrap();
    let expected: String = ["barbicans", "barbicansecretstores"]
        .iter()
        .map(|plural| {
            let file = crds_dir().join(format!("{plural}.barbican.openstack.c5c3.io.yaml"));
            format!("---\n{}", std::fs::read_to_string(file).unwrap())
        })
        .collect();
    assert_eq!(printed, expected);
}

#[test]
fn the_printed_stream_parses_back_into_both_crds() {
    let stream = crd::stream(&crd::manifests().unwrap());
    let docs: Vec<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        serde_saphyr::from_multiple(&stream).expect("the stream is valid YAML");
    let names: Vec<_> = docs
        .iter()
        .map(|d| d.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "barbicans.barbican.openstack.c5c3.io",
            "barbicansecretstores.barbican.openstack.c5c3.io"
        ]
    );
    assert_eq!(docs, crd::definitions());
}

#[test]
fn a_reader_closing_the_pipe_early_is_not_an_error() {
    use std::{io::Read, process::Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_barbican-operator"))
        .arg("crd")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe is closed here, as `| head -c 16` would.
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(&first[..4], b"---\n");
}
