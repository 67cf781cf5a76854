//! The admission corpus (`tests/corpus/admission/*.yaml`, described in its README) as data:
//! the cases, the objects they describe, and the judgement of an outcome. The same cases replay
//! against the pure admission functions, through the sim's admission chain with kube::Client,
//! and with kubectl; each replay only says how to obtain an [`Outcome`].

use std::{collections::BTreeMap, path::PathBuf};

use barbican_operator::{
    admission::lookups::KnownState,
    api::fixtures::{managed_store, minimal_barbican, with_spec},
};
use serde_json::{Value, json};

/// Every rule the corpus must cover with an accepted and a rejected case, by kind.
pub const BARBICAN_RULES: &[&str] = &[
    "name-length",
    "replicas",
    "image-tag-xor-digest",
    "database-exclusivity",
    "dynamic-requires-cluster-ref",
    "cache-exclusivity",
    "cache-control-characters",
    "secret-store-ref",
    "keystone-endpoint-url",
    "keystone-public-endpoint-url",
    "identity-line-breaks",
    "region-line-break",
    "gateway-hostname-line-break",
    "logging-enums",
    "audit",
    "audit-transport",
    "tls-source",
    "tls-names",
    "keystone-catalog",
    "db-backup",
    "logging-per-logger-levels",
    "pre-stop-within-grace",
    "harakiri-within-drain-window",
    "keepalive-timeout-pairing",
    "recreate-without-rolling-update",
    "autoscaling-targets",
    "autoscaling-bounds",
    "network-policy-ingress",
    "gateway-names",
    "requests-within-limits",
    "priority-class-exists",
    "topology-spread-selectors",
    "policy-rules",
    "db-clean-retention",
    "db-clean-schedule",
    "target-cluster-ref-immutable",
    "extra-config-names",
    "extra-config-syntax",
    "plugin-sections",
    "middleware-filters",
    "extra-config-line-breaks",
    "extra-config-rejected-keys",
    "extra-config-catalog",
    "extra-config-catalog-on-update",
    "deleting-finalizer-release",
    "extra-config-credential-spellings",
    "plugin-credentials",
    "config-size-bounds",
    "config-code-execution",
    "config-grammar",
    "config-code-by-name",
    "number-ceilings",
    "config-credential-destination",
    "config-secret-options",
];

/// The same for BarbicanSecretStore.
pub const STORE_RULES: &[&str] = &[
    "store-name-length",
    "store-reserved-names",
    "store-type-union",
    "store-mode-union",
    "store-managed-pin",
    "store-https-url",
    "store-openbao-namespace",
    "store-kv-mountpoint-path",
    "store-url-userinfo",
    "store-extra-options-pattern",
    "store-extra-options-denylist",
    "store-extra-options-values",
    "store-single-default",
    "store-single-openbao",
];

/// Rules whose proof is a warning or a patch rather than a refusal.
pub const ADMITTED_ONLY: &[&str] = &[
    "barbican-defaults",
    "store-kv-mountpoint-default",
    "warning-retention-reduction",
    "warning-brownfield-first-run",
    "extra-config-deprecated-option",
    "extra-config-release-without-catalog",
];

/// One case of the corpus.
#[derive(Clone, Debug)]
pub struct Case {
    /// `<file> / <name>`, for messages.
    pub title: String,
    /// `Barbican` or `BarbicanSecretStore`.
    pub kind: String,
    /// The raw case as written.
    pub raw: Value,
}

/// Where a replay sends the case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// Straight to the webhook's admission functions.
    Webhook,
    /// Through an API server: its schema and CEL validation run before the validating
    /// webhook, so some objects are refused there, worded as kube-apiserver words it (the
    /// case's `apiServer` block says how).
    ApiServer,
}

/// What a replay observed.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Whether the API server's own validation (schema, CEL, object name) refused the object
    /// before any webhook saw it.
    pub refused_by_api_server: bool,
    /// Whether the object was admitted.
    pub allowed: bool,
    /// The webhook's denial message: the violations joined by `"; "` (a replay through an API
    /// server strips the `admission webhook "..." denied the request: ` prefix).
    pub message: String,
    /// Warnings given.
    pub warnings: Vec<String>,
    /// For mutate cases through the pure functions: the JSON patch answered.
    pub patch: Option<Value>,
}

