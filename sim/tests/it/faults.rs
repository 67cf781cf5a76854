//! Every fault kind, observed the way an operator would meet it: through kube::Client (and a
//! raw HTTP exchange where the client hides a header).

use std::time::{Duration, Instant};

use barbican_sim::{Cluster, faults::Fault};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, Client, ResourceExt,
    api::{PostParams, WatchEvent, WatchParams},
    runtime::{WatchStreamExt, watcher},
};
use serde_json::json;

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}})).unwrap()
}

fn maps(cluster: &Cluster) -> Api<ConfigMap> {
    Api::default_namespaced(cluster.client())
}

/// A raw watch of the ConfigMaps from resourceVersion `version`.
async fn watch_from(
    maps: &Api<ConfigMap>,
    version: &str,
) -> futures::stream::BoxStream<'static, kube::Result<WatchEvent<ConfigMap>>> {
    maps.watch(&WatchParams::default(), version)
        .await
        .unwrap()
        .boxed()
}

fn code(result: Result<impl std::fmt::Debug, kube::Error>) -> (u16, String) {
    match result {
        Err(kube::Error::Api(status)) => (status.code, status.reason.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn fault(rule: &str) -> Fault {
    rule.parse().unwrap()
}

#[tokio::test]
async fn error_codes_fire_by_verb_resource_and_trigger() {
    let cluster = Cluster::new();
    let maps = maps(&cluster);
    cluster.add_fault(fault("verb=create,resource=configmaps,code=500,every=3"));
    let mut outcomes = Vec::new();
    for i in 0..6 {
        outcomes.push(
            maps.create(&PostParams::default(), &config_map(&format!("m{i}")))
                .await
                .is_ok(),
        );
    }
    assert_eq!(outcomes, [true, true, false, true, true, false]);
    for name in ["x7", "x8"] {
        maps.create(&PostParams::default(), &config_map(name))
            .await
            .unwrap();
    }
    assert_eq!(
        code(maps.create(&PostParams::default(), &config_map("x9")).await),
        (500, "InternalError".into())
    );
    // Reads are untouched by a rule for creates.
    assert_eq!(maps.list(&Default::default()).await.unwrap().items.len(), 6);

    cluster.clear_faults();
    cluster.add_fault(fault("verb=update,code=409"));
    let mut m = maps.get("m0").await.unwrap();
    m.data = Some([("k".to_string(), "v".to_string())].into());
    assert_eq!(
        code(maps.replace("m0", &PostParams::default(), &m).await),
        (409, "Conflict".into())
    );

    cluster.clear_faults();
    cluster.add_fault(fault("verb=get,name=m1,code=503,script=x.x"));
    assert_eq!(
        code(maps.get("m1").await),
        (503, "ServiceUnavailable".into())
    );
    assert!(maps.get("m1").await.is_ok());
    assert_eq!(code(maps.get("m1").await).0, 503);
    assert!(maps.get("m1").await.is_ok(), "the script has run out");
    assert!(maps.get("m0").await.is_ok(), "another name is untouched");
}

#[tokio::test]
async fn throttling_carries_retry_after_and_timeouts_answer_504() {
    let cluster = Cluster::new();
    cluster.add_fault(fault("verb=list,code=429,retry-after=7,times=2"));
    assert_eq!(
        code(maps(&cluster).list(&Default::default()).await),
        (429, "TooManyRequests".into())
    );
    // kube::Client hides headers; ask the router directly.
    let response = tower::ServiceExt::oneshot(
        cluster.router(),
        axum::http::Request::get("/api/v1/namespaces/default/configmaps")
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    let body = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(status["reason"], "TooManyRequests");
    assert_eq!(status["details"]["retryAfterSeconds"], 7);

    cluster.add_fault(fault("verb=get,timeout=150ms"));
    let maps = maps(&cluster);
    let started = Instant::now();
    assert_eq!(code(maps.get("any").await), (504, "Timeout".into()));
    assert!(started.elapsed() >= Duration::from_millis(150));
}

#[tokio::test]
async fn latency_delays_a_request_that_then_succeeds() {
    let cluster = Cluster::new();
    let maps = maps(&cluster);
    cluster.add_fault(fault("verb=create,latency=200ms"));
    let started = Instant::now();
    maps.create(&PostParams::default(), &config_map("slow"))
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn rate_faults_repeat_for_a_seed() {
    let run = |seed| async move {
        let cluster = Cluster::new();
        cluster.add_fault(fault("verb=get,code=500,rate=0.5"));
        cluster.seed_faults(seed);
        let maps = maps(&cluster);
        let mut pattern = String::new();
        for _ in 0..32 {
            pattern.push(if maps.get_opt("x").await.is_ok() {
                '.'
            } else {
                'x'
            });
        }
        pattern
    };
    let first = run(11).await;
    assert_eq!(first, run(11).await);
    assert!(first.contains('x') && first.contains('.'), "{first}");
    assert_ne!(first, run(12).await);
}

/// The next watch event that is not a bookmark (the sim sends those as kube-apiserver does).
async fn next_change<S>(stream: &mut S) -> Option<kube::Result<WatchEvent<ConfigMap>>>
where
    S: futures::Stream<Item = kube::Result<WatchEvent<ConfigMap>>> + Unpin,
{
    loop {
        match stream.next().await {
            Some(Ok(WatchEvent::Bookmark(_))) => continue,
            other => return other,
        }
    }
}

#[tokio::test]
async fn dropped_watches_end_and_kube_watchers_resume() {
    let cluster = Cluster::new();
    let maps = maps(&cluster);
    let mut raw = watch_from(&maps, &cluster.revision().to_string()).await;
    let mut watched = watcher(maps.clone(), watcher::Config::default())
        .applied_objects()
        .boxed();
    maps.create(&PostParams::default(), &config_map("before"))
        .await
        .unwrap();
    let added = next_change(&mut raw).await;
    assert!(matches!(added, Some(Ok(WatchEvent::Added(_)))), "{added:?}");
    assert_eq!(
        watched.try_next().await.unwrap().unwrap().name_any(),
        "before"
    );

    cluster.drop_watches();
    let ended = next_change(&mut raw).await;
    assert!(ended.is_none(), "the stream ends: {ended:?}");
    maps.create(&PostParams::default(), &config_map("after"))
        .await
        .unwrap();
    let next = tokio::time::timeout(Duration::from_secs(10), watched.try_next())
        .await
        .expect("the watcher resumed")
        .unwrap()
        .unwrap();
    assert_eq!(next.name_any(), "after");
}

#[tokio::test]
async fn compaction_answers_old_resource_versions_with_410() {
    let cluster = Cluster::new();
    let maps = maps(&cluster);
    let from = cluster.revision().to_string();
    maps.create(&PostParams::default(), &config_map("a"))
        .await
        .unwrap();
    cluster.compact();
    let mut stream = watch_from(&maps, &from).await;
    match stream.next().await {
        Some(Ok(WatchEvent::Error(e))) => assert_eq!(e.code, 410),
        other => panic!("expected 410 Gone, got {other:?}"),
    }
    // The current version still resumes.
    let current = cluster.revision().to_string();
    assert!(maps.watch(&WatchParams::default(), &current).await.is_ok());
}

#[tokio::test]
async fn rejected_credentials_answer_401() {
    let cluster = Cluster::new();
    let maps = maps(&cluster);
    cluster.reject_credentials(true);
    assert_eq!(code(maps.list(&Default::default()).await).0, 401);
    cluster.reject_credentials(false);
    assert!(maps.list(&Default::default()).await.is_ok());
}

#[tokio::test]
async fn an_outage_refuses_connections_until_it_ends() {
    let cluster = Cluster::new();
    let addr = cluster.serve_on_loopback().await.unwrap();
    let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
    let remote: Api<ConfigMap> = Api::namespaced(Client::try_from(config).unwrap(), "default");
    let local = maps(&cluster);
    remote
        .create(&PostParams::default(), &config_map("up"))
        .await
        .unwrap();

    cluster.set_outage(true);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let refused = tokio::net::TcpStream::connect(addr).await;
    assert_eq!(
        refused.unwrap_err().kind(),
        std::io::ErrorKind::ConnectionRefused
    );
    assert!(!matches!(
        remote.get("up").await,
        Ok(_) | Err(kube::Error::Api(_))
    ));
    assert!(!matches!(
        local.get("up").await,
        Ok(_) | Err(kube::Error::Api(_))
    ));

    cluster.set_outage(false);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match remote.get("up").await {
            Ok(m) => break assert_eq!(m.name_any(), "up"),
            Err(e) if Instant::now() > deadline => panic!("still down: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    assert!(local.get("up").await.is_ok());
}

#[tokio::test]
async fn an_unresponsive_watch_is_closed_and_resumes_from_its_last_version() {
    let cluster = Cluster::new();
    let maps = maps(&cluster);
    let mut raw = watch_from(&maps, &cluster.revision().to_string()).await;
    // More changes than the stream holds pass while nobody reads it.
    let changes = 5_000;
    for i in 0..changes {
        maps.create(&PostParams::default(), &config_map(&format!("m{i}")))
            .await
            .unwrap();
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut last = String::new();
    while let Some(event) = raw.try_next().await.unwrap() {
        match event {
            WatchEvent::Added(m) => {
                last = m.resource_version().unwrap();
                seen.insert(m.name_any());
            }
            WatchEvent::Bookmark(b) => last = b.metadata.resource_version,
            other => panic!("the stream ends without an error, got {other:?}"),
        }
    }
    assert!(
        seen.len() < changes,
        "the slow reader was cut off ({} of {changes} delivered)",
        seen.len()
    );
    assert_eq!(
        cluster
            .watch_endings()
            .get(&("/configmaps".to_string(), "unresponsive")),
        Some(&1)
    );
    // Resuming from the last version seen delivers the rest, without a 410.
    let mut resumed = watch_from(&maps, &last).await;
    let replayed = tokio::time::timeout(Duration::from_secs(30), async {
        while seen.len() < changes {
            match next_change(&mut resumed).await {
                Some(Ok(WatchEvent::Added(m))) => {
                    seen.insert(m.name_any());
                }
                other => panic!("expected the rest replayed, got {other:?}"),
            }
        }
    })
    .await;
    assert!(replayed.is_ok(), "{} of {changes} replayed", seen.len());
    assert_eq!(
        cluster
            .watch_endings()
            .get(&("/configmaps".to_string(), "expired")),
        None
    );
}
