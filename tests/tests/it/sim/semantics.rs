//! The sim's API semantics, stated as kube-apiserver behaves and exercised through kube::Client
//! (typed and dynamic APIs, kube-runtime's watcher and a Controller).

use std::{sync::Arc, time::Duration};

use barbican_operator::api::{Barbican, BarbicanStatus, fixtures::minimal_barbican};
use barbican_sim::Cluster;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::{
    Api, Client, CustomResourceExt, ResourceExt,
    api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams},
    runtime::{Controller, controller::Action, watcher},
};
use serde_json::{Value, json};

fn cluster_with_crds() -> (Cluster, Client) {
    let cluster = Cluster::new();
    cluster
        .install_crd(serde_json::to_value(Barbican::crd()).unwrap())
        .unwrap();
    let client = cluster.client();
    (cluster, client)
}

fn config_map(name: &str, data: Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data})).unwrap()
}

fn api_error(result: Result<impl std::fmt::Debug, kube::Error>) -> (u16, String) {
    match result {
        Err(kube::Error::Api(status)) => (status.code, status.reason.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn create_assigns_server_fields_and_namespaces_must_exist() {
    let (_cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let created = maps
        .create(&PostParams::default(), &config_map("a", json!({"k": "v"})))
        .await
        .unwrap();
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.creation_timestamp.is_some());
    // kube-apiserver keeps no generation for a ConfigMap (its strategy sets none).
    assert_eq!(created.metadata.generation, None);
    let rv: u64 = created.resource_version().unwrap().parse().unwrap();
    assert!(rv > 0);
    let second = maps
        .create(&PostParams::default(), &config_map("b", json!({})))
        .await
        .unwrap();
    assert!(
        second.resource_version().unwrap().parse::<u64>().unwrap() > rv,
        "resourceVersion is global and monotonic"
    );

    assert_eq!(
        api_error(
            maps.create(&PostParams::default(), &config_map("a", json!({})))
                .await
        ),
        (409, "AlreadyExists".into())
    );
    let missing: Api<ConfigMap> = Api::namespaced(client.clone(), "nowhere");
    assert_eq!(
        api_error(
            missing
                .create(&PostParams::default(), &config_map("a", json!({})))
                .await
        ),
        (404, "NotFound".into())
    );
    assert_eq!(
        api_error(
            maps.create(&PostParams::default(), &config_map("Not_Valid", json!({})))
                .await
        )
        .0,
        422
    );

    let mut generated = config_map("", json!({}));
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("gen-".into());
    let generated = maps
        .create(&PostParams::default(), &generated)
        .await
        .unwrap();
    assert!(generated.name_any().starts_with("gen-") && generated.name_any().len() == 9);

    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    maps.create(&dry, &config_map("dry", json!({})))
        .await
        .unwrap();
    assert_eq!(
        api_error(maps.get("dry").await).0,
        404,
        "dryRun stores nothing"
    );
}

#[tokio::test]
async fn stale_writes_conflict_and_generation_follows_the_spec_only() {
    let (_cluster, client) = cluster_with_crds();
    let barbicans: Api<Barbican> = Api::namespaced(client.clone(), "default");
    let mut object: Barbican = serde_json::from_value(minimal_barbican()).unwrap();
    object.metadata.namespace = None;
    let created = barbicans
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    assert_eq!(created.metadata.generation, Some(1));

    let mut labelled = created.clone();
    labelled.labels_mut().insert("tier".into(), "kms".into());
    let labelled = barbicans
        .replace("barbican", &PostParams::default(), &labelled)
        .await
        .unwrap();
    assert_eq!(
        labelled.metadata.generation,
        Some(1),
        "a metadata change is no spec change"
    );

    let mut stale = created.clone();
    stale.spec.region = Some("RegionTwo".into());
    assert_eq!(
        api_error(
            barbicans
                .replace("barbican", &PostParams::default(), &stale)
                .await
        ),
        (409, "Conflict".into())
    );

    let mut fresh = labelled.clone();
    fresh.spec.region = Some("RegionTwo".into());
    let updated = barbicans
        .replace("barbican", &PostParams::default(), &fresh)
        .await
        .unwrap();
    assert_eq!(updated.metadata.generation, Some(2));

    // A no-op write keeps the resourceVersion.
    let again = barbicans
        .replace("barbican", &PostParams::default(), &updated)
        .await
        .unwrap();
    assert_eq!(again.resource_version(), updated.resource_version());
}

#[tokio::test]
async fn the_status_subresource_splits_writes() {
    let (_cluster, client) = cluster_with_crds();
    let barbicans: Api<Barbican> = Api::namespaced(client.clone(), "default");
    let mut object: Barbican = serde_json::from_value(minimal_barbican()).unwrap();
    object.metadata.namespace = None;
    object.status = Some(BarbicanStatus {
        endpoint: Some("ignored-on-create".into()),
        ..Default::default()
    });
    let created = barbicans
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    assert_eq!(created.status, None, "create drops status");

    let status = json!({"status": {"endpoint": "http://barbican.default.svc.cluster.local:9311", "installedRelease": "2025.2"}});
    let patched = barbicans
        .patch_status("barbican", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    assert_eq!(
        patched
            .status
            .as_ref()
            .unwrap()
            .installed_release
            .as_deref(),
        Some("2025.2")
    );
    assert_eq!(
        patched.metadata.generation,
        Some(1),
        "status writes never bump generation"
    );

    // A main-resource write cannot change status, and a status write cannot change the spec.
    let main = json!({"spec": {"region": "RegionThree"}, "status": {"installedRelease": "1999.1"}});
    let after_main = barbicans
        .patch("barbican", &PatchParams::default(), &Patch::Merge(&main))
        .await
        .unwrap();
    assert_eq!(after_main.spec.region.as_deref(), Some("RegionThree"));
    assert_eq!(
        after_main
            .status
            .as_ref()
            .unwrap()
            .installed_release
            .as_deref(),
        Some("2025.2")
    );
    let sneaky = json!({"spec": {"region": "Elsewhere"}, "status": {"targetRelease": "2026.1"}});
    let after_status = barbicans
        .patch_status("barbican", &PatchParams::default(), &Patch::Merge(&sneaky))
        .await
        .unwrap();
    assert_eq!(after_status.spec.region.as_deref(), Some("RegionThree"));
    assert_eq!(
        after_status.status.unwrap().target_release.as_deref(),
        Some("2026.1")
    );
}

#[tokio::test]
async fn merge_and_json_patches_apply_and_json_patch_tests_hold() {
    let (_cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    maps.create(
        &PostParams::default(),
        &config_map("p", json!({"a": "1", "b": "2"})),
    )
    .await
    .unwrap();
    let merged = maps
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": null, "c": "3"}})),
        )
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(merged.data).unwrap(),
        json!({"b": "2", "c": "3"})
    );

    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/data/b", "value": "2"},
        {"op": "replace", "path": "/data/b", "value": "20"}
    ]))
    .unwrap();
    let patched = maps
        .patch("p", &PatchParams::default(), &Patch::<()>::Json(ops))
        .await
        .unwrap();
    assert_eq!(patched.data.unwrap()["b"], "20");
    let failing: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/data/b", "value": "2"}])).unwrap();
    assert_eq!(
        api_error(
            maps.patch("p", &PatchParams::default(), &Patch::<()>::Json(failing))
                .await
        )
        .0,
        422
    );
}

