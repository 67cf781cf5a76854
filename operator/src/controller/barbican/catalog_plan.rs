//! What the KeystoneCatalog step does, as pure functions of the spec, the record in
//! `status.catalog` and what Keystone lists: which service the endpoints belong to, and per
//! interface whether to keep, create, update or leave an endpoint.
//!
//! The ownership rule: an endpoint is this Barbican's when `status.catalog` records its id,
//! or when it already says exactly what this Barbican would register (adopted, so a
//! registration made before the operator, by kolla-ansible or by hand, is not duplicated).
//! Any other endpoint of the service for the same interface and region is someone else's: it
//! is never updated or deleted, and the step reports `CatalogEndpointTaken` naming it.

use crate::api::{
    barbican::BarbicanSpec,
    keystone::{
        CatalogEndpointStatus, CatalogStatus, DEFAULT_REGION, KeystoneCatalogSpec, SERVICE_NAME,
        SERVICE_TYPE,
    },
};
use crate::keystone::{Endpoint, Service};

/// The interfaces registered, in the order they are written.
pub const INTERFACES: [&str; 2] = ["public", "internal"];

/// What the spec asks Keystone's catalog to say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desired {
    /// The region.
    pub region: String,
    /// The URL of each interface of [`INTERFACES`], in that order.
    pub urls: [String; 2],
}

impl Desired {
    /// The URL for `interface`.
    pub fn url(&self, interface: &str) -> Option<&str> {
        INTERFACES
            .iter()
            .position(|i| *i == interface)
            .and_then(|at| self.urls.get(at))
            .map(String::as_str)
    }

    /// A digest of what is asked, for the verification cache.
    pub fn fingerprint(&self) -> String {
        format!("{}|{}", self.region, self.urls.join("|"))
    }
}

/// The registration `catalog` asks for a Barbican `name` in `namespace`: the region
/// (`catalog.region`, else `spec.region`, else `RegionOne`), the public URL (`publicUrl`, else
/// the API URL the Barbican advertises) and the internal URL (`internalUrl`, else the
/// cluster-local Service URL).
pub fn desired(
    name: &str,
    namespace: &str,
    spec: &BarbicanSpec,
    catalog: &KeystoneCatalogSpec,
) -> Desired {
    let non_empty = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
    let region = non_empty(&catalog.region)
        .or_else(|| non_empty(&spec.region))
        .unwrap_or_else(|| DEFAULT_REGION.to_string());
    let public = non_empty(&catalog.public_url)
        .unwrap_or_else(|| crate::render::barbican_conf::endpoint(name, namespace, spec));
    let internal = non_empty(&catalog.internal_url)
        .unwrap_or_else(|| crate::render::barbican_conf::service_url(name, namespace, spec));
    Desired {
        region,
        urls: [public, internal],
    }
}

/// The service the endpoints go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServiceChoice {
    /// This existing service; `created` when this Barbican made it.
    Use {
        /// The service.
        service: Service,
        /// Whether this Barbican created it.
        created: bool,
    },
    /// There is none: create it.
    Create,
}

/// The service to use: the recorded one while Keystone still lists it; else a
/// `key-manager` service named `barbican` (the oldest id first, for a stable choice), else
/// any `key-manager` service; else a new one.
pub fn choose_service(recorded: Option<&CatalogStatus>, live: &[Service]) -> ServiceChoice {
    let of_type = || live.iter().filter(|s| s.type_ == SERVICE_TYPE);
    if let Some(recorded) = recorded
        && let Some(service) = of_type().find(|s| s.id == recorded.service_id)
    {
        return ServiceChoice::Use {
            service: service.clone(),
            created: recorded.service_created,
        };
    }
    let mut candidates: Vec<&Service> = of_type().filter(|s| s.name == SERVICE_NAME).collect();
    if candidates.is_empty() {
        candidates = of_type().collect();
    }
    candidates.sort_by(|a, b| a.id.cmp(&b.id));
    match candidates.first() {
        Some(service) => ServiceChoice::Use {
            service: (*service).clone(),
            created: false,
        },
        None => ServiceChoice::Create,
    }
}

