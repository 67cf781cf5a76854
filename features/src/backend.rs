//! Where the scenarios run: the embedded sim (the default, one fresh simulated cluster per
//! scenario on a virtual clock), or a real Kubernetes API server named by a kubeconfig (kwok
//! or k3s through testcontainers, a kind cluster, any cluster you may write to).
//!
//! On a real API server the operator still runs in-process, and so do the fakes: the fake
//! controllers (mariadb-operator, External Secrets, the OpenBao operator, Gateway API) work
//! against the real API server, and the fakes that are processes (OpenBao, barbican's
//! `/healthcheck`) listen on the host, where the operator reaches them through the same
//! resolver seam as on the sim. Time is the wall clock.
//!
//! What only the sim can do is marked: scenarios tagged [`SIM_ONLY`] need the virtual clock,
//! the audit log, fault injection, outages or a second simulated cluster, and a real-cluster
//! run leaves them out. [`SIM_ONLY_STEPS`] lists the steps that make a scenario so; a test
//! checks every scenario using one carries the tag.

use std::{path::PathBuf, sync::OnceLock};

/// The tag of scenarios that need the sim.
pub const SIM_ONLY: &str = "sim-only";

/// The tag of scenarios that need real barbican processes: they run only on
/// [`Backend::RealBarbican`] (`features/tests/real_barbican.rs`).
pub const REAL_BARBICAN: &str = "real-barbican";

/// Where the scenarios of this process run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A fresh simulated cluster per scenario, on a virtual clock.
    Sim,
    /// The API server a kubeconfig names; scenarios run one at a time and clean up after
    /// themselves.
    Cluster {
        /// The kubeconfig file.
        kubeconfig: PathBuf,
        /// What it is, for messages (`kwok (testcontainers)`, `$BARBICAN_E2E_KUBECONFIG`).
        description: String,
        /// Where the operator runs: `None` in this process (as the chart's ServiceAccount),
        /// or as the chart's pods on a served sim whose control API is at this URL
        /// ([`INSTALLED_OPERATOR_VAR`]).
        installed_operator: Option<String>,
    },
    /// A fresh simulated cluster per scenario on the wall clock, whose kubelet runs the pods
    /// of the mapped images as real processes, with a real MariaDB behind the fake
    /// mariadb-operator and a fake Keystone: barbican itself in the loop.
    RealBarbican {
        /// Which images run from which roots.
        runtimes: Vec<barbican_sim::kubelet::Runtime>,
        /// Where each scenario keeps its pods and its MariaDB's data.
        state_dir: PathBuf,
    },
}

/// Overrides the runtimes of [`real_barbican_runtimes`]: `<image glob>=<root>,…`.
pub const RUNTIMES_VAR: &str = "BARBICAN_REAL_BARBICAN_RUNTIMES";

/// The runtimes barbican's pods run from on [`Backend::RealBarbican`]: `$BARBICAN_REAL_
/// BARBICAN_RUNTIMES`, else each release's catalog virtualenv with uwsgi in it
/// (`target/catalog-venvs/<release>`, made by `ci/conformance/run.py` and
/// `ci/install-real-barbican.sh`) for the images `ghcr.io/c5c3/barbican:<release>*`.
pub fn real_barbican_runtimes() -> Result<Vec<barbican_sim::kubelet::Runtime>, String> {
    if let Ok(text) = std::env::var(RUNTIMES_VAR) {
        return text.split(',').map(str::parse).collect();
    }
    let venvs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/catalog-venvs");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&venvs).into_iter().flatten().flatten() {
        let root = entry.path();
        if root.join("bin/uwsgi").is_file() {
            let release = entry.file_name().to_string_lossy().into_owned();
            found.push(barbican_sim::kubelet::Runtime {
                image: format!("ghcr.io/c5c3/barbican:{release}*"),
                root: root.canonicalize().unwrap_or(root),
                entrypoint: Vec::new(),
            });
        }
    }
    found.sort_by(|a, b| a.image.cmp(&b.image));
    if found.is_empty() {
        return Err(format!(
            "no virtualenv with uwsgi under {} (ci/install-real-barbican.sh makes them)",
            venvs.display()
        ));
    }
    found.extend(operator_runtime());
    found.extend(mariadb_client_runtime());
    Ok(found)
}

/// MariaDB's image (`docker.io/library/mariadb`), which the dump before a migration runs in
/// (`spec.dbBackup`), run from the distribution's client programs: its root is `/usr`, whose
/// `bin` holds `mariadb-dump` once `ci/install-mariadb.sh` installed the client. None without
/// it.
pub fn mariadb_client_runtime() -> Option<barbican_sim::kubelet::Runtime> {
    let usr = std::path::Path::new("/usr");
    usr.join("bin/mariadb-dump")
        .is_file()
        .then(|| barbican_sim::kubelet::Runtime {
            image: "docker.io/library/mariadb:*".into(),
            root: usr.to_path_buf(),
            entrypoint: Vec::new(),
        })
}

