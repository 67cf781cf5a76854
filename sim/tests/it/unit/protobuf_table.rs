//! The generated message table, checked whole: every message round-trips a value that sets
//! each of its fields, every kind round-trips in its envelope. The values are built by this
//! test's own reading of `kubernetes.table`, not the sim's.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use barbican_sim::protobuf::{
    decode, decode_message, encode, encode_message, kinds, message_names,
};

const TABLE: &str = include_str!("../../../src/protobuf/kubernetes.table");

/// One field line: number, JSON name, label, type, inline.
struct Line {
    number: u64,
    name: String,
    label: String,
    ty: String,
    inline: bool,
}

/// The table as this test reads it: messages (with the `slice` flag), kinds, and the
/// numbers of removed fields per message.
struct Oracle {
    messages: BTreeMap<String, (bool, Vec<Line>)>,
    kinds: Vec<(String, String, String)>,
    reserved: BTreeSet<(String, u64)>,
}

fn oracle() -> Oracle {
    let mut messages: BTreeMap<String, (bool, Vec<Line>)> = BTreeMap::new();
    let mut kinds = Vec::new();
    let mut reserved = BTreeSet::new();
    let mut current = String::new();
    for line in TABLE.lines().filter(|l| !l.starts_with('#')) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["kind", v, k, m] => kinds.push((v.to_string(), k.to_string(), m.to_string())),
            ["reserved", number, _] => {
                reserved.insert((current.to_lowercase(), number.parse().unwrap()));
            }
            ["message", name, flags @ ..] => {
                current = name.to_string();
                messages.insert(current.clone(), (flags.contains(&"slice"), Vec::new()));
            }
            [number, name, label, ty, flags @ ..] => {
                messages.get_mut(&current).unwrap().1.push(Line {
                    number: number.parse().unwrap(),
                    name: name.to_string(),
                    label: label.to_string(),
                    ty: ty.to_string(),
                    inline: flags.contains(&"inline"),
                });
            }
            other => panic!("a table line of another shape: {other:?}"),
        }
    }
    Oracle {
        messages,
        kinds,
        reserved,
    }
}

const META: &str = "k8s.io.apimachinery.pkg.apis.meta.v1";
/// Held by no kind and not read: the one message without a round trip.
const UNREAD: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.Duration";

impl Oracle {
    /// A JSON value of `message` that sets every field once (a message already being built
    /// further up is left out, so recursive types end).
    fn example(&self, message: &str, open: &mut Vec<String>) -> Value {
        match message {
            m if m == format!("{META}.Time") => return json!("2026-12-04T10:20:30Z"),
            m if m == format!("{META}.MicroTime") => return json!("2026-12-04T10:20:30.123456Z"),
            m if m == format!("{META}.FieldsV1")
                || m == "k8s.io.apimachinery.pkg.runtime.RawExtension" =>
            {
                return json!({"f:metadata": {"f:name": {}}});
            }
            "k8s.io.apimachinery.pkg.api.resource.Quantity"
            | "k8s.io.apimachinery.pkg.api.resource.QuantityValue" => return json!("1500m"),
            "k8s.io.apimachinery.pkg.util.intstr.IntOrString" => return json!("http"),
            _ => {}
        }
        // apiextensions' values that marshal themselves: raw JSON, a bool, a list.
        if let Some((package, local)) = message.rsplit_once('.')
            && package.starts_with("k8s.io.apiextensions_apiserver.")
        {
            match local {
                "JSON" => return json!({"default": [1, "two"]}),
                "JSONSchemaPropsOrBool" => return json!(false),
                "JSONSchemaPropsOrStringArray" => return json!(["a", "b"]),
                "JSONSchemaPropsOrArray" => {
                    return json!([{"type": "string"}, {"type": "integer", "maximum": 2.5}]);
                }
                _ => {}
            }
        }
        let (slice, lines) = &self.messages[message];
        if *slice {
            let item = self.value(&lines[0].ty, open).unwrap();
            return json!([item.clone(), item]);
        }
        open.push(message.to_string());
        let mut object = Map::new();
        for line in lines {
            if line.inline {
                if let Value::Object(inner) = self.example(&line.ty, open) {
                    object.extend(inner);
                }
                continue;
            }
            let Some(value) = self.value(&line.ty, open) else {
                continue;
            };
            let value = match line.label.as_str() {
                "many" => json!([value.clone(), value]),
                "map" => json!({"k1": value.clone(), "k2": value}),
                _ => value,
            };
            // A value distinct per field: a field read into another's name shows.
            let value = match value {
                Value::String(s) if line.ty == "string" => json!(format!("{}-{s}", line.name)),
                Value::Number(_) if line.ty == "double" => json!(line.number as f64 + 0.25),
                Value::Number(_) => json!(if line.number % 2 == 0 {
                    line.number as i64 * 1000
                } else {
                    -(line.number as i64)
                }),
                other => other,
            };
            object.insert(line.name.clone(), value);
        }
        open.pop();
        Value::Object(object)
    }

