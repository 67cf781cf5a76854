//! Which Barbicans an event about another object wakes: the pure mappings behind the
//! controller's watches. Secrets map through the names the CRs and their stores reference (an
//! ESO-synced Secret is owned by its ExternalSecret, so an owner-reference watch alone would
//! never match it); ESO stores map to the Barbicans that select them.

use std::{collections::BTreeSet, sync::Arc};

use kube::{Resource, ResourceExt, runtime::reflector::ObjectRef};

use crate::api::{
    barbican::Barbican, names::DEFAULT_ESO_STORE, refs::SecretStoreKind,
    secret_store::BarbicanSecretStore,
};

/// The Secret names a Barbican reads directly: its service-user and database Secrets.
pub fn secret_names(barbican: &Barbican) -> [&str; 2] {
    [
        barbican.spec.service_user.secret_ref.name.as_str(),
        barbican.spec.database.secret_ref.name.as_str(),
    ]
}

/// The Secret names a store's projection reads: its AppRole credentials and its CA bundle
/// (the same names the SecretStores step reads, so the watch never misses one).
pub fn store_secret_names(store: &BarbicanSecretStore) -> Vec<String> {
    let (credentials, ca) = super::secret_stores::sources(store);
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
        .filter(|s| super::secret_stores::attaches(s, namespace, name))
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
        if barbican.namespace().as_deref() == Some(namespace)
            && secret_names(barbican).contains(&name)
        {
            found.insert(barbican.name_any());
        }
    }
    for store in stores {
        if store.namespace().as_deref() == Some(namespace)
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
        let barbicans = [barbican("a", "openstack"), barbican("b", "other")];
        let stores = [store("primary", "c")];
        let hits = |name: &str| {
            for_secret("openstack", name, None, &barbicans, &stores)
                .into_iter()
                .map(|r| r.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(hits("barbican-db"), ["a"], "same namespace only");
        assert_eq!(hits("barbican-keystone"), ["a"]);
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
}