#[tokio::test]
async fn lists_filter_by_labels_and_fields_and_page() {
    let (_cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for (name, tier) in [("a", "api"), ("b", "db"), ("c", "api"), ("d", "cache")] {
        let mut map = config_map(name, json!({}));
        map.labels_mut().insert("tier".into(), tier.into());
        maps.create(&PostParams::default(), &map).await.unwrap();
    }
    let names = |list: kube::core::ObjectList<ConfigMap>| {
        list.items.iter().map(|m| m.name_any()).collect::<Vec<_>>()
    };
    assert_eq!(
        names(
            maps.list(&ListParams::default().labels("tier=api"))
                .await
                .unwrap()
        ),
        ["a", "c"]
    );
    assert_eq!(
        names(
            maps.list(&ListParams::default().labels("tier in (db,cache)"))
                .await
                .unwrap()
        ),
        ["b", "d"]
    );
    assert_eq!(
        names(
            maps.list(&ListParams::default().labels("tier!=api"))
                .await
                .unwrap()
        ),
        ["b", "d"]
    );
    assert_eq!(
        names(
            maps.list(&ListParams::default().fields("metadata.name=b"))
                .await
                .unwrap()
        ),
        ["b"]
    );

    let first = maps.list(&ListParams::default().limit(3)).await.unwrap();
    assert_eq!(names(first.clone()), ["a", "b", "c"]);
    let token = first.metadata.continue_.clone().expect("a continue token");
    let rest = maps
        .list(&ListParams::default().limit(3).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(rest.clone()), ["d"]);
    assert!(rest.metadata.continue_.is_none());
    let all: Api<ConfigMap> = Api::all(client);
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        4
    );
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let (_cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut map = config_map("held", json!({}));
    map.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    maps.create(&PostParams::default(), &map).await.unwrap();
    maps.delete("held", &DeleteParams::default()).await.unwrap();
    let terminating = maps.get("held").await.unwrap();
    assert!(terminating.metadata.deletion_timestamp.is_some());
    maps.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(
        api_error(maps.get("held").await).0,
        404,
        "the object goes with its last finalizer"
    );
}

#[tokio::test]
async fn owners_take_their_dependents_unless_orphaned() {
    let (_cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for owner in ["owner-a", "owner-b"] {
        let owner = maps
            .create(&PostParams::default(), &config_map(owner, json!({})))
            .await
            .unwrap();
        let mut child = config_map(&format!("{}-child", owner.name_any()), json!({}));
        child.metadata.owner_references = Some(vec![serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap", "name": owner.name_any(), "uid": owner.uid().unwrap(), "controller": true
        }))
        .unwrap()]);
        maps.create(&PostParams::default(), &child).await.unwrap();
    }
    maps.delete("owner-a", &DeleteParams::background())
        .await
        .unwrap();
    assert_eq!(
        api_error(maps.get("owner-a-child").await).0,
        404,
        "background propagation collects the dependent"
    );
    maps.delete("owner-b", &DeleteParams::orphan())
        .await
        .unwrap();
    let orphan = maps.get("owner-b-child").await.unwrap();
    assert!(
        orphan.metadata.owner_references.is_none(),
        "orphaning removes the reference and keeps the object"
    );
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_content_then_itself() {
    let (_cluster, client) = cluster_with_crds();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "tenant"}})).unwrap(),
        )
        .await
        .unwrap();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "tenant");
    let mut held = config_map("held", json!({}));
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    maps.create(&PostParams::default(), &held).await.unwrap();
    maps.create(&PostParams::default(), &config_map("free", json!({})))
        .await
        .unwrap();
    namespaces
        .delete("tenant", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(api_error(maps.get("free").await).0, 404);
    let ns = namespaces.get("tenant").await.unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Terminating"));
    assert_eq!(
        api_error(
            maps.create(&PostParams::default(), &config_map("late", json!({})))
                .await
        )
        .0,
        403
    );
    maps.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(
        api_error(namespaces.get("tenant").await).0,
        404,
        "the namespace goes once it is empty"
    );
}

