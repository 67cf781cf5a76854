//! Tests of the watch cache: readiness, lookups, label selectors and own-write tracking.

use super::*;
use k8s_openapi::api::core::v1::Secret;
use kube::runtime::watcher::Event;

fn secret(name: &str, labels: &[(&str, &str)]) -> Secret {
    let mut secret = Secret::default();
    secret.metadata.name = Some(name.into());
    secret.metadata.namespace = Some("openstack".into());
    secret.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    secret
}

#[test]
fn a_kind_answers_only_once_its_first_list_is_complete() {
    let cache = Cache::default();
    assert_eq!(
        cache.get::<Secret>(Some("openstack"), "a"),
        Cached::Unknown,
        "not watched"
    );
    let mut writer = cache.writer::<Secret>();
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitApply(secret("a", &[("x", "1")])));
    assert_eq!(
        cache.get::<Secret>(Some("openstack"), "a"),
        Cached::Unknown,
        "listing"
    );
    assert_eq!(cache.list::<Secret>("openstack", "x=1"), None);
    writer.apply_watcher_event(&Event::InitDone);
    assert!(matches!(
        cache.get::<Secret>(Some("openstack"), "a"),
        Cached::Present(s) if s.metadata.name.as_deref() == Some("a")
    ));
    assert_eq!(cache.get::<Secret>(Some("openstack"), "b"), Cached::Absent);
    assert_eq!(
        cache.get::<Secret>(Some("other"), "a"),
        Cached::Absent,
        "another namespace"
    );
}

#[test]
fn an_own_write_the_watch_has_not_delivered_is_read_in_place_of_the_copy_it_replaced() {
    use k8s_openapi::api::batch::v1::CronJob;
    let cronjob = |version: &str, suspend: bool| {
        let mut c = CronJob::default();
        c.metadata.name = Some("b-db-clean".into());
        c.metadata.namespace = Some("openstack".into());
        c.metadata.resource_version = Some(version.into());
        c.spec.suspend = Some(suspend);
        c
    };
    let version = |c: Cached<CronJob>| match c {
        Cached::Present(c) => c.metadata.resource_version.unwrap_or_default(),
        other => format!("{other:?}"),
    };
    let cache = Cache::default();
    let mut writer = cache.writer::<CronJob>();
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitApply(cronjob("1", true)));
    writer.apply_watcher_event(&Event::InitDone);
    let get = || cache.get::<CronJob>(Some("openstack"), "b-db-clean");

    cache.wrote(Some("openstack"), "1", &cronjob("2", false));
    assert_eq!(
        version(get()),
        "2",
        "the store still shows 1: the write is read"
    );
    cache.wrote(Some("openstack"), "2", &cronjob("3", false));
    assert_eq!(
        version(get()),
        "3",
        "a second write on the first, both in flight"
    );
    writer.apply_watcher_event(&Event::Apply(cronjob("3", false)));
    assert_eq!(version(get()), "3", "delivered: the store answers");
    writer.apply_watcher_event(&Event::Apply(cronjob("4", true)));
    assert_eq!(
        version(get()),
        "4",
        "a later change by anyone is not hidden"
    );

    cache.wrote(Some("openstack"), "4", &cronjob("5", false));
    writer.apply_watcher_event(&Event::Apply(cronjob("6", true)));
    assert_eq!(
        version(get()),
        "6",
        "something newer than the write: the store"
    );
    cache.wrote(Some("openstack"), "6", &cronjob("6", true));
    assert_eq!(version(get()), "6", "no write happened: nothing recorded");
    cache.wrote(Some("other"), "6", &cronjob("7", false));
    assert_eq!(version(get()), "6", "a write elsewhere is another object");
}