/// The chart's image, `ghcr.io/c5c3/barbican-operator`, run from the workspace's built
/// `barbican-operator` (beside the running binary, or one directory up from a test's
/// `deps/`) as its entrypoint: the operator as the chart installs it, with nothing but the
/// chart's arguments.
pub fn operator_runtime() -> Option<barbican_sim::kubelet::Runtime> {
    let me = std::env::current_exe().ok()?;
    let dir = me.parent()?;
    let binary = [dir, dir.parent()?]
        .into_iter()
        .map(|d| d.join("barbican-operator"))
        .find(|b| b.is_file())?
        .canonicalize()
        .ok()?;
    Some(barbican_sim::kubelet::Runtime {
        image: "ghcr.io/c5c3/barbican-operator:*".into(),
        root: binary.parent()?.to_path_buf(),
        entrypoint: vec![binary.display().to_string()],
    })
}

fn chosen() -> &'static OnceLock<Backend> {
    static BACKEND: OnceLock<Backend> = OnceLock::new();
    &BACKEND
}

/// Chooses the backend for this process, before the first scenario starts; the first choice
/// stands.
pub fn choose(backend: Backend) -> &'static Backend {
    let _ = chosen().set(backend);
    current()
}

/// The backend of this process: the sim unless [`choose`] said otherwise.
pub fn current() -> &'static Backend {
    chosen().get_or_init(|| Backend::Sim)
}

/// The environment variable naming a kubeconfig for the real-cluster run.
pub const KUBECONFIG_VAR: &str = "BARBICAN_E2E_KUBECONFIG";

/// The environment variable that says the cluster of [`KUBECONFIG_VAR`] already runs the
/// operator, installed with the chart (`helm install`, the README's command) on a
/// `barbican-sim serve --operator-pods` whose control API it names (`http://127.0.0.1:<port>`):
/// the harness then starts no operator of its own, and names the fakes it runs to that sim
/// (`PUT /services/peers`) so the operator's pods reach them as a cluster's DNS would.
pub const INSTALLED_OPERATOR_VAR: &str = "BARBICAN_E2E_INSTALLED_OPERATOR";

/// The tag of scenarios whose steps reach into the operator's process (its metrics registry,
/// a restart with other flags or another identity): left out where the operator runs as
/// installed pods. [`IN_PROCESS_STEPS`] lists those steps; a test checks the tags.
pub const IN_PROCESS_OPERATOR: &str = "in-process-operator";

/// The steps that need the sim, as their cucumber expressions: a scenario using one is tagged
/// [`SIM_ONLY`] (checked by a test), and on a real cluster the step fails saying so.
pub const SIM_ONLY_STEPS: &[&str] = &[
    // The virtual clock.
    "{int} minute(s) pass(es)",
    "for {int} minute(s) the {word} condition of the {word} {string} in {string} never reads {word}",
    "within {int} minute(s) the secret ID of the store {string} in {string} has changed",
    "within {int} minute(s) the pods of the Deployment {string} in {string} roll",
    "the mariadb-operator takes {int} minute(s) to tear a database down",
    // The audit log.
    "a full pass over the Barbican {string} in {string} writes nothing",
    "the operator converges on {string}",
    // A second, fresh simulated cluster to compare with.
    "the children in {string} equal a fresh install of what it holds",
    // The sim's services (an external OpenBao served under a name outside the cluster).
    "the edit-sequence prerequisites in {string}",
    // Fault injection and the simulated controllers.
    "the API server answers by the fault rule {string}",
    "the API server's fault rules are cleared",
    "Deployment rollouts matching {string} never finish",
    "Jobs follow the rule {string}",
    // A cluster without the Gateway API, and second simulated clusters.
    "a simulated cluster without the Gateway API and the operator running",
    "the target cluster {string} is running but not registered",
    "the target cluster {string} without the Gateway API is registered",
    "the target cluster {string} is registered",
    "the target cluster {string} is registered for the namespaces {string}",
];

/// The steps that read or restart the operator's process, as their cucumber expressions: a
/// scenario using one is tagged [`IN_PROCESS_OPERATOR`] (checked by a test), and where the
/// operator runs as installed pods the step fails saying so.
pub const IN_PROCESS_STEPS: &[&str] = &[
    "the operator restarts",
    "the operator has counted {int} db-sync Job(s) for the Barbican {string} in {string}",
    "the operator's metrics {word} series for the Barbican {string} in {string}",
    "the operator counted {int} proactive and {int} reactive re-mint(s) of the store {string} in {string}",
    "within {int} minute(s) the operator's metrics {word} re-mint series for the store {string} in {string}",
    "the operator's metric {string} with {string} reads {int}",
    // Its metrics registry and its captured log are among the places searched.
    "{string} appears nowhere in {string}",
    "no secret ID issued by any OpenBao appears in {string}",
];