#[tokio::test]
async fn watches_replay_history_stream_changes_and_expire() {
    let (_cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let created = maps
        .create(&PostParams::default(), &config_map("w", json!({"v": "1"})))
        .await
        .unwrap();
    let from = created.resource_version().unwrap();
    maps.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"v": "2"}})),
    )
    .await
    .unwrap();

    let mut stream = maps
        .watch(&WatchParams::default().timeout(5), &from)
        .await
        .unwrap()
        .boxed();
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Modified(m)) => assert_eq!(m.data.unwrap()["v"], "2"),
        other => panic!("expected the replayed MODIFIED, got {other:?}"),
    }
    maps.delete("w", &DeleteParams::default()).await.unwrap();
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Deleted(m)) => assert_eq!(m.name_any(), "w"),
        other => panic!("expected DELETED, got {other:?}"),
    }
}

/// kube-apiserver's watch cache (cacheWatcher.convertToWatchEvent): under a label selector,
/// an update that makes an object match arrives as ADDED, one that makes it stop matching as
/// DELETED carrying the object as it was and the update's resourceVersion. A controller that
/// watches its children by label learns this way that one left its selection.
#[tokio::test]
async fn a_selected_watch_sees_an_object_enter_as_added_and_leave_as_deleted() {
    let (_cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let created = maps
        .create(&PostParams::default(), &config_map("w", json!({"v": "1"})))
        .await
        .unwrap();
    let mut stream = maps
        .watch(
            &WatchParams::default().labels("owned=yes").timeout(5),
            &created.resource_version().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    let merge = |patch: Value| {
        let maps = maps.clone();
        async move {
            maps.patch("w", &PatchParams::default(), &Patch::Merge(patch))
                .await
                .unwrap()
        }
    };
    let label = |value: Value| merge(json!({"metadata": {"labels": {"owned": value}}}));
    label(json!("yes")).await;
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Added(m)) => assert_eq!(m.labels()["owned"], "yes"),
        other => panic!("expected ADDED as the object starts matching, got {other:?}"),
    }
    merge(json!({"data": {"v": "2"}})).await;
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Modified(m)) => assert_eq!(m.data.unwrap()["v"], "2"),
        other => panic!("expected MODIFIED while it matches, got {other:?}"),
    }
    let unlabelled = label(Value::Null).await;
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Deleted(m)) => {
            assert_eq!(m.labels()["owned"], "yes", "the object as it was");
            assert_eq!(m.resource_version(), unlabelled.resource_version());
        }
        other => panic!("expected DELETED as the object stops matching, got {other:?}"),
    }
    merge(json!({"data": {"v": "3"}})).await;
    label(json!("yes")).await;
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Added(m)) => {
            assert_eq!(m.data.unwrap()["v"], "3", "unselected changes skipped")
        }
        other => panic!("expected ADDED again, got {other:?}"),
    }
}

#[tokio::test]
async fn a_watch_from_a_compacted_version_gets_410() {
    let cluster = Cluster::with_history(3);
    let client = cluster.client();
    let maps: Api<ConfigMap> = Api::namespaced(client, "default");
    for i in 0..6 {
        maps.create(
            &PostParams::default(),
            &config_map(&format!("m{i}"), json!({})),
        )
        .await
        .unwrap();
    }
    let mut stream = maps
        .watch(&WatchParams::default().timeout(2), "1")
        .await
        .unwrap()
        .boxed();
    match stream.try_next().await.unwrap() {
        Some(WatchEvent::Error(e)) => assert_eq!(e.code, 410),
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
}

#[tokio::test]
async fn kube_runtime_watcher_sees_the_lifecycle() {
    let (_cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    maps.create(&PostParams::default(), &config_map("existing", json!({})))
        .await
        .unwrap();
    let events = watcher(maps.clone(), watcher::Config::default()).boxed();
    let writer = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        maps.create(&PostParams::default(), &config_map("later", json!({})))
            .await
            .unwrap();
        maps.delete("existing", &DeleteParams::default())
            .await
            .unwrap();
    };
    let reader = async {
        let mut seen = Vec::new();
        let mut events = events;
        while let Some(event) = events.try_next().await.unwrap() {
            match event {
                watcher::Event::InitApply(m) | watcher::Event::Apply(m) => {
                    seen.push(format!("apply {}", m.name_any()))
                }
                watcher::Event::Delete(m) => seen.push(format!("delete {}", m.name_any())),
                watcher::Event::Init | watcher::Event::InitDone => {}
            }
            if seen.iter().any(|s| s == "delete existing")
                && seen.iter().any(|s| s == "apply later")
            {
                return seen;
            }
        }
        seen
    };
    let (_, seen) = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::join!(writer, reader)
    })
    .await
    .expect("the watcher sees every change");
    assert_eq!(seen.first().map(String::as_str), Some("apply existing"));
}

#[tokio::test]
async fn a_kube_runtime_controller_reconciles_on_watch_events() {
    let (_cluster, client) = cluster_with_crds();
    let barbicans: Api<Barbican> = Api::namespaced(client.clone(), "default");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let context = Arc::new((barbicans.clone(), tx));
    let controller = Controller::new(barbicans.clone(), watcher::Config::default())
        .run(
            |object: Arc<Barbican>,
             ctx: Arc<(Api<Barbican>, tokio::sync::mpsc::UnboundedSender<String>)>| async move {
                let status = json!({"status": {"observedGeneration": object.metadata.generation}});
                ctx.0
                    .patch_status(
                        &object.name_any(),
                        &PatchParams::default(),
                        &Patch::Merge(&status),
                    )
                    .await?;
                let _ = ctx.1.send(format!(
                    "{}@{}",
                    object.name_any(),
                    object.metadata.generation.unwrap_or_default()
                ));
                Ok::<_, kube::Error>(Action::await_change())
            },
            |_, _, _| Action::requeue(Duration::from_secs(1)),
            context,
        )
        .for_each(|_| async {});
    let driver = tokio::spawn(controller);

    let mut object: Barbican = serde_json::from_value(minimal_barbican()).unwrap();
    object.metadata.namespace = None;
    barbicans
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("reconciled after create");
    assert_eq!(first.as_deref(), Some("barbican@1"));

    barbicans
        .patch(
            "barbican",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"region": "RegionTwo"}})),
        )
        .await
        .unwrap();
    let mut reconciled_generation_two = false;
    while let Ok(Some(seen)) = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
        if seen == "barbican@2" {
            reconciled_generation_two = true;
            break;
        }
    }
    assert!(
        reconciled_generation_two,
        "a spec change reached the controller through the watch"
    );
    let observed = barbicans.get_status("barbican").await.unwrap();
    assert_eq!(observed.status.unwrap().observed_generation, Some(2));
    driver.abort();
}

