//! `meta.k8s.io/v1` Table responses, as `kubectl get` asks for them: the name, then a CRD's
//! additionalPrinterColumns (evaluated as JSONPath), a built-in kind's printer columns
//! ([`crate::printers`]), or the name and age.

use serde_json::{Value, json};

use crate::resources::ResourceType;

/// Evaluates the JSONPath subset printer columns use: `.a.b`, `[n]`, and the filter
/// `[?(@.key=='value')]`. Returns every match.
pub fn json_path(object: &Value, path: &str) -> Vec<Value> {
    let mut current = vec![object.clone()];
    let mut rest = path.trim();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let key = &after[..end];
            current = current.iter().filter_map(|v| v.get(key).cloned()).collect();
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let Some(end) = after.find(']') else {
                return vec![];
            };
            let inner = &after[..end];
            rest = &after[end + 1..];
            if let Some(filter) = inner.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')')) {
                let Some((key, value)) = filter.split_once("==") else {
                    return vec![];
                };
                let value = value.trim().trim_matches(|c| c == '\'' || c == '"');
                current = current
                    .iter()
                    .flat_map(|v| v.as_array().cloned().unwrap_or_default())
                    .filter(|item| item.get(key.trim()).and_then(Value::as_str) == Some(value))
                    .collect();
            } else if let Ok(index) = inner.parse::<usize>() {
                current = current
                    .iter()
                    .filter_map(|v| v.get(index).cloned())
                    .collect();
            } else if inner == "*" {
                current = current
                    .iter()
                    .flat_map(|v| v.as_array().cloned().unwrap_or_default())
                    .collect();
            } else {
                return vec![];
            }
        } else {
            return vec![];
        }
    }
    current
}

fn cell(value: Vec<Value>, column_type: &str, now: jiff::Timestamp) -> Value {
    match value.as_slice() {
        [] => Value::Null,
        [Value::String(s)] if column_type == "date" => json!(crate::printers::since(Some(s), now)),
        [single] => single.clone(),
        many => json!(
            many.iter()
                .map(|v| v
                    .as_str()
                    .map(String::from)
                    .unwrap_or_else(|| v.to_string()))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

/// The Table for `objects`: a CRD's additionalPrinterColumns (evaluated as JSONPath), a
/// built-in kind's printer ([`crate::printers`]), or the name and age.
pub fn table(
    t: &ResourceType,
    objects: &[Value],
    list_metadata: &Value,
    now: jiff::Timestamp,
) -> Value {
    let name = json!({"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0});
    let (columns, rows): (Vec<Value>, Vec<Vec<Value>>) = match crate::printers::columns(t) {
        Some(printer) if t.printer_columns.is_empty() => (
            printer
                .iter()
                .map(|c| json!({"name": c.name, "type": c.column_type, "format": c.format, "description": "", "priority": c.priority}))
                .collect(),
            objects
                .iter()
                .map(|o| printer.iter().map(|c| (c.cell)(o, now)).collect())
                .collect(),
        ),
        _ => {
            let printer: Vec<(String, String, String, u64)> = if t.printer_columns.is_empty() {
                vec![(
                    "Age".into(),
                    "date".into(),
                    ".metadata.creationTimestamp".into(),
                    0,
                )]
            } else {
                t.printer_columns
                    .iter()
                    .map(|c| {
                        let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                        (text("name"), text("type"), text("jsonPath"), c["priority"].as_u64().unwrap_or(0))
                    })
                    .collect()
            };
            let mut columns = vec![name];
            for (name, column_type, _, priority) in &printer {
                columns.push(json!({"name": name, "type": column_type, "format": "", "description": "", "priority": priority}));
            }
            let rows = objects
                .iter()
                .map(|o| {
                    let mut cells = vec![o["metadata"]["name"].clone()];
                    cells.extend(printer.iter().map(|(_, column_type, path, _)| cell(json_path(o, path), column_type, now)));
                    cells
                })
                .collect();
            (columns, rows)
        }
    };
    let rows: Vec<Value> = objects
        .iter()
        .zip(rows)
        .map(|(o, cells)| {
            json!({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}})
        })
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_metadata, "columnDefinitions": columns, "rows": rows})
}
