//! Steps about Keystone's service catalog (`spec.keystone.catalog`): regions and registrations
//! made by someone else, endpoints deleted by hand, and what a client finds, read the way
//! castellan and keystoneauth find the key manager: from the catalog of a scoped token.
//!
//! The operator reaches the management cluster's fake Keystone (`keystone.openstack.svc:5000`)
//! wherever the Barbican's children live, so these steps read that one.

use std::time::Duration;

use barbican_fakes::keystone::FakeKeystone;
use cucumber::{given, then, when};
use serde_json::Value;

use crate::{
    barbican_api_steps::token_document,
    sim_env::SimEnv,
    world::{BarbicanWorld, ok},
};

fn keystone(env: &SimEnv) -> &FakeKeystone {
    &env.site.keystone
}

/// The endpoints of services of `service_type`, as `interface region url` lines, sorted.
fn registered(keystone: &FakeKeystone, service_type: &str) -> Vec<String> {
    let services: Vec<String> = keystone
        .services()
        .into_iter()
        .filter(|s| s.type_ == service_type)
        .map(|s| s.id)
        .collect();
    let mut lines: Vec<String> = keystone
        .endpoints()
        .into_iter()
        .filter(|e| services.contains(&e.service_id))
        .map(|e| format!("{} {} {}", e.interface, e.region, e.url))
        .collect();
    lines.sort();
    lines
}

#[given(expr = "the Keystone region {string} exists")]
#[when(expr = "the Keystone region {string} exists")]
async fn region_exists(world: &mut BarbicanWorld, region: String) {
    keystone(world.env()).add_region(&region);
}

#[given(
    expr = "someone else registered the {word} endpoint {string} of the service type {string} in the region {string}"
)]
async fn foreign_registration(
    world: &mut BarbicanWorld,
    interface: String,
    url: String,
    service_type: String,
    region: String,
) {
    keystone(world.env()).register(&service_type, &interface, &region, &url);
}

#[when(
    expr = "an administrator deletes the {word} endpoint of the service type {string} in the region {string}"
)]
async fn delete_by_hand(
    world: &mut BarbicanWorld,
    interface: String,
    service_type: String,
    region: String,
) {
    let keystone = keystone(world.env());
    let services: Vec<String> = keystone
        .services()
        .into_iter()
        .filter(|s| s.type_ == service_type)
        .map(|s| s.id)
        .collect();
    let found = keystone.endpoints().into_iter().find(|e| {
        services.contains(&e.service_id) && e.interface == interface && e.region == region
    });
    let endpoint = found.unwrap_or_else(|| {
        panic!("no {interface} endpoint of {service_type:?} in {region:?} to delete")
    });
    assert!(keystone.remove_endpoint(&endpoint.id));
}

#[then(expr = "within {int} minute(s) Keystone's catalog has for the service type {string}:")]
async fn catalog_has(
    world: &mut BarbicanWorld,
    minutes: u64,
    service_type: String,
    step: &cucumber::gherkin::Step,
) {
    let table = step
        .table
        .as_ref()
        .expect("an interface | region | url table");
    let mut wanted: Vec<String> = table.rows.iter().skip(1).map(|row| row.join(" ")).collect();
    wanted.sort();
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let (wanted, service_type) = (wanted.clone(), service_type.clone());
            async move {
                let now = registered(keystone(env), &service_type);
                if now == wanted {
                    Ok(())
                } else {
                    Err(format!(
                        "the {service_type} endpoints are {now:?}, not {wanted:?}"
                    ))
                }
            }
        })
        .await);
}

#[then(expr = "within {int} minute(s) Keystone's catalog has no service of the type {string}")]
async fn catalog_has_no_service(world: &mut BarbicanWorld, minutes: u64, service_type: String) {
    let env = world.env();
    ok(env
        .eventually(Duration::from_secs(minutes * 60), || {
            let service_type = service_type.clone();
            async move {
                let left: Vec<String> = keystone(env)
                    .services()
                    .into_iter()
                    .filter(|s| s.type_ == service_type)
                    .map(|s| s.name)
                    .collect();
                if left.is_empty() {
                    Ok(())
                } else {
                    Err(format!("services of {service_type:?} are left: {left:?}"))
                }
            }
        })
        .await);
}

/// The URL the catalog of `document` (a token) lists for `service_type`'s `interface` in
/// `region`: what keystoneauth's `get_endpoint` returns.
pub fn discovered(
    document: &Value,
    service_type: &str,
    interface: &str,
    region: &str,
) -> Option<String> {
    document["token"]["catalog"]
        .as_array()?
        .iter()
        .filter(|s| s["type"] == service_type)
        .flat_map(|s| s["endpoints"].as_array().into_iter().flatten())
        .find(|e| {
            e["interface"] == interface && (e["region_id"] == region || e["region"] == region)
        })
        .and_then(|e| e["url"].as_str().map(str::to_string))
}

#[then(
    expr = "the user {string} with the password {string} of the project {string} finds the {string} endpoints:"
)]
async fn user_finds(
    world: &mut BarbicanWorld,
    user: String,
    password: String,
    project: String,
    service_type: String,
    step: &cucumber::gherkin::Step,
) {
    let document = token_document(world.env(), &user, &password, &project)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let table = step
        .table
        .as_ref()
        .expect("an interface | region | url table");
    for row in table.rows.iter().skip(1) {
        assert_eq!(
            discovered(&document, &service_type, &row[0], &row[1]).as_deref(),
            Some(row[2].as_str()),
            "the {} {service_type} endpoint in {} in the catalog of {user}'s token: {}",
            row[0],
            row[1],
            document["token"]["catalog"]
        );
    }
}

#[then(expr = "Keystone holds no live token of the user {string}")]
async fn no_live_token(world: &mut BarbicanWorld, user: String) {
    let left = keystone(world.env()).live_tokens_of(&user);
    assert_eq!(left, 0, "{user} has {left} live Keystone token(s) left");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_reads_the_interface_in_the_region_of_the_type() {
        let document = serde_json::json!({"token": {"catalog": [
            {"type": "identity", "endpoints": [
                {"interface": "public", "region_id": "RegionOne", "url": "http://ks"}]},
            {"type": "key-manager", "endpoints": [
                {"interface": "internal", "region_id": "RegionOne", "url": "http://kms:9311"},
                {"interface": "public", "region": "RegionTwo", "url": "https://kms2"},
                {"interface": "public", "region_id": "RegionOne", "url": "https://kms"}]}]}});
        let find = |interface, region| discovered(&document, "key-manager", interface, region);
        assert_eq!(find("public", "RegionOne").as_deref(), Some("https://kms"));
        assert_eq!(find("public", "RegionTwo").as_deref(), Some("https://kms2"));
        assert_eq!(
            find("internal", "RegionOne").as_deref(),
            Some("http://kms:9311")
        );
        assert_eq!(find("admin", "RegionOne"), None);
    }
}
