//! One AdmissionReview in, one AdmissionReview out: the webhook's whole behaviour as a pure
//! function, so the HTTPS server stays a thin adapter and every path is testable without TLS.

use kube::core::{
    DynamicObject,
    admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation as KubeOperation},
};
use serde::de::DeserializeOwned;

use super::{
    barbican::validate_barbican,
    defaulting::{default_barbican, patch_for, secret_store_patch},
    lookups::Lookups,
    secret_store::validate_secret_store,
    verdict::{Operation, Verdict},
};
use crate::api::{Barbican, BarbicanSecretStore};

/// The four webhook endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// Defaulting of a Barbican.
    MutateBarbican,
    /// Validation of a Barbican.
    ValidateBarbican,
    /// Defaulting of a BarbicanSecretStore.
    MutateSecretStore,
    /// Validation of a BarbicanSecretStore.
    ValidateSecretStore,
}

impl Endpoint {
    /// Every endpoint.
    pub const ALL: [Endpoint; 4] = [
        Endpoint::MutateBarbican,
        Endpoint::ValidateBarbican,
        Endpoint::MutateSecretStore,
        Endpoint::ValidateSecretStore,
    ];

    /// The URL path, as the webhook configurations name it.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::MutateBarbican => "/mutate-barbican-openstack-c5c3-io-v1alpha1-barbican",
            Endpoint::ValidateBarbican => "/validate-barbican-openstack-c5c3-io-v1alpha1-barbican",
            Endpoint::MutateSecretStore => {
                "/mutate-barbican-openstack-c5c3-io-v1alpha1-barbicansecretstore"
            }
            Endpoint::ValidateSecretStore => {
                "/validate-barbican-openstack-c5c3-io-v1alpha1-barbicansecretstore"
            }
        }
    }

    /// Whether the endpoint reviews Barbicans (else stores).
    pub fn is_barbican(self) -> bool {
        matches!(self, Endpoint::MutateBarbican | Endpoint::ValidateBarbican)
    }
}

/// Decodes a request body, or says why it is not an AdmissionReview v1 request. The caller
/// answers the reason with a denial ([`denial`]), never with an error status.
pub fn decode(body: &[u8]) -> Result<AdmissionRequest<DynamicObject>, String> {
    let review: AdmissionReview<DynamicObject> = serde_json::from_slice(body)
        .map_err(|e| format!("the request is not an AdmissionReview: {e}"))?;
    review
        .try_into()
        .map_err(|e| format!("the AdmissionReview carries no request: {e}"))
}

/// The answer to a body that did not decode.
pub fn denial(reason: String) -> AdmissionReview<DynamicObject> {
    AdmissionResponse::invalid(reason).into_review()
}

/// Answers one decoded request.
pub fn review(
    endpoint: Endpoint,
    request: &AdmissionRequest<DynamicObject>,
    lookups: &dyn Lookups,
) -> AdmissionResponse {
    let response = AdmissionResponse::from(request);
    let operation = match request.operation {
        KubeOperation::Create => Operation::Create,
        KubeOperation::Update => Operation::Update,
        // Deletion is not validated (a store carries no finalizer; the spec says so).
        KubeOperation::Delete | KubeOperation::Connect => return response,
    };
    let Some(object) = &request.object else {
        return response.deny("the request carries no object");
    };
    let raw = match serde_json::to_value(object) {
        Ok(raw) => raw,
        Err(e) => return response.deny(format!("the object does not serialize: {e}")),
    };
    match endpoint {
        Endpoint::MutateBarbican => match typed::<Barbican>(&raw) {
            Ok(before) => {
                let mut after = before.spec.clone();
                default_barbican(&mut after);
                patched(
                    response,
                    patch_for(&before.spec, &after).map_err(|e| e.to_string()),
                )
            }
            Err(denial) => response.deny(denial),
        },
        Endpoint::MutateSecretStore => patched(response, Ok(secret_store_patch(&raw))),
        Endpoint::ValidateBarbican => validated::<Barbican>(response, &raw, request, |old, new| {
            validate_barbican(operation, old, new, lookups)
        }),
        Endpoint::ValidateSecretStore => {
            validated::<BarbicanSecretStore>(response, &raw, request, |old, new| {
                validate_secret_store(operation, old, new, lookups)
            })
        }
    }
}