/// A child this operator created is found before the watch delivers it (a pass that reads it
/// then sends no GET and no second create), and once the store holds it the store answers; a
/// create the store never shows is not believed for ever.
#[test]
fn a_created_child_is_found_until_the_watch_delivers_it() {
    use k8s_openapi::api::apps::v1::Deployment;
    let deployment = |version: &str| {
        let mut d = Deployment::default();
        d.metadata.name = Some("barbican".into());
        d.metadata.namespace = Some("openstack".into());
        d.metadata.resource_version = Some(version.into());
        d
    };
    let cache = Cache::default();
    let mut writer = cache.writer::<Deployment>();
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitDone);
    let get = || cache.get::<Deployment>(Some("openstack"), "barbican");
    assert!(cache.holds_all::<Deployment>());
    assert_eq!(get(), Cached::Absent);

    cache.created(Some("openstack"), &deployment("5"));
    assert_eq!(
        get(),
        Cached::Present(deployment("5")),
        "the create's answer"
    );
    cache.wrote(Some("openstack"), "5", &deployment("6"));
    assert_eq!(
        get(),
        Cached::Present(deployment("6")),
        "a write over the created copy, both in flight"
    );
    writer.apply_watcher_event(&Event::Apply(deployment("6")));
    assert_eq!(get(), Cached::Present(deployment("6")), "delivered");
    writer.apply_watcher_event(&Event::Delete(deployment("6")));
    assert_eq!(
        get(),
        Cached::Absent,
        "deleted: the record went on delivery"
    );

    cache.created(Some("openstack"), &deployment("9"));
    for entry in cache.written.lock().unwrap().values_mut() {
        entry.at -= CREATE_DELIVERY;
    }
    assert_eq!(
        get(),
        Cached::Unknown,
        "a create the store still lacks after a while: the API server answers"
    );
    assert_eq!(get(), Cached::Absent, "and the record is gone");
}

/// The held kinds hold only what a pass read: their "absent" is not an answer, and neither is
/// a kind not watched here.
#[test]
fn a_held_or_unwatched_kinds_absent_is_not_an_answer() {
    let cache = Cache::default();
    let _writer = cache.metadata_writer::<Secret>();
    assert!(!cache.holds_all::<Secret>());
    assert!(!cache.holds_all::<k8s_openapi::api::apps::v1::Deployment>());
}

#[tokio::test]
async fn the_first_pass_waits_for_every_store_to_list() {
    let cache = Cache::default();
    assert!(cache.listed().await, "nothing to wait for");
    let mut secrets = cache.writer::<Secret>();
    let mut services = cache.writer::<k8s_openapi::api::core::v1::Service>();
    let waiting = tokio::spawn({
        let cache = cache.clone();
        async move { cache.listed().await }
    });
    secrets.apply_watcher_event(&Event::Init);
    secrets.apply_watcher_event(&Event::InitDone);
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished(), "one store has not listed");
    services.apply_watcher_event(&Event::Init);
    services.apply_watcher_event(&Event::InitDone);
    assert!(waiting.await.unwrap());
}

#[test]
fn a_list_filters_by_namespace_and_equality_labels_in_name_order() {
    let cache = Cache::default();
    let mut writer = cache.writer::<Secret>();
    writer.apply_watcher_event(&Event::Init);
    for s in [
        secret("c", &[("x", "1"), ("y", "2")]),
        secret("a", &[("x", "1")]),
        secret("b", &[("x", "2")]),
    ] {
        writer.apply_watcher_event(&Event::InitApply(s));
    }
    let mut elsewhere = secret("d", &[("x", "1")]);
    elsewhere.metadata.namespace = Some("other".into());
    writer.apply_watcher_event(&Event::InitApply(elsewhere));
    writer.apply_watcher_event(&Event::InitDone);
    let names =
        |found: Vec<Secret>| -> Vec<String> { found.into_iter().map(|s| s.name_any()).collect() };
    assert_eq!(names(cache.list("openstack", "x=1").unwrap()), ["a", "c"]);
    assert_eq!(names(cache.list("openstack", "x=1,y=2").unwrap()), ["c"]);
    assert_eq!(
        cache.list::<Secret>("openstack", "x!=1"),
        None,
        "the API server evaluates what is not equality"
    );
}