/// A regular expression matching the step texts of a cucumber `expression` (`{int}`,
/// `{string}`, `{word}` and optional `(s)` parts).
pub fn step_pattern(expression: &str) -> String {
    let mut pattern = String::from("^");
    let mut rest = expression;
    while let Some(c) = rest.chars().next() {
        let (piece, len) = if rest.starts_with("{int}") {
            ("-?\\d+".to_string(), 5)
        } else if rest.starts_with("{string}") {
            ("\"[^\"]*\"".to_string(), 8)
        } else if rest.starts_with("{word}") {
            ("\\S+".to_string(), 6)
        } else if c == '(' {
            let end = rest.find(')').map_or(rest.len(), |e| e + 1);
            (format!("(?:{})?", escape(&rest[1..end - 1])), end)
        } else {
            (escape(&c.to_string()), c.len_utf8())
        };
        pattern.push_str(&piece);
        rest = &rest[len..];
    }
    pattern.push('$');
    pattern
}

fn escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                format!("\\{c}")
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A kubeconfig naming the API server at `server` (a URL), presenting `token` when given.
pub fn kubeconfig(server: &str, token: Option<&str>) -> String {
    kubeconfig_with_ca(server, token, None)
}

/// [`kubeconfig`], trusting the PEM `ca` (inline, as `certificate-authority-data`).
pub fn kubeconfig_with_ca(server: &str, token: Option<&str>, ca: Option<&str>) -> String {
    let user = token.map_or_else(|| "{}".to_string(), |t| format!("{{token: {t}}}"));
    // A ByteString serializes as base64, the encoding of `certificate-authority-data`.
    let ca = ca.map_or_else(String::new, |pem| {
        let encoded = serde_json::to_value(k8s_openapi::ByteString(pem.as_bytes().to_vec()))
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        format!(", certificate-authority-data: {encoded}")
    });
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: cluster\n  cluster: {{server: '{server}'{ca}}}\nusers:\n- name: user\n  user: {user}\ncontexts:\n- name: cluster\n  context: {{cluster: cluster, user: user, namespace: default}}\ncurrent-context: cluster\n"
    )
}

/// A client for the cluster `kubeconfig` names (its current context).
pub async fn client(kubeconfig: &std::path::Path) -> Result<kube::Client, String> {
    let config = config(kubeconfig).await?;
    kube::Client::try_from(config)
        .map_err(|e| format!("a client for {}: {e}", kubeconfig.display()))
}

/// A client for the cluster `kubeconfig` names that authenticates with the bearer `token`
/// instead of the kubeconfig's user (a ServiceAccount's, say), built as the operator's binary
/// builds its client: each request counted into `metrics`' `kube_requests_total` by verb,
/// resource and answer (so a 403 is seen).
pub async fn client_with_token(
    kubeconfig: &std::path::Path,
    token: &str,
    metrics: &barbican_operator::metrics::Metrics,
) -> Result<kube::Client, String> {
    let mut config = config(kubeconfig).await?;
    config.auth_info = kube::config::AuthInfo {
        token: Some(token.to_string().into()),
        ..Default::default()
    };
    let builder = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| format!("a client for {} with a token: {e}", kubeconfig.display()))?;
    Ok(builder.with_layer(&metrics.count_requests()).build())
}

/// The configuration of `kubeconfig`'s current context.
async fn config(kubeconfig: &std::path::Path) -> Result<kube::Config, String> {
    let parsed = kube::config::Kubeconfig::read_from(kubeconfig)
        .map_err(|e| format!("reading {}: {e}", kubeconfig.display()))?;
    kube::Config::from_custom_kubeconfig(parsed, &Default::default())
        .await
        .map_err(|e| format!("loading {}: {e}", kubeconfig.display()))
}

/// Creates each CustomResourceDefinition of `definitions` the cluster does not have yet (one
/// it has, such as the real Gateway API's, is left alone) and waits until all are
/// established.
pub async fn ensure_crds(
    client: &kube::Client,
    definitions: Vec<serde_json::Value>,
) -> Result<(), String> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let api: kube::Api<CustomResourceDefinition> = kube::Api::all(client.clone());
    let mut names = Vec::new();
    for definition in definitions {
        let crd: CustomResourceDefinition =
            serde_json::from_value(definition).map_err(|e| e.to_string())?;
        let name = crd.metadata.name.clone().unwrap_or_default();
        let present = api
            .get_opt(&name)
            .await
            .map_err(|e| format!("reading CRD {name}: {e}"))?;
        if present.is_none() {
            api.create(&Default::default(), &crd)
                .await
                .map_err(|e| format!("creating CRD {name}: {e}"))?;
        }
        names.push(name);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for name in names {
        loop {
            let crd = api
                .get(&name)
                .await
                .map_err(|e| format!("reading CRD {name}: {e}"))?;
            let established = crd
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            if established {
                break;
            }
            if std::time::Instant::now() > deadline {
                return Err(format!("CRD {name} is not established after 60s"));
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }
    Ok(())
}
