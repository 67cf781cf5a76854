//! Schema-level admission of custom resources, as kube-apiserver runs it after defaulting and
//! pruning: structural validation against the CRD's OpenAPI schema, then (on a structurally
//! valid object) the CEL `x-kubernetes-validations`, transition rules seeing the stored object as
//! `oldSelf`. Every violation is one cause of a single 422 `Invalid`.

use kube::core::cel::Validator;
use serde_json::Value;

use crate::{errors::ApiError, resources::ResourceType};

/// Checks `object` (and the transition from `old`): every kind's labels and annotations, a
/// ConfigMap's and a Secret's data keys, and a custom resource against its schema.
pub fn admit(t: &ResourceType, object: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let mut causes = metadata_causes(object);
    if t.group.is_empty() && matches!(t.kind.as_str(), "ConfigMap" | "Secret") {
        causes.extend(data_key_causes(object));
    }
    let Some(schema) = &t.schema else {
        if causes.is_empty() {
            return Ok(());
        }
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        return Err(ApiError::invalid_object(&t.kind, &t.group, name, &causes));
    };
    causes.extend(
        crate::schema::validate(schema, object, "")
            .into_iter()
            .map(|e| (e.path, e.message, "FieldValueInvalid".to_string())),
    );
    // CEL runs only on a structurally valid object, with the rules compiled at installation.
    let cel = || match &t.rules {
        Some(rules) => Validator::new().validate_compiled(&rules.0, object, old),
        None => Validator::new().validate(schema, object, old),
    };
    if causes.is_empty()
        && let Err(errors) = cel()
    {
        for error in errors.into_vec() {
            let reason = error
                .reason
                .clone()
                .unwrap_or_else(|| "FieldValueInvalid".into());
            causes.push((
                error.field_path.clone(),
                format!("Invalid value: \"object\": {}", error.message),
                reason,
            ));
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    Err(ApiError::invalid_object(&t.kind, &t.group, name, &causes))
}

/// A cause of a 422: (field path, message, reason).
type Cause = (String, String, String);

const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const PREFIX: &str = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const CONFIG_KEY: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, at most 63 characters.
fn is_name_part(text: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    text.len() <= 63
        && text.starts_with(alnum)
        && text.ends_with(alnum)
        && text
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
}

/// Why a label or annotation key is not a qualified name (`[prefix/]name`), if it is not.
fn qualified_name_error(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && !is_dns_subdomain(prefix)
    {
        return Some(PREFIX.to_string());
    }
    if name.is_empty() {
        return Some("name part must be non-empty".to_string());
    }
    if name.len() > 63 {
        return Some("name part must be no more than 63 characters".to_string());
    }
    (!is_name_part(name)).then(|| NAME_PART.to_string())
}

/// kube-apiserver's checks of `metadata.labels` (qualified keys, label values) and
/// `metadata.annotations` (qualified keys), for every kind.
fn metadata_causes(object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let invalid = |field: &str, value: &str, why: &str| {
        (
            field.to_string(),
            format!("Invalid value: {}: {why}", Value::String(value.to_string())),
            "FieldValueInvalid".to_string(),
        )
    };
    if let Some(labels) = object["metadata"]["labels"].as_object() {
        for (key, value) in labels {
            if let Some(why) = qualified_name_error(key) {
                causes.push(invalid("metadata.labels", key, &why));
            }
            let value = value.as_str().unwrap_or_default();
            if !value.is_empty() && !is_name_part(value) {
                causes.push(invalid("metadata.labels", value, LABEL_VALUE));
            }
        }
    }
    if let Some(annotations) = object["metadata"]["annotations"].as_object() {
        for key in annotations.keys() {
            if let Some(why) = qualified_name_error(&key.to_ascii_lowercase()) {
                causes.push(invalid("metadata.annotations", key, &why));
            }
        }
    }
    causes
}

/// A ConfigMap's `data` and `binaryData` keys and a Secret's `data` and `stringData` keys:
/// `[-._a-zA-Z0-9]+`, not `.` or `..`, at most 253 characters.
fn data_key_causes(object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for field in ["data", "binaryData", "stringData"] {
        for key in object[field].as_object().into_iter().flat_map(|m| m.keys()) {
            let valid = !key.is_empty()
                && key.len() <= 253
                && key != "."
                && key != ".."
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !valid {
                causes.push((
                    format!("{field}[{key}]"),
                    format!(
                        "Invalid value: {}: {CONFIG_KEY}",
                        Value::String(key.clone())
                    ),
                    "FieldValueInvalid".to_string(),
                ));
            }
        }
    }
    causes
}

/// Whether `name` is a lowercase RFC 1123 subdomain (what kube-apiserver asks of most object
/// names and of label key prefixes): dot-separated labels of lowercase alphanumerics and `-`,
/// none starting or ending with `-`, 253 characters at most.
pub(crate) fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    use crate::resources::builtin_type as builtin;

    /// kube-apiserver refuses invalid label keys and values and invalid data keys with 422.
    #[test]
    fn labels_and_data_keys_are_validated_as_kube_apiserver_validates_them() {
        let configmaps = builtin("configmaps");
        let good = json!({"metadata": {"name": "x",
            "labels": {"app.kubernetes.io/name": "barbican", "empty": ""},
            "annotations": {"barbican.c5c3.io/applied-hash": "a"}},
            "data": {"barbican.conf": "x", "KEY_NAME": "y"}});
        assert!(admit(&configmaps, &good, None).is_ok());
        let bad_label = json!({"metadata": {"name": "x", "labels": {"bad key!": "v"}}});
        let refused = admit(&configmaps, &bad_label, None).unwrap_err();
        assert_eq!(refused.code, 422);
        assert!(
            refused.message.starts_with(
                "ConfigMap \"x\" is invalid: metadata.labels: Invalid value: \"bad key!\": name part must consist of"
            ),
            "{}",
            refused.message
        );
        let bad_value = json!({"metadata": {"name": "x", "labels": {"a": "-v-"}}});
        assert!(
            admit(&configmaps, &bad_value, None)
                .unwrap_err()
                .message
                .contains("a valid label must be an empty string")
        );
        let bad_prefix = json!({"metadata": {"name": "x", "labels": {"Bad_Prefix/a": "v"}}});
        assert!(admit(&configmaps, &bad_prefix, None).is_err());
        let bad_key = json!({"metadata": {"name": "x"}, "data": {"bad key": "v"}});
        let refused = admit(&configmaps, &bad_key, None).unwrap_err();
        assert!(
            refused.message.contains(
                "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of"
            ),
            "{}",
            refused.message
        );
        let secret = json!({"metadata": {"name": "s"}, "stringData": {"..": "v"}});
        assert!(admit(&builtin("secrets"), &secret, None).is_err());
        // Data keys mean nothing to other kinds.
        let service = json!({"metadata": {"name": "s"}, "data": {"bad key": "v"}});
        assert!(admit(&builtin("services"), &service, None).is_ok());
    }
}
