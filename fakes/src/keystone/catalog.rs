//! The fake Keystone's service catalog: regions, services and endpoints with Keystone's v3
//! shapes and policy, and the catalog a scoped token carries (what castellan and
//! keystoneauth's `get_endpoint` read to find the key manager).
//!
//! Endpoints: `GET /v3/services[?type=]`, `POST /v3/services`, `GET`/`DELETE
//! /v3/services/{id}` (a deleted service takes its endpoints), `GET
//! /v3/endpoints[?service_id=&interface=&region_id=]`, `POST /v3/endpoints`, `GET`/`PATCH`/
//! `DELETE /v3/endpoints/{id}`, `GET /v3/regions[/{id}]`. As Keystone's default policy has it,
//! each needs a live project-scoped token of a user with the `admin` role: 401 without a live
//! token, 403 without the role. An endpoint's region must exist (400 otherwise), as must its
//! service; interfaces are `public`, `internal` and `admin`.

use std::collections::{BTreeMap, BTreeSet};

use axum::{
    Json,
    extract::{Path, Query, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

use super::{Shared, error, id_of, poisoned, unauthorized};

/// The region Keystone's bootstrap creates.
pub const BOOTSTRAP_REGION: &str = "RegionOne";
/// The interfaces Keystone accepts.
pub const INTERFACES: [&str; 3] = ["public", "internal", "admin"];

/// A service in the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Service {
    /// Its id.
    pub id: String,
    /// Its type (`key-manager`).
    pub type_: String,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
}

/// An endpoint in the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Its id.
    pub id: String,
    /// The service it belongs to.
    pub service_id: String,
    /// `public`, `internal` or `admin`.
    pub interface: String,
    /// Its region.
    pub region: String,
    /// Its URL.
    pub url: String,
}

/// What the catalog holds.
#[derive(Debug)]
pub(super) struct Catalog {
    pub(super) regions: BTreeSet<String>,
    pub(super) services: BTreeMap<String, Service>,
    pub(super) endpoints: BTreeMap<String, Endpoint>,
    created: u64,
    /// Writes (creates, updates, deletes) answered, for tests counting what a pass changed.
    pub(super) writes: u64,
}

impl Default for Catalog {
    fn default() -> Self {
        Self {
            regions: BTreeSet::from([BOOTSTRAP_REGION.to_string()]),
            services: BTreeMap::new(),
            endpoints: BTreeMap::new(),
            created: 0,
            writes: 0,
        }
    }
}

impl Catalog {
    /// A fresh id for a `kind`.
    fn next_id(&mut self, kind: &str) -> String {
        self.created = self.created.saturating_add(1);
        id_of(kind, &format!("{}", self.created))
    }

    pub(super) fn add_service(&mut self, type_: &str, name: &str, description: &str) -> Service {
        let service = Service {
            id: self.next_id("service"),
            type_: type_.to_string(),
            name: name.to_string(),
            description: description.to_string(),
        };
        self.services.insert(service.id.clone(), service.clone());
        service
    }

    pub(super) fn add_endpoint(
        &mut self,
        service_id: &str,
        interface: &str,
        region: &str,
        url: &str,
    ) -> Endpoint {
        let endpoint = Endpoint {
            id: self.next_id("endpoint"),
            service_id: service_id.to_string(),
            interface: interface.to_string(),
            region: region.to_string(),
            url: url.to_string(),
        };
        self.endpoints.insert(endpoint.id.clone(), endpoint.clone());
        endpoint
    }

    /// The catalog of a token: every service with its endpoints, the fake's own identity
    /// service first.
    pub(super) fn token_catalog(&self, identity: Value) -> Value {
        let mut entries = vec![identity];
        for service in self.services.values() {
            let endpoints: Vec<Value> = self
                .endpoints
                .values()
                .filter(|e| e.service_id == service.id)
                .map(|e| {
                    json!({"id": e.id, "interface": e.interface, "region": e.region,
                        "region_id": e.region, "url": e.url})
                })
                .collect();
            entries.push(json!({"id": service.id, "type": service.type_,
                "name": service.name, "endpoints": endpoints}));
        }
        Value::Array(entries)
    }
}

fn service_json(service: &Service, base: &str) -> Value {
    json!({"id": service.id, "type": service.type_, "name": service.name,
        "description": service.description, "enabled": true,
        "links": {"self": format!("{base}/v3/services/{}", service.id)}})
}

fn endpoint_json(endpoint: &Endpoint, base: &str) -> Value {
    json!({"id": endpoint.id, "service_id": endpoint.service_id,
        "interface": endpoint.interface, "region": endpoint.region,
        "region_id": endpoint.region, "url": endpoint.url, "enabled": true,
        "links": {"self": format!("{base}/v3/endpoints/{}", endpoint.id)}})
}