    fn value(&self, ty: &str, open: &mut Vec<String>) -> Option<Value> {
        Some(match ty {
            "string" => json!("v"),
            "int32" | "int64" => json!(1),
            "bool" => json!(true),
            "bytes" => json!("Ynl0ZXM="),
            "double" => json!(0.5),
            _ if open.iter().any(|m| m == ty) || ty == UNREAD => return None,
            message => self.example(message, open),
        })
    }
}

#[test]
fn every_message_round_trips_a_value_that_sets_each_field() {
    let oracle = oracle();
    let names: BTreeSet<&str> = message_names().collect();
    assert_eq!(
        names,
        oracle.messages.keys().map(String::as_str).collect(),
        "the sim reads the messages the table lists"
    );
    assert!(
        names.len() > 1000,
        "every API package: {} messages",
        names.len()
    );
    for name in names.iter().filter(|n| **n != UNREAD) {
        let value = oracle.example(name, &mut Vec::new());
        let bytes = encode_message(name, &value).unwrap_or_else(|| panic!("{name} encodes"));
        let read = decode_message(name, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(read, Some(value), "{name} round-trips");
    }
    let refused = decode_message(UNREAD, &[8, 1]).unwrap_err();
    assert!(
        refused.to_string().contains("send the object as JSON"),
        "{refused}"
    );
}

#[test]
fn every_kind_round_trips_in_its_envelope() {
    let oracle = oracle();
    let listed: BTreeSet<(&str, &str)> = kinds().collect();
    assert_eq!(listed.len(), oracle.kinds.len());
    for (api_version, kind, message) in &oracle.kinds {
        assert!(listed.contains(&(api_version.as_str(), kind.as_str())));
        let mut object = oracle.example(message, &mut Vec::new());
        object["apiVersion"] = json!(api_version);
        object["kind"] = json!(kind);
        let bytes = encode(&object).unwrap_or_else(|| panic!("{api_version} {kind} encodes"));
        assert_eq!(decode(&bytes).unwrap(), object, "{api_version} {kind}");
    }
    for expected in [
        ("v1", "Pod"),
        ("apps/v1", "StatefulSet"),
        ("coordination.k8s.io/v1", "Lease"),
        (
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
        ),
        ("meta.k8s.io/v1", "DeleteOptions"),
    ] {
        assert!(listed.contains(&expected), "{expected:?} is read");
    }
}

/// One field as k8s-pb's prost attributes describe it: label, type (a scalar, or a message's
/// name without its package).
type PbField = (String, String);

/// Every message of k8s-pb's `api/`, `apimachinery/`, `apiextensions_apiserver/` and
/// `kube_aggregator/` modules, by full name, with its fields
/// by number, read from the crate's source (found through `cargo metadata`).
fn k8s_pb_messages() -> BTreeMap<String, BTreeMap<u64, PbField>> {
    // Offline, cargo resolves only the host's dependencies (the others are not downloaded).
    let rustc = std::process::Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc -vV");
    let rustc = String::from_utf8(rustc.stdout).unwrap();
    let host = rustc
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc's host");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let metadata = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline", "--locked"])
        .args(["--filter-platform", host])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    let metadata: Value = serde_json::from_slice(&metadata.stdout).expect("cargo metadata's JSON");
    let manifest = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "k8s-pb")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("k8s-pb is a dev-dependency");
    let src = std::path::Path::new(manifest).parent().unwrap().join("src");
    let mut messages = BTreeMap::new();
    for top in [
        "api",
        "apimachinery",
        "apiextensions_apiserver",
        "kube_aggregator",
    ] {
        read_k8s_pb(&src, &src.join(top), &mut messages);
    }
    messages
}

