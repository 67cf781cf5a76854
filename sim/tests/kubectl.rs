//! kubectl against `barbican-sim serve`: what a user types works as on a real cluster.
//! Needs kubectl on PATH (CI has 1.32); fails, rather than skips, without it.

use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::Duration,
};

struct Sim {
    child: Child,
    kubeconfig: PathBuf,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn start(name: &str) -> Sim {
    let dir = std::env::temp_dir().join(format!(
        "barbican-sim-kubectl-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let _ = std::fs::remove_file(&kubeconfig);
    let child = Command::new(env!("CARGO_BIN_EXE_barbican-sim"))
        .args(["serve", "--port", "0", "--kubeconfig-out"])
        .arg(&kubeconfig)
        .arg("--crds")
        .arg(workspace().join("deploy/crds"))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sim = Sim { child, kubeconfig };
    for _ in 0..200 {
        if sim.kubeconfig.exists() && kubectl(&sim, &["get", "namespaces"]).0 {
            return sim;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("barbican-sim serve did not come up");
}

/// Runs kubectl; returns (success, stdout + stderr).
fn kubectl(sim: &Sim, args: &[&str]) -> (bool, String) {
    let output = Command::new("kubectl")
        .args(args)
        .env("KUBECONFIG", &sim.kubeconfig)
        .current_dir(workspace())
        .output()
        .expect("kubectl must be installed (CI provides 1.32)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

fn ok(sim: &Sim, args: &[&str]) -> String {
    let (success, text) = kubectl(sim, args);
    assert!(success, "kubectl {}: {text}", args.join(" "));
    text
}

fn apply_stdin(sim: &Sim, manifest: &str) {
    let mut child = Command::new("kubectl")
        .args(["apply", "-f", "-"])
        .env("KUBECONFIG", &sim.kubeconfig)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), manifest.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
}

fn with_examples(name: &str) -> Sim {
    let sim = start(name);
    ok(&sim, &["apply", "-f", "deploy/crds/"]);
    apply_stdin(
        &sim,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openstack\n",
    );
    ok(
        &sim,
        &[
            "apply",
            "-f",
            "deploy/examples/barbican.yaml",
            "-f",
            "deploy/examples/barbicansecretstore-managed.yaml",
        ],
    );
    sim
}

#[test]
fn apply_and_get_show_the_printer_columns() {
    let sim = with_examples("get");
    let barbicans = ok(&sim, &["-n", "openstack", "get", "barbicans"]);
    let header: Vec<&str> = barbicans
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "READY", "RELEASE", "ENDPOINT", "AGE"]);
    assert!(
        barbicans.lines().nth(1).unwrap().starts_with("barbican "),
        "{barbicans}"
    );
    let stores = ok(&sim, &["-n", "openstack", "get", "barbicansecretstores"]);
    let header: Vec<&str> = stores.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "READY", "TYPE", "DEFAULT", "BARBICAN", "AGE"]
    );
    let row: Vec<&str> = stores.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[..4], ["openbao-primary", "OpenBao", "true", "barbican"]);

    let yaml = ok(
        &sim,
        &[
            "-n",
            "openstack",
            "get",
            "barbican",
            "barbican",
            "-o",
            "yaml",
        ],
    );
    assert!(
        yaml.contains("openStackRelease: \"2025.2\"")
            && yaml.contains("uid: ")
            && yaml.contains("resourceVersion: "),
        "{yaml}"
    );
    // Re-applying an unchanged manifest changes nothing.
    let again = ok(&sim, &["apply", "-f", "deploy/examples/barbican.yaml"]);
    assert!(again.contains("unchanged"), "{again}");
}

#[test]
fn patches_labels_and_conditions() {
    let sim = with_examples("patch");
    ok(
        &sim,
        &[
            "-n",
            "openstack",
            "patch",
            "barbican",
            "barbican",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"region":"RegionTwo"}}"#,
        ],
    );
    ok(
        &sim,
        &[
            "-n",
            "openstack",
            "patch",
            "barbican",
            "barbican",
            "--type",
            "json",
            "-p",
            r#"[{"op":"replace","path":"/spec/region","value":"RegionThree"}]"#,
        ],
    );
    let read = ok(
        &sim,
        &[
            "-n",
            "openstack",
            "get",
            "barbican",
            "barbican",
            "-o",
            "jsonpath={.spec.region} {.metadata.generation}",
        ],
    );
    assert_eq!(read.trim(), "RegionThree 3");
    ok(
        &sim,
        &[
            "-n",
            "openstack",
            "label",
            "barbican",
            "barbican",
            "tier=kms",
        ],
    );
    let selected = ok(
        &sim,
        &[
            "-n",
            "openstack",
            "get",
            "barbicans",
            "-l",
            "tier=kms",
            "-o",
            "name",
        ],
    );
    assert_eq!(
        selected.trim(),
        "barbican.barbican.openstack.c5c3.io/barbican"
    );
    assert!(
        ok(
            &sim,
            &[
                "-n",
                "openstack",
                "get",
                "barbicans",
                "-l",
                "tier=other",
                "-o",
                "name"
            ]
        )
        .trim()
        .is_empty()
    );

    ok(
        &sim,
        &[
            "-n",
            "openstack",
            "patch",
            "barbican",
            "barbican",
            "--subresource=status",
            "--type",
            "merge",
            "-p",
            r#"{"status":{"installedRelease":"2025.2","conditions":[{"type":"Ready","status":"True","reason":"AllReady","message":"ok","lastTransitionTime":"2026-11-29T00:00:00Z"}]}}"#,
        ],
    );
    let waited = ok(
        &sim,
        &[
            "-n",
            "openstack",
            "wait",
            "--for=condition=Ready",
            "barbican/barbican",
            "--timeout=10s",
        ],
    );
    assert!(waited.contains("condition met"), "{waited}");
    let row = ok(
        &sim,
        &["-n", "openstack", "get", "barbicans", "--no-headers"],
    );
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[..3], ["barbican", "True", "2025.2"]);
}

