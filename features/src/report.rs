//! What a failed scenario prints after cucumber's own failure line, so the failure explains
//! itself without a rerun: every Barbican and BarbicanSecretStore of the scenario as a condition
//! table and as YAML (status and spec, without managedFields), the newest events, the
//! operator's last log lines about each of them, and every pod with its containers' states
//! (what tells a pod that crash-loops from one that is slow to become ready).

use std::fmt::Write;

use k8s_openapi::api::{core::v1::Pod, events::v1::Event};
use kube::{
    Api, ResourceExt,
    api::{DynamicObject, ListParams},
};
use serde_json::Value;

use crate::sim_env::SimEnv;

/// How many events the report shows.
pub const EVENTS: usize = 12;
/// How many log lines the report shows per object.
pub const LOG_LINES: usize = 8;

/// The conditions of `object` as an aligned table: type, status, reason, message.
pub fn condition_table(object: &Value) -> String {
    let rows: Vec<[String; 4]> = object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            [
                field("type"),
                field("status"),
                field("reason"),
                field("message"),
            ]
        })
        .collect();
    table(&["condition", "status", "reason", "message"], &rows)
}

/// Rows under a header, each column as wide as its widest cell, `|`-separated as Gherkin
/// tables are.
pub fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        format!("      | {} |\n", padded.join(" | "))
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// `object` as YAML, without the server's bookkeeping.
fn yaml(object: &DynamicObject) -> String {
    let mut value = serde_json::to_value(object).unwrap_or_default();
    if let Some(meta) = value["metadata"].as_object_mut() {
        meta.remove("managedFields");
    }
    serde_saphyr::to_string(&value).unwrap_or_else(|e| format!("(not YAML: {e})"))
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("      {l}\n")).collect()
}

/// The explanation of a failure in `env`: see the module's documentation.
pub async fn explain(env: &SimEnv) -> String {
    let mut out = String::from("\n    ── what the cluster says ──\n");
    for kind in ["Barbican", "BarbicanSecretStore"] {
        let Ok(resource) = env
            .resource("barbican.openstack.c5c3.io/v1alpha1", kind)
            .await
        else {
            continue;
        };
        let objects = listed(Api::<DynamicObject>::all_with(
            env.client.clone(),
            &resource,
        ))
        .await;
        for object in objects {
            let name = object.name_any();
            let value = serde_json::to_value(&object).unwrap_or_default();
            let _ = writeln!(
                out,
                "    {kind} {}/{name}:",
                object.namespace().unwrap_or_default()
            );
            out.push_str(&condition_table(&value));
            out.push_str(&indent(&yaml(&object)));
            let namespace = object.namespace().unwrap_or_default();
            // How the operator's log names an object: `ns/name` in its own lines, the
            // controller's `<Kind…>/name.ns` in kube-runtime's.
            let (own, runtime) = (
                format!("{namespace}/{name}"),
                format!("/{name}.{namespace}"),
            );
            let lines: Vec<String> = crate::log_capture::contents()
                .lines()
                .filter(|l| (l.contains(&own) || l.contains(&runtime)) && !l.contains(" TRACE "))
                .map(String::from)
                .collect();
            if lines.is_empty() {
                let _ = writeln!(out, "    the operator logged nothing about {own}");
            } else {
                let _ = writeln!(out, "    the operator's last log lines about {own}:");
            }
            for line in lines.iter().skip(lines.len().saturating_sub(LOG_LINES)) {
                let _ = writeln!(out, "      {line}");
            }
        }
    }
    let mut events = listed(Api::<Event>::all(env.client.clone())).await;
    events.sort_by_key(|e| e.event_time.clone().map(|t| t.0));
    let rows: Vec<[String; 4]> = events
        .iter()
        .rev()
        .take(EVENTS)
        .rev()
        .map(|e| {
            [
                e.type_.clone().unwrap_or_default(),
                e.reason.clone().unwrap_or_default(),
                e.regarding
                    .as_ref()
                    .and_then(|r| r.name.clone())
                    .unwrap_or_default(),
                e.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    if rows.is_empty() {
        let _ = writeln!(out, "    no events yet");
    } else {
        let _ = writeln!(out, "    the newest events:");
        out.push_str(&table(&["type", "reason", "about", "note"], &rows));
    }
    let pods: Vec<Value> = listed(Api::<Pod>::all(env.client.clone()))
        .await
        .iter()
        .filter_map(|p| serde_json::to_value(p).ok())
        .collect();
    if pods.is_empty() {
        let _ = writeln!(out, "    no pods");
    } else {
        let _ = writeln!(out, "    the pods:");
        out.push_str(&table(
            &["pod", "phase", "ready", "restarts", "containers"],
            &pod_rows(&pods),
        ));
    }
    out
}

/// Every object `api` lists, or none when the list fails: a report explains what it can.
async fn listed<K>(api: Api<K>) -> Vec<K>
where
    K: Clone + k8s_openapi::serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
}

/// One row per pod: `namespace/name`, phase, ready containers of all, restarts, and each
/// container's state as the kubelet reports it, with the last termination when it restarted.
pub fn pod_rows(pods: &[Value]) -> Vec<[String; 5]> {
    pods.iter()
        .map(|pod| {
            let statuses: Vec<&Value> = pod["status"]["containerStatuses"]
                .as_array()
                .into_iter()
                .flatten()
                .collect();
            let ready = statuses.iter().filter(|c| c["ready"] == true).count();
            let restarts: i64 = statuses
                .iter()
                .map(|c| c["restartCount"].as_i64().unwrap_or(0))
                .fold(0, i64::saturating_add);
            let states: Vec<String> = statuses
                .iter()
                .map(|c| {
                    let mut text = format!(
                        "{}: {}",
                        c["name"].as_str().unwrap_or("?"),
                        container_state(&c["state"])
                    );
                    if !c["lastState"]["terminated"].is_null() {
                        let _ = write!(text, " (last: {})", container_state(&c["lastState"]));
                    }
                    text
                })
                .collect();
            [
                format!(
                    "{}/{}",
                    pod["metadata"]["namespace"].as_str().unwrap_or_default(),
                    pod["metadata"]["name"].as_str().unwrap_or_default()
                ),
                pod["status"]["phase"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                format!("{ready}/{}", statuses.len()),
                restarts.to_string(),
                states.join("; "),
            ]
        })
        .collect()
}

/// A container state (`running`, `waiting` or `terminated`) in a few words: the state, its
/// reason, and a termination's exit code.
fn container_state(state: &Value) -> String {
    for key in ["running", "waiting", "terminated"] {
        let detail = &state[key];
        if detail.is_null() {
            continue;
        }
        let mut text = key.to_string();
        if let Some(reason) = detail["reason"].as_str() {
            let _ = write!(text, " {reason}");
        }
        if let Some(code) = detail["exitCode"].as_i64() {
            let _ = write!(text, ", exit {code}");
        }
        return text;
    }
    "unknown".to_string()
}
