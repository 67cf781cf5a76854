//! What the edit-sequence check compares: every object the operator made in a namespace, and
//! the status of its CRs, normalised so that two clusters that reached the same state compare
//! equal, whatever their histories.
//!
//! Normalised away: what the API server assigns (uid, resourceVersion, timestamps, generation,
//! managedFields, status of children) and what is minted anew on each cluster (an AppRole's
//! role ID and secret ID, the time it was minted, and the pod-template hash of those
//! credentials; the ids Keystone assigns to a catalog registration; the API's certificate,
//! which each cluster's cert-manager issues anew, so its pod-template hash and the CA copied
//! for the Gateway). What Keystone holds in the region named after the namespace is compared
//! as one more object. Left out: the config Secrets the spec keeps as history besides the one
//! the Deployment mounts (keeping the last few is the spec's rule, not drift), and the dump
//! Job of `spec.dbBackup` (the record of a migration, which a fresh install never makes).
//! Everything else must be equal: names (hash-suffixed ones included, since the hash is of the
//! content), labels, annotations, owner references, spec and data.

use std::collections::BTreeMap;

use barbican_operator::{
    api::names::{
        SECRET_ID_MINTED_AT_ANNOTATION, SECRET_STORE_CREDENTIALS_HASH_ANNOTATION,
        TLS_HASH_ANNOTATION,
    },
    controller::{
        barbican::jobs::POD_SPEC_HASH_ANNOTATION, runtime::children::APPLIED_HASH_ANNOTATION,
    },
};
use serde_json::{Value, json};

use crate::sim_env::{Error, SimEnv};

/// The kinds the operator makes children of, as the steps name them.
pub const KINDS: [&str; 15] = [
    "Deployment",
    "Service",
    "PodDisruptionBudget",
    "HorizontalPodAutoscaler",
    "NetworkPolicy",
    "CronJob",
    "Job",
    "Secret",
    "HTTPRoute",
    "BackendTLSPolicy",
    "Certificate",
    "ConfigMap",
    "Database",
    "User",
    "Grant",
];

/// The kinds whose status is compared.
const CRS: [&str; 2] = ["Barbican", "BarbicanSecretStore"];

/// Annotations whose value is minted anew on each cluster, or hashes what is: the db-sync
/// Job's pod-spec hash covers the config Secret's name, which hashes barbican.conf, which
/// carries the minted role ID. (The pod template itself is compared.)
/// The applied-hash annotation hashes the whole desired child, owner uids included. The TLS
/// hash digests a certificate and key each cluster's cert-manager issues anew.
const MINTED_ANNOTATIONS: [&str; 5] = [
    SECRET_ID_MINTED_AT_ANNOTATION,
    SECRET_STORE_CREDENTIALS_HASH_ANNOTATION,
    TLS_HASH_ANNOTATION,
    POD_SPEC_HASH_ANNOTATION,
    APPLIED_HASH_ANNOTATION,
];

/// The keys of a store's AppRole Secret that are minted anew on each cluster.
const MINTED_KEYS: [&str; 2] = ["role-id", "secret-id"];

/// A namespace as the check sees it: `Kind/name` → normalised object.
pub type Snapshot = BTreeMap<String, Value>;

fn owned_by_the_operator(object: &Value) -> bool {
    object["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| CRS.contains(&r["kind"].as_str().unwrap_or_default()))
        })
}