fn read_k8s_pb(
    src: &std::path::Path,
    dir: &std::path::Path,
    out: &mut BTreeMap<String, BTreeMap<u64, PbField>>,
) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        // apimachinery's test API, which no server serves (the generator leaves it out too).
        if path.ends_with("testapigroup") {
            continue;
        }
        if path.is_dir() {
            read_k8s_pb(src, &path, out);
            continue;
        }
        let relative = path.parent().unwrap().strip_prefix(src).unwrap();
        let package: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect();
        let package = format!("k8s.io.{}", package.join("."));
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines().map(str::trim);
        let mut current: Option<String> = None;
        while let Some(line) = lines.next() {
            if let Some(name) = line.strip_prefix("pub struct ") {
                let name: String = name.chars().take_while(|c| c.is_alphanumeric()).collect();
                current = Some(format!("{package}.{name}"));
                out.insert(current.clone().unwrap(), BTreeMap::new());
            } else if let Some(attribute) = line.strip_prefix("#[prost(") {
                let Some(message) = &current else { continue };
                let tag: u64 = attribute
                    .split("tag = \"")
                    .nth(1)
                    .and_then(|t| t.split('"').next())
                    .and_then(|t| t.parse().ok())
                    .unwrap();
                // The field's Rust type, up to its closing comma, names a message's type.
                let mut ty = String::new();
                for next in lines.by_ref() {
                    ty.push_str(next);
                    if next.ends_with(',') && ty.matches('<').count() == ty.matches('>').count() {
                        break;
                    }
                }
                let ty = ty.split_once(':').map(|(_, t)| t).unwrap_or("");
                let last = ty.trim_end_matches([',', '>']).rsplit("::").next().unwrap();
                let message_name = last.rsplit(['<', ',']).next().unwrap().trim().to_string();
                let (label, kind) = if let Some(map) = attribute.strip_prefix("btree_map = \"") {
                    let value = map.split('"').next().unwrap().split(", ").nth(1).unwrap();
                    (
                        "map",
                        if value == "message" {
                            message_name
                        } else {
                            value.into()
                        },
                    )
                } else {
                    let first = attribute.split([',', ' ']).next().unwrap();
                    let label = if attribute.contains("repeated") {
                        "many"
                    } else {
                        "one"
                    };
                    (
                        label,
                        if first == "message" {
                            message_name
                        } else {
                            first.into()
                        },
                    )
                };
                out.get_mut(message)
                    .unwrap()
                    .insert(tag, (label.into(), kind));
            }
        }
    }
}

/// Messages k8s-pb has (its Kubernetes is older) that Kubernetes has since deleted: a status
/// result no endpoint served, and the type of PodSpec's reserved field 42.
const REMOVED_MESSAGES: &[&str] = &[
    "k8s.io.api.core.v1.PodStatusResult",
    "k8s.io.api.core.v1.WorkloadReference",
];

