//! kubectl against `barbican-sim serve`: what a user types works as on a real cluster.
//! Needs kubectl on PATH (CI has 1.32); fails, rather than skips, without it.

use std::{
    io::{BufRead, BufReader},
    process::{Command, Stdio},
    time::Duration,
};

use crate::common::*;

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

/// `kubectl delete --dry-run=server` sends DeleteOptions with `dryRun: [All]`: the object is
/// reported deleted and stays.
#[test]
fn a_server_side_dry_run_delete_keeps_the_object() {
    let sim = start("delete-dry-run");
    apply_stdin(
        &sim,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kept, namespace: default}\ndata: {k: v}\n",
    );
    let said = ok(&sim, &["delete", "configmap", "kept", "--dry-run=server"]);
    assert!(said.contains("deleted (server dry run)"), "{said}");
    let (found, text) = kubectl(&sim, &["get", "configmap", "kept"]);
    assert!(found, "{text}");
}

/// Everyday commands: `kubectl scale` through the scale subresource, `kubectl get all`
/// through the `all` category, and the health checks.
#[test]
fn scale_get_all_and_the_health_checks_work() {
    let sim = start("scale");
    apply_stdin(
        &sim,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: busybox}]}\n",
    );
    let said = ok(&sim, &["scale", "deployment", "web", "--replicas=3"]);
    assert!(said.contains("scaled"), "{said}");
    let replicas = ok(
        &sim,
        &[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.replicas}",
        ],
    );
    assert_eq!(replicas.trim(), "3");
    let all = ok(&sim, &["get", "all", "-n", "default"]);
    assert!(all.contains("deployment.apps/web"), "{all}");
    let ready = ok(&sim, &["get", "--raw", "/readyz"]);
    assert_eq!(ready.trim(), "ok");
}

/// The workloads, CertificateSigningRequests and ephemeral containers the clients' own
/// cluster tests use: DaemonSets, StatefulSets and ReplicationControllers are stored, printed
/// with kube-apiserver's columns, listed by `get all` and scaled; `kubectl certificate
/// approve` writes the CSR's conditions through `approval`; `kubectl debug` adds an ephemeral
/// container through `ephemeralcontainers`; and a built-in object is written kind first.
#[test]
fn workloads_csr_approval_ephemeral_containers_and_key_order() {
    let sim = start("workloads");
    let template = "  selector: {matchLabels: {app: w}}\n  template:\n    metadata: {labels: {app: w}}\n    spec: {containers: [{name: c, image: busybox}]}\n";
    apply_stdin(
        &sim,
        &format!(
            "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: ds, namespace: default}}\nspec:\n{template}---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: sts, namespace: default}}\nspec:\n  replicas: 1\n  serviceName: sts\n{template}---\napiVersion: v1\nkind: ReplicationController\nmetadata: {{name: rc, namespace: default}}\nspec:\n  replicas: 1\n  selector: {{app: w}}\n  template:\n    metadata: {{labels: {{app: w}}}}\n    spec: {{containers: [{{name: c, image: busybox}}]}}\n"
        ),
    );
    let ds = ok(&sim, &["get", "ds", "ds"]);
    assert!(
        ds.contains("DESIRED") && ds.contains("NODE SELECTOR"),
        "{ds}"
    );
    assert!(ok(&sim, &["scale", "sts", "sts", "--replicas=2"]).contains("scaled"));
    assert!(ok(&sim, &["scale", "rc", "rc", "--replicas=3"]).contains("scaled"));
    let rc = ok(&sim, &["get", "rc", "rc"]);
    assert!(
        rc.lines()
            .any(|l| l.starts_with("rc ") && l.contains(" 3 ")),
        "{rc}"
    );
    let sts = ok(
        &sim,
        &["get", "sts", "sts", "-o", "jsonpath={.spec.replicas}"],
    );
    assert_eq!(sts.trim(), "2");
    let all = ok(&sim, &["get", "all", "-n", "default"]);
    for name in [
        "daemonset.apps/ds",
        "statefulset.apps/sts",
        "replicationcontroller/rc",
    ] {
        assert!(all.contains(name), "{name} missing from: {all}");
    }

    apply_stdin(
        &sim,
        "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: csr}\nspec:\n  request: QUFB\n  signerName: example.com/signer\n  usages: [client auth]\n",
    );
    assert!(ok(&sim, &["get", "csr", "csr"]).contains("Pending"));
    let approved = ok(&sim, &["certificate", "approve", "csr"]);
    assert!(approved.contains("approved"), "{approved}");
    let csr = ok(&sim, &["get", "csr", "csr"]);
    assert!(
        csr.contains("Approved") && csr.contains("example.com/signer"),
        "{csr}"
    );

    apply_stdin(
        &sim,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, image: busybox}]}\n",
    );
    ok(
        &sim,
        &["debug", "p", "--image=busybox", "--container=debugger"],
    );
    let ephemeral = ok(
        &sim,
        &[
            "get",
            "pod",
            "p",
            "-o",
            "jsonpath={.spec.ephemeralContainers[0].name}",
        ],
    );
    assert_eq!(ephemeral.trim(), "debugger");
    let image = ok(
        &sim,
        &[
            "get",
            "pod",
            "p",
            "-o",
            "jsonpath={.spec.containers[0].image}",
        ],
    );
    assert_eq!(image.trim(), "busybox");

    // kube-apiserver writes a built-in kind from its Go struct: kind, apiVersion, metadata.
    let raw = ok(&sim, &["get", "--raw", "/api/v1/namespaces/default/pods/p"]);
    assert!(
        raw.starts_with(r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","#),
        "{raw}"
    );
}

