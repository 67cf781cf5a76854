//! Content negotiation: the form a client asks for in `Accept` (`as=Table`,
//! `as=PartialObjectMetadata[List]`, `as=APIGroupDiscoveryList`) and the answer in that form,
//! as kube-apiserver gives it.

use super::*;

/// The media type of aggregated discovery, `apidiscovery.k8s.io/v2`: what kubectl and kube-rs's
/// `Discovery::run_aggregated` ask `/api` and `/apis` for, and what the answer's Content-Type
/// must say for client-go to read it as such.
pub(super) const AGGREGATED_DISCOVERY: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// How a read presents the objects it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presentation {
    /// The objects as stored.
    Object,
    /// A `meta.k8s.io/v1` Table (what `kubectl get` asks for).
    Table,
    /// `meta.k8s.io/v1` PartialObjectMetadata: metadata only (kube-rs's `get_metadata`,
    /// `list_metadata` and the metadata watcher; client-go's metadata informers).
    Metadata,
}

/// The media types an `Accept` header lists, each as its type (`application/json`) and its
/// parameters (`as`, `g`, `v`, …).
fn accepted(headers: &HeaderMap) -> Vec<(String, BTreeMap<String, String>)> {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    accept
        .split(',')
        .map(|media| {
            let mut parts = media.split(';');
            let media_type = parts.next().unwrap_or_default().trim().to_string();
            let params = parts
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect();
            (media_type, params)
        })
        .collect()
}

/// What the first media type the sim can answer asks for; kube-apiserver takes the first it
/// serves, so a Table asked before metadata wins, and plain JSON after both loses to them.
pub fn presentation(headers: &HeaderMap) -> Presentation {
    accepted(headers)
        .iter()
        .find_map(|(_, params)| match params.get("as").map(String::as_str) {
            None => Some(Presentation::Object),
            Some("Table") => Some(Presentation::Table),
            Some("PartialObjectMetadata" | "PartialObjectMetadataList")
                if params.get("g").is_none_or(|g| g == "meta.k8s.io") =>
            {
                Some(Presentation::Metadata)
            }
            Some(_) => None,
        })
        .unwrap_or(Presentation::Object)
}

/// kube-apiserver's protobuf media type.
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// Whether the first media type of `Accept` the sim serves is protobuf (kubectl's generators
/// and client-go's typed clients ask `application/vnd.kubernetes.protobuf, application/json`).
fn wants_protobuf(headers: &HeaderMap) -> bool {
    accepted(headers)
        .iter()
        .map(|(media_type, _)| media_type.as_str())
        .find(|media_type| {
            matches!(
                *media_type,
                PROTOBUF | "application/json" | "application/*" | "*/*"
            )
        })
        .is_some_and(|media_type| media_type == PROTOBUF)
}

/// One object as an answer in the negotiated type: protobuf when the client asks for it first
/// and the sim describes every field of the object (`crate::protobuf::encode`), JSON
/// otherwise (every client that asks for protobuf accepts JSON after it).
pub(super) fn object_response(code: u16, object: &Value, headers: &HeaderMap) -> Response {
    if wants_protobuf(headers)
        && let Some(bytes) = crate::protobuf::encode(object)
    {
        return (
            StatusCode::from_u16(code).unwrap_or(StatusCode::OK),
            [(header::CONTENT_TYPE, PROTOBUF)],
            bytes,
        )
            .into_response();
    }
    json_response(code, object)
}

/// Whether the client asks for aggregated discovery in `apidiscovery.k8s.io/v2` before any
/// plain JSON (a v2beta1-only client gets the plain lists, as from a server without v2beta1).
pub fn wants_aggregated_discovery(headers: &HeaderMap) -> bool {
    accepted(headers)
        .iter()
        .find_map(|(_, params)| match params.get("as").map(String::as_str) {
            None => Some(false),
            Some("APIGroupDiscoveryList")
                if params.get("g").map(String::as_str) == Some("apidiscovery.k8s.io")
                    && params.get("v").map(String::as_str) == Some("v2") =>
            {
                Some(true)
            }
            Some(_) => None,
        })
        .unwrap_or(false)
}

/// An object's PartialObjectMetadata: its type replaced by `meta.k8s.io/v1`, only its metadata.
pub(super) fn partial(object: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": object["metadata"]})
}

/// A list read (`items` and list `metadata`) in the asked form.
pub(super) fn present_list(
    t: &ResourceType,
    presentation: Presentation,
    list: Value,
    now: jiff::Timestamp,
) -> Value {
    let items = || list["items"].as_array().cloned().unwrap_or_default();
    match presentation {
        Presentation::Object => list,
        Presentation::Table => crate::table::table(t, &items(), &list["metadata"], now),
        Presentation::Metadata => json!({
            "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": list["metadata"],
            "items": items().iter().map(partial).collect::<Vec<_>>(),
        }),
    }
}

/// A single object read in the asked form.
pub(super) fn present_one(
    t: &ResourceType,
    presentation: Presentation,
    object: Value,
    now: jiff::Timestamp,
) -> Value {
    match presentation {
        Presentation::Object => object,
        Presentation::Table => {
            crate::table::table(t, std::slice::from_ref(&object), &json!({}), now)
        }
        Presentation::Metadata => partial(&object),
    }
}