/// The corpus directory.
pub fn dir() -> PathBuf {
    crate::workspace_root().join("tests/corpus/admission")
}

/// Every case, in file order.
pub fn load() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("the corpus directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a readable corpus file");
        let doc: Value =
            serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let kind = doc["kind"].as_str().expect("a kind").to_string();
        for raw in doc["cases"].as_array().expect("cases") {
            cases.push(Case {
                title: format!(
                    "{} / {}",
                    file.file_name().unwrap().to_string_lossy(),
                    raw["name"].as_str().expect("a name")
                ),
                kind: kind.clone(),
                raw: raw.clone(),
            });
        }
    }
    cases
}

fn minimal(kind: &str) -> Value {
    match kind {
        "Barbican" => minimal_barbican(),
        "BarbicanSecretStore" => managed_store(),
        other => panic!("unknown kind {other}"),
    }
}

fn object(kind: &str, metadata: Option<&Value>, spec: Option<&Value>) -> Value {
    let mut object = with_spec(minimal(kind), spec.unwrap_or(&json!({})));
    if let Some(metadata) = metadata {
        json_patch::merge(&mut object["metadata"], metadata);
    }
    object
}

/// A sibling store the case's lookups name, as a full object.
fn sibling(store: &Value) -> Value {
    let mut sibling = object("BarbicanSecretStore", None, store.get("spec"));
    sibling["metadata"]["name"] = store["name"].clone();
    sibling
}

impl Case {
    /// The rule the case proves.
    pub fn rule(&self) -> &str {
        self.raw["rule"]
            .as_str()
            .unwrap_or_else(|| panic!("{}: no rule", self.title))
    }

    /// `validate` or `mutate`.
    pub fn endpoint(&self) -> &str {
        self.raw["endpoint"].as_str().unwrap_or("validate")
    }

    /// `CREATE` or `UPDATE`.
    pub fn operation(&self) -> &str {
        self.raw["operation"].as_str().unwrap_or("CREATE")
    }

    /// Whether the new object carries a deletionTimestamp.
    pub fn deleting(&self) -> bool {
        self.raw["deleting"] == true
    }

    /// Whether the case expects the object admitted.
    pub fn expects_allowed(&self) -> bool {
        self.raw["allowed"]
            .as_bool()
            .unwrap_or_else(|| panic!("{}: every case says whether it is allowed", self.title))
    }

    /// The object under review (without a deletionTimestamp; see [`Case::deleting`]).
    pub fn object(&self) -> Value {
        object(&self.kind, self.raw.get("metadata"), self.raw.get("spec"))
    }

    /// The stored object of an UPDATE.
    pub fn old(&self) -> Option<Value> {
        (self.operation() == "UPDATE").then(|| {
            object(
                &self.kind,
                self.raw.get("metadata"),
                self.raw.get("oldSpec"),
            )
        })
    }