/// `kubectl rollout history` lists a Deployment's revisions from the ReplicaSets it controls,
/// `kubectl rollout undo` brings the previous template back, and `kubectl get rs` prints
/// kube-apiserver's ReplicaSet columns.
#[test]
fn rollout_history_and_undo_work_on_the_replica_sets() {
    let sim = start("rollout");
    apply_stdin(
        &sim,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: busybox:1}]}\n",
    );
    ok(&sim, &["set", "image", "deployment/web", "c=busybox:2"]);
    let history = eventually(&sim, &["rollout", "history", "deployment/web"], "2 ");
    assert!(history.contains("REVISION"), "{history}");
    assert!(
        history.lines().any(|l| l.trim_start().starts_with("1 ")),
        "{history}"
    );
    let undone = ok(&sim, &["rollout", "undo", "deployment/web"]);
    assert!(undone.contains("rolled back"), "{undone}");
    let image = ok(
        &sim,
        &[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ],
    );
    assert_eq!(image.trim(), "busybox:1");
    // The first template came back as revision 3: history lists 2 and 3.
    let history = eventually(&sim, &["rollout", "history", "deployment/web"], "3 ");
    assert!(
        !history.lines().any(|l| l.trim_start().starts_with("1 ")),
        "{history}"
    );
    let sets = ok(&sim, &["get", "rs"]);
    let header: Vec<&str> = sets
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "DESIRED", "CURRENT", "READY", "AGE"],
        "{sets}"
    );
    assert!(
        sets.lines()
            .any(|l| l.starts_with("web-") && l.contains(" 2 ")),
        "{sets}"
    );
}