#[tokio::test]
async fn the_api_is_served_over_loopback_http_too() {
    let cluster = Cluster::new();
    let addr = cluster.serve_on_loopback().await.unwrap();
    let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
    let client = Client::try_from(config).unwrap();
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(version.minor, barbican_sim::cluster::KUBERNETES_MINOR);
    let namespaces: Api<Namespace> = Api::all(client);
    let names: Vec<String> = namespaces
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|n| n.name_any())
        .collect();
    assert_eq!(names, ["default", "kube-public", "kube-system"]);
}

/// BarbicanSecretStores in `default` on a fresh cluster with that CRD installed.
fn secret_stores_in_default() -> Api<kube::api::DynamicObject> {
    use barbican_operator::api::BarbicanSecretStore;
    let cluster = Cluster::new();
    cluster
        .install_crd(serde_json::to_value(BarbicanSecretStore::crd()).unwrap())
        .unwrap();
    let resource = kube::core::ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk(
            "barbican.openstack.c5c3.io",
            "v1alpha1",
            "BarbicanSecretStore",
        ),
        "barbicansecretstores",
    );
    Api::namespaced_with(cluster.client(), "default", &resource)
}

/// Creates `object` in `default` through `api`.
async fn create_in_default(
    api: &Api<kube::api::DynamicObject>,
    mut object: serde_json::Value,
) -> kube::api::DynamicObject {
    object["metadata"]["namespace"] = json!("default");
    api.create(
        &PostParams::default(),
        &serde_json::from_value(object).unwrap(),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn custom_resources_are_pruned_to_their_schema_and_defaulted() {
    use barbican_operator::api::fixtures::managed_store;
    let api = secret_stores_in_default();
    let mut object = managed_store();
    object["spec"]["notInTheSchema"] = json!("dropped");
    object["spec"]["openBao"]["typo"] = json!(true);
    let created = create_in_default(&api, object).await;
    let spec = &created.data["spec"];
    assert!(
        spec.get("notInTheSchema").is_none() && spec["openBao"].get("typo").is_none(),
        "{spec}"
    );
    assert_eq!(
        spec["openBao"]["kvMountpoint"], "barbican",
        "the schema default is filled on write"
    );
    assert_eq!(spec["barbicanRef"]["name"], "barbican");
}

#[tokio::test]
async fn token_requests_mint_tokens_that_token_reviews_accept() {
    use k8s_openapi::api::{
        authentication::v1::{TokenRequest, TokenReview},
        core::v1::ServiceAccount,
    };
    let cluster = Cluster::new();
    let client = cluster.client();
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let account = accounts
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "openbao-provisioner"}})).unwrap(),
        )
        .await
        .unwrap();
    let request: TokenRequest = serde_json::from_value(
        json!({"spec": {"audiences": ["openbao"], "expirationSeconds": 600}}),
    )
    .unwrap();
    let minted = accounts
        .create_token_request("openbao-provisioner", &PostParams::default(), &request)
        .await
        .unwrap();
    let token = minted.status.unwrap().token.expect("a token");
    assert_eq!(token.split('.').count(), 3, "a JWT");

    let reviews: Api<TokenReview> = Api::all(client.clone());
    let review = |token: &str, audience: &str| -> TokenReview {
        serde_json::from_value(json!({"spec": {"token": token, "audiences": [audience]}})).unwrap()
    };
    let accepted = reviews
        .create(&PostParams::default(), &review(&token, "openbao"))
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(accepted.authenticated, Some(true));
    let user = accepted.user.unwrap();
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:default:openbao-provisioner")
    );
    assert_eq!(user.uid, account.metadata.uid);

    let wrong_audience = reviews
        .create(&PostParams::default(), &review(&token, "vault"))
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(wrong_audience.authenticated, Some(false));
    let forged = reviews
        .create(
            &PostParams::default(),
            &review(&format!("{token}x"), "openbao"),
        )
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(forged.authenticated, Some(false));

    accounts
        .delete("openbao-provisioner", &DeleteParams::default())
        .await
        .unwrap();
    let after_delete = reviews
        .create(&PostParams::default(), &review(&token, "openbao"))
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(
        after_delete.authenticated,
        Some(false),
        "a token outlives its account in no cluster"
    );

    let too_short: TokenRequest =
        serde_json::from_value(json!({"spec": {"audiences": ["x"], "expirationSeconds": 60}}))
            .unwrap();
    accounts
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "again"}})).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        api_error(
            accounts
                .create_token_request("again", &PostParams::default(), &too_short)
                .await
        )
        .0,
        422
    );
    assert_eq!(
        api_error(
            accounts
                .create_token_request("missing", &PostParams::default(), &request)
                .await
        )
        .0,
        404
    );
}

