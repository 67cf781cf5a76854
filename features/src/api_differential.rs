//! The API itself compared: one corpus of requests (`tests/corpus/api/requests.yaml`) sent to
//! the sim and to a real kube-apiserver, each answer's code and body normalised (uids,
//! timestamps, resourceVersions, continue tokens) and compared. A difference is a sim bug
//! unless `tests/corpus/api/allowlist.yaml` names the case with the reason it is kept.
//!
//! Both servers start with the operator's CRDs and a namespace of the corpus's own; the
//! requests run in order on each, so a case may read what an earlier one wrote.

use std::collections::BTreeMap;

use barbican_sim::Cluster;
use kube::Client;
use serde::Deserialize;
use serde_json::{Value, json};

/// The namespace every request's `{ns}` names.
pub const NAMESPACE: &str = "api-differential";

/// The corpus, as checked in.
pub const REQUESTS: &str = include_str!("../../tests/corpus/api/requests.yaml");
/// The differences kept, each with its reason.
pub const ALLOWLIST: &str = include_str!("../../tests/corpus/api/allowlist.yaml");

/// One request of the corpus.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// What it checks; the allowlist names cases by it.
    pub name: String,
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE`.
    pub method: String,
    /// The path and query, `{ns}` for the corpus's namespace.
    pub path: String,
    /// The body, sent as JSON (or as YAML text for an apply patch when a string).
    #[serde(default)]
    pub body: Option<Value>,
    /// The Content-Type (patches name their type here); JSON when absent.
    #[serde(default)]
    pub content_type: Option<String>,
    /// The Accept header; JSON when absent.
    #[serde(default)]
    pub accept: Option<String>,
}

/// An allowed difference.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowed {
    /// The case's name.
    pub name: String,
    /// Why the sim answers otherwise, and why that is kept.
    pub reason: String,
}

/// A case's answers from both servers, normalised.
#[derive(Clone, Debug)]
pub struct Compared {
    /// The case.
    pub name: String,
    /// The sim's code and body.
    pub sim: (u16, Value),
    /// The real server's code and body.
    pub real: (u16, Value),
}

impl Compared {
    /// Whether the two answers are the same.
    pub fn same(&self) -> bool {
        self.sim == self.real
    }
}

/// The corpus's cases; an error names what does not parse.
pub fn cases() -> Result<Vec<Case>, String> {
    serde_saphyr::from_str(REQUESTS).map_err(|e| format!("tests/corpus/api/requests.yaml: {e}"))
}

/// The allowed differences, by case name.
pub fn allowlist() -> Result<BTreeMap<String, String>, String> {
    let entries: Vec<Allowed> = serde_saphyr::from_str(ALLOWLIST)
        .map_err(|e| format!("tests/corpus/api/allowlist.yaml: {e}"))?;
    Ok(entries.into_iter().map(|a| (a.name, a.reason)).collect())
}

/// Server-made values replaced by their presence: what two servers cannot agree on.
const VOLATILE: [&str; 6] = [
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "continue",
    "time",
];

/// `answer` with every server-made value (see [`VOLATILE`]) replaced by `"<set>"`, and a
/// generated name's random suffix by `<suffix>`.
pub fn normalise(answer: &Value) -> Value {
    match answer {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if VOLATILE.contains(&k.as_str()) && !v.is_null() && v != "" {
                        json!("<set>")
                    } else if k == "name"
                        && let (Some(name), Some(prefix)) =
                            (v.as_str(), map.get("generateName").and_then(Value::as_str))
                        && name.starts_with(prefix)
                    {
                        json!(format!("{prefix}<suffix>"))
                    } else {
                        normalise(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalise).collect()),
        Value::String(text) => Value::String(mask_uids(text)),
        other => other.clone(),
    }
}

/// `answer` with every name generated from `prefix` (the prefix and five characters of the
/// generator's alphabet) written `<prefix><suffix>` wherever it stands: a refused create names
/// the name it generated in its message and details.
pub fn mask_generated(answer: &Value, prefix: Option<&str>) -> Value {
    const ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";
    let Some(prefix) = prefix.filter(|p| !p.is_empty()) else {
        return answer.clone();
    };
    match answer {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), mask_generated(v, Some(prefix))))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| mask_generated(v, Some(prefix)))
                .collect(),
        ),
        Value::String(text) => {
            let mut out = String::new();
            let mut rest = text.as_str();
            while let Some(at) = rest.find(prefix) {
                let after = &rest[at + prefix.len()..];
                let suffix: String = after.chars().take(5).collect();
                out.push_str(&rest[..at + prefix.len()]);
                if suffix.len() == 5 && suffix.chars().all(|c| ALPHABET.contains(c)) {
                    out.push_str("<suffix>");
                    rest = &after[5..];
                } else {
                    rest = after;
                }
            }
            out.push_str(rest);
            Value::String(out)
        }
        other => other.clone(),
    }
}

/// `text` with every UUID in it (`8-4-4-4-12` hex digits, as a uid is written) replaced by
/// `<uid>`: a message that names the stored object's uid names a server-made value.
pub fn mask_uids(text: &str) -> String {
    const GROUPS: [usize; 5] = [8, 4, 4, 4, 12];
    let is_uuid = |candidate: &[u8]| {
        let mut at = 0;
        GROUPS.iter().enumerate().all(|(i, len)| {
            let group = &candidate[at..at + len];
            at += len;
            let dash = i == GROUPS.len() - 1 || candidate.get(at) == Some(&b'-');
            at += 1;
            dash && group.iter().all(u8::is_ascii_hexdigit)
        })
    };
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes.len() - i >= 36 && is_uuid(&bytes[i..i + 36]) {
            out.push_str("<uid>");
            i += 36;
        } else {
            // Copy one whole character: a UUID is ASCII, so it starts at a char boundary.
            let c = text[i..].chars().next().unwrap_or_default();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Sends `case` through `client`: the answer's code and its body (JSON, or the text as a
/// string when it is not JSON).
pub async fn send(client: &Client, case: &Case) -> Result<(u16, Value), String> {
    let path = case.path.replace("{ns}", NAMESPACE);
    let body = match &case.body {
        None => Vec::new(),
        Some(Value::String(text)) => text.replace("{ns}", NAMESPACE).into_bytes(),
        Some(body) => serde_json::to_string(body)
            .map_err(|e| e.to_string())?
            .replace("{ns}", NAMESPACE)
            .into_bytes(),
    };
    let request = hyper::Request::builder()
        .method(case.method.as_str())
        .uri(path)
        .header(
            "content-type",
            case.content_type.as_deref().unwrap_or("application/json"),
        )
        .header(
            "accept",
            case.accept.as_deref().unwrap_or("application/json"),
        )
        .body(kube::client::Body::from(body))
        .map_err(|e| format!("{}: {e}", case.name))?;
    let response = client
        .send(request)
        .await
        .map_err(|e| format!("{}: {e}", case.name))?;
    let code = response.status().as_u16();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .map_err(|e| format!("{}: {e}", case.name))?
        .to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    let generate_name = case
        .body
        .as_ref()
        .and_then(|b| b.pointer("/metadata/generateName"))
        .and_then(Value::as_str);
    Ok((code, mask_generated(&normalise(&body), generate_name)))
}

/// Prepares a server for the corpus: the operator's CRDs (established) and the namespace.
pub async fn prepare(client: &Client) -> Result<(), String> {
    let definitions = barbican_operator::crd::definitions()
        .into_iter()
        .map(|d| serde_json::to_value(d).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    crate::backend::ensure_crds(client, definitions).await?;
    let namespace = Case {
        name: "the corpus's namespace".into(),
        method: "POST".into(),
        path: "/api/v1/namespaces".into(),
        body: Some(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
        ),
        content_type: None,
        accept: None,
    };
    match send(client, &namespace).await? {
        (201 | 409, _) => Ok(()),
        (code, body) => Err(format!("creating the namespace {NAMESPACE}: {code} {body}")),
    }
}

/// Runs the corpus on a fresh sim and on the API server `real` talks to.
pub async fn compare(real: &Client) -> Result<Vec<Compared>, String> {
    let cluster = Cluster::new();
    let sim = cluster.client();
    prepare(&sim).await?;
    prepare(real).await?;
    let mut compared = Vec::new();
    for case in cases()? {
        let sim_answer = send(&sim, &case).await?;
        let real_answer = send(real, &case).await?;
        compared.push(Compared {
            name: case.name,
            sim: sim_answer,
            real: real_answer,
        });
    }
    Ok(compared)
}

/// The report of a comparison: counts, then each difference (allowed ones with their reason);
/// and whether a difference the allowlist does not name was found (or an entry names no case).
pub fn report(compared: &[Compared], allowed: &BTreeMap<String, String>) -> (String, bool) {
    let mut text = String::new();
    let (mut same, mut kept, mut unexpected) = (0, 0, 0);
    for case in compared {
        if case.same() {
            same += 1;
            continue;
        }
        let diff = format!(
            "  sim:  {} {}\n  real: {} {}\n",
            case.sim.0, case.sim.1, case.real.0, case.real.1
        );
        match allowed.get(&case.name) {
            Some(reason) => {
                kept += 1;
                text.push_str(&format!("allowed: {} ({reason})\n{diff}", case.name));
            }
            None => {
                unexpected += 1;
                text.push_str(&format!("DIFFERENT: {}\n{diff}", case.name));
            }
        }
    }
    let stale: Vec<&String> = allowed
        .keys()
        .filter(|name| !compared.iter().any(|c| &c.name == *name && !c.same()))
        .collect();
    for name in &stale {
        text.push_str(&format!(
            "STALE allowlist entry: {name} (no such case differs; remove it)\n"
        ));
    }
    text.push_str(&format!(
        "api differential: {} requests, {same} answered alike, {kept} allowed differences, {unexpected} unexpected\n",
        compared.len()
    ));
    (text, unexpected > 0 || !stale.is_empty())
}