/// `kubectl get` on the built-in kinds prints the columns kube-apiserver's printers print
/// (`pkg/printers/internalversion`), not only NAME and AGE.
#[test]
fn get_prints_kube_apiservers_columns_for_built_in_kinds() {
    let sim = start("columns");
    apply_stdin(
        &sim,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: busybox}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec: {selector: {app: web}, ports: [{port: 9311}]}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: conf, namespace: default}\ndata: {a: '1', b: '2'}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: default}\nstringData: {password: x}\n---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: clean, namespace: default}\nspec:\n  schedule: '1 0 * * *'\n  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: default}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: web}}}\n---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: web, namespace: default}\nspec: {podSelector: {matchLabels: {app: web}}}\n",
    );
    let header = |args: &[&str]| -> Vec<String> {
        let out = ok(&sim, args);
        out.lines()
            .next()
            .unwrap_or_default()
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect()
    };
    for (kind, expected) in [
        (
            "deployments",
            &["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"][..],
        ),
        (
            "services",
            &[
                "NAME",
                "TYPE",
                "CLUSTER-IP",
                "EXTERNAL-IP",
                "PORT(S)",
                "AGE",
            ],
        ),
        ("configmaps", &["NAME", "DATA", "AGE"]),
        ("secrets", &["NAME", "TYPE", "DATA", "AGE"]),
        (
            "cronjobs",
            &[
                "NAME",
                "SCHEDULE",
                "TIMEZONE",
                "SUSPEND",
                "ACTIVE",
                "LAST SCHEDULE",
                "AGE",
            ],
        ),
        (
            "poddisruptionbudgets",
            &[
                "NAME",
                "MIN AVAILABLE",
                "MAX UNAVAILABLE",
                "ALLOWED DISRUPTIONS",
                "AGE",
            ],
        ),
        ("networkpolicies", &["NAME", "POD-SELECTOR", "AGE"]),
        ("namespaces", &["NAME", "STATUS", "AGE"]),
        ("customresourcedefinitions", &["NAME", "CREATED AT"]),
    ] {
        assert_eq!(header(&["get", kind, "-n", "default"]), expected, "{kind}");
    }
    let service = ok(
        &sim,
        &["get", "service", "web", "-n", "default", "--no-headers"],
    );
    assert!(
        service.contains("ClusterIP") && service.contains("9311/TCP"),
        "{service}"
    );
    let conf = ok(
        &sim,
        &["get", "configmap", "conf", "-n", "default", "--no-headers"],
    );
    assert_eq!(conf.split_whitespace().nth(1), Some("2"), "{conf}");
    let wide = header(&["get", "deployments", "-n", "default", "-o", "wide"]);
    assert_eq!(wide[5..], ["CONTAINERS", "IMAGES", "SELECTOR"], "{wide:?}");
}

/// `kubectl explain` walks the built-in kinds' OpenAPI v3 schemas (k8s-openapi's, under
/// kube-apiserver's definition names) as it walks the CRDs'; a Deployment applied without
/// `strategy` reads back with kube-apiserver's defaults; a new namespace has its `default`
/// ServiceAccount and `default/kubernetes` the API server's address.
#[test]
fn explain_defaults_and_the_bootstrap_objects_are_kube_apiservers() {
    let sim = start("explain");
    let image = ok(&sim, &["explain", "pods.spec.containers.image"]);
    assert!(image.contains("FIELD: image <string>"), "{image}");
    assert!(image.contains("Container image name"), "{image}");
    let strategy = ok(&sim, &["explain", "deployments.spec.strategy"]);
    assert!(
        strategy.contains("rollingUpdate\t<RollingUpdateDeployment>"),
        "{strategy}"
    );
    apply_stdin(
        &sim,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: busybox}]}\n",
    );
    let defaulted = ok(
        &sim,
        &[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.strategy.type} {.spec.revisionHistoryLimit} {.spec.template.spec.containers[0].imagePullPolicy}",
        ],
    );
    assert_eq!(defaulted.trim(), "RollingUpdate 10 Always");
    let accounts = ok(
        &sim,
        &["get", "serviceaccounts", "-n", "kube-system", "-o", "name"],
    );
    assert!(accounts.contains("serviceaccount/default"), "{accounts}");
    let kubernetes = ok(
        &sim,
        &[
            "get",
            "service",
            "kubernetes",
            "-o",
            "jsonpath={.spec.clusterIP}",
        ],
    );
    assert_eq!(kubernetes.trim(), "10.96.0.1");
    let roles = ok(&sim, &["get", "clusterroles", "-o", "name"]);
    for role in ["cluster-admin", "admin", "edit", "view"] {
        assert!(
            roles.contains(&format!("clusterrole.rbac.authorization.k8s.io/{role}\n")),
            "{roles}"
        );
    }
    // Deprecated, still served: kube-rs's event recorder test reads `scheduler`.
    let components = ok(&sim, &["get", "componentstatuses", "-o", "name"]);
    for component in ["scheduler", "controller-manager", "etcd-0"] {
        assert!(
            components.contains(&format!("componentstatus/{component}\n")),
            "{components}"
        );
    }
}

