//! Which Barbicans an event about another object wakes: the pure mappings behind the
//! controller's watches. Secrets map through the names the CRs and their stores reference (an
//! ESO-synced Secret is owned by its ExternalSecret, so an owner-reference watch alone would
//! never match it); ESO stores map to the Barbicans that select them.

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
};

use kube::{Resource, ResourceExt, api::DynamicObject, runtime::reflector::ObjectRef};

use crate::api::{
    barbican::Barbican,
    names::{DEFAULT_ESO_STORE, OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL},
    refs::SecretStoreKind,
    secret_store::BarbicanSecretStore,
};

/// The Secret names a Barbican reads directly: its service-user and database Secrets, the
/// audit transport URL's with the messaging driver, and the API's TLS Secret (named, or
/// issued by cert-manager: a renewal wakes the Barbican, whose pods roll).
pub fn secret_names(barbican: &Barbican) -> Vec<String> {
    let audit = barbican.spec.audit.as_ref().and_then(|a| {
        let reference = a.transport_url_secret_ref.as_ref()?;
        Some(reference.name.clone())
    });
    let tls = barbican
        .spec
        .tls
        .as_ref()
        .map(|t| t.secret(&barbican.name_any()));
    [
        barbican.spec.service_user.secret_ref.name.clone(),
        barbican.spec.database.secret_ref.name.clone(),
    ]
    .into_iter()
    .chain(audit)
    .chain(tls)
    .collect()
}

/// The Secret names a store's projection reads: its AppRole credentials and its CA bundle
/// (the same names the SecretStores step reads, so the watch never misses one).
pub fn store_secret_names(store: &BarbicanSecretStore) -> Vec<String> {
    let (credentials, ca) = super::projection::sources(store);
    std::iter::once(credentials).chain(ca).collect()
}

/// The stores in `namespace` attached to the Barbican `name` (a parent's status flip is how
/// a store learns its section landed).
pub fn stores_of_barbican(
    namespace: &str,
    name: &str,
    stores: &[Arc<BarbicanSecretStore>],
) -> Vec<ObjectRef<BarbicanSecretStore>> {
    stores
        .iter()
        .filter(|s| super::projection::attaches(s, namespace, name))
        .map(|s| ObjectRef::from_obj(s.as_ref()))
        .collect()
}

/// The managed stores in `namespace` naming the OpenBaoCluster `name`.
pub fn stores_of_instance(
    namespace: &str,
    name: &str,
    stores: &[Arc<BarbicanSecretStore>],
) -> Vec<ObjectRef<BarbicanSecretStore>> {
    stores
        .iter()
        .filter(|s| {
            s.namespace().as_deref() == Some(namespace)
                && s.spec
                    .open_bao
                    .as_ref()
                    .and_then(|o| o.instance_ref.as_ref())
                    .is_some_and(|i| i.name == name)
        })
        .map(|s| ObjectRef::from_obj(s.as_ref()))
        .collect()
}

fn reference(namespace: &str, name: &str) -> ObjectRef<Barbican> {
    ObjectRef::new(name).within(namespace)
}

/// The Barbicans a change to the Secret `namespace/name` concerns: the controller owner, the
/// CRs referencing it, and the parents of the stores referencing it.
pub fn for_secret(
    namespace: &str,
    name: &str,
    owner: Option<&str>,
    barbicans: &[Arc<Barbican>],
    stores: &[Arc<BarbicanSecretStore>],
) -> Vec<ObjectRef<Barbican>> {
    let mut found = BTreeSet::new();
    if let Some(owner) = owner {
        found.insert(owner.to_string());
    }
    for barbican in barbicans {
        if barbican.metadata.namespace.as_deref() == Some(namespace)
            && secret_names(barbican).iter().any(|n| n == name)
        {
            found.insert(barbican.name_any());
        }
    }
    for store in stores {
        if store.metadata.namespace.as_deref() == Some(namespace)
            && store_secret_names(store).iter().any(|n| n == name)
        {
            found.insert(store.spec.barbican_ref.name.clone());
        }
    }
    found.iter().map(|n| reference(namespace, n)).collect()
}

/// The Barbicans selecting the ESO store `kind`/`name` (`namespace` for a SecretStore). A
/// Barbican without `secretStoreRef` selects the shared ClusterSecretStore.
pub fn for_eso_store(
    kind: SecretStoreKind,
    namespace: Option<&str>,
    name: &str,
    barbicans: &[Arc<Barbican>],
) -> Vec<ObjectRef<Barbican>> {
    barbicans
        .iter()
        .filter(|b| {
            let (k, n) = match &b.spec.secret_store_ref {
                Some(r) => (r.kind, r.name.as_str()),
                None => (SecretStoreKind::ClusterSecretStore, DEFAULT_ESO_STORE),
            };
            k == kind
                && n == name
                && (kind == SecretStoreKind::ClusterSecretStore
                    || b.namespace().as_deref() == namespace)
        })
        .map(|b| ObjectRef::from_obj(b.as_ref()))
        .collect()
}