#[tokio::test]
async fn a_cluster_can_require_bearer_tokens() {
    let cluster = Cluster::new();
    let addr = cluster.serve_on_loopback().await.unwrap();
    let client_with = |token: Option<&str>| {
        let mut config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        config.auth_info.token = token.map(|t| t.to_string().into());
        Client::try_from(config).unwrap()
    };
    let namespaces = |client: Client| async move {
        Api::<Namespace>::all(client)
            .list(&ListParams::default())
            .await
    };

    assert!(
        namespaces(client_with(None)).await.is_ok(),
        "anonymous by default"
    );
    cluster.require_bearer_tokens(vec!["good-token".into()]);
    assert_eq!(api_error(namespaces(client_with(None)).await).0, 401);
    assert_eq!(
        api_error(namespaces(client_with(Some("rejected"))).await).0,
        401
    );
    assert!(namespaces(client_with(Some("good-token"))).await.is_ok());
    assert_eq!(
        api_error(namespaces(cluster.client_as("fakes")).await).0,
        401,
        "in-process clients too"
    );
    assert!(
        namespaces(cluster.client_with_token("fakes", "good-token"))
            .await
            .is_ok()
    );
    cluster.allow_anonymous();
    assert!(namespaces(client_with(None)).await.is_ok());
}

#[tokio::test]
async fn server_side_apply_owns_fields_removes_dropped_ones_and_reports_conflicts() {
    let (_cluster, client) = cluster_with_crds();
    let barbicans: Api<Barbican> = Api::namespaced(client.clone(), "default");
    let mut config = minimal_barbican();
    config["metadata"]["namespace"] = json!("default");
    config["spec"]["region"] = json!("RegionOne");
    let operator = PatchParams::apply("barbican-operator");

    // Apply creates the object when it is absent.
    let created = barbicans
        .patch("barbican", &operator, &Patch::Apply(&config))
        .await
        .unwrap();
    assert_eq!(created.spec.region.as_deref(), Some("RegionOne"));
    let managers: Vec<String> = created
        .metadata
        .managed_fields
        .unwrap()
        .iter()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert_eq!(managers, ["barbican-operator"]);

    // Applying again without region removes it: the manager stopped applying it.
    let mut without_region = config.clone();
    without_region["spec"]
        .as_object_mut()
        .unwrap()
        .remove("region");
    let dropped = barbicans
        .patch("barbican", &operator, &Patch::Apply(&without_region))
        .await
        .unwrap();
    assert_eq!(dropped.spec.region, None);

    // Another manager applying a different value for an owned field conflicts, until forced.
    let mut other = without_region.clone();
    other["spec"]["keystoneEndpoint"] = json!("https://keystone.example.com/v3");
    let conflict = barbicans
        .patch(
            "barbican",
            &PatchParams::apply("someone-else"),
            &Patch::Apply(&other),
        )
        .await;
    let (code, _) = api_error(conflict);
    assert_eq!(code, 409);
    let forced = barbicans
        .patch(
            "barbican",
            &PatchParams::apply("someone-else").force(),
            &Patch::Apply(&other),
        )
        .await
        .unwrap();
    assert_eq!(
        forced.spec.keystone_endpoint,
        "https://keystone.example.com/v3"
    );

    // Status conditions are a list-map keyed by type: two managers apply their own condition.
    let condition = |t: &str| {
        json!({"apiVersion": "barbican.openstack.c5c3.io/v1alpha1", "kind": "Barbican",
        "status": {"conditions": [{"type": t, "status": "True", "reason": "Fine", "message": "", "lastTransitionTime": "2026-11-29T00:00:00Z"}]}})
    };
    barbicans
        .patch_status(
            "barbican",
            &PatchParams::apply("step-a"),
            &Patch::Apply(condition("SecretsReady")),
        )
        .await
        .unwrap();
    let both = barbicans
        .patch_status(
            "barbican",
            &PatchParams::apply("step-b"),
            &Patch::Apply(condition("DatabaseReady")),
        )
        .await
        .unwrap();
    let types: Vec<String> = both
        .status
        .unwrap()
        .conditions
        .iter()
        .map(|c| c.type_.clone())
        .collect();
    assert_eq!(types, ["SecretsReady", "DatabaseReady"]);
    // Apply without a field manager is refused, as an invalid PatchOptions.
    let no_manager = barbicans
        .patch("barbican", &PatchParams::default(), &Patch::Apply(&config))
        .await;
    assert_eq!(api_error(no_manager).0, 422);
}

#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents() {
    let (_cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = maps
        .create(&PostParams::default(), &config_map("owner", json!({})))
        .await
        .unwrap();
    let child = |name: &str, block: bool, finalizer: bool| {
        let mut c = config_map(name, json!({}));
        c.metadata.owner_references = Some(vec![serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.uid().unwrap(), "blockOwnerDeletion": block
        }))
        .unwrap()]);
        if finalizer {
            c.metadata.finalizers = Some(vec!["example.com/hold".into()]);
        }
        c
    };
    maps.create(&PostParams::default(), &child("blocking", true, true))
        .await
        .unwrap();
    maps.create(&PostParams::default(), &child("free", false, false))
        .await
        .unwrap();

    maps.delete("owner", &DeleteParams::foreground())
        .await
        .unwrap();
    let waiting = maps.get("owner").await.unwrap();
    assert!(waiting.metadata.deletion_timestamp.is_some());
    assert!(
        waiting
            .finalizers()
            .iter()
            .any(|f| f == "foregroundDeletion"),
        "{:?}",
        waiting.finalizers()
    );
    assert_eq!(
        api_error(maps.get("free").await).0,
        404,
        "dependents go first"
    );
    assert!(
        maps.get("blocking")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some(),
        "a held dependent is Terminating"
    );

    maps.patch(
        "blocking",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(api_error(maps.get("blocking").await).0, 404);
    assert_eq!(
        api_error(maps.get("owner").await).0,
        404,
        "the owner goes once nothing blocks it"
    );
}