/// `serve` started outside the repository, without `--crds`, installs the operator's CRDs
/// built into the binary (it exited before: `deploy/crds` is a relative path).
#[test]
fn serve_outside_the_repository_installs_the_operators_own_crds() {
    let elsewhere =
        std::env::temp_dir().join(format!("barbican-sim-elsewhere-{}", std::process::id()));
    std::fs::create_dir_all(&elsewhere).unwrap();
    let sim = launch("elsewhere", |serve| {
        serve.current_dir(&elsewhere);
    });
    let crds = ok(&sim, &["get", "crds", "-o", "name"]);
    for name in [
        "barbicans.barbican.openstack.c5c3.io",
        "barbicansecretstores.barbican.openstack.c5c3.io",
    ] {
        assert!(crds.contains(name), "{crds}");
    }
    let _ = std::fs::remove_dir_all(&elsewhere);
}

/// kubectl validates strictly by default: a field the type does not declare is refused with
/// kube-apiserver's message; `--validate=warn` stores the object without it and warns.
#[test]
fn kubectl_apply_refuses_an_undeclared_field_unless_asked_to_warn() {
    let sim = start("field-validation");
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typo, namespace: default}\ndatum: {k: v}\n";
    let (applied, said) = try_apply_stdin(&sim, manifest);
    assert!(
        !applied
            && said.contains(
                "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"datum\""
            ),
        "{said}"
    );
    let mut child = kubectl_command(&sim.kubeconfig)
        .args(["apply", "--validate=warn", "-f", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), manifest.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let warned = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{warned}");
    assert!(warned.contains("unknown field \"datum\""), "{warned}");
    let stored = ok(
        &sim,
        &["get", "configmap", "typo", "-o", "jsonpath={.datum}"],
    );
    assert!(
        stored.trim().is_empty(),
        "the undeclared field is not stored: {stored}"
    );
}