/// A MariaDB operator kind, known to the operator only at run time.
fn mariadb(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "k8s.mariadb.com".into(),
        version: "v1alpha1".into(),
        api_version: "k8s.mariadb.com/v1alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

#[test]
fn a_dynamic_kind_is_found_by_group_and_kind() {
    let cache = Cache::default();
    let resource = mariadb("MariaDB", "mariadbs");
    let mut writer = cache.dynamic_writer(&resource);
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitApply(
        DynamicObject::new("db", &resource).within("openstack"),
    ));
    writer.apply_watcher_event(&Event::InitDone);
    assert!(matches!(
        cache.get_dynamic(&resource, Some("openstack"), "db"),
        Cached::Present(_)
    ));
    let mut other = resource.clone();
    other.kind = "Database".into();
    assert_eq!(
        cache.get_dynamic(&other, Some("openstack"), "db"),
        Cached::Unknown
    );
}

/// A MariaDB Grant created a moment ago is found by the next pass, as a typed child is: at
/// a thousand Barbicans, one pass in twenty came before the watch delivered its Grant, and
/// created it again (a 409 and a read for each).
#[test]
fn a_created_dynamic_child_is_found_until_the_watch_delivers_it() {
    let cache = Cache::default();
    let resource = mariadb("Grant", "grants");
    let grant = |version: &str| {
        let mut g = DynamicObject::new("kms", &resource).within("openstack");
        g.metadata.resource_version = Some(version.into());
        g
    };
    let get = || cache.get_dynamic(&resource, Some("openstack"), "kms");
    // Not watched here: nothing is recorded, nothing is known.
    cache.created_dynamic(&resource, Some("openstack"), &grant("1"));
    assert_eq!(get(), Cached::Unknown);

    let mut writer = cache.dynamic_writer(&resource);
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitDone);
    assert_eq!(get(), Cached::Absent);
    cache.created_dynamic(&resource, Some("openstack"), &grant("5"));
    assert_eq!(get(), Cached::Present(grant("5")), "the create's answer");
    cache.wrote_dynamic(&resource, Some("openstack"), "5", &grant("6"));
    assert_eq!(get(), Cached::Present(grant("6")), "a write over it");
    writer.apply_watcher_event(&Event::Apply(grant("6")));
    assert_eq!(get(), Cached::Present(grant("6")), "delivered");
    writer.apply_watcher_event(&Event::Delete(grant("6")));
    assert_eq!(
        get(),
        Cached::Absent,
        "deleted: the record went on delivery"
    );

    // Another kind's object of the same name is not this record's.
    let mut other = resource.clone();
    other.kind = "User".into();
    let mut other_writer = cache.dynamic_writer(&other);
    other_writer.apply_watcher_event(&Event::Init);
    other_writer.apply_watcher_event(&Event::InitDone);
    cache.created_dynamic(&resource, Some("openstack"), &grant("9"));
    assert_eq!(
        cache.get_dynamic(&other, Some("openstack"), "kms"),
        Cached::Absent
    );
    assert_eq!(get(), Cached::Present(grant("9")));
}

