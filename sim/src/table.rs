//! `meta.k8s.io/v1` Table responses, as `kubectl get` asks for them: the name, then a CRD's
//! additionalPrinterColumns (evaluated as JSONPath), or the name and age for built-ins.

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

/// How long before `now` an RFC 3339 timestamp was, the way kubectl prints ages (`5s`, `3m`,
/// `2h`, `4d`).
pub fn age(timestamp: &str, now: jiff::Timestamp) -> String {
    let Ok(then) = timestamp.parse::<jiff::Timestamp>() else {
        return "<unknown>".into();
    };
    let seconds = (now.as_second() - then.as_second()).max(0);
    match seconds {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

fn cell(value: Vec<Value>, column_type: &str, now: jiff::Timestamp) -> Value {
    match value.as_slice() {
        [] => Value::Null,
        [Value::String(s)] if column_type == "date" => json!(age(s, now)),
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

/// The Table for `objects`.
pub fn table(
    t: &ResourceType,
    objects: &[Value],
    list_metadata: &Value,
    now: jiff::Timestamp,
) -> Value {
    let mut columns = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0}),
    ];
    let printer: Vec<(String, String, String)> = if t.printer_columns.is_empty() {
        vec![(
            "Age".into(),
            "date".into(),
            ".metadata.creationTimestamp".into(),
        )]
    } else {
        t.printer_columns
            .iter()
            .map(|c| {
                let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                (text("name"), text("type"), text("jsonPath"))
            })
            .collect()
    };
    for (name, column_type, _) in &printer {
        columns.push(json!({"name": name, "type": column_type, "format": "", "description": "", "priority": 0}));
    }
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut cells = vec![o["metadata"]["name"].clone()];
            cells.extend(printer.iter().map(|(_, column_type, path)| cell(json_path(o, path), column_type, now)));
            json!({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}})
        })
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_metadata, "columnDefinitions": columns, "rows": rows})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printer_column_paths() {
        let o = json!({"status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}], "endpoint": "http://x"}, "spec": {"list": ["a", "b"]}});
        assert_eq!(
            json_path(&o, ".status.conditions[?(@.type=='Ready')].status"),
            vec![json!("True")]
        );
        assert_eq!(json_path(&o, ".status.endpoint"), vec![json!("http://x")]);
        assert_eq!(json_path(&o, ".spec.list[1]"), vec![json!("b")]);
        assert!(json_path(&o, ".status.missing").is_empty());
    }

    #[test]
    fn ages_read_like_kubectl() {
        let now: jiff::Timestamp = "2026-01-03T02:00:00Z".parse().unwrap();
        assert_eq!(age("2026-01-01T00:00:00Z", now), "2d");
        assert_eq!(age("2026-01-03T01:00:00Z", now), "60m");
        assert_eq!(age("2026-01-03T01:59:30Z", now), "30s");
        assert_eq!(age("not a time", now), "<unknown>");
    }
}