#[tokio::test]
async fn list_resource_version_semantics() {
    let (cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    maps.create(&PostParams::default(), &config_map("a", json!({})))
        .await
        .unwrap();
    let current = cluster.revision().to_string();
    let exact = ListParams::default()
        .at(&current)
        .matching(kube::api::VersionMatch::Exact);
    assert_eq!(
        maps.list(&exact)
            .await
            .unwrap()
            .metadata
            .resource_version
            .as_deref(),
        Some(current.as_str())
    );
    let older = ListParams::default()
        .at("1")
        .matching(kube::api::VersionMatch::Exact);
    assert_eq!(api_error(maps.list(&older).await).0, 410);
    let future = ListParams::default()
        .at("999999")
        .matching(kube::api::VersionMatch::NotOlderThan);
    assert_eq!(api_error(maps.list(&future).await).0, 504);
    let any = ListParams::default()
        .at("0")
        .matching(kube::api::VersionMatch::NotOlderThan);
    assert_eq!(maps.list(&any).await.unwrap().items.len(), 1);
}

#[tokio::test]
async fn namespaces_and_services_take_dns_labels() {
    let (_cluster, client) = cluster_with_crds();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let dotted: Namespace = serde_json::from_value(json!({"metadata": {"name": "a.b"}})).unwrap();
    assert_eq!(
        api_error(namespaces.create(&PostParams::default(), &dotted).await).0,
        422
    );
    let maps: Api<ConfigMap> = Api::namespaced(client, "default");
    maps.create(&PostParams::default(), &config_map("a.b", json!({})))
        .await
        .unwrap();
}

#[tokio::test]
async fn kube_runtime_streaming_lists_use_send_initial_events() {
    let (_cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for name in ["one", "two"] {
        maps.create(&PostParams::default(), &config_map(name, json!({})))
            .await
            .unwrap();
    }
    let mut events = watcher(maps.clone(), watcher::Config::default().streaming_lists()).boxed();
    let mut initial = Vec::new();
    let done = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(event) = events.try_next().await.unwrap() {
            match event {
                watcher::Event::InitApply(m) => initial.push(m.name_any()),
                watcher::Event::InitDone => return true,
                _ => {}
            }
        }
        false
    })
    .await
    .unwrap();
    assert!(
        done,
        "the initial-events-end bookmark completes the streaming list"
    );
    assert_eq!(initial, ["one", "two"]);
}

#[tokio::test]
async fn watches_send_bookmarks_when_allowed_and_end_at_their_timeout() {
    let (cluster, client) = cluster_with_crds();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let from = cluster.revision().to_string();
    let mut stream = maps
        .watch(&WatchParams::default().timeout(3), &from)
        .await
        .unwrap()
        .boxed();
    let first = tokio::time::timeout(Duration::from_secs(5), stream.try_next())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(first, Some(WatchEvent::Bookmark(_))), "{first:?}");
    // The stream ends by itself once timeoutSeconds has passed.
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(event) = stream.try_next().await.unwrap() {
            assert!(matches!(event, WatchEvent::Bookmark(_)));
        }
    })
    .await;
    assert!(ended.is_ok(), "the watch outlived its timeoutSeconds");
}

#[tokio::test]
async fn clusters_in_one_process_are_independent() {
    let (east, west) = (Cluster::new(), Cluster::new());
    let east_maps: Api<ConfigMap> = Api::namespaced(east.client(), "default");
    let west_maps: Api<ConfigMap> = Api::namespaced(west.client(), "default");
    east_maps
        .create(&PostParams::default(), &config_map("only-east", json!({})))
        .await
        .unwrap();
    assert!(east_maps.get("only-east").await.is_ok());
    assert_eq!(api_error(west_maps.get("only-east").await).0, 404);
    assert!(west.revision() < east.revision());
}

#[tokio::test]
async fn custom_resources_are_admitted_by_schema_and_cel_with_api_server_errors() {
    let (_cluster, client) = cluster_with_crds();
    let barbicans: Api<Barbican> = Api::namespaced(client.clone(), "default");
    let object = |patch: Value| -> Barbican {
        let mut o = barbican_operator::api::fixtures::with_spec(minimal_barbican(), &patch);
        o["metadata"]["namespace"] = json!("default");
        serde_json::from_value(o).unwrap()
    };
    let status = |result: Result<Barbican, kube::Error>| match result {
        Err(kube::Error::Api(status)) => status,
        other => panic!("expected a refusal, got {other:?}"),
    };

    // Structural: every violation is one cause, the message names kind, group and name.
    let refused = status(
        barbicans
            .create(
                &PostParams::default(),
                &object(json!({"openStackRelease": "2025.3", "keystoneEndpoint": "ftp://k"})),
            )
            .await,
    );
    assert_eq!((refused.code, refused.reason.as_str()), (422, "Invalid"));
    assert!(
        refused
            .message
            .starts_with("Barbican.barbican.openstack.c5c3.io \"barbican\" is invalid: ["),
        "{}",
        refused.message
    );
    assert!(
        refused
            .message
            .contains("spec.openStackRelease: Invalid value: \"2025.3\""),
        "{}",
        refused.message
    );
    assert!(
        refused.message.contains("spec.keystoneEndpoint"),
        "{}",
        refused.message
    );

    // CEL, on create.
    let digest = format!("sha256:{}", "0".repeat(64));
    let refused = status(
        barbicans
            .create(
                &PostParams::default(),
                &object(json!({"image": {"digest": digest}})),
            )
            .await,
    );
    assert!(
        refused.message.contains(
            "spec.image: Invalid value: exactly one of image.tag or image.digest must be set"
        ),
        "{}",
        refused.message
    );

    // A valid object passes; a CEL transition rule sees the stored object.
    barbicans
        .create(&PostParams::default(), &object(json!({})))
        .await
        .unwrap();
    let moved = barbicans
        .patch(
            "barbican",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"targetClusterRef": {"name": "east"}}})),
        )
        .await;
    let refused = status(moved);
    assert!(
        refused.message.contains("targetClusterRef is immutable"),
        "{}",
        refused.message
    );
    // Nothing was stored by the refused writes.
    assert!(
        barbicans
            .get("barbican")
            .await
            .unwrap()
            .spec
            .target_cluster_ref
            .is_none()
    );
}

