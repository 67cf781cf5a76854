//! The webhook's API-backed lookups, against a mocked API server: the requests they send and
//! how answers and failures become the state the rules see.

use barbican_operator::{
    admission::{
        review::{Endpoint, decode},
        server::{ApiLookups, LookupSource},
    },
    api::fixtures::{admission_review, managed_store, minimal_barbican, with_spec},
};
use http::{Request, Response};
use kube::{Client, client::Body};
use serde_json::{Value, json};

fn request(
    kind: &str,
    object: Value,
) -> kube::core::admission::AdmissionRequest<kube::core::DynamicObject> {
    decode(&admission_review(kind, "CREATE", &object, None)).unwrap()
}

/// Answers each request the client sends with `answer(method, path)`, recording the paths.
fn mock_client(
    answer: fn(&str, &str) -> (u16, Value),
) -> (Client, tokio::task::JoinHandle<Vec<String>>) {
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some((request, send)) = handle.next_request().await {
            let path = request.uri().path_and_query().unwrap().to_string();
            let (status, body) = answer(request.method().as_str(), request.uri().path());
            seen.push(format!("{} {path}", request.method()));
            send.send_response(
                Response::builder()
                    .status(status)
                    .body(Body::from(serde_json::to_vec(&body).unwrap()))
                    .unwrap(),
            );
        }
        seen
    });
    (Client::new(service, "default"), server)
}

#[tokio::test]
async fn an_existing_priority_class_is_found() {
    let (client, server) = mock_client(|_, path| match path {
        "/apis/scheduling.k8s.io/v1/priorityclasses/gold" => (
            200,
            json!({
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "gold"}, "value": 1000
            }),
        ),
        _ => (
            404,
            json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": "not found"}),
        ),
    });
    let lookups = ApiLookups::new(client);
    let gold = with_spec(
        minimal_barbican(),
        &json!({"deployment": {"priorityClassName": "gold"}}),
    );
    let known = lookups
        .known_state(Endpoint::ValidateBarbican, &request("Barbican", gold))
        .await;
    assert_eq!(known.priority_classes, ["gold"]);
    assert_eq!(known.unavailable, None);
    let typo = with_spec(
        minimal_barbican(),
        &json!({"deployment": {"priorityClassName": "gld"}}),
    );
    let known = lookups
        .known_state(Endpoint::ValidateBarbican, &request("Barbican", typo))
        .await;
    assert!(known.priority_classes.is_empty() && known.unavailable.is_none());
    drop(lookups);
    let seen = server.await.unwrap();
    assert_eq!(
        seen,
        [
            "GET /apis/scheduling.k8s.io/v1/priorityclasses/gold",
            "GET /apis/scheduling.k8s.io/v1/priorityclasses/gld"
        ]
    );
}

#[tokio::test]
async fn sibling_stores_are_listed_uncached_in_the_store_namespace() {
    let (client, server) = mock_client(|_, _| {
        let mut sibling = managed_store();
        sibling["metadata"]["name"] = json!("openbao-other");
        (
            200,
            json!({"apiVersion": "barbican.openstack.c5c3.io/v1alpha1", "kind": "BarbicanSecretStoreList",
            "metadata": {"resourceVersion": "7"}, "items": [sibling]}),
        )
    });
    let known = ApiLookups::new(client)
        .known_state(
            Endpoint::ValidateSecretStore,
            &request("BarbicanSecretStore", managed_store()),
        )
        .await;
    assert_eq!(known.secret_stores.len(), 1);
    assert_eq!(
        known.secret_stores[0].metadata.name.as_deref(),
        Some("openbao-other")
    );
    let seen = server.await.unwrap();
    assert_eq!(
        seen,
        [
            "GET /apis/barbican.openstack.c5c3.io/v1alpha1/namespaces/openstack/barbicansecretstores?"
        ]
    );
}

#[tokio::test]
async fn an_unreachable_api_server_makes_the_lookups_unavailable() {
    let (client, _server) = mock_client(|_, _| {
        (
            503,
            json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "ServiceUnavailable", "code": 503, "message": "etcd is down"}),
        )
    });
    let known = ApiLookups::new(client)
        .known_state(
            Endpoint::ValidateSecretStore,
            &request("BarbicanSecretStore", managed_store()),
        )
        .await;
    assert!(
        known
            .unavailable
            .as_deref()
            .is_some_and(|m| m.contains("etcd is down")),
        "{known:?}"
    );
}