/// The caller may administer the catalog: a live scoped token of a user with `admin`.
fn authorize(shared: &Shared, headers: &HeaderMap, action: &str) -> Result<(), Box<Response>> {
    let now = shared.clock.now();
    let Some(state) = shared.keystone() else {
        return Err(Box::new(poisoned()));
    };
    let caller = headers
        .get("x-auth-token")
        .and_then(|v| v.to_str().ok())
        .and_then(|t| state.live(t, now))
        .ok_or_else(|| Box::new(unauthorized()))?;
    let admin = caller.scoped
        && state
            .user(&caller.user)
            .is_some_and(|u| u.roles.iter().any(|r| r == "admin"));
    if admin {
        Ok(())
    } else {
        Err(Box::new(error(
            StatusCode::FORBIDDEN,
            &format!("You are not authorized to perform the requested action: identity:{action}."),
        )))
    }
}

/// Runs `f` on the catalog once the caller is authorized for `action`.
fn with_catalog(
    shared: &Shared,
    headers: &HeaderMap,
    action: &str,
    f: impl FnOnce(&mut Catalog, &str) -> Response,
) -> Response {
    if let Err(refused) = authorize(shared, headers, action) {
        return *refused;
    }
    let base = shared.base();
    match shared.keystone() {
        Some(mut state) => f(&mut state.catalog, &base),
        None => poisoned(),
    }
}

fn not_found(what: &str, id: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        &format!("Could not find {what}: {id}."),
    )
}

fn bad_request(message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, message)
}

/// The object under `key` in a JSON request body, or the 400 Keystone answers without one.
fn body_of(body: &[u8], key: &str) -> Result<Value, Box<Response>> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .map(|v| v[key].clone())
        .filter(Value::is_object)
        .ok_or_else(|| {
            Box::new(bad_request(&format!(
                "Invalid input for field '{key}': not an object."
            )))
        })
}

pub(super) async fn list_services(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    with_catalog(&shared, &headers, "list_services", |catalog, base| {
        let services: Vec<Value> = catalog
            .services
            .values()
            .filter(|s| query.get("type").is_none_or(|t| *t == s.type_))
            .filter(|s| query.get("name").is_none_or(|n| *n == s.name))
            .map(|s| service_json(s, base))
            .collect();
        Json(
            json!({"services": services, "links": {"self": format!("{base}/v3/services"),
            "previous": null, "next": null}}),
        )
        .into_response()
    })
}

pub(super) async fn create_service(
    State(shared): State<Shared>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    with_catalog(&shared, &headers, "create_service", |catalog, base| {
        let service = match body_of(&body, "service") {
            Ok(service) => service,
            Err(refused) => return *refused,
        };
        let Some(type_) = service["type"].as_str().filter(|t| !t.is_empty()) else {
            return bad_request("Invalid input for field 'type': 'type' is a required property.");
        };
        let text = |field: &str| service[field].as_str().unwrap_or_default().to_string();
        let created = catalog.add_service(type_, &text("name"), &text("description"));
        catalog.writes = catalog.writes.saturating_add(1);
        (
            StatusCode::CREATED,
            Json(json!({"service": service_json(&created, base)})),
        )
            .into_response()
    })
}

pub(super) async fn get_service(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    with_catalog(
        &shared,
        &headers,
        "get_service",
        |catalog, base| match catalog.services.get(&id) {
            Some(service) => Json(json!({"service": service_json(service, base)})).into_response(),
            None => not_found("service", &id),
        },
    )
}

pub(super) async fn delete_service(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    with_catalog(&shared, &headers, "delete_service", |catalog, _| {
        if catalog.services.remove(&id).is_none() {
            return not_found("service", &id);
        }
        catalog.endpoints.retain(|_, e| e.service_id != id);
        catalog.writes = catalog.writes.saturating_add(1);
        StatusCode::NO_CONTENT.into_response()
    })
}

pub(super) async fn list_endpoints(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    with_catalog(&shared, &headers, "list_endpoints", |catalog, base| {
        let matches = |e: &&Endpoint| {
            query.get("service_id").is_none_or(|s| *s == e.service_id)
                && query.get("interface").is_none_or(|i| *i == e.interface)
                && query.get("region_id").is_none_or(|r| *r == e.region)
        };
        let endpoints: Vec<Value> = catalog
            .endpoints
            .values()
            .filter(matches)
            .map(|e| endpoint_json(e, base))
            .collect();
        Json(
            json!({"endpoints": endpoints, "links": {"self": format!("{base}/v3/endpoints"),
            "previous": null, "next": null}}),
        )
        .into_response()
    })
}