/// One change to the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Register `interface` at `url`.
    Create {
        /// The interface.
        interface: String,
        /// The URL.
        url: String,
    },
    /// Point this Barbican's endpoint `id` at `url`.
    Update {
        /// The endpoint.
        id: String,
        /// The interface (for the record).
        interface: String,
        /// The URL.
        url: String,
    },
    /// Deregister this Barbican's endpoint `id` (another region, or no longer wanted).
    Delete {
        /// The endpoint.
        id: String,
    },
}

/// Someone else's endpoint where this Barbican's would go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taken {
    /// The interface.
    pub interface: String,
    /// The other endpoint's id.
    pub id: String,
    /// The region.
    pub region: String,
}

impl std::fmt::Display for Taken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the {} endpoint of the {SERVICE_TYPE} service in region {:?} is endpoint {} with another URL, registered by someone else; it is left as it is (delete it, or set spec.keystone.catalog to register elsewhere)",
            self.interface, self.region, self.id
        )
    }
}

/// The ids `recorded` holds for `service_id` (none when it recorded another service).
fn recorded_ids<'a>(recorded: Option<&'a CatalogStatus>, service_id: &str) -> Vec<&'a str> {
    recorded
        .filter(|r| r.service_id == service_id)
        .map(|r| r.endpoints.iter().map(|e| e.id.as_str()).collect())
        .unwrap_or_default()
}

/// What to do with the endpoints of `service_id` so that the catalog says `desired`, given
/// `live` (its endpoints as Keystone lists them) and the record. An interface whose place is
/// taken makes the whole plan [`Taken`]: nothing is written until it is resolved.
pub fn plan_endpoints(
    desired: &Desired,
    service_id: &str,
    recorded: Option<&CatalogStatus>,
    live: &[Endpoint],
) -> Result<Vec<Action>, Taken> {
    let ours = recorded_ids(recorded, service_id);
    let live: Vec<&Endpoint> = live.iter().filter(|e| e.service_id == service_id).collect();
    let mut actions = Vec::new();
    let mut kept: Vec<&str> = Vec::new();
    for interface in INTERFACES {
        let url = desired.url(interface).unwrap_or_default();
        let here: Vec<&&Endpoint> = live
            .iter()
            .filter(|e| e.interface == interface && e.region == desired.region)
            .collect();
        if let Some(own) = here.iter().find(|e| ours.contains(&e.id.as_str())) {
            kept.push(&own.id);
            if own.url != url {
                actions.push(Action::Update {
                    id: own.id.clone(),
                    interface: interface.to_string(),
                    url: url.to_string(),
                });
            }
        } else if let Some(same) = here.iter().find(|e| e.url == url) {
            kept.push(&same.id);
        } else if let Some(other) = here.first() {
            return Err(Taken {
                interface: interface.to_string(),
                id: other.id.clone(),
                region: desired.region.clone(),
            });
        } else {
            actions.push(Action::Create {
                interface: interface.to_string(),
                url: url.to_string(),
            });
        }
    }
    // This Barbican's endpoints it no longer wants (another region, a moved interface).
    for endpoint in &live {
        if ours.contains(&endpoint.id.as_str()) && !kept.contains(&endpoint.id.as_str()) {
            actions.push(Action::Delete {
                id: endpoint.id.clone(),
            });
        }
    }
    Ok(actions)
}

/// The endpoints to deregister when the registration goes (block removed, CR deleted): the
/// recorded ones Keystone still lists.
pub fn deregistration(recorded: &CatalogStatus, live: &[Endpoint]) -> Vec<String> {
    let ours = recorded_ids(Some(recorded), &recorded.service_id);
    live.iter()
        .filter(|e| ours.contains(&e.id.as_str()))
        .map(|e| e.id.clone())
        .collect()
}