#[test]
fn get_watch_streams_changes() {
    let sim = with_examples("watch");
    let mut watch = kubectl_command(&sim.kubeconfig)
        .args([
            "-n",
            "openstack",
            "get",
            "barbicans",
            "-w",
            "--no-headers",
            "--request-timeout=20s",
        ])
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

/// kubectl's generators send protobuf bodies (kube-apiserver reads them for built-in kinds):
/// each creates what it names, and the kinds the sim does not read as protobuf are refused
/// with a 415 that says to send JSON.
#[test]
fn kubectls_generators_send_protobuf_and_create_what_they_name() {
    let sim = start("protobuf");
    // kubectl asks for protobuf first; the sim answers a Namespace in it, and kubectl reads
    // the answer (a malformed one fails the command).
    let created = ok(&sim, &["create", "namespace", "tenant", "-v=8"]);
    let answer = created
        .split("Response Status: 201")
        .nth(1)
        .unwrap_or_default();
    assert!(
        answer.contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "{created}"
    );
    assert!(created.contains("namespace/tenant created"), "{created}");
    ok(
        &sim,
        &[
            "create",
            "configmap",
            "c",
            "-n",
            "tenant",
            "--from-literal=k=v",
        ],
    );
    ok(
        &sim,
        &[
            "create",
            "secret",
            "generic",
            "s",
            "-n",
            "tenant",
            "--from-literal=password=pw",
        ],
    );
    ok(&sim, &["create", "serviceaccount", "robot", "-n", "tenant"]);
    ok(
        &sim,
        &[
            "create",
            "role",
            "reader",
            "-n",
            "tenant",
            "--verb=get,list",
            "--resource=configmaps",
        ],
    );
    ok(
        &sim,
        &[
            "create",
            "rolebinding",
            "robot-reads",
            "-n",
            "tenant",
            "--role=reader",
            "--serviceaccount=tenant:robot",
        ],
    );
    ok(
        &sim,
        &[
            "create",
            "clusterrole",
            "viewer",
            "--verb=get",
            "--resource=pods",
        ],
    );
    ok(
        &sim,
        &[
            "create",
            "clusterrolebinding",
            "alice-views",
            "--clusterrole=viewer",
            "--user=alice",
        ],
    );
    let user = ok(
        &sim,
        &[
            "get",
            "clusterrolebinding",
            "alice-views",
            "-o",
            "jsonpath={.subjects[0].name}",
        ],
    );
    assert_eq!(user.trim(), "alice");
    let data = ok(
        &sim,
        &["get", "cm", "c", "-n", "tenant", "-o", "jsonpath={.data.k}"],
    );
    assert_eq!(data.trim(), "v");
    let password = ok(
        &sim,
        &[
            "get",
            "secret",
            "s",
            "-n",
            "tenant",
            "-o",
            "jsonpath={.data.password}",
        ],
    );
    assert_eq!(password.trim(), "cHc=");
    let rule = ok(
        &sim,
        &[
            "get",
            "role",
            "reader",
            "-n",
            "tenant",
            "-o",
            "jsonpath={.rules[0].verbs}",
        ],
    );
    assert_eq!(rule.trim(), r#"["get","list"]"#);
    let subject = ok(
        &sim,
        &[
            "get",
            "rolebinding",
            "robot-reads",
            "-n",
            "tenant",
            "-o",
            "jsonpath={.subjects[0].name}",
        ],
    );
    assert_eq!(subject.trim(), "robot");
    let token = ok(&sim, &["create", "token", "robot", "-n", "tenant"]);
    assert_eq!(token.trim().split('.').count(), 3, "{token}");
    // The administrator's own reviews: can-i and whoami post protobuf too.
    let can = ok(&sim, &["auth", "can-i", "create", "pods", "-n", "tenant"]);
    assert_eq!(can.trim(), "yes");
    let whoami = ok(&sim, &["auth", "whoami"]);
    assert!(whoami.contains("Username"), "{whoami}");
    // The workload generators.
    ok(
        &sim,
        &[
            "create",
            "deployment",
            "web",
            "-n",
            "tenant",
            "--image=busybox:1",
            "--replicas=2",
            "--port=8080",
        ],
    );
    ok(
        &sim,
        &[
            "create",
            "job",
            "once",
            "-n",
            "tenant",
            "--image=busybox",
            "--",
            "true",
        ],
    );
    ok(
        &sim,
        &[
            "create",
            "cronjob",
            "nightly",
            "-n",
            "tenant",
            "--image=busybox",
            "--schedule=0 1 * * *",
            "--",
            "true",
        ],
    );
    ok(
        &sim,
        &[
            "create",
            "service",
            "clusterip",
            "web",
            "-n",
            "tenant",
            "--tcp=80:8080",
        ],
    );
    let get = |args: &[&str]| ok(&sim, args).trim().to_string();
    assert_eq!(
        get(&[
            "get",
            "deploy",
            "web",
            "-n",
            "tenant",
            "-o",
            "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].ports[0].containerPort}"
        ]),
        "2 busybox:1 8080"
    );
    assert_eq!(
        get(&[
            "get",
            "job",
            "once",
            "-n",
            "tenant",
            "-o",
            "jsonpath={.spec.template.spec.restartPolicy} {.spec.template.spec.containers[0].command}"
        ]),
        r#"Never ["true"]"#
    );
    assert_eq!(
        get(&[
            "get",
            "cronjob",
            "nightly",
            "-n",
            "tenant",
            "-o",
            "jsonpath={.spec.schedule}"
        ]),
        "0 1 * * *"
    );
    assert_eq!(
        get(&[
            "get",
            "svc",
            "web",
            "-n",
            "tenant",
            "-o",
            "jsonpath={.spec.ports[0].port} {.spec.ports[0].targetPort} {.spec.selector.app}"
        ]),
        "80 8080 web"
    );
    // The other generators: a budget keeps its zero, a class its zero value, an ingress its
    // rules (whose `http` Go embeds), a quota its quantities; each prints its columns.
    for args in [
        &[
            "create",
            "pdb",
            "p",
            "--selector=app=web",
            "--min-available=0",
        ][..],
        &[
            "create",
            "quota",
            "q",
            "--hard=pods=3,limits.cpu=2",
            "--scopes=NotTerminating",
        ],
        &[
            "create",
            "ingress",
            "i",
            "--class=nginx",
            "--rule=foo.com/bar=web:8080,tls=web-cert",
            "--default-backend=web:http",
        ],
    ] {
        ok(&sim, &[args, &["-n", "tenant"][..]].concat());
    }
    ok(
        &sim,
        &[
            "create",
            "priorityclass",
            "idle",
            "--value=0",
            "--preemption-policy=Never",
        ],
    );
    assert_eq!(
        get(&["get", "pdb", "p", "-n", "tenant", "-o", "jsonpath={.spec}"]),
        r#"{"minAvailable":0,"selector":{"matchLabels":{"app":"web"}}}"#
    );
    assert_eq!(
        get(&[
            "get",
            "pc",
            "idle",
            "-o",
            "jsonpath={.value} {.preemptionPolicy}"
        ]),
        "0 Never"
    );
    assert_eq!(
        get(&[
            "get",
            "quota",
            "q",
            "-n",
            "tenant",
            "-o",
            "jsonpath={.spec}"
        ]),
        r#"{"hard":{"limits.cpu":"2","pods":"3"},"scopes":["NotTerminating"]}"#
    );
    assert_eq!(
        get(&[
            "get",
            "ingress",
            "i",
            "-n",
            "tenant",
            "-o",
            "jsonpath={.spec}"
        ]),
        r#"{"defaultBackend":{"service":{"name":"web","port":{"name":"http"}}},"ingressClassName":"nginx","rules":[{"host":"foo.com","http":{"paths":[{"backend":{"service":{"name":"web","port":{"number":8080}}},"path":"/bar","pathType":"Exact"}]}}],"tls":[{"hosts":["foo.com"],"secretName":"web-cert"}]}"#
    );
    // `kubectl autoscale` writes autoscaling/v1; kubectl reads the preferred v2, one storage.
    ok(
        &sim,
        &[
            "autoscale",
            "deployment",
            "web",
            "--max=3",
            "--cpu-percent=70",
            "-n",
            "tenant",
        ],
    );
    let at = |resource: &str, path: &str| {
        get(&[
            "get",
            resource,
            "web",
            "-n",
            "tenant",
            "-o",
            &format!("jsonpath={{.apiVersion}} {path}"),
        ])
    };
    assert_eq!(
        at(
            "hpa",
            "{.spec.metrics[0].resource.target.averageUtilization}"
        ),
        "autoscaling/v2 70"
    );
    assert_eq!(
        at(
            "horizontalpodautoscalers.v1.autoscaling",
            "{.spec.targetCPUUtilizationPercentage}"
        ),
        "autoscaling/v1 70"
    );
    // A Job run now from a CronJob with a hardened pod template (projected volumes, mounts,
    // env from Secrets, probes, hooks, security contexts), as an operator runs db-clean by
    // hand: kubectl sends the template in protobuf, and the Job carries it unchanged.
    apply_stdin(&sim, include_str!("hardened-cronjob.yaml"));
    ok(
        &sim,
        &[
            "create",
            "job",
            "now",
            "--from=cronjob/clean",
            "-n",
            "tenant",
        ],
    );
    let template = |kind: &str, name: &str, path: &str| -> serde_json::Value {
        let text = get(&[
            "get",
            kind,
            name,
            "-n",
            "tenant",
            "-o",
            &format!("jsonpath={path}"),
        ]);
        serde_json::from_str(&text).unwrap()
    };
    let from_cronjob = template("cronjob", "clean", "{.spec.jobTemplate.spec.template.spec}");
    assert!(
        from_cronjob["volumes"][0]["projected"].is_object(),
        "{from_cronjob}"
    );
    assert_eq!(
        template("job", "now", "{.spec.template.spec}"),
        from_cronjob
    );
    let ingress = get(&["get", "ingress", "i", "-n", "tenant"]);
    assert!(
        ingress.contains("CLASS") && ingress.contains("nginx") && ingress.contains("80, 443"),
        "{ingress}"
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
        !patched
            && text.contains(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json"
            ),
        "{text}"
    );
}

#[test]
fn apply_server_side_twice_drops_the_field_left_out() {
    let sim = with_examples("server-side");
    let with_region = "apiVersion: barbican.openstack.c5c3.io/v1alpha1\nkind: BarbicanSecretStore\nmetadata:\n  name: vault-legacy\n  namespace: openstack\nspec:\n  barbicanRef:\n    name: barbican\n  type: OpenBao\n  extraOptions:\n    kv_version: \"2\"\n  openBao:\n    server:\n      url: https://vault.example.com:8200\n      credentialsSecretRef:\n        name: vault-approle\n";
    // In the sim's own directory, which it removes when it is dropped.
    let path = sim.kubeconfig.with_file_name("server-side.yaml");
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
    // In the sim's own directory, which it removes when it is dropped.
    let path = sim.kubeconfig.with_file_name("invalid.yaml");
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

/// A free loopback port (bound, read, released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP/1.1 exchange with the control API; returns (status, body).
fn control(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: sim\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or("");
    (status, body.to_string())
}

fn eventually(sim: &Sim, args: &[&str], expected: &str) -> String {
    let mut last = String::new();
    for _ in 0..200 {
        let (_, text) = kubectl(sim, args);
        if text.contains(expected) {
            return text;
        }
        last = text;
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!(
        "kubectl {} never showed {expected:?}; last: {last}",
        args.join(" ")
    );
}

#[test]
fn serve_flags_set_the_controllers_and_faults_and_the_control_api_changes_them() {
    let port = free_port();
    let port_text = port.to_string();
    let sim = start_with(
        "flags",
        &[
            "--fault",
            "verb=create,resource=configmaps,code=503,times=1",
            "--job-rule",
            "name=*-fails:fail",
            "--control-port",
            &port_text,
        ],
    );
    let map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n";
    let (created, text) = try_apply_stdin(&sim, map);
    assert!(
        !created && text.contains("the server is currently unable to handle the request"),
        "{text}"
    );
    apply_stdin(&sim, map);

    let job = |name: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: run\n        image: busybox\n"
        )
    };
    apply_stdin(&sim, &job("db-sync-fails"));
    apply_stdin(&sim, &job("db-sync"));
    eventually(
        &sim,
        &[
            "get",
            "job",
            "db-sync-fails",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Failed\")].reason}",
        ],
        "BackoffLimitExceeded",
    );
    eventually(
        &sim,
        &[
            "get",
            "job",
            "db-sync",
            "-o",
            "jsonpath={.status.succeeded}",
        ],
        "1",
    );
    apply_stdin(
        &sim,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: api}\n  template:\n    metadata:\n      labels: {app: api}\n    spec:\n      containers:\n      - name: api\n        image: barbican\n",
    );
    eventually(
        &sim,
        &[
            "get",
            "deployment",
            "api",
            "-o",
            "jsonpath={.status.availableReplicas}",
        ],
        "2",
    );

    assert_eq!(
        control(port, "POST", "/faults", "verb=list,resource=pods,code=500").0,
        201
    );
    let (status, rules) = control(port, "GET", "/faults", "");
    assert_eq!(status, 200);
    assert!(
        rules.contains("verb=list,resource=pods,code=500"),
        "{rules}"
    );
    let (listed, text) = kubectl(&sim, &["get", "pods"]);
    assert!(!listed && text.contains("injected by the sim"), "{text}");
    control(port, "DELETE", "/faults", "");
    ok(&sim, &["get", "pods"]);

    let (status, text) = control(port, "POST", "/faults", "verb=explode,code=500");
    assert_eq!(status, 400);
    assert!(text.contains("allowed verbs are"), "{text}");

    // The names a harness's fakes stand in for, as the kubelet's pods would reach them.
    let (status, text) = control(
        port,
        "PUT",
        "/services/peers",
        "openbao.openstack.svc:8200 127.0.0.1:41003\n",
    );
    assert_eq!(
        (status, text.as_str()),
        (200, "1 name(s) now reach the peer's listeners\n")
    );
    let (status, text) = control(port, "PUT", "/services/peers", "openbao 127.0.0.1:1\n");
    assert_eq!(status, 400);
    assert!(
        text.contains("is not `<host>:<port> <address>:<port>`"),
        "{text}"
    );

    control(port, "POST", "/outage/start", "");
    let (up, text) = kubectl(&sim, &["get", "namespaces", "--request-timeout=2s"]);
    assert!(!up && text.contains("was refused"), "{text}");
    control(port, "POST", "/outage/end", "");
    eventually(&sim, &["get", "namespaces"], "kube-system");

    let (status, text) = control(port, "POST", "/clock/advance?seconds=60", "");
    assert_eq!(status, 409, "serve runs on wall time: {text}");
}

#[test]
fn bad_serve_flags_name_what_is_allowed() {
    for (flag, value, says) in [
        ("--fault", "verb=explode,code=500", "allowed verbs are"),
        (
            "--controllers",
            "deployments,kubelet",
            "allowed are all, none",
        ),
        ("--job-rule", "*:explode", "complete or fail"),
        ("--rollout-delay", "soon", "ms, s or m"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_barbican-sim"))
            .args(["serve", flag, value])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{flag} {value}");
        assert!(text.contains(says), "{flag} {value}: {text}");
    }
}

#[test]
fn serve_with_fakes_runs_the_third_party_controllers() {
    let sim = start_with("with-fakes", &["--with-fakes"]);
    apply_stdin(
        &sim,
        "apiVersion: openbao.org/v1alpha1\nkind: OpenBaoCluster\nmetadata:\n  name: openbao\nspec:\n  replicas: 1\n---\napiVersion: k8s.mariadb.com/v1alpha1\nkind: Database\nmetadata:\n  name: barbican\nspec:\n  mariaDbRef: {name: mariadb}\n",
    );
    eventually(
        &sim,
        &[
            "get",
            "openbaocluster",
            "openbao",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Available\")].status}",
        ],
        "True",
    );
    eventually(
        &sim,
        &["get", "secret", "openbao-tls-ca", "-o", "name"],
        "secret/openbao-tls-ca",
    );
    eventually(
        &sim,
        &["get", "serviceaccount", "openbao-provisioner", "-o", "name"],
        "openbao-provisioner",
    );
    eventually(
        &sim,
        &[
            "get",
            "database",
            "barbican",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}",
        ],
        "True",
    );
    eventually(
        &sim,
        &["get", "crds", "-o", "name"],
        "httproutes.gateway.networking.k8s.io",
    );

    let plain = start("without-fakes");
    let (listed, text) = kubectl(&plain, &["get", "openbaoclusters"]);
    assert!(
        !listed && text.contains("the server doesn't have a resource type"),
        "{text}"
    );
}

/// With the fakes the served cluster is a whole install: a Barbican the spec forbids is refused
/// by the chart's validating webhook with its message, and a valid one gets the defaults.
#[test]
fn serve_with_fakes_admits_through_the_charts_webhooks() {
    let sim = start_with("with-fakes-admission", &["--with-fakes"]);
    let barbican = |name: &str, extra: &str| {
        format!(
            "apiVersion: barbican.openstack.c5c3.io/v1alpha1\nkind: Barbican\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  openStackRelease: \"2025.2\"\n  image: {{repository: ghcr.io/c5c3/barbican, tag: \"2025.2\"}}\n  database: {{clusterRef: {{name: mariadb}}, database: barbican, secretRef: {{name: barbican-db}}}}\n  cache: {{clusterRef: {{name: memcached}}}}\n  keystoneEndpoint: http://keystone.default.svc:5000/v3\n  serviceUser: {{secretRef: {{name: barbican-keystone}}}}\n{extra}"
        )
    };
    let (applied, text) = try_apply_stdin(
        &sim,
        &barbican(
            "refused",
            "  deployment: {priorityClassName: no-such-class}\n",
        ),
    );
    assert!(!applied, "a missing PriorityClass is refused");
    assert!(
        text.contains("admission webhook \"vbarbican.openstack.c5c3.io\" denied the request")
            && text.contains("spec.deployment.priorityClassName"),
        "{text}"
    );
    apply_stdin(&sim, &barbican("admitted", ""));
    let (_, backend) = kubectl(
        &sim,
        &[
            "get",
            "barbican",
            "admitted",
            "-o",
            "jsonpath={.spec.cache.backend}",
        ],
    );
    assert_eq!(
        backend, "dogpile.cache.pymemcache",
        "the defaulting webhook ran"
    );
}