/// The Barbicans in `namespace` whose `spec.database.clusterRef` names the MariaDB `name`.
pub fn for_mariadb(
    namespace: &str,
    name: &str,
    barbicans: &[Arc<Barbican>],
) -> Vec<ObjectRef<Barbican>> {
    barbicans
        .iter()
        .filter(|b| {
            b.namespace().as_deref() == Some(namespace)
                && b.spec
                    .database
                    .cluster_ref
                    .as_ref()
                    .is_some_and(|c| c.name == name)
        })
        .map(|b| ObjectRef::from_obj(b.as_ref()))
        .collect()
}

/// The target cluster a Barbican's children live on; `None` for the management cluster.
pub fn cluster_of(barbican: &Barbican) -> Option<&str> {
    barbican
        .spec
        .target_cluster_ref
        .as_ref()
        .map(|t| t.name.as_str())
}

/// The Barbicans whose children live on `cluster` (`None`: the management cluster). An event
/// from a cluster reaches only these: which cluster a CR names is read from the CR, never from
/// the object that raised the event.
pub fn placed_on(barbicans: &[Arc<Barbican>], cluster: Option<&str>) -> Vec<Arc<Barbican>> {
    barbicans
        .iter()
        .filter(|b| cluster_of(b) == cluster)
        .cloned()
        .collect()
}

/// The stores whose parent's children live on `cluster`. A store without a parent counts as
/// the management cluster's: it only waits for its parent there.
pub fn stores_placed_on(
    stores: &[Arc<BarbicanSecretStore>],
    barbicans: &[Arc<Barbican>],
    cluster: Option<&str>,
) -> Vec<Arc<BarbicanSecretStore>> {
    // One table per call, keyed by borrowed names: this runs on every watch event, and a scan
    // of the Barbicans per store made each event quadratic in the CR count (the Secret
    // watch's mapping was 58% of the operator's CPU while 600 Barbicans converged).
    let parents: HashMap<(Option<&str>, Option<&str>), Option<&str>> = barbicans
        .iter()
        .map(|b| {
            let key = (b.metadata.namespace.as_deref(), b.metadata.name.as_deref());
            (key, cluster_of(b))
        })
        .collect();
    stores
        .iter()
        .filter(|s| {
            let parent = (
                s.metadata.namespace.as_deref(),
                Some(s.spec.barbican_ref.name.as_str()),
            );
            parents.get(&parent).copied().flatten() == cluster
        })
        .cloned()
        .collect()
}

/// What a change to `object` (of `kind`) on the target cluster `cluster` wakes: the owner its
/// labels name, and the CRs and stores that read it, among those placed on that cluster.
pub fn remote_wakes(
    cluster: &str,
    kind: &str,
    object: &DynamicObject,
    barbicans: &[Arc<Barbican>],
    stores: &[Arc<BarbicanSecretStore>],
) -> (
    Vec<ObjectRef<Barbican>>,
    Vec<ObjectRef<BarbicanSecretStore>>,
) {
    let placed = placed_on(barbicans, Some(cluster));
    let placed_stores = stores_placed_on(stores, barbicans, Some(cluster));
    let namespace = object.namespace();
    let name = object.name_any();
    let labels = object.labels();
    let (mut wake, mut wake_stores) = (Vec::new(), Vec::new());
    if let (Some(owner), Some(owner_namespace)) = (
        labels.get(OWNER_NAME_LABEL),
        labels.get(OWNER_NAMESPACE_LABEL),
    ) && namespace.as_ref() == Some(owner_namespace)
    {
        let named =
            |n: &str, ns: Option<String>| n == owner && ns.as_ref() == Some(owner_namespace);
        match labels.get(OWNER_KIND_LABEL).map(String::as_str) {
            Some("Barbican") => wake.extend(
                placed
                    .iter()
                    .filter(|b| named(&b.name_any(), b.namespace()))
                    .map(|b| ObjectRef::from_obj(b.as_ref())),
            ),
            Some("BarbicanSecretStore") => wake_stores.extend(
                placed_stores
                    .iter()
                    .filter(|s| named(&s.name_any(), s.namespace()))
                    .map(|s| ObjectRef::from_obj(s.as_ref())),
            ),
            _ => {}
        }
    }
    let namespace = namespace.unwrap_or_default();
    match kind {
        "Secret" => wake.extend(for_secret(&namespace, &name, None, &placed, &placed_stores)),
        "MariaDB" => wake.extend(for_mariadb(&namespace, &name, &placed)),
        "ClusterSecretStore" => wake.extend(for_eso_store(
            SecretStoreKind::ClusterSecretStore,
            None,
            &name,
            &placed,
        )),
        "SecretStore" => wake.extend(for_eso_store(
            SecretStoreKind::SecretStore,
            Some(&namespace),
            &name,
            &placed,
        )),
        "OpenBaoCluster" => {
            wake_stores.extend(stores_of_instance(&namespace, &name, &placed_stores))
        }
        _ => {}
    }
    (wake, wake_stores)
}