#[tokio::test]
async fn secret_string_data_is_stored_as_data() {
    let (_cluster, client) = cluster_with_crds();
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::default_namespaced(client);
    let secret = serde_json::from_value(json!({"metadata": {"name": "s"},
        "data": {"kept": "a2VwdA==", "both": "b2xk"}, "stringData": {"both": "new", "plain": "text"}}))
        .unwrap();
    let stored = secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let data = stored.data.unwrap();
    let text = |k: &str| String::from_utf8(data[k].0.clone()).unwrap();
    assert_eq!(
        (text("kept"), text("both"), text("plain")),
        ("kept".into(), "new".into(), "text".into())
    );
    assert!(stored.string_data.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_patches_without_a_precondition_all_land_and_stale_ones_with_one_conflict() {
    let (_cluster, client) = cluster_with_crds();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    api.create(&PostParams::default(), &config_map("shared", json!({})))
        .await
        .unwrap();
    let writers = (0..16).map(|i| {
        let api = api.clone();
        tokio::spawn(async move {
            let patch = json!({"metadata": {"labels": {format!("writer-{i}"): "yes"}}});
            api.patch("shared", &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map(|_| ())
        })
    });
    for writer in futures::future::join_all(writers).await {
        writer
            .unwrap()
            .expect("a patch without resourceVersion never conflicts");
    }
    let labels = api.get("shared").await.unwrap().metadata.labels.unwrap();
    assert_eq!(labels.len(), 16, "{labels:?}");

    let stale = json!({"metadata": {"resourceVersion": "1", "labels": {"late": "yes"}}});
    let (code, _) = api_error(
        api.patch("shared", &PatchParams::default(), &Patch::Merge(&stale))
            .await,
    );
    assert_eq!(code, 409);
}

#[tokio::test]
async fn with_rbac_enforced_a_service_account_may_do_only_what_its_roles_grant() {
    use k8s_openapi::api::{authentication::v1::TokenRequest, core::v1::ServiceAccount};
    let cluster = Cluster::new();
    let admin = cluster.client();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    accounts
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "reader"}})).unwrap(),
        )
        .await
        .unwrap();
    let request: TokenRequest = serde_json::from_value(json!({"spec": {}})).unwrap();
    let token = accounts
        .create_token_request("reader", &PostParams::default(), &request)
        .await
        .unwrap()
        .status
        .unwrap()
        .token;
    let reader = cluster.client_with_token("reader", &token.unwrap_or_default());
    let maps = |client: Client| async move {
        Api::<ConfigMap>::namespaced(client, "default")
            .list(&ListParams::default())
            .await
    };
    assert!(maps(reader.clone()).await.is_ok(), "not enforced yet");

    cluster.enforce_rbac();
    let refused = maps(reader.clone()).await.unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("expected a 403, got {refused:?}")
    };
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        status.message,
        "configmaps is forbidden: User \"system:serviceaccount:default:reader\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    assert!(
        maps(admin.clone()).await.is_ok(),
        "the admin client is not restricted"
    );

    for (kind, object) in [
        (
            "clusterroles",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                   "metadata": {"name": "read-maps"},
                   "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]}),
        ),
        (
            "rolebindings",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                   "metadata": {"name": "read-maps", "namespace": "default"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "read-maps"},
                   "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "default"}]}),
        ),
    ] {
        let resource = kube::api::ApiResource {
            group: "rbac.authorization.k8s.io".into(),
            version: "v1".into(),
            api_version: "rbac.authorization.k8s.io/v1".into(),
            kind: object["kind"].as_str().unwrap().into(),
            plural: kind.into(),
        };
        let api: Api<kube::api::DynamicObject> = match object["metadata"]["namespace"].as_str() {
            Some(ns) => Api::namespaced_with(admin.clone(), ns, &resource),
            None => Api::all_with(admin.clone(), &resource),
        };
        api.create(
            &PostParams::default(),
            &serde_json::from_value(object).unwrap(),
        )
        .await
        .unwrap();
    }
    assert!(
        maps(reader.clone()).await.is_ok(),
        "granted in its namespace"
    );
    let elsewhere = Api::<ConfigMap>::namespaced(reader.clone(), "kube-system")
        .list(&ListParams::default())
        .await;
    assert_eq!(
        api_error(elsewhere).0,
        403,
        "a RoleBinding grants only its namespace"
    );

    // An apply patch that creates its object needs `create` besides `patch`.
    let rbac = kube::api::ApiResource {
        group: "rbac.authorization.k8s.io".into(),
        version: "v1".into(),
        api_version: "rbac.authorization.k8s.io/v1".into(),
        kind: "ClusterRole".into(),
        plural: "clusterroles".into(),
    };
    let grant = |verbs: Value| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "read-maps"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}]})
    };
    let roles: Api<kube::api::DynamicObject> = Api::all_with(admin.clone(), &rbac);
    let apply = PatchParams::apply("reader").force();
    roles
        .patch(
            "read-maps",
            &apply,
            &Patch::Apply(grant(json!(["list", "patch"]))),
        )
        .await
        .unwrap();
    let reader_maps = Api::<ConfigMap>::namespaced(reader.clone(), "default");
    let map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}});
    let refused = reader_maps.patch("m", &apply, &Patch::Apply(&map)).await;
    assert_eq!(api_error(refused).0, 403, "creating takes create");
    roles
        .patch(
            "read-maps",
            &apply,
            &Patch::Apply(grant(json!(["list", "patch", "create"]))),
        )
        .await
        .unwrap();
    reader_maps
        .patch("m", &apply, &Patch::Apply(&map))
        .await
        .unwrap();
    let checks: Vec<(String, bool)> = cluster
        .rbac_checks()
        .into_iter()
        .filter(|c| c.resource == "configmaps" && c.user == "system:serviceaccount:default:reader")
        .map(|c| (c.verb, c.allowed))
        .collect();
    for expected in [
        ("create", false),
        ("create", true),
        ("list", false),
        ("list", true),
        ("patch", true),
    ] {
        assert!(
            checks.contains(&(expected.0.to_string(), expected.1)),
            "{expected:?} in {checks:?}"
        );
    }

    // A revoked grant is refused on the next request: the policy the sim keeps between
    // requests is read again after every change to an RBAC object, deletions included.
    let bindings = kube::api::ApiResource {
        kind: "RoleBinding".into(),
        plural: "rolebindings".into(),
        ..rbac
    };
    Api::<kube::api::DynamicObject>::namespaced_with(admin.clone(), "default", &bindings)
        .delete("read-maps", &Default::default())
        .await
        .unwrap();
    assert_eq!(
        api_error(maps(reader.clone()).await).0,
        403,
        "the RoleBinding is gone"
    );
}