    /// The PriorityClasses that exist.
    pub fn priority_classes(&self) -> Vec<String> {
        self.raw["lookups"]["priorityClasses"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The sibling stores that exist, and whether each is being deleted.
    pub fn sibling_stores(&self) -> Vec<(Value, bool)> {
        self.raw["lookups"]["secretStores"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| (sibling(s), s["deleting"] == true))
            .collect()
    }

    /// Why the API server cannot answer lookups, if it cannot.
    pub fn unavailable(&self) -> Option<&str> {
        self.raw["lookups"]["unavailable"].as_str()
    }

    /// The lookups as the pure functions take them.
    pub fn known_state(&self) -> KnownState {
        KnownState {
            priority_classes: self.priority_classes(),
            secret_stores: self
                .sibling_stores()
                .into_iter()
                .map(|(mut store, deleting)| {
                    if deleting {
                        store["metadata"]["deletionTimestamp"] = json!("2026-11-29T00:00:00Z");
                    }
                    serde_json::from_value(store).expect("a valid sibling store")
                })
                .collect(),
            unavailable: self.unavailable().map(String::from),
        }
    }

    /// The JSON patch a mutate case expects, if it states one.
    pub fn expected_patch(&self) -> Option<&Value> {
        self.raw.get("patch")
    }

    /// Every way `outcome` differs from what the case expects of `layer`.
    pub fn judge(&self, outcome: &Outcome, layer: Layer) -> Vec<String> {
        let mut problems = Vec::new();
        let expected = self.expects_allowed();
        let message = &outcome.message;
        if outcome.allowed != expected {
            problems.push(format!(
                "allowed is {}, expected {expected} ({message})",
                outcome.allowed
            ));
        }
        let api_server = self.raw.get("apiServer");
        if api_server.is_some() && expected {
            problems.push("an admitted case has no apiServer refusal to describe".into());
        }
        let expectations = match (layer, api_server) {
            (Layer::ApiServer, Some(block)) => block,
            _ => &self.raw,
        };
        if layer == Layer::ApiServer
            && !expected
            && outcome.refused_by_api_server != api_server.is_some()
        {
            problems.push(if api_server.is_some() {
                format!("the apiServer block says the API server refuses it, but a webhook did: {message}")
            } else {
                format!("the API server refused it before the webhook; describe that in an apiServer block: {message}")
            });
        }
        if let Some(fields) = expectations["fields"].as_array() {
            // Field paths are the prefixes of the "; "-joined violations, before ": ".
            let got: Vec<&str> = violations(message)
                .into_iter()
                .map(|v| v.split(": ").next().unwrap_or_default())
                .collect();
            let want: Vec<&str> = fields.iter().map(|f| f.as_str().unwrap()).collect();
            if got != want {
                problems.push(format!("fields {got:?}, expected {want:?}"));
            }
        }
        for fragment in expectations["messages"].as_array().into_iter().flatten() {
            if !message.contains(fragment.as_str().unwrap()) {
                problems.push(format!("denial lacks {fragment}: {message}"));
            }
        }
        // Strings the webhook must never repeat (a credential a tenant planted), whatever
        // else it says; an API server's own pattern errors quote the value, so only the
        // webhook's words are held to it.
        if api_server.is_none() || layer == Layer::Webhook {
            for secret in self.raw["notEchoed"].as_array().into_iter().flatten() {
                let secret = secret.as_str().unwrap_or_default();
                if message.contains(secret) || outcome.warnings.iter().any(|w| w.contains(secret)) {
                    problems.push(format!("the answer echoes {secret:?}: {message}"));
                }
            }
        }
        for fragment in self.raw["warnings"].as_array().into_iter().flatten() {
            if !outcome
                .warnings
                .iter()
                .any(|w| w.contains(fragment.as_str().unwrap()))
            {
                problems.push(format!(
                    "no warning contains {fragment}: {:?}",
                    outcome.warnings
                ));
            }
        }
        if self.raw.get("warnings").is_none() && !outcome.warnings.is_empty() && expected {
            problems.push(format!("unexpected warnings {:?}", outcome.warnings));
        }
        if let (Some(want), Some(got)) = (self.expected_patch(), &outcome.patch)
            && got != want
        {
            problems.push(format!("patch {got}, expected {want}"));
        }
        problems
    }
}

/// Judges every outcome of `layer`, and fails listing every mismatch.
pub fn assert_outcomes<'a>(layer: Layer, outcomes: impl IntoIterator<Item = (&'a Case, Outcome)>) {
    let mut total = 0;
    let mut failures = Vec::new();
    for (case, outcome) in outcomes {
        total += 1;
        for problem in case.judge(&outcome, layer) {
            failures.push(format!("{}: {problem}", case.title));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Accepted and rejected cases per rule.
pub fn coverage(cases: &[Case]) -> BTreeMap<String, (usize, usize)> {
    let mut coverage: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for case in cases {
        let entry = coverage.entry(case.rule().to_string()).or_default();
        if case.expects_allowed() {
            entry.0 += 1
        } else {
            entry.1 += 1
        }
    }
    coverage
}

/// The violations of a `"; "`-joined denial. A violation's own text may hold `"; "` (an API
/// server's "…was invalid; correct the existing errors…"), so a `"; "` separates two only where
/// a field path (no spaces) and `": "` follow it.
pub fn violations(message: &str) -> Vec<&str> {
    if message.is_empty() {
        return Vec::new();
    }
    let starts_violation = |rest: &str| {
        rest.split_once(": ")
            .is_some_and(|(path, _)| !path.is_empty() && !path.contains(' '))
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut search = 0;
    while let Some(at) = message[search..].find("; ") {
        let split = search + at;
        if starts_violation(&message[split + 2..]) {
            out.push(&message[start..split]);
            start = split + 2;
        }
        search = split + 2;
    }
    out.push(&message[start..]);
    out
}
