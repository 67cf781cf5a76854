//! A watch delivers every change, in order, whatever else the cluster is doing: a client
//! that follows a watch ends with what a list says, however many writes race it.

use std::collections::BTreeMap;

use barbican_sim::Cluster;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams, PostParams},
    runtime::{WatchStreamExt, watcher},
};
use serde_json::json;

/// Creates the ConfigMaps `m-0` .. `m-{n-1}` in `maps`, each with `round: "0"`.
async fn create_maps(maps: &Api<ConfigMap>, n: usize) {
    for i in 0..n {
        let map: ConfigMap = serde_json::from_value(
            json!({"metadata": {"name": format!("m-{i}")}, "data": {"round": "0"}}),
        )
        .unwrap();
        maps.create(&PostParams::default(), &map).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_watcher_ends_with_what_a_list_says_after_racing_writes() {
    let client = Cluster::new().client();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    const N: usize = 1000;
    const ROUNDS: usize = 20;
    create_maps(&maps, N).await;
    // The watcher follows from here, as the bench's does.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(BTreeMap::<String, String>::new()));
    let follower = tokio::spawn({
        let (maps, seen) = (maps.clone(), seen.clone());
        async move {
            let mut events =
                std::pin::pin!(watcher(maps, watcher::Config::default()).default_backoff());
            let mut count = 0u64;
            while let Some(event) = events.next().await {
                // A consumer that falls behind now and then, as a busy one does.
                count += 1;
                if count.is_multiple_of(300) {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                match event {
                    Ok(watcher::Event::Apply(m) | watcher::Event::InitApply(m)) => {
                        let round = m
                            .data
                            .unwrap_or_default()
                            .get("round")
                            .cloned()
                            .unwrap_or_default();
                        seen.lock().unwrap().insert(m.metadata.name.unwrap(), round);
                    }
                    Ok(_) => {}
                    // A 410 after falling behind: the watcher lists again.
                    Err(_) => {}
                }
            }
        }
    });
    // Writers in parallel, each object written ROUNDS times.
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let maps = maps.clone();
            tokio::spawn(async move {
                for round in 1..=ROUNDS {
                    for i in (w..N).step_by(8) {
                        let patch = json!({"data": {"round": round.to_string()}});
                        maps.patch(
                            &format!("m-{i}"),
                            &PatchParams::default(),
                            &Patch::Merge(patch),
                        )
                        .await
                        .unwrap();
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    let listed: BTreeMap<String, String> = maps
        .list(&ListParams::default())
        .await
        .unwrap()
        .into_iter()
        .map(|m| {
            (
                m.metadata.name.unwrap(),
                m.data.unwrap_or_default()["round"].clone(),
            )
        })
        .collect();
    for _ in 0..100 {
        if *seen.lock().unwrap() == listed {
            follower.abort();
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let seen = seen.lock().unwrap().clone();
    let behind: Vec<_> = listed
        .iter()
        .filter(|(name, round)| seen.get(*name) != Some(round))
        .map(|(name, round)| format!("{name}: listed {round}, watched {:?}", seen.get(name)))
        .collect();
    panic!("the watch missed changes: {behind:?}");
}

/// A list served in pages is one snapshot: a change made between two pages to an object of
/// the first shows in neither page, and the watch that starts from the list's
/// resourceVersion delivers it.
#[tokio::test]
async fn the_pages_of_a_list_are_one_snapshot_and_the_watch_after_it_misses_nothing() {
    let client = Cluster::new().client();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create_maps(&maps, 5).await;
    let first = maps.list(&ListParams::default().limit(2)).await.unwrap();
    let names = |list: &kube::core::ObjectList<ConfigMap>| -> Vec<String> {
        list.items
            .iter()
            .map(|m| m.metadata.name.clone().unwrap())
            .collect()
    };
    assert_eq!(names(&first), ["m-0", "m-1"]);
    let snapshot = first.metadata.resource_version.clone().unwrap();
    // Between the pages: m-0 (served) changes, m-3 (to come) changes, m-4 goes, m-5 comes.
    for name in ["m-0", "m-3"] {
        maps.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"round": "1"}})),
        )
        .await
        .unwrap();
    }
    maps.delete("m-4", &Default::default()).await.unwrap();
    let m5: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "m-5"}, "data": {"round": "1"}}))
            .unwrap();
    maps.create(&PostParams::default(), &m5).await.unwrap();

    let token = first.metadata.continue_.clone().unwrap();
    let second = maps
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(&second), ["m-2", "m-3"]);
    assert_eq!(
        second.metadata.resource_version.as_deref(),
        Some(snapshot.as_str())
    );
    let round = |m: &ConfigMap| m.data.clone().unwrap_or_default()["round"].clone();
    assert_eq!(
        round(&second.items[1]),
        "0",
        "m-3 as it was when the list began"
    );
    let token = second.metadata.continue_.clone().unwrap();
    let third = maps
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(names(&third), ["m-4"], "m-4 was there, m-5 was not");
    assert_eq!(
        third.metadata.resource_version.as_deref(),
        Some(snapshot.as_str())
    );

    // The watch from the snapshot delivers every change since.
    let params = kube::api::WatchParams::default().timeout(1);
    let mut events = std::pin::pin!(maps.watch(&params, &snapshot).await.unwrap());
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        match event.unwrap() {
            kube::api::WatchEvent::Modified(m) => {
                seen.push(format!("modified {}", m.metadata.name.unwrap()))
            }
            kube::api::WatchEvent::Added(m) => {
                seen.push(format!("added {}", m.metadata.name.unwrap()))
            }
            kube::api::WatchEvent::Deleted(m) => {
                seen.push(format!("deleted {}", m.metadata.name.unwrap()))
            }
            _ => {}
        }
    }
    assert_eq!(
        seen,
        ["modified m-0", "modified m-3", "deleted m-4", "added m-5"]
    );
}

/// A continue token whose snapshot the history no longer reaches is refused with 410, as
/// kube-apiserver refuses one past compaction; the client lists afresh.
#[tokio::test]
async fn a_continue_token_past_the_history_is_gone() {
    let cluster = Cluster::new();
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    create_maps(&maps, 3).await;
    let first = maps.list(&ListParams::default().limit(1)).await.unwrap();
    maps.patch(
        "m-2",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"a": "b"}})),
    )
    .await
    .unwrap();
    cluster.compact();
    let token = first.metadata.continue_.unwrap();
    match maps
        .list(&ListParams::default().limit(1).continue_token(&token))
        .await
    {
        Err(kube::Error::Api(e)) => assert_eq!(e.code, 410, "{e:?}"),
        other => panic!("a continued list past the history: {other:?}"),
    }
}

/// A continue token naming a version the store has not reached (only a forged one can) is
/// refused as a list at that version is, never served as today's state under that version.
#[tokio::test]
async fn a_continue_token_from_the_future_is_refused() {
    let cluster = Cluster::new();
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    create_maps(&maps, 2).await;
    let first = maps.list(&ListParams::default().limit(1)).await.unwrap();
    let token = first.metadata.continue_.unwrap();
    let (rv, after) = token.split_once(':').unwrap();
    let future = rv.parse::<u64>().unwrap() + 1000;
    let forged = format!("{future}:{after}");
    match maps
        .list(&ListParams::default().limit(1).continue_token(&forged))
        .await
    {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 504, "{e:?}");
            assert!(e.message.contains("Too large resource version"), "{e:?}");
        }
        other => panic!("a continued list from the future: {other:?}"),
    }
    // The genuine token still pages on.
    let second = maps
        .list(&ListParams::default().limit(1).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(second.items.len(), 1);
}