/// The checks Keystone makes of an endpoint's fields.
fn endpoint_problem(catalog: &Catalog, interface: &str, region: &str, url: &str) -> Option<String> {
    if !INTERFACES.contains(&interface) {
        return Some(format!(
            "Invalid input for field 'interface': '{interface}' does not match '^(?:admin|internal|public)$'."
        ));
    }
    if url.is_empty() {
        return Some("Invalid input for field 'url': 'url' is a required property.".into());
    }
    if !catalog.regions.contains(region) {
        return Some(format!(
            "Expecting to find region in endpoint - the server could not comply with the request since it is either malformed or otherwise incorrect. Region {region} not found."
        ));
    }
    None
}

pub(super) async fn create_endpoint(
    State(shared): State<Shared>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    with_catalog(&shared, &headers, "create_endpoint", |catalog, base| {
        let endpoint = match body_of(&body, "endpoint") {
            Ok(endpoint) => endpoint,
            Err(refused) => return *refused,
        };
        let text = |field: &str| endpoint[field].as_str().unwrap_or_default().to_string();
        let service_id = text("service_id");
        if !catalog.services.contains_key(&service_id) {
            return bad_request(&format!("Could not find service: {service_id}."));
        }
        let region = match endpoint["region_id"].as_str() {
            Some(region) => region.to_string(),
            None => text("region"),
        };
        let (interface, url) = (text("interface"), text("url"));
        if let Some(problem) = endpoint_problem(catalog, &interface, &region, &url) {
            return bad_request(&problem);
        }
        let created = catalog.add_endpoint(&service_id, &interface, &region, &url);
        catalog.writes = catalog.writes.saturating_add(1);
        (
            StatusCode::CREATED,
            Json(json!({"endpoint": endpoint_json(&created, base)})),
        )
            .into_response()
    })
}

pub(super) async fn get_endpoint(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    with_catalog(
        &shared,
        &headers,
        "get_endpoint",
        |catalog, base| match catalog.endpoints.get(&id) {
            Some(e) => Json(json!({"endpoint": endpoint_json(e, base)})).into_response(),
            None => not_found("endpoint", &id),
        },
    )
}

pub(super) async fn update_endpoint(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    with_catalog(&shared, &headers, "update_endpoint", |catalog, base| {
        let patch = match body_of(&body, "endpoint") {
            Ok(patch) => patch,
            Err(refused) => return *refused,
        };
        let Some(mut endpoint) = catalog.endpoints.get(&id).cloned() else {
            return not_found("endpoint", &id);
        };
        if let Some(url) = patch["url"].as_str() {
            endpoint.url = url.to_string();
        }
        if let Some(interface) = patch["interface"].as_str() {
            endpoint.interface = interface.to_string();
        }
        if let Some(region) = patch["region_id"].as_str() {
            endpoint.region = region.to_string();
        }
        if let Some(problem) = endpoint_problem(
            catalog,
            &endpoint.interface,
            &endpoint.region,
            &endpoint.url,
        ) {
            return bad_request(&problem);
        }
        catalog.endpoints.insert(id, endpoint.clone());
        catalog.writes = catalog.writes.saturating_add(1);
        Json(json!({"endpoint": endpoint_json(&endpoint, base)})).into_response()
    })
}

pub(super) async fn delete_endpoint(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    with_catalog(&shared, &headers, "delete_endpoint", |catalog, _| {
        if catalog.endpoints.remove(&id).is_none() {
            return not_found("endpoint", &id);
        }
        catalog.writes = catalog.writes.saturating_add(1);
        StatusCode::NO_CONTENT.into_response()
    })
}

fn region_json(id: &str, base: &str) -> Value {
    json!({"id": id, "description": "", "parent_region_id": null,
        "links": {"self": format!("{base}/v3/regions/{id}")}})
}

pub(super) async fn list_regions(State(shared): State<Shared>, headers: HeaderMap) -> Response {
    with_catalog(&shared, &headers, "list_regions", |catalog, base| {
        let regions: Vec<Value> = catalog
            .regions
            .iter()
            .map(|r| region_json(r, base))
            .collect();
        Json(json!({"regions": regions})).into_response()
    })
}

pub(super) async fn get_region(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    with_catalog(&shared, &headers, "get_region", |catalog, base| {
        if catalog.regions.contains(&id) {
            Json(json!({"region": region_json(&id, base)})).into_response()
        } else {
            not_found("region", &id)
        }
    })
}