/// The table against the messages k8s-pb (kube-rs) generated from the same upstream
/// `generated.proto` files, at its own Kubernetes version: every field both have agrees in
/// number, label and type; every message and field k8s-pb has is in the table, but for an
/// alpha or beta API version Kubernetes has since removed whole (autoscaling/v2beta1 in 1.37)
/// and a field it removed and reserved the number of (PodSpec's 42, workloadRef).
#[test]
fn the_table_agrees_with_k8s_pb() {
    let oracle = oracle();
    // k8s-pb spells acronyms as Rust does (`JsonPatch` for JSONPatch): names compare in
    // lower case.
    let ours: BTreeMap<String, &Vec<Line>> = oracle
        .messages
        .iter()
        .map(|(name, (_, lines))| (name.to_lowercase(), lines))
        .collect();
    let theirs = k8s_pb_messages();
    assert!(
        theirs.len() > 1000,
        "k8s-pb read: {} messages",
        theirs.len()
    );
    let mut compared = 0;
    let mut missing = Vec::new();
    for (name, fields) in &theirs {
        let Some(lines) = ours.get(&name.to_lowercase()) else {
            let package = name.rsplit_once('.').unwrap().0;
            let removed_version = (package.contains("alpha") || package.contains("beta"))
                && !ours.keys().any(|m| m.starts_with(&format!("{package}.")));
            if !removed_version {
                missing.push(name.clone());
            }
            continue;
        };
        for (number, (label, ty)) in fields {
            if oracle.reserved.contains(&(name.to_lowercase(), *number)) {
                continue;
            }
            let line = lines
                .iter()
                .find(|l| l.number == *number)
                .unwrap_or_else(|| panic!("{name} field {number} is in k8s-pb, not the table"));
            let our_type = line.ty.rsplit('.').next().unwrap().to_lowercase();
            assert_eq!(
                (line.label.as_str(), our_type.as_str()),
                (label.as_str(), ty.to_lowercase().as_str()),
                "{name} field {number} ({})",
                line.name
            );
            compared += 1;
        }
    }
    assert_eq!(
        missing, REMOVED_MESSAGES,
        "messages in k8s-pb and not in the table"
    );
    assert!(compared > 3500, "{compared} fields compared");
}

/// Bytes prost writes for a k8s-pb Deployment, read by the sim as kube-apiserver reads them:
/// an independent encoder agreeing on numbers, maps, pointers and embedded messages.
#[test]
fn a_deployment_prost_writes_reads_as_its_json() {
    use k8s_pb::api::apps::v1 as apps;
    use k8s_pb::api::core::v1 as core;
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    use prost::Message as _;
    let deployment = apps::Deployment {
        metadata: Some(meta::ObjectMeta {
            name: Some("web".into()),
            labels: [("app".to_string(), "web".to_string())].into(),
            ..Default::default()
        }),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(0),
            paused: Some(false),
            template: Some(core::PodTemplateSpec {
                spec: Some(core::PodSpec {
                    containers: vec![core::Container {
                        name: Some("c".into()),
                        ports: vec![core::ContainerPort {
                            container_port: Some(9311),
                            host_port: Some(0),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: None,
    };
    let raw = deployment.encode_to_vec();
    let read = decode_message("k8s.io.api.apps.v1.Deployment", &raw).unwrap();
    assert_eq!(
        read,
        Some(
            json!({"metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 0, "template": {"spec": {"containers": [
                {"name": "c", "ports": [{"containerPort": 9311}]}]}}}})
        )
    );
}

/// `value` with whole floats as integers (`minimum: 1.0` is `1`), as Go's JSON writes a
/// float64.
fn as_go_writes(value: Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() && n.as_f64().unwrap().fract() == 0.0 => {
            json!(n.as_f64().unwrap() as i64)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(as_go_writes).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, as_go_writes(v))).collect())
        }
        other => other,
    }
}

/// This project's own CustomResourceDefinitions, with their whole OpenAPI schemas (defaults
/// as raw JSON, `x-kubernetes-*` extensions, enums, nested properties and items), go through
/// protobuf and back unchanged, as a client sending them in protobuf would have them stored.
#[test]
fn the_projects_crds_round_trip_in_protobuf() {
    let crds = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/crds");
    let mut read = 0;
    for entry in std::fs::read_dir(crds).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let crd = as_go_writes(serde_saphyr::from_str(&text).unwrap());
        assert_eq!(crd["kind"], "CustomResourceDefinition");
        let bytes = encode(&crd).expect("a CRD is described");
        let back = decode(&bytes).unwrap();
        assert!(back == crd, "differs: {:?}", json_patch::diff(&crd, &back));
        read += 1;
    }
    assert_eq!(read, 2);
}