/// The sweep of an unlabelled kind lists every object of the namespace: they come as the
/// cache holds them, by name, without a copy of each.
#[test]
fn a_dynamic_list_shares_the_cached_objects() {
    let cache = Cache::default();
    let resource = mariadb("Database", "databases");
    let mut writer = cache.dynamic_writer(&resource);
    writer.apply_watcher_event(&Event::Init);
    for name in ["b", "a", "c"] {
        writer.apply_watcher_event(&Event::InitApply(
            DynamicObject::new(name, &resource).within("openstack"),
        ));
    }
    writer.apply_watcher_event(&Event::InitApply(
        DynamicObject::new("d", &resource).within("other"),
    ));
    writer.apply_watcher_event(&Event::InitDone);
    let listed = cache.list_dynamic(&resource, "openstack", "").unwrap();
    let names: Vec<_> = listed.iter().map(|o| o.name_any()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    let again = cache.list_dynamic(&resource, "openstack", "").unwrap();
    assert!(
        listed.iter().zip(&again).all(|(a, b)| Arc::ptr_eq(a, b)),
        "the same objects, not copies"
    );
}

#[tokio::test]
async fn a_pass_starts_from_the_cache_or_from_the_answer_to_the_operators_last_write() {
    let (store, mut writer) = kube::runtime::reflector::store::<Secret>();
    let api: kube::Api<Secret> = kube::Api::namespaced(
        crate::controller::runtime::children::unanswered_client(),
        "openstack",
    );
    let writes = OwnWrites::default();
    let mut cr = secret("a", &[]);
    cr.metadata.uid = Some("u1".into());
    cr.metadata.resource_version = Some("1".into());
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitApply(cr.clone()));
    writer.apply_watcher_event(&Event::InitDone);
    let found = current(&api, &store, &writes, "openstack", "a")
        .await
        .unwrap();
    assert_eq!(
        found,
        Some(cr.clone()),
        "no request: the client never answers"
    );
    let mut written = cr.clone();
    written.metadata.resource_version = Some("2".into());
    written.data = Some(std::collections::BTreeMap::from([(
        "written".to_string(),
        k8s_openapi::ByteString(b"by the operator".to_vec()),
    )]));
    writes.wrote(&written);
    let found = current(&api, &store, &writes, "openstack", "a")
        .await
        .unwrap();
    assert_eq!(
        found,
        Some(written.clone()),
        "a write in flight: the pass starts from its answer, without a read"
    );
    // A copy the cache never held is the API server's to answer, which it never does here.
    let read = tokio::time::timeout(
        std::time::Duration::from_millis(50),
        current(&api, &store, &writes, "openstack", "b"),
    )
    .await;
    assert!(!matches!(read, Ok(Ok(_))), "{read:?}");
    writer.apply_watcher_event(&Event::Apply(written.clone()));
    writes.observed(&written);
    let found = current(&api, &store, &writes, "openstack", "a")
        .await
        .unwrap();
    assert_eq!(found, Some(written));
}

#[test]
fn a_write_is_pending_until_the_watch_delivers_its_resource_version() {
    let writes = OwnWrites::default();
    let mut object = secret("a", &[]);
    object.metadata.uid = Some("u1".into());
    assert!(writes.settled("u1"));
    object.metadata.resource_version = Some("7".into());
    writes.wrote(&object);
    assert!(!writes.settled("u1"));
    object.metadata.resource_version = Some("6".into());
    writes.observed(&object);
    assert!(!writes.settled("u1"), "an older copy");
    object.metadata.resource_version = Some("7".into());
    writes.observed(&object);
    assert!(writes.settled("u1"));
    writes.wrote(&object);
    assert!(
        writes.settled("u1"),
        "version 7 was delivered already: the watch can beat the write's response"
    );
    object.metadata.resource_version = Some("8".into());
    writes.wrote(&object);
    assert!(!writes.settled("u1"));
    writes.relisted();
    assert!(
        writes.settled("u1"),
        "a relist skips versions: the fresh list is newer than the write"
    );
    writes.wrote(&object);
    writes.forget("u1");
    assert!(writes.settled("u1"));
}

#[test]
fn a_write_delivered_before_its_response_is_settled_even_after_later_versions() {
    let writes = OwnWrites::default();
    let mut object = secret("a", &[]);
    object.metadata.uid = Some("u1".into());
    for version in ["10", "11", "12"] {
        object.metadata.resource_version = Some(version.into());
        writes.observed(&object);
    }
    object.metadata.resource_version = Some("11".into());
    writes.wrote(&object);
    assert!(
        writes.settled("u1"),
        "11 came through the watch before its response"
    );
    for version in 13..13 + DELIVERED {
        object.metadata.resource_version = Some(version.to_string());
        writes.observed(&object);
    }
    object.metadata.resource_version = Some("12".into());
    writes.wrote(&object);
    assert!(
        !writes.settled("u1"),
        "a version older than what is remembered counts as not delivered (a GET, never a stale pass)"
    );
}