#[tokio::test]
async fn a_brownfield_stores_url_can_be_edited_by_a_merge_patch() {
    use barbican_operator::api::fixtures::managed_store;
    use kube::api::{Patch, PatchParams};
    let api = secret_stores_in_default();
    let mut object = managed_store();
    object["spec"]["openBao"] = json!({
        "server": {"url": "https://vault.example.com:8200", "credentialsSecretRef": {"name": "approle"}},
        "kvMountpoint": "secret-barbican",
        "namespace": "tenant-a",
    });
    let created = create_in_default(&api, object).await;
    let patched = api
        .patch(
            &created.name_any(),
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"openBao": {"server": {"url": "https://vault.example.com:8201"}}}}),
            ),
        )
        .await;
    assert!(patched.is_ok(), "{patched:?}");
}

/// kube-apiserver authenticates a service-account token only for its own audience
/// (`--api-audiences`, the issuer by default) and only while its ServiceAccount is the one it
/// was minted for: a token a pod holds for OpenBao is no key to the API, and neither is one
/// whose account was deleted (or deleted and re-created under the same name).
#[tokio::test]
async fn a_token_for_another_audience_or_a_deleted_account_is_refused_with_401() {
    use k8s_openapi::api::{authentication::v1::TokenRequest, core::v1::ServiceAccount};
    let cluster = Cluster::new();
    let admin = cluster.client();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "app"}})).unwrap();
    accounts
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    let token = |audiences: Value| {
        let accounts = accounts.clone();
        async move {
            let request: TokenRequest =
                serde_json::from_value(json!({"spec": {"audiences": audiences}})).unwrap();
            accounts
                .create_token_request("app", &PostParams::default(), &request)
                .await
                .unwrap()
                .status
                .unwrap()
                .token
                .expect("a token")
        }
    };
    let maps = |token: String| {
        let client = cluster.client_with_token("app", &token);
        async move {
            Api::<ConfigMap>::namespaced(client, "default")
                .list(&ListParams::default())
                .await
        }
    };
    let for_the_api = token(json!([])).await;
    let for_vault = token(json!(["vault"])).await;
    assert!(
        maps(for_the_api.clone()).await.is_ok(),
        "the API's audience"
    );
    assert_eq!(api_error(maps(for_vault).await).0, 401, "another audience");

    accounts
        .delete("app", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(api_error(maps(for_the_api.clone()).await).0, 401, "deleted");
    accounts
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    assert_eq!(
        api_error(maps(for_the_api).await).0,
        401,
        "a new account under the same name is not the one the token was minted for"
    );
    assert!(maps(token(json!([])).await).await.is_ok(), "its own token");
}

/// A token bound to a pod (what the kubelet projects into it) dies with the pod, as
/// kube-apiserver's authenticator checks the pod it names; a TokenRequest naming a pod that is
/// not there, or another pod's uid, is refused.
#[tokio::test]
async fn a_token_bound_to_a_deleted_pod_is_refused_with_401() {
    use k8s_openapi::api::{
        authentication::v1::TokenRequest,
        core::v1::{Pod, ServiceAccount},
    };
    let cluster = Cluster::new();
    let admin = cluster.client();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    accounts
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "app"}})).unwrap(),
        )
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(admin.clone(), "default");
    let pod = pods
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "web"},
                "spec": {"serviceAccountName": "app", "containers": [{"name": "c", "image": "i"}]}}))
            .unwrap(),
        )
        .await
        .unwrap();
    let request = |bound: Value| -> TokenRequest {
        serde_json::from_value(json!({"spec": {"audiences": [], "boundObjectRef": bound}})).unwrap()
    };
    let uid = pod.metadata.uid.clone().unwrap();
    let bound = accounts
        .create_token_request(
            "app",
            &PostParams::default(),
            &request(json!({"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": uid})),
        )
        .await
        .unwrap()
        .status
        .unwrap()
        .token
        .expect("a token");
    let client = cluster.client_with_token("app", &bound);
    let maps = Api::<ConfigMap>::namespaced(client, "default");
    assert!(
        maps.list(&ListParams::default()).await.is_ok(),
        "the pod is there"
    );
    let stale = accounts
        .create_token_request(
            "app",
            &PostParams::default(),
            &request(json!({"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "other"})),
        )
        .await;
    assert_eq!(api_error(stale).0, 409, "another pod's uid");
    pods.delete("web", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    assert_eq!(
        api_error(maps.list(&ListParams::default()).await).0,
        401,
        "the pod is gone"
    );
    let missing = accounts
        .create_token_request(
            "app",
            &PostParams::default(),
            &request(json!({"apiVersion": "v1", "kind": "Pod", "name": "web"})),
        )
        .await;
    assert_eq!(api_error(missing).0, 404, "no pod to bind to");
}