#[test]
fn delete_waits_for_finalizers() {
    let sim = with_examples("delete");
    ok(
        &sim,
        &[
            "-n",
            "openstack",
            "patch",
            "barbican",
            "barbican",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
        ],
    );
    ok(
        &sim,
        &[
            "-n",
            "openstack",
            "delete",
            "barbican",
            "barbican",
            "--wait=false",
        ],
    );
    let deleting = ok(
        &sim,
        &[
            "-n",
            "openstack",
            "get",
            "barbican",
            "barbican",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        ],
    );
    assert!(
        !deleting.trim().is_empty(),
        "the object stays, Terminating, while the finalizer holds it"
    );
    ok(
        &sim,
        &[
            "-n",
            "openstack",
            "patch",
            "barbican",
            "barbican",
            "--type",
            "merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ],
    );
    let (found, text) = kubectl(&sim, &["-n", "openstack", "get", "barbican", "barbican"]);
    assert!(!found && text.contains("NotFound"), "{text}");
}

#[test]
fn get_watch_streams_changes() {
    let sim = with_examples("watch");
    let mut watch = Command::new("kubectl")
        .args([
            "-n",
            "openstack",
            "get",
            "barbicans",
            "-w",
            "--no-headers",
            "--request-timeout=20s",
        ])
        .env("KUBECONFIG", &sim.kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("barbican "), "{first}");
    ok(
        &sim,
        &[
            "-n",
            "openstack",
            "patch",
            "barbican",
            "barbican",
            "--subresource=status",
            "--type",
            "merge",
            "-p",
            r#"{"status":{"installedRelease":"2025.2"}}"#,
        ],
    );
    let second = lines.next().unwrap().unwrap();
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(
        second.contains("2025.2"),
        "the watch printed the change: {second}"
    );
}

#[test]
fn protobuf_requests_get_a_clear_refusal() {
    let sim = start("protobuf");
    let (created, text) = kubectl(&sim, &["create", "namespace", "x"]);
    assert!(!created);
    assert!(
        text.contains("UnsupportedMediaType") && text.contains("the sim speaks JSON"),
        "{text}"
    );
}

#[test]
fn the_benchmark_prints_its_figures() {
    let output = Command::new(env!("CARGO_BIN_EXE_barbican-sim"))
        .args(["bench", "--objects", "200", "--watchers", "3"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    for figure in [
        "objects: 200  watchers: 3",
        "create: ",
        "update: ",
        "delete: ",
        "watch delivery latency: p50",
        "memory: ",
        "virtual clock: 24 h advanced with an every-minute CronJob in ",
        "(1440 runs, the last scheduled at 2026-01-02T00:00:00Z; 3 Jobs kept by the history limit)",
    ] {
        assert!(text.contains(figure), "missing {figure:?} in:\n{text}");
    }
}

#[test]
fn kubectl_patch_uses_strategic_merge_on_built_in_kinds() {
    let sim = start("strategic");
    apply_stdin(
        &sim,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  finalizers: [example.com/a]\ndata:\n  k: v\n",
    );
    // kubectl patch defaults to a strategic merge patch: the finalizer list merges.
    ok(
        &sim,
        &[
            "patch",
            "configmap",
            "c",
            "-p",
            r#"{"metadata":{"finalizers":["example.com/b"]}}"#,
        ],
    );
    let finalizers = ok(
        &sim,
        &[
            "get",
            "configmap",
            "c",
            "-o",
            "jsonpath={.metadata.finalizers}",
        ],
    );
    assert_eq!(finalizers.trim(), r#"["example.com/a","example.com/b"]"#);
    // Custom resources refuse it, as on a real cluster.
    ok(&sim, &["apply", "-f", "deploy/crds/"]);
    apply_stdin(
        &sim,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openstack\n",
    );
    ok(&sim, &["apply", "-f", "deploy/examples/barbican.yaml"]);
    let (patched, text) = kubectl(
        &sim,
        &[
            "-n",
            "openstack",
            "patch",
            "barbican",
            "barbican",
            "--type",
            "strategic",
            "-p",
            r#"{"spec":{"region":"R"}}"#,
        ],
    );
    assert!(
        !patched && text.contains("strategic merge patch is not supported for custom resources"),
        "{text}"
    );
}

#[test]
fn apply_server_side_twice_drops_the_field_left_out() {
    let sim = with_examples("server-side");
    let with_region = "apiVersion: barbican.openstack.c5c3.io/v1alpha1\nkind: BarbicanSecretStore\nmetadata:\n  name: vault-legacy\n  namespace: openstack\nspec:\n  barbicanRef:\n    name: barbican\n  type: OpenBao\n  extraOptions:\n    kv_version: \"2\"\n  openBao:\n    server:\n      url: https://vault.example.com:8200\n      credentialsSecretRef:\n        name: vault-approle\n";
    let path = std::env::temp_dir().join(format!("barbican-ssa-{}.yaml", std::process::id()));
    std::fs::write(&path, with_region).unwrap();
    let first = ok(
        &sim,
        &["apply", "--server-side", "-f", path.to_str().unwrap()],
    );
    assert!(first.contains("serverside-applied"), "{first}");
    let options = ok(
        &sim,
        &[
            "-n",
            "openstack",
            "get",
            "barbicansecretstore",
            "vault-legacy",
            "-o",
            "jsonpath={.spec.extraOptions}",
        ],
    );
    assert!(options.contains("kv_version"), "{options}");
    std::fs::write(
        &path,
        with_region.replace("  extraOptions:\n    kv_version: \"2\"\n", ""),
    )
    .unwrap();
    ok(
        &sim,
        &["apply", "--server-side", "-f", path.to_str().unwrap()],
    );
    let options = ok(
        &sim,
        &[
            "-n",
            "openstack",
            "get",
            "barbicansecretstore",
            "vault-legacy",
            "-o",
            "jsonpath={.spec.extraOptions}",
        ],
    );
    assert!(
        options.trim().is_empty(),
        "the field the manager stopped applying is gone: {options}"
    );
    let managers = ok(
        &sim,
        &[
            "-n",
            "openstack",
            "get",
            "barbicansecretstore",
            "vault-legacy",
            "-o",
            "jsonpath={.metadata.managedFields[*].manager}",
            "--show-managed-fields",
        ],
    );
    assert!(managers.contains("kubectl"), "{managers}");
}

#[test]
fn kubectl_shows_the_api_servers_invalid_message() {
    let sim = start("invalid");
    ok(&sim, &["apply", "-f", "deploy/crds/"]);
    apply_stdin(
        &sim,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openstack\n",
    );
    let path = std::env::temp_dir().join(format!("barbican-invalid-{}.yaml", std::process::id()));
    let example =
        std::fs::read_to_string(workspace().join("deploy/examples/barbican.yaml")).unwrap();
    std::fs::write(
        &path,
        example.replace(
            "openStackRelease: \"2025.2\"",
            "openStackRelease: \"2025.9\"",
        ),
    )
    .unwrap();
    let (applied, text) = kubectl(&sim, &["apply", "-f", path.to_str().unwrap()]);
    assert!(!applied);
    // kubectl rebuilds the message from the Status details, as it does for kube-apiserver.
    assert!(
        text.contains(
            "The Barbican \"barbican\" is invalid: spec.openStackRelease: Invalid value: \"2025.9\""
        ),
        "{text}"
    );
}