/// Decodes and answers a body: what the HTTPS handler calls.
pub fn answer(
    endpoint: Endpoint,
    body: &[u8],
    lookups: &dyn Lookups,
) -> AdmissionReview<DynamicObject> {
    match decode(body) {
        Ok(request) => review(endpoint, &request, lookups).into_review(),
        Err(reason) => denial(reason),
    }
}

/// Decodes the new and the stored object as `K` and answers with what `validate` says of them.
fn validated<K: DeserializeOwned>(
    response: AdmissionResponse,
    raw: &serde_json::Value,
    request: &AdmissionRequest<DynamicObject>,
    validate: impl FnOnce(Option<&K>, &K) -> Verdict,
) -> AdmissionResponse {
    let new = match typed::<K>(raw) {
        Ok(new) => new,
        Err(denial) => return response.deny(denial),
    };
    match old_object::<K>(request) {
        Ok(old) => verdict(response, validate(old.as_ref(), &new)),
        Err(denial) => response.deny(denial),
    }
}

fn typed<K: DeserializeOwned>(raw: &serde_json::Value) -> Result<K, String> {
    parse(raw).map_err(|e| format!("the object does not match the schema: {e}"))
}

/// Deserializes with the failing field's path in the error (`spec.logging.format: unknown
/// variant ...`), so a malformed object is refused naming the field.
fn parse<K: DeserializeOwned>(raw: &serde_json::Value) -> Result<K, String> {
    serde_path_to_error::deserialize(raw.clone()).map_err(|e| {
        let path = e.path().to_string();
        format!("{path}: {}", e.into_inner())
    })
}

fn old_object<K: DeserializeOwned>(
    request: &AdmissionRequest<DynamicObject>,
) -> Result<Option<K>, String> {
    match &request.old_object {
        None => Ok(None),
        Some(old) => {
            let raw = serde_json::to_value(old)
                .map_err(|e| format!("the old object does not serialize: {e}"))?;
            parse(&raw)
                .map(Some)
                .map_err(|e| format!("the stored object does not match the schema: {e}"))
        }
    }
}

fn patched(
    response: AdmissionResponse,
    patch: Result<json_patch::Patch, String>,
) -> AdmissionResponse {
    match patch {
        Ok(patch) if patch.0.is_empty() => response,
        Ok(patch) => match response.clone().with_patch(patch) {
            Ok(with_patch) => with_patch,
            Err(e) => response.deny(format!("the defaulting patch does not serialize: {e}")),
        },
        Err(e) => response.deny(format!("the defaulting patch could not be computed: {e}")),
    }
}