/// Reads what the operator made in `namespace` and the status of the CRs there.
pub async fn snapshot(env: &SimEnv, namespace: &str) -> Result<Snapshot, Error> {
    let mut raw: Vec<(String, Value)> = Vec::new();
    let mut credentials: Vec<Value> = Vec::new();
    for kind in KINDS.iter().chain(CRS.iter()) {
        let api = env.api_of(kind, namespace).await?;
        let list = api
            .list(&Default::default())
            .await
            .map_err(|e| format!("listing {kind} in {namespace}: {e}"))?;
        for object in list.items {
            let value = serde_json::to_value(&object).map_err(|e| e.to_string())?;
            // Credentials are minted anew on each cluster, by the operator for a managed store
            // and by the external OpenBao for a brownfield one (into a Secret it does not own).
            if *kind == "Secret" {
                credentials.push(value.clone());
            }
            if CRS.contains(kind) || owned_by_the_operator(&value) {
                raw.push((kind.to_string(), value));
            }
        }
    }
    let mounted: Vec<String> = raw
        .iter()
        .filter(|(kind, _)| kind == "Deployment" || kind == "Job" || kind == "CronJob")
        .flat_map(|(_, o)| config_secrets_named(o))
        .collect();
    let mut minted = minted_values(&credentials);
    for (_, object) in raw.iter().filter(|(kind, _)| kind == "Barbican") {
        minted.extend(keystone_ids(&object["status"]["catalog"]));
    }
    // The mounted config Secret's name is a hash of its content: named alike on both sides,
    // a difference shows as the lines of barbican.conf that differ, not as two names.
    for name in &mounted {
        minted.insert(name.clone(), "<mounted config>".into());
    }
    let mut snapshot = Snapshot::new();
    for (kind, object) in raw {
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if kind == "Secret" && is_config_secret(&name) && !mounted.contains(&name) {
            continue;
        }
        // A Job the CronJob spawned is the CronJob controller's, and when it ran is time's.
        if kind == "Job" && !object["metadata"]["ownerReferences"][0]["kind"].eq("Barbican") {
            continue;
        }
        // The dump before a migration (spec.dbBackup) records a migration that happened, which
        // a fresh install never makes.
        if kind == "Job" && name.ends_with("-db-backup") {
            continue;
        }
        let name = minted.get(&name).cloned().unwrap_or(name);
        snapshot.insert(format!("{kind}/{name}"), normalise(&kind, object, &minted));
    }
    let registered = registered_in(env, namespace);
    if !registered.is_empty() {
        snapshot.insert(format!("Keystone/region {namespace}"), json!(registered));
    }
    if snapshot
        .keys()
        .any(|k| k.starts_with("HorizontalPodAutoscaler/"))
    {
        autoscaled(&mut snapshot);
    }
    Ok(snapshot)
}

/// While an HPA exists, the replica count is the autoscaler's: it depends on the load and on
/// the count the Deployment had when the HPA took over, which is history. The Deployment's
/// `replicas`, the pods DeploymentReady counts, and the PDB's budget (sized from the live
/// count: one pod kept when there are several) are left out.
fn autoscaled(snapshot: &mut Snapshot) {
    for (key, object) in snapshot.iter_mut() {
        if key.starts_with("PodDisruptionBudget/")
            && let Some(spec) = object["spec"].as_object_mut()
        {
            spec.remove("minAvailable");
            spec.remove("maxUnavailable");
        }
        if key.starts_with("Deployment/")
            && let Some(spec) = object["spec"].as_object_mut()
        {
            spec.remove("replicas");
        }
        if key.starts_with("Barbican/") {
            for c in object["status"]["conditions"]
                .as_array_mut()
                .into_iter()
                .flatten()
            {
                if c["type"] == "DeploymentReady"
                    && let Some(message) = c["message"].as_str()
                {
                    let counted = message
                        .split(' ')
                        .map(|w| if w.parse::<u32>().is_ok() { "<n>" } else { w })
                        .collect::<Vec<_>>()
                        .join(" ");
                    c["message"] = json!(counted);
                }
            }
        }
    }
}

