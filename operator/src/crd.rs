//! The CustomResourceDefinition manifests, generated from the Rust types.
//!
//! `deploy/crds/` holds this output; a test fails when the committed files drift from it, so
//! the YAML is never edited by hand.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use crate::api::{Barbican, BarbicanSecretStore};

/// Failure to turn a CRD into YAML.
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    /// The YAML serializer refused the CRD.
    #[error("serializing CRD {name} to YAML: {source}")]
    Serialize {
        /// The CRD's metadata.name.
        name: String,
        /// What the serializer said.
        source: serde_saphyr::SerializeError,
    },
}

/// Both CRDs, Barbican first.
pub fn definitions() -> Vec<CustomResourceDefinition> {
    vec![Barbican::crd(), BarbicanSecretStore::crd()]
}

/// The `openAPIV3Schema` of a kind's CRD as JSON: what the API server validates and defaults
/// against, and what CEL rules are evaluated on.
pub fn open_api_schema<K: CustomResourceExt>() -> serde_json::Value {
    let crd = K::crd();
    let schema = crd.spec.versions[0]
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .expect("a derived CRD carries an openAPIV3Schema");
    serde_json::to_value(schema).expect("a schema serializes to JSON")
}

/// One generated manifest: the file it lives in under `deploy/crds/` and its YAML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// File name, `<plural>.<group>.yaml`.
    pub file_name: String,
    /// The YAML document.
    pub yaml: String,
}

/// Renders every CRD as YAML, in the order of [`definitions`].
pub fn manifests() -> Result<Vec<Manifest>, CrdError> {
    definitions()
        .into_iter()
        .map(|crd| {
            let name = crd.metadata.name.clone().unwrap_or_default();
            let yaml = serde_saphyr::to_string(&crd).map_err(|source| CrdError::Serialize {
                name: name.clone(),
                source,
            })?;
            Ok(Manifest {
                file_name: format!("{name}.yaml"),
                yaml,
            })
        })
        .collect()
}

/// All CRDs as one multi-document YAML stream, as `barbican-operator crd` prints it.
pub fn stream(manifests: &[Manifest]) -> String {
    manifests
        .iter()
        .map(|m| format!("---\n{}", m.yaml))
        .collect::<Vec<_>>()
        .join("")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(crd: &CustomResourceDefinition) -> Vec<(String, String, String)> {
        crd.spec.versions[0]
            .additional_printer_columns
            .as_ref()
            .expect("printer columns")
            .iter()
            .map(|c| (c.name.clone(), c.type_.clone(), c.json_path.clone()))
            .collect()
    }

    fn row(name: &str, type_: &str, path: &str) -> (String, String, String) {
        (name.into(), type_.into(), path.into())
    }

    #[test]
    fn barbican_prints_ready_release_endpoint_age() {
        assert_eq!(
            columns(&Barbican::crd()),
            vec![
                row(
                    "Ready",
                    "string",
                    ".status.conditions[?(@.type=='Ready')].status"
                ),
                row("Release", "string", ".status.installedRelease"),
                row("Endpoint", "string", ".status.endpoint"),
                row("Age", "date", ".metadata.creationTimestamp"),
            ]
        );
    }

    #[test]
    fn secret_store_prints_ready_type_default_barbican_age() {
        assert_eq!(
            columns(&BarbicanSecretStore::crd()),
            vec![
                row(
                    "Ready",
                    "string",
                    ".status.conditions[?(@.type=='Ready')].status"
                ),
                row("Type", "string", ".spec.type"),
                row("Default", "boolean", ".spec.isDefault"),
                row("Barbican", "string", ".spec.barbicanRef.name"),
                row("Age", "date", ".metadata.creationTimestamp"),
            ]
        );
    }

    #[test]
    fn both_kinds_are_namespaced_with_a_status_subresource() {
        for crd in definitions() {
            assert_eq!(crd.spec.group, "barbican.openstack.c5c3.io");
            assert_eq!(crd.spec.scope, "Namespaced");
            let version = &crd.spec.versions[0];
            assert_eq!(version.name, "v1alpha1");
            assert!(version.served && version.storage);
            assert!(
                version
                    .subresources
                    .as_ref()
                    .and_then(|s| s.status.as_ref())
                    .is_some()
            );
        }
    }
}