/// The Barbican controlling `object`, if any.
pub fn controlling_barbican<K: Resource>(object: &K) -> Option<String> {
    object
        .meta()
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true) && o.kind == "Barbican")
        .map(|o| o.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures;

    fn barbican(name: &str, namespace: &str) -> Arc<Barbican> {
        let mut b = fixtures::barbican();
        b.metadata.name = Some(name.into());
        b.metadata.namespace = Some(namespace.into());
        Arc::new(b)
    }

    fn store(name: &str, parent: &str) -> Arc<BarbicanSecretStore> {
        let mut s: BarbicanSecretStore = serde_json::from_value(fixtures::managed_store()).unwrap();
        s.metadata.name = Some(name.into());
        s.spec.barbican_ref.name = parent.into();
        Arc::new(s)
    }

    #[test]
    fn a_secret_wakes_the_crs_that_read_it_and_the_parents_of_stores_that_do() {
        let mut audited = fixtures::barbican();
        audited.metadata.name = Some("d".into());
        audited.metadata.namespace = Some("openstack".into());
        audited.spec.audit = Some(crate::api::audit::AuditSpec {
            driver: Some(crate::api::audit::AuditDriver::Messaging),
            transport_url_secret_ref: Some(crate::api::refs::SecretRefSpec {
                name: "rabbitmq-audit".into(),
                key: None,
            }),
        });
        let barbicans = [
            barbican("a", "openstack"),
            barbican("b", "other"),
            Arc::new(audited),
        ];
        let stores = [store("primary", "c")];
        let hits = |name: &str| {
            for_secret("openstack", name, None, &barbicans, &stores)
                .into_iter()
                .map(|r| r.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(hits("barbican-db"), ["a", "d"], "same namespace only");
        assert_eq!(hits("barbican-keystone"), ["a", "d"]);
        assert_eq!(
            hits("rabbitmq-audit"),
            ["d"],
            "the messaging driver's transport"
        );
        assert_eq!(hits("primary-approle"), ["c"]);
        assert!(hits("unrelated").is_empty());
        let owned = for_secret("openstack", "x", Some("a"), &barbicans, &stores);
        assert_eq!(owned.len(), 1);
    }

    #[test]
    fn a_parent_and_an_instance_wake_their_stores_in_their_namespace() {
        let stores = [store("primary", "a"), store("spare", "b")];
        let names = |refs: Vec<ObjectRef<BarbicanSecretStore>>| {
            refs.into_iter().map(|r| r.name).collect::<Vec<_>>()
        };
        assert_eq!(
            names(stores_of_barbican("openstack", "a", &stores)),
            ["primary"]
        );
        assert!(stores_of_barbican("other", "a", &stores).is_empty());
        assert_eq!(
            names(stores_of_instance("openstack", "openbao-instance", &stores)),
            ["primary", "spare"]
        );
        assert!(stores_of_instance("openstack", "elsewhere", &stores).is_empty());
        // The Secrets a managed store's projection reads: its AppRole pair and the instance CA.
        assert_eq!(
            store_secret_names(&stores[0]),
            ["primary-approle", "openbao-instance-tls-ca"]
        );
    }

    #[test]
    fn a_mariadb_wakes_the_crs_using_it_in_its_namespace() {
        let barbicans = [barbican("a", "openstack"), barbican("b", "other")];
        let hits = for_mariadb("openstack", "openstack-mariadb", &barbicans);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].name, "a");
        assert!(for_mariadb("openstack", "another", &barbicans).is_empty());
    }

    #[test]
    fn an_eso_store_wakes_the_crs_selecting_it() {
        let mut pinned = fixtures::barbican();
        pinned.metadata.name = Some("pinned".into());
        pinned.spec.secret_store_ref = Some(crate::api::refs::SecretStoreRefSpec {
            kind: SecretStoreKind::SecretStore,
            name: "local".into(),
        });
        let barbicans = [barbican("a", "openstack"), Arc::new(pinned)];
        let names =
            |refs: Vec<ObjectRef<Barbican>>| refs.into_iter().map(|r| r.name).collect::<Vec<_>>();
        assert_eq!(
            names(for_eso_store(
                SecretStoreKind::ClusterSecretStore,
                None,
                DEFAULT_ESO_STORE,
                &barbicans
            )),
            ["a"]
        );
        assert_eq!(
            names(for_eso_store(
                SecretStoreKind::SecretStore,
                Some("openstack"),
                "local",
                &barbicans
            )),
            ["pinned"]
        );
        assert!(
            for_eso_store(SecretStoreKind::SecretStore, Some("x"), "local", &barbicans).is_empty()
        );
    }

    fn placed(name: &str, cluster: Option<&str>) -> Arc<Barbican> {
        let mut b = (*barbican(name, "openstack")).clone();
        b.spec.target_cluster_ref =
            cluster.map(|c| crate::api::refs::TargetClusterRefSpec { name: c.into() });
        Arc::new(b)
    }

    fn object(kind: &str, name: &str, labels: &[(&str, &str)]) -> DynamicObject {
        let mut o = DynamicObject::new(
            name,
            &kube::api::ApiResource {
                group: String::new(),
                version: "v1".into(),
                api_version: "v1".into(),
                kind: kind.into(),
                plural: String::new(),
            },
        )
        .within("openstack");
        o.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        o
    }

    #[test]
    fn a_store_is_placed_where_its_parent_in_its_own_namespace_is() {
        // Two Barbicans named "edge": the one in the store's namespace decides.
        let mut elsewhere = (*placed("edge", None)).clone();
        elsewhere.metadata.namespace = Some("other".into());
        let barbicans = [placed("edge", Some("edge-1")), Arc::new(elsewhere)];
        let mut moved = (*store("moved", "edge")).clone();
        moved.metadata.namespace = Some("other".into());
        let stores = [
            store("primary", "edge"),
            Arc::new(moved),
            store("orphan", "gone"),
        ];
        let names = |cluster| {
            stores_placed_on(&stores, &barbicans, cluster)
                .iter()
                .map(|s| s.name_any())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(Some("edge-1")), ["primary"]);
        // A store without a parent waits on the management cluster.
        assert_eq!(names(None), ["moved", "orphan"]);
        assert!(names(Some("edge-2")).is_empty());
    }

    #[test]
    fn an_event_on_a_target_cluster_wakes_only_the_crs_naming_that_cluster() {
        let barbicans = [
            placed("edge", Some("edge-1")),
            placed("other-edge", Some("edge-2")),
            placed("local", None),
        ];
        let stores = [store("primary", "edge"), store("spare", "local")];
        let names =
            |refs: Vec<ObjectRef<Barbican>>| refs.into_iter().map(|r| r.name).collect::<Vec<_>>();
        // A credential Secret every CR reads by the same name.
        let secret = object("Secret", "barbican-db", &[]);
        let (woken, _) = remote_wakes("edge-1", "Secret", &secret, &barbicans, &stores);
        assert_eq!(names(woken), ["edge"]);
        let (woken, _) = remote_wakes("edge-3", "Secret", &secret, &barbicans, &stores);
        assert!(woken.is_empty(), "a cluster no CR names");
        // A child labelled for a CR that names another cluster does not wake it.
        let child = object(
            "Deployment",
            "other-edge",
            &[
                (OWNER_KIND_LABEL, "Barbican"),
                (OWNER_NAME_LABEL, "other-edge"),
                (OWNER_NAMESPACE_LABEL, "openstack"),
            ],
        );
        assert!(
            remote_wakes("edge-1", "Deployment", &child, &barbicans, &stores)
                .0
                .is_empty()
        );
        assert_eq!(
            names(remote_wakes("edge-2", "Deployment", &child, &barbicans, &stores).0),
            ["other-edge"]
        );
        // The store's credentials Secret wakes the store and its parent; an instance its stores.
        let approle = object(
            "Secret",
            "primary-approle",
            &[
                (OWNER_KIND_LABEL, "BarbicanSecretStore"),
                (OWNER_NAME_LABEL, "primary"),
                (OWNER_NAMESPACE_LABEL, "openstack"),
            ],
        );
        let (woken, stores_woken) = remote_wakes("edge-1", "Secret", &approle, &barbicans, &stores);
        assert_eq!(names(woken), ["edge"]);
        assert_eq!(stores_woken[0].name, "primary");
        let instance = object("OpenBaoCluster", "openbao-instance", &[]);
        let (_, stores_woken) =
            remote_wakes("edge-1", "OpenBaoCluster", &instance, &barbicans, &stores);
        assert_eq!(
            stores_woken.into_iter().map(|r| r.name).collect::<Vec<_>>(),
            ["primary"],
            "not the local parent's store"
        );
        // On the management cluster, only the CRs without a target.
        assert_eq!(
            names(for_secret(
                "openstack",
                "barbican-db",
                None,
                &placed_on(&barbicans, None),
                &[]
            )),
            ["local"]
        );
        assert_eq!(
            stores_placed_on(&stores, &barbicans, None)[0].name_any(),
            "spare"
        );
    }
}