/// Whether a Secret of that name is one of a Barbican's hash-named config Secrets.
pub fn is_config_secret(name: &str) -> bool {
    name.rsplit_once("-config-")
        .is_some_and(|(_, hash)| !hash.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The config Secrets a workload mounts.
fn config_secrets_named(object: &Value) -> Vec<String> {
    let pod = if object["kind"] == "CronJob" {
        &object["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    } else {
        &object["spec"]["template"]["spec"]
    };
    pod["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["secret"]["secretName"].as_str())
        .filter(|n| is_config_secret(n))
        .map(String::from)
        .collect()
}

/// The minted values of AppRole credential Secrets, each with the placeholder it becomes.
fn minted_values(secrets: &[Value]) -> BTreeMap<String, String> {
    let mut minted = BTreeMap::new();
    for object in secrets {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let data = secret_data(object);
        for key in MINTED_KEYS {
            if let Some(value) = data.get(key) {
                minted.insert(value.clone(), format!("<minted {name}/{key}>"));
            }
        }
    }
    minted
}

/// The ids Keystone assigned to what a Barbican's `status.catalog` records: Keystone hands
/// them out, as the API server hands out uids.
fn keystone_ids(catalog: &Value) -> BTreeMap<String, String> {
    let endpoints = catalog["endpoints"].as_array().into_iter().flatten();
    std::iter::once(&catalog["serviceId"])
        .chain(endpoints.map(|e| &e["id"]))
        .filter_map(Value::as_str)
        .map(|id| (id.to_string(), "<keystone id>".to_string()))
        .collect()
}

/// What the site's Keystone holds in the region named after `namespace` (the one a
/// sequence's registration goes to): `service-type service-name interface url`, sorted.
fn registered_in(env: &SimEnv, namespace: &str) -> Vec<String> {
    let keystone = &env.here().keystone;
    let services = keystone.services();
    let mut lines: Vec<String> = keystone
        .endpoints()
        .into_iter()
        .filter(|e| e.region == namespace)
        .map(|e| {
            let service = services.iter().find(|s| s.id == e.service_id);
            let (type_, name) = service.map_or(("?", "?"), |s| (&s.type_, &s.name));
            format!("{type_} {name} {} {}", e.interface, e.url)
        })
        .collect();
    lines.sort();
    lines
}

/// A Secret's `data`, decoded (through k8s-openapi's own base64 reading).
fn secret_data(object: &Value) -> BTreeMap<String, String> {
    serde_json::from_value::<k8s_openapi::api::core::v1::Secret>(object.clone())
        .ok()
        .and_then(|s| s.data)
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
        .collect()
}

/// `object` with what the server assigns and what is minted replaced; Secrets' data decoded.
pub fn normalise(kind: &str, mut object: Value, minted: &BTreeMap<String, String>) -> Value {
    if let Some(metadata) = object["metadata"].as_object_mut() {
        for field in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "generation",
            "selfLink",
        ] {
            metadata.remove(field);
        }
        if let Some(refs) = metadata
            .get_mut("ownerReferences")
            .and_then(Value::as_array_mut)
        {
            for r in refs {
                if let Some(r) = r.as_object_mut() {
                    r.remove("uid");
                }
            }
        }
    }
    if CRS.contains(&kind) {
        // A CR: its status is what is compared (the spec is the same by construction).
        let mut status = object["status"].clone();
        if let Some(status) = status.as_object_mut() {
            status.remove("observedGeneration");
        }
        // Whether this Barbican or another sequence of the batch created the key-manager
        // service they all register under is the batch's history.
        if let Some(catalog) = status["catalog"].as_object_mut() {
            catalog.remove("serviceCreated");
        }
        if let Some(conditions) = status["conditions"].as_array_mut() {
            for condition in conditions.iter_mut() {
                if let Some(c) = condition.as_object_mut() {
                    c.remove("lastTransitionTime");
                    c.remove("observedGeneration");
                }
                if let Some(message) = condition["message"].as_str() {
                    condition["message"] = json!(without_times(message));
                }
            }
            // The order conditions were first set in is history; the set is the state.
            conditions.sort_by_key(|c| c["type"].as_str().unwrap_or_default().to_string());
        }
        replace_minted(&mut status, minted);
        return json!({"status": status});
    }
    if let Some(o) = object.as_object_mut() {
        o.remove("status");
    }
    // The Deployment controller numbers each template the Deployment has had: history.
    if kind == "Deployment"
        && let Some(a) = object["metadata"]["annotations"].as_object_mut()
    {
        a.remove(barbican_sim::controllers::deployments::REVISION);
    }
    // Addresses the API server hands out.
    if kind == "Service"
        && let Some(spec) = object["spec"].as_object_mut()
    {
        spec.remove("clusterIP");
        spec.remove("clusterIPs");
    }
    if kind == "Secret" && object.get("data").is_some_and(|d| !d.is_null()) {
        object["data"] = json!(secret_data(&object));
    }
    // The CA a Gateway verifies the pods with is each cluster's own cert-manager's.
    if kind == "ConfigMap"
        && let Some(ca) = object.pointer_mut("/data/ca.crt")
    {
        *ca = json!("<minted ca.crt>");
    }
    replace_minted(&mut object, minted);
    for pointer in [
        "/metadata/annotations",
        "/spec/template/metadata/annotations",
    ] {
        if let Some(a) = object.pointer_mut(pointer).and_then(Value::as_object_mut) {
            for key in MINTED_ANNOTATIONS {
                if let Some(v) = a.get_mut(key) {
                    *v = json!("<minted>");
                }
            }
        }
    }
    object
}

/// `text` with every RFC 3339 time replaced by `<time>`: when a secret ID was minted is
/// history, whether it was is state.
pub fn without_times(text: &str) -> String {
    text.split(' ')
        .map(|word| {
            let bare = word.trim_matches(|c: char| !c.is_ascii_alphanumeric());
            if bare.parse::<jiff::Timestamp>().is_ok() {
                word.replace(bare, "<time>")
            } else {
                word.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn replace_minted(value: &mut Value, minted: &BTreeMap<String, String>) {
    match value {
        Value::String(text) => {
            for (secret, placeholder) in minted {
                if !secret.is_empty() && text.contains(secret.as_str()) {
                    *text = text.replace(secret.as_str(), placeholder);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| replace_minted(v, minted)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_minted(v, minted)),
        _ => {}
    }
}

/// Every difference between the two snapshots, as `Kind/name /json/pointer: history …, fresh
/// …` lines.
pub fn differences(history: &Snapshot, fresh: &Snapshot) -> Vec<String> {
    let mut found = Vec::new();
    for (key, object) in history {
        match fresh.get(key) {
            None => found.push(format!("{key}: only after the edits")),
            Some(other) => diff(key, "", object, other, &mut found),
        }
    }
    for key in fresh.keys().filter(|k| !history.contains_key(*k)) {
        found.push(format!("{key}: only in the fresh install"));
    }
    found
}

fn diff(key: &str, path: &str, a: &Value, b: &Value, found: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let null = Value::Null;
                let step = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                diff(
                    key,
                    &step,
                    x.get(k).unwrap_or(&null),
                    y.get(k).unwrap_or(&null),
                    found,
                );
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff(key, &format!("{path}/{i}"), p, q, found);
            }
        }
        (Value::String(x), Value::String(y))
            if x != y && (x.contains('\n') || y.contains('\n')) =>
        {
            // A rendered file: the lines only one side has.
            let only = |p: &str, q: &str| -> Vec<String> {
                let other: std::collections::BTreeSet<&str> = q.lines().collect();
                p.lines()
                    .filter(|l| !other.contains(l))
                    .map(String::from)
                    .collect()
            };
            found.push(format!(
                "{key} {path}: lines only after the edits {:?}, only fresh {:?}",
                only(x, y),
                only(y, x)
            ));
        }
        _ if a != b => found.push(format!(
            "{key} {path}: after the edits {}, fresh {}",
            brief(a),
            brief(b)
        )),
        _ => {}
    }
}

fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}
