//! The sim's benchmark: create, update and delete throughput, watch delivery latency to many
//! watchers, and memory per stored object. It prints figures and asserts nothing about time:
//! the machines it runs on are shared and noisy.

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::{api::core::v1::ConfigMap, apimachinery::pkg::apis::meta::v1::ObjectMeta};
use kube::{
    Api,
    api::{DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams},
};
use serde_json::json;

use crate::{Cluster, clock::Clock, controllers::Controllers};

/// What one run measured.
#[derive(Clone, Debug)]
pub struct Figures {
    /// Objects written.
    pub objects: usize,
    /// Watchers attached during the updates.
    pub watchers: usize,
    /// Creates per second.
    pub creates_per_second: f64,
    /// Updates per second (with every watcher attached).
    pub updates_per_second: f64,
    /// Deletes per second.
    pub deletes_per_second: f64,
    /// Median time from a write returning to a watcher receiving it.
    pub watch_latency_p50: Duration,
    /// 99th percentile of the same.
    pub watch_latency_p99: Duration,
    /// Resident memory added per stored object, in bytes (Linux only; 0 elsewhere).
    pub bytes_per_object: f64,
}

fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u64>().ok())
        })
        .map(|pages| pages * 4096)
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Runs the benchmark on a fresh cluster.
pub async fn run(objects: usize, watchers: usize) -> Figures {
    let cluster = Cluster::new();
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
    let config_map = |i: usize| -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("bench-{i:06}")),
                labels: Some([("bench".to_string(), "true".to_string())].into()),
                ..ObjectMeta::default()
            },
            data: Some(
                [
                    ("payload".to_string(), "x".repeat(64)),
                    ("index".to_string(), i.to_string()),
                ]
                .into(),
            ),
            ..ConfigMap::default()
        }
    };

    let before = resident_bytes();
    let start = Instant::now();
    for i in 0..objects {
        maps.create(&PostParams::default(), &config_map(i))
            .await
            .expect("create");
    }
    let create_time = start.elapsed();
    let after = resident_bytes();

    let from = cluster.revision().to_string();
    let mut streams = Vec::new();
    for _ in 0..watchers {
        streams.push(
            maps.watch(&WatchParams::default().timeout(600), &from)
                .await
                .expect("watch")
                .boxed(),
        );
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(String, Instant)>();
    for mut stream in streams {
        let tx = tx.clone();
        tokio::spawn(async move {
            while let Some(Ok(event)) = stream.next().await {
                if let WatchEvent::Modified(map) = event {
                    let _ = tx.send((map.metadata.name.unwrap_or_default(), Instant::now()));
                }
            }
        });
    }
    drop(tx);

    let mut written = std::collections::HashMap::new();
    let start = Instant::now();
    for i in 0..objects {
        let name = format!("bench-{i:06}");
        maps.patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"index": format!("{i}-updated")}})),
        )
        .await
        .expect("update");
        written.insert(name, Instant::now());
    }
    let update_time = start.elapsed();
    let mut latencies = Vec::with_capacity(objects * watchers);
    while latencies.len() < objects * watchers {
        match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
            Ok(Some((name, at))) => latencies.push(at.saturating_duration_since(written[&name])),
            _ => break,
        }
    }
    latencies.sort();

    let start = Instant::now();
    for i in 0..objects {
        maps.delete(&format!("bench-{i:06}"), &DeleteParams::default())
            .await
            .expect("delete");
    }
    let delete_time = start.elapsed();

    let per_second = |d: Duration| objects as f64 / d.as_secs_f64().max(f64::EPSILON);
    Figures {
        objects,
        watchers,
        creates_per_second: per_second(create_time),
        updates_per_second: per_second(update_time),
        deletes_per_second: per_second(delete_time),
        watch_latency_p50: percentile(&latencies, 0.5),
        watch_latency_p99: percentile(&latencies, 0.99),
        bytes_per_object: after.saturating_sub(before) as f64 / objects.max(1) as f64,
    }
}

/// What advancing a virtual day with an every-minute CronJob measured.
#[derive(Clone, Debug)]
pub struct CronDay {
    /// Virtual time advanced.
    pub virtual_time: Duration,
    /// Timers the clock fired (one per scheduled run).
    pub timers_fired: usize,
    /// The CronJob's `lastScheduleTime` at the end.
    pub last_schedule: String,
    /// Jobs left after the history limit pruned the rest.
    pub kept: usize,
    /// Wall time the advance took.
    pub wall: Duration,
}

/// Advances a virtual clock by 24 hours with a CronJob scheduled every minute (every
/// controller on, Jobs finishing at once): 1440 runs, each a Job created, run, finished and
/// pruned.
pub async fn cron_day() -> CronDay {
    let cluster = Cluster::with_clock(Clock::virtual_time());
    cluster.set_controllers(Controllers::all());
    let client = cluster.client();
    let cronjobs: Api<k8s_openapi::api::batch::v1::CronJob> =
        Api::namespaced(client.clone(), "default");
    let cronjob = serde_json::from_value(json!({
        "metadata": {"name": "every-minute"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "run", "image": "busybox"}]}}}}},
    }))
    .expect("a valid CronJob");
    cronjobs
        .create(&PostParams::default(), &cronjob)
        .await
        .expect("create");
    let virtual_time = Duration::from_secs(24 * 3600);
    let start = Instant::now();
    let timers_fired = cluster.clock().advance(virtual_time).await;
    let wall = start.elapsed();
    let last_schedule = serde_json::to_value(cronjobs.get("every-minute").await.expect("get"))
        .expect("JSON")["status"]["lastScheduleTime"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let jobs: Api<k8s_openapi::api::batch::v1::Job> = Api::namespaced(client, "default");
    let kept = jobs
        .list(&Default::default())
        .await
        .expect("list")
        .items
        .len();
    CronDay {
        virtual_time,
        timers_fired,
        last_schedule,
        kept,
        wall,
    }
}

impl std::fmt::Display for CronDay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "virtual clock: {} h advanced with an every-minute CronJob in {:?} wall time ({} runs, the last scheduled at {}; {} Jobs kept by the history limit)",
            self.virtual_time.as_secs() / 3600,
            self.wall,
            self.timers_fired,
            self.last_schedule,
            self.kept
        )
    }
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "objects: {}  watchers: {}", self.objects, self.watchers)?;
        writeln!(f, "create: {:.0}/s", self.creates_per_second)?;
        writeln!(
            f,
            "update: {:.0}/s (with {} watchers)",
            self.updates_per_second, self.watchers
        )?;
        writeln!(f, "delete: {:.0}/s", self.deletes_per_second)?;
        writeln!(
            f,
            "watch delivery latency: p50 {:?}  p99 {:?}",
            self.watch_latency_p50, self.watch_latency_p99
        )?;
        write!(
            f,
            "memory: {:.0} bytes per stored object (resident set growth)",
            self.bytes_per_object
        )
    }
}