/// The record of a registration: `service`, and the endpoints for [`INTERFACES`] in
/// `desired`'s region among `live` (as they are after the plan was carried out).
pub fn record(
    service: &Service,
    created: bool,
    desired: &Desired,
    live: &[Endpoint],
) -> CatalogStatus {
    let endpoints = INTERFACES
        .iter()
        .filter_map(|interface| {
            let url = desired.url(interface)?;
            live.iter()
                .find(|e| {
                    e.service_id == service.id
                        && e.interface == *interface
                        && e.region == desired.region
                        && e.url == url
                })
                .map(|e| CatalogEndpointStatus {
                    interface: interface.to_string(),
                    id: e.id.clone(),
                    url: e.url.clone(),
                })
        })
        .collect();
    CatalogStatus {
        service_id: service.id.clone(),
        service_created: created,
        region: desired.region.clone(),
        endpoints,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(patch: serde_json::Value) -> BarbicanSpec {
        let cr = crate::api::fixtures::with_spec(crate::api::fixtures::minimal_barbican(), &patch);
        serde_json::from_value(cr["spec"].clone()).unwrap()
    }

    fn endpoint(id: &str, interface: &str, region: &str, url: &str) -> Endpoint {
        Endpoint {
            id: id.into(),
            service_id: "s1".into(),
            interface: interface.into(),
            region: region.into(),
            url: url.into(),
        }
    }

    fn service(id: &str, name: &str) -> Service {
        Service {
            id: id.into(),
            type_: SERVICE_TYPE.into(),
            name: name.into(),
            description: String::new(),
        }
    }

    const SVC: &str = "http://kms.ns.svc.cluster.local:9311";

    #[test]
    fn the_urls_follow_the_exposure_and_the_region_falls_back_twice() {
        let catalog = KeystoneCatalogSpec::default();
        let plain = desired("kms", "ns", &spec(serde_json::json!({})), &catalog);
        assert_eq!(plain.region, DEFAULT_REGION);
        assert_eq!(plain.urls, [SVC.to_string(), SVC.to_string()]);
        let exposed = spec(serde_json::json!({"region": "RegionTwo",
            "gateway": {"hostname": "kms.example.com", "parentRef": {"name": "gw"}}}));
        let d = desired("kms", "ns", &exposed, &catalog);
        assert_eq!(d.region, "RegionTwo");
        assert_eq!(d.url("public"), Some("https://kms.example.com"));
        assert_eq!(d.url("internal"), Some(SVC));
        let served_tls = spec(serde_json::json!({"tls": {"secretName": "kms-cert"}}));
        let d = desired("kms", "ns", &served_tls, &catalog);
        let https = "https://kms.ns.svc.cluster.local:9311";
        assert_eq!(d.urls, [https.to_string(), https.to_string()]);
        let explicit = KeystoneCatalogSpec {
            region: Some("RegionThree".into()),
            public_url: Some("https://kms.cloud".into()),
            internal_url: Some("http://kms-internal:9311".into()),
        };
        let d = desired("kms", "ns", &exposed, &explicit);
        assert_eq!(d.region, "RegionThree");
        assert_eq!(
            d.urls,
            [
                "https://kms.cloud".to_string(),
                "http://kms-internal:9311".to_string()
            ]
        );
    }

    #[test]
    fn the_recorded_service_wins_then_the_oldest_named_barbican_then_any() {
        let live = [
            service("b2", "barbican"),
            service("a1", "other"),
            service("b1", "barbican"),
        ];
        assert_eq!(
            choose_service(None, &live),
            ServiceChoice::Use {
                service: service("b1", "barbican"),
                created: false
            }
        );
        let recorded = CatalogStatus {
            service_id: "a1".into(),
            service_created: true,
            ..CatalogStatus::default()
        };
        assert_eq!(
            choose_service(Some(&recorded), &live),
            ServiceChoice::Use {
                service: service("a1", "other"),
                created: true
            }
        );
        assert_eq!(
            choose_service(None, &[service("z9", "kms")]),
            ServiceChoice::Use {
                service: service("z9", "kms"),
                created: false
            }
        );
        assert_eq!(choose_service(Some(&recorded), &[]), ServiceChoice::Create);
    }

    fn wanted(public: &str) -> Desired {
        Desired {
            region: "RegionOne".into(),
            urls: [public.into(), SVC.into()],
        }
    }

    fn recorded(ids: &[(&str, &str)]) -> CatalogStatus {
        CatalogStatus {
            service_id: "s1".into(),
            service_created: false,
            region: "RegionOne".into(),
            endpoints: ids
                .iter()
                .map(|(interface, id)| CatalogEndpointStatus {
                    interface: (*interface).into(),
                    id: (*id).into(),
                    url: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_fresh_catalog_gets_both_interfaces() {
        let plan = plan_endpoints(&wanted(SVC), "s1", None, &[]).unwrap();
        assert_eq!(
            plan,
            vec![
                Action::Create {
                    interface: "public".into(),
                    url: SVC.into()
                },
                Action::Create {
                    interface: "internal".into(),
                    url: SVC.into()
                },
            ]
        );
    }

    #[test]
    fn own_endpoints_are_updated_identical_ones_adopted_and_nothing_else_done() {
        let live = [
            endpoint("e1", "public", "RegionOne", SVC),
            endpoint("e2", "internal", "RegionOne", SVC),
        ];
        let own = recorded(&[("public", "e1"), ("internal", "e2")]);
        let plan = plan_endpoints(&wanted("https://kms.example.com"), "s1", Some(&own), &live);
        assert_eq!(
            plan,
            Ok(vec![Action::Update {
                id: "e1".into(),
                interface: "public".into(),
                url: "https://kms.example.com".into()
            }])
        );
        // Not recorded, but saying what would be registered: adopted, not duplicated.
        assert_eq!(plan_endpoints(&wanted(SVC), "s1", None, &live), Ok(vec![]));
    }

    #[test]
    fn another_registration_in_the_same_place_is_never_touched() {
        let live = [endpoint(
            "x1",
            "public",
            "RegionOne",
            "https://team-b.example.com",
        )];
        let taken = plan_endpoints(&wanted(SVC), "s1", None, &live).unwrap_err();
        assert_eq!(taken.id, "x1");
        assert_eq!(taken.interface, "public");
        assert!(taken.to_string().contains("left as it is"));
        // The same endpoint in another region is no obstacle.
        let elsewhere = [endpoint(
            "x1",
            "public",
            "RegionTwo",
            "https://team-b.example.com",
        )];
        assert_eq!(
            plan_endpoints(&wanted(SVC), "s1", None, &elsewhere)
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn a_region_change_registers_anew_and_deregisters_only_its_own() {
        let live = [
            endpoint("e1", "public", "RegionOne", SVC),
            endpoint("e2", "internal", "RegionOne", SVC),
            endpoint("x9", "public", "RegionOne", "https://other"),
        ];
        let own = recorded(&[("public", "e1"), ("internal", "e2")]);
        let moved = Desired {
            region: "RegionTwo".into(),
            urls: [SVC.into(), SVC.into()],
        };
        let plan = plan_endpoints(&moved, "s1", Some(&own), &live).unwrap();
        assert_eq!(plan.len(), 4, "{plan:?}");
        assert!(plan.contains(&Action::Delete { id: "e1".into() }));
        assert!(plan.contains(&Action::Delete { id: "e2".into() }));
        assert!(!plan.contains(&Action::Delete { id: "x9".into() }));
    }

    #[test]
    fn deregistration_takes_the_recorded_endpoints_keystone_still_lists() {
        let live = [
            endpoint("e1", "public", "RegionOne", SVC),
            endpoint("x9", "internal", "RegionOne", SVC),
        ];
        let own = recorded(&[("public", "e1"), ("internal", "e2")]);
        assert_eq!(deregistration(&own, &live), vec!["e1".to_string()]);
    }

    #[test]
    fn the_record_names_the_endpoints_that_say_what_is_wanted() {
        let live = [
            endpoint("e1", "public", "RegionOne", SVC),
            endpoint("e2", "internal", "RegionOne", SVC),
            endpoint("e3", "public", "RegionTwo", SVC),
        ];
        let record = record(&service("s1", "barbican"), true, &wanted(SVC), &live);
        let ids: Vec<&str> = record.endpoints.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["e1", "e2"]);
        assert!(record.service_created);
    }
}
