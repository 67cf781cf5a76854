//! Schema-level admission of custom resources, as kube-apiserver runs it after defaulting and
//! pruning: structural validation against the CRD's OpenAPI schema, then (on a structurally
//! valid object) the CEL `x-kubernetes-validations`, transition rules seeing the stored object as
//! `oldSelf`. Every violation is one cause of a single 422 `Invalid`.

use kube::core::cel::Validator;
use serde_json::Value;

use crate::{errors::ApiError, resources::ResourceType};

/// Checks `object` (and the transition from `old`) against the type's schema.
pub fn admit(t: &ResourceType, object: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let Some(schema) = &t.schema else {
        return Ok(());
    };
    let mut causes: Vec<(String, String, String)> = crate::schema::validate(schema, object, "")
        .into_iter()
        .map(|e| (e.path, e.message, "FieldValueInvalid".to_string()))
        .collect();
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