fn verdict(response: AdmissionResponse, verdict: Verdict) -> AdmissionResponse {
    let warnings = verdict.warnings.clone();
    let mut response = if verdict.allowed() {
        response
    } else {
        response.deny(verdict.message())
    };
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
    }
    response
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::{
        admission::lookups::KnownState,
        api::fixtures::{
            ADMISSION_UID, admission_review, managed_store, minimal_barbican, with_spec,
        },
    };

    fn body(kind: &str, operation: &str, object: Value, old: Option<Value>) -> Vec<u8> {
        admission_review(kind, operation, &object, old.as_ref())
    }

    fn response_of(review: &AdmissionReview<DynamicObject>) -> Value {
        serde_json::to_value(review).unwrap()["response"].clone()
    }

    #[test]
    fn mutating_a_barbican_answers_a_json_patch_of_the_defaults() {
        let answer = answer(
            Endpoint::MutateBarbican,
            &body("Barbican", "CREATE", minimal_barbican(), None),
            &KnownState::default(),
        );
        let response = response_of(&answer);
        assert_eq!(response["uid"], ADMISSION_UID);
        assert_eq!(response["allowed"], true);
        assert_eq!(response["patchType"], "JSONPatch");
        let patch = patch_text(&response["patch"]);
        assert!(
            patch.contains("/spec/serviceUser/username")
                && patch.contains("dogpile.cache.pymemcache"),
            "{patch}"
        );
    }

    #[test]
    fn validating_a_barbican_denies_with_every_violation_and_keeps_warnings() {
        let bad = with_spec(
            minimal_barbican(),
            &json!({"image": {"tag": null}, "deployment": {"replicas": 0}}),
        );
        let response = response_of(&answer(
            Endpoint::ValidateBarbican,
            &body("Barbican", "CREATE", bad, None),
            &KnownState::default(),
        ));
        assert_eq!(response["allowed"], false);
        let message = response["status"]["message"].as_str().unwrap();
        assert!(
            message.contains("spec.image") && message.contains("spec.deployment.replicas"),
            "{message}"
        );

        let brownfield = with_spec(
            minimal_barbican(),
            &json!({"database": {"clusterRef": null, "host": "db"}}),
        );
        let response = response_of(&answer(
            Endpoint::ValidateBarbican,
            &body("Barbican", "CREATE", brownfield, None),
            &KnownState::default(),
        ));
        assert_eq!(response["allowed"], true);
        assert!(
            response["warnings"][0]
                .as_str()
                .unwrap()
                .contains("brownfield database")
        );
    }

    #[test]
    fn store_endpoints_default_the_mount_and_check_siblings() {
        let answered = response_of(&answer(
            Endpoint::MutateSecretStore,
            &body("BarbicanSecretStore", "CREATE", managed_store(), None),
            &KnownState::default(),
        ));
        let patch = patch_text(&answered["patch"]);
        assert_eq!(
            patch,
            r#"[{"op":"add","path":"/spec/openBao/kvMountpoint","value":"barbican"}]"#
        );

        let mut sibling = managed_store();
        sibling["metadata"]["name"] = json!("openbao-other");
        let known = KnownState {
            secret_stores: vec![serde_json::from_value(sibling).unwrap()],
            ..Default::default()
        };
        let denied = response_of(&answer(
            Endpoint::ValidateSecretStore,
            &body("BarbicanSecretStore", "CREATE", managed_store(), None),
            &known,
        ));
        assert_eq!(denied["allowed"], false);
        assert!(
            denied["status"]["message"]
                .as_str()
                .unwrap()
                .contains("already the default"),
            "{denied}"
        );
    }

    #[test]
    fn updates_see_the_old_object() {
        let old = with_spec(
            minimal_barbican(),
            &json!({"targetClusterRef": {"name": "east"}}),
        );
        let new = with_spec(
            minimal_barbican(),
            &json!({"targetClusterRef": {"name": "west"}}),
        );
        let response = response_of(&answer(
            Endpoint::ValidateBarbican,
            &body("Barbican", "UPDATE", new, Some(old)),
            &KnownState::default(),
        ));
        assert_eq!(response["allowed"], false);
        assert!(
            response["status"]["message"]
                .as_str()
                .unwrap()
                .contains("targetClusterRef is immutable")
        );
    }

    #[test]
    fn malformed_requests_are_denied_with_a_reason() {
        for (bytes, reason) in [
            (
                b"not json".to_vec(),
                "the request is not an AdmissionReview",
            ),
            (
                br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec(),
                "carries no request",
            ),
        ] {
            let response = response_of(&answer(
                Endpoint::ValidateBarbican,
                &bytes,
                &KnownState::default(),
            ));
            assert_eq!(response["allowed"], false);
            assert!(
                response["status"]["message"]
                    .as_str()
                    .unwrap()
                    .contains(reason),
                "{response}"
            );
        }
        let wrong_shape = json!({"apiVersion": "barbican.openstack.c5c3.io/v1alpha1", "kind": "Barbican",
            "metadata": {"name": "b", "namespace": "openstack"}, "spec": {"openStackRelease": 2025}});
        let response = response_of(&answer(
            Endpoint::ValidateBarbican,
            &body("Barbican", "CREATE", wrong_shape, None),
            &KnownState::default(),
        ));
        assert_eq!(response["allowed"], false);
        assert!(
            response["status"]["message"]
                .as_str()
                .unwrap()
                .contains("does not match the schema"),
            "{response}"
        );
    }

    #[test]
    fn deletes_are_admitted_unvalidated() {
        let response = response_of(&answer(
            Endpoint::ValidateSecretStore,
            &body("BarbicanSecretStore", "DELETE", managed_store(), None),
            &KnownState {
                unavailable: Some("down".into()),
                ..Default::default()
            },
        ));
        assert_eq!(response["allowed"], true);
    }

    /// The patch bytes of a response. kube encodes `[]byte` as an array of numbers, which the
    /// API server's JSON decoder accepts as readily as base64.
    fn patch_text(patch: &Value) -> String {
        let bytes: Vec<u8> = patch
            .as_array()
            .expect("patch bytes")
            .iter()
            .map(|b| b.as_u64().unwrap() as u8)
            .collect();
        String::from_utf8(bytes).unwrap()
    }
}
