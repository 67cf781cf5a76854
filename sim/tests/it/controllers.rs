//! The simulated control plane on a virtual clock, observed through kube::Client as an operator
//! would observe it: rollouts, Jobs by rule, CronJobs at the right virtual times, autoscalers,
//! Service IPs, and the API server's own timestamps and token lifetimes.

use std::time::Duration;

use barbican_sim::{
    Cluster,
    clock::Clock,
    controllers::{Controllers, JobRule, JobRules, Match, Outcome, Rollouts},
};
use k8s_openapi::api::{
    apps::v1::{Deployment, ReplicaSet},
    authentication::v1::TokenReview,
    autoscaling::v2::HorizontalPodAutoscaler,
    batch::v1::{CronJob, Job},
    core::v1::{Service, ServiceAccount},
};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams, PostParams},
};
use serde_json::{Value, json};

const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);

fn cluster(controllers: Controllers) -> (Cluster, kube::Client) {
    let cluster = Cluster::with_clock(Clock::virtual_time());
    cluster.set_controllers(controllers);
    let client = cluster.client();
    (cluster, client)
}

fn deployment(name: &str, image: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "api", "image": image}]}}},
    }))
    .unwrap()
}

fn job(name: &str, image: &str) -> Job {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "run", "image": image}]}}},
    }))
    .unwrap()
}

fn cronjob(name: &str, schedule: &str, extra: Value) -> CronJob {
    let mut spec = json!({
        "schedule": schedule,
        "jobTemplate": {"metadata": {"labels": {"app": name}},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "run", "image": "busybox"}]}}}},
    });
    json_patch::merge(&mut spec, &extra);
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap()
}

fn condition(conditions: &Value, type_: &str) -> (String, String) {
    let c = conditions
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .unwrap_or_else(|| panic!("no {type_} condition in {conditions}"));
    (
        c["status"].as_str().unwrap().into(),
        c["reason"].as_str().unwrap().into(),
    )
}

fn status<K: serde::Serialize>(object: &K) -> Value {
    serde_json::to_value(object).unwrap()["status"].clone()
}

/// Each pod template a Deployment has had is a ReplicaSet it controls, numbered as
/// kube-controller-manager numbers them (`deployment.kubernetes.io/revision`, also on the
/// Deployment): the current one has the replicas, the old ones none; a template brought back
/// (`kubectl rollout undo`) makes its old ReplicaSet the newest revision; the oldest beyond
/// `revisionHistoryLimit` go, and the rest go with the Deployment.
#[tokio::test]
async fn a_deployments_templates_are_numbered_replica_sets() {
    const REVISION: &str = "deployment.kubernetes.io/revision";
    let (_cluster, client) = cluster(Controllers::all());
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    let sets: Api<ReplicaSet> = Api::default_namespaced(client);
    let mut first = deployment("barbican", "barbican:2025.1");
    first.spec.revision_history_limit = Some(2);
    api.create(&PostParams::default(), &first).await.unwrap();
    let image = |image: &str| {
        Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
            {"name": "api", "image": image}]}}}}))
    };
    // (name, revision, replicas, ready), by revision.
    let history = || async {
        let mut found: Vec<(String, String, i32, i32)> = sets
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .map(|rs| {
                let owner = &rs.owner_references()[0];
                assert_eq!(
                    (owner.kind.as_str(), owner.controller),
                    ("Deployment", Some(true))
                );
                let hash = rs.labels()["pod-template-hash"].clone();
                assert!(rs.name_any().ends_with(&hash), "{}", rs.name_any());
                let spec = rs.spec.clone();
                assert_eq!(
                    spec.selector.match_labels.unwrap()["pod-template-hash"],
                    hash
                );
                (
                    rs.name_any(),
                    rs.annotations()[REVISION].clone(),
                    spec.replicas.unwrap(),
                    rs.status.and_then(|s| s.ready_replicas).unwrap_or(0),
                )
            })
            .collect();
        found.sort_by_key(|(_, revision, ..)| revision.parse::<u32>().unwrap());
        found
    };
    let first_set = history().await;
    assert_eq!(first_set.len(), 1, "{first_set:?}");
    assert_eq!(first_set[0].1, "1");
    assert_eq!((first_set[0].2, first_set[0].3), (3, 3));
    assert_eq!(
        api.get("barbican").await.unwrap().annotations()[REVISION],
        "1"
    );

    let pp = PatchParams::default();
    api.patch("barbican", &pp, &image("barbican:2025.2"))
        .await
        .unwrap();
    let two = history().await;
    assert_eq!(
        two.iter()
            .map(|(_, r, n, ready)| (r.as_str(), *n, *ready))
            .collect::<Vec<_>>(),
        [("1", 0, 0), ("2", 3, 3)]
    );
    assert_eq!(
        api.get("barbican").await.unwrap().annotations()[REVISION],
        "2"
    );

    // A rollback: the first template again is the first ReplicaSet again, as revision 3.
    api.patch("barbican", &pp, &image("barbican:2025.1"))
        .await
        .unwrap();
    let back = history().await;
    assert_eq!(back.len(), 2, "{back:?}");
    assert_eq!(back[1], (first_set[0].0.clone(), "3".into(), 3, 3));
    assert_eq!(back[0].2, 0);
    assert_eq!(
        api.get("barbican").await.unwrap().annotations()[REVISION],
        "3"
    );

    // Two more templates: the limit of 2 keeps two old ReplicaSets beside the current one.
    api.patch("barbican", &pp, &image("barbican:2026.1"))
        .await
        .unwrap();
    api.patch("barbican", &pp, &image("barbican:2026.2"))
        .await
        .unwrap();
    let limited = history().await;
    assert_eq!(
        limited
            .iter()
            .map(|(_, r, n, _)| (r.as_str(), *n))
            .collect::<Vec<_>>(),
        [("3", 0), ("4", 0), ("5", 3)]
    );

    api.delete("barbican", &Default::default()).await.unwrap();
    assert_eq!(history().await, vec![]);
}

#[tokio::test]
async fn a_deployment_rolls_out_after_its_delay_and_again_on_a_new_generation() {
    let (cluster, client) = cluster(Controllers {
        deployments: Some(Rollouts {
            delay: Duration::from_secs(30),
            stuck: vec![],
        }),
        ..Controllers::default()
    });
    let api: Api<Deployment> = Api::default_namespaced(client);
    api.create(
        &PostParams::default(),
        &deployment("barbican", "barbican:2025.1"),
    )
    .await
    .unwrap();
    let d = status(&api.get("barbican").await.unwrap());
    assert_eq!(d["observedGeneration"], 1);
    assert_eq!(d["updatedReplicas"], 0);
    assert_eq!(
        condition(&d["conditions"], "Progressing"),
        ("True".into(), "ReplicaSetUpdated".into())
    );
    assert_eq!(
        condition(&d["conditions"], "Available"),
        ("False".into(), "MinimumReplicasUnavailable".into())
    );

    cluster.clock().advance(Duration::from_secs(29)).await;
    assert_eq!(
        status(&api.get("barbican").await.unwrap())["readyReplicas"],
        0
    );
    cluster.clock().advance(Duration::from_secs(1)).await;
    let d = status(&api.get("barbican").await.unwrap());
    for field in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
    ] {
        assert_eq!(d[field], 3, "{field}");
    }
    assert_eq!(
        condition(&d["conditions"], "Progressing"),
        ("True".into(), "NewReplicaSetAvailable".into())
    );
    assert_eq!(
        condition(&d["conditions"], "Available"),
        ("True".into(), "MinimumReplicasAvailable".into())
    );

    // An upgrade: generation 2 rolls out while the old pods keep the Deployment available.
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "api", "image": "barbican:2025.2"}]}}}});
    let updated = api
        .patch(
            "barbican",
            &PatchParams::default(),
            &Patch::Strategic(patch),
        )
        .await
        .unwrap();
    assert_eq!(updated.metadata.generation, Some(2));
    let d = status(&api.get("barbican").await.unwrap());
    assert_eq!(d["observedGeneration"], 2);
    assert_eq!(d["availableReplicas"], 3);
    assert_eq!(condition(&d["conditions"], "Available").0, "True");
    assert_eq!(
        condition(&d["conditions"], "Progressing").1,
        "ReplicaSetUpdated"
    );
    cluster.clock().advance(Duration::from_secs(30)).await;
    let d = status(&api.get("barbican").await.unwrap());
    assert_eq!(
        condition(&d["conditions"], "Progressing").1,
        "NewReplicaSetAvailable"
    );
}

#[tokio::test]
async fn a_stuck_rollout_exceeds_its_progress_deadline() {
    let (cluster, client) = cluster(Controllers {
        deployments: Some(Rollouts {
            delay: Duration::ZERO,
            stuck: vec!["image=broken".parse().unwrap()],
        }),
        ..Controllers::default()
    });
    let api: Api<Deployment> = Api::default_namespaced(client);
    let mut stuck = deployment("stuck", "registry/broken:1");
    stuck.spec.progress_deadline_seconds = Some(120);
    api.create(&PostParams::default(), &stuck).await.unwrap();
    api.create(&PostParams::default(), &deployment("fine", "registry/ok:1"))
        .await
        .unwrap();
    let fine = status(&api.get("fine").await.unwrap());
    assert_eq!(condition(&fine["conditions"], "Available").0, "True");

    cluster.clock().advance(Duration::from_secs(119)).await;
    let d = status(&api.get("stuck").await.unwrap());
    assert_eq!(condition(&d["conditions"], "Progressing").0, "True");
    cluster.clock().advance(Duration::from_secs(1)).await;
    let d = status(&api.get("stuck").await.unwrap());
    assert_eq!(
        condition(&d["conditions"], "Progressing"),
        ("False".into(), "ProgressDeadlineExceeded".into())
    );
    assert_eq!(d["availableReplicas"], 0);
}

#[tokio::test]
async fn jobs_complete_or_fail_by_rule_at_virtual_times_and_expire_after_their_ttl() {
    let (cluster, client) = cluster(Controllers {
        jobs: Some(JobRules {
            duration: Duration::from_secs(10),
            rules: vec![
                JobRule {
                    matches: Match::Name("*-db-sync".into()),
                    outcome: Outcome::Fail,
                    duration: Some(Duration::from_secs(45)),
                },
                JobRule {
                    matches: Match::Image("slow".into()),
                    outcome: Outcome::Complete,
                    duration: Some(HOUR),
                },
            ],
        }),
        ..Controllers::default()
    });
    let api: Api<Job> = Api::default_namespaced(client);
    api.create(&PostParams::default(), &job("barbican-db-sync", "barbican"))
        .await
        .unwrap();
    let mut quick = job("quick", "busybox");
    quick.spec.as_mut().unwrap().ttl_seconds_after_finished = Some(300);
    api.create(&PostParams::default(), &quick).await.unwrap();
    api.create(&PostParams::default(), &job("long", "slow-image"))
        .await
        .unwrap();

    let sync = status(&api.get("barbican-db-sync").await.unwrap());
    assert_eq!(sync["startTime"], "2026-01-01T00:00:00Z");
    assert_eq!(sync["active"], 1);

    cluster.clock().advance(MINUTE).await;
    let sync = status(&api.get("barbican-db-sync").await.unwrap());
    assert_eq!(
        condition(&sync["conditions"], "Failed"),
        ("True".into(), "BackoffLimitExceeded".into())
    );
    assert_eq!(sync["failed"], 7, "backoffLimit 6 + 1");
    assert!(sync.get("completionTime").is_none());
    let done = status(&api.get("quick").await.unwrap());
    assert_eq!(condition(&done["conditions"], "Complete").0, "True");
    assert_eq!(done["completionTime"], "2026-01-01T00:00:10Z");
    assert_eq!(done["succeeded"], 1);
    let long = status(&api.get("long").await.unwrap());
    assert!(long.get("conditions").is_none(), "still running: {long}");

    cluster.clock().advance(5 * MINUTE).await;
    assert!(
        api.get_opt("quick").await.unwrap().is_none(),
        "deleted 300 s after finishing"
    );
    cluster.clock().advance(HOUR).await;
    let long = status(&api.get("long").await.unwrap());
    assert_eq!(long["completionTime"], "2026-01-01T01:00:00Z");
}

#[tokio::test]
async fn a_suspended_job_does_not_start() {
    let (cluster, client) = cluster(Controllers::all());
    let api: Api<Job> = Api::default_namespaced(client);
    let mut suspended = job("later", "busybox");
    suspended.spec.as_mut().unwrap().suspend = Some(true);
    api.create(&PostParams::default(), &suspended)
        .await
        .unwrap();
    cluster.clock().advance(HOUR).await;
    assert!(status(&api.get("later").await.unwrap()).is_null());
    api.patch(
        "later",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"suspend": false}})),
    )
    .await
    .unwrap();
    let started = status(&api.get("later").await.unwrap());
    assert_eq!(started["startTime"], "2026-01-01T01:00:00Z");
}

fn scheduled_times(jobs: &[Job]) -> Vec<String> {
    let mut times: Vec<String> = jobs
        .iter()
        .map(|j| j.annotations()["batch.kubernetes.io/cronjob-scheduled-timestamp"].clone())
        .collect();
    times.sort();
    times
}

#[tokio::test]
async fn cronjobs_fire_at_their_virtual_times_and_keep_their_history_limits() {
    let (cluster, client) = cluster(Controllers::all());
    let cronjobs: Api<CronJob> = Api::default_namespaced(client.clone());
    let jobs: Api<Job> = Api::default_namespaced(client);
    cronjobs
        .create(
            &PostParams::default(),
            &cronjob("clean", "*/15 * * * *", json!({})),
        )
        .await
        .unwrap();
    cronjobs
        .create(
            &PostParams::default(),
            &cronjob("daily", "@daily", json!({})),
        )
        .await
        .unwrap();
    cronjobs
        .create(
            &PostParams::default(),
            &cronjob("paused", "* * * * *", json!({"suspend": true})),
        )
        .await
        .unwrap();

    cluster.clock().advance(14 * MINUTE).await;
    assert!(
        jobs.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    cluster.clock().advance(MINUTE).await;
    let listed = jobs.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(scheduled_times(&listed), vec!["2026-01-01T00:15:00Z"]);
    assert_eq!(
        listed[0].name_any(),
        format!("clean-{}", 1_767_226_500 / 60)
    );
    assert_eq!(listed[0].labels()["app"], "clean");
    let owner = &listed[0].owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("CronJob", Some(true))
    );

    // Three days: 288 runs of `clean`, of which the last three are kept; three of `daily`.
    cluster.clock().advance(3 * 24 * HOUR - 15 * MINUTE).await;
    let listed = jobs
        .list(&ListParams::default().labels("app=clean"))
        .await
        .unwrap()
        .items;
    assert_eq!(
        scheduled_times(&listed),
        vec![
            "2026-01-03T23:30:00Z",
            "2026-01-03T23:45:00Z",
            "2026-01-04T00:00:00Z"
        ]
    );
    let daily = jobs
        .list(&ListParams::default().labels("app=daily"))
        .await
        .unwrap()
        .items;
    assert_eq!(
        scheduled_times(&daily),
        vec![
            "2026-01-02T00:00:00Z",
            "2026-01-03T00:00:00Z",
            "2026-01-04T00:00:00Z"
        ]
    );
    let clean = status(&cronjobs.get("clean").await.unwrap());
    assert_eq!(clean["lastScheduleTime"], "2026-01-04T00:00:00Z");
    assert_eq!(clean["lastSuccessfulTime"], "2026-01-04T00:00:00Z");
    assert!(
        clean.get("active").is_none(),
        "jobs finish at once: {clean}"
    );
    assert!(
        jobs.list(&ListParams::default().labels("app=paused"))
            .await
            .unwrap()
            .items
            .is_empty(),
        "a suspended CronJob never runs"
    );
    assert!(
        status(&cronjobs.get("paused").await.unwrap())
            .get("lastScheduleTime")
            .is_none()
    );

    // Resumed, it starts the most recent run it missed, as kube-controller-manager does.
    cluster.clock().advance(Duration::from_secs(30)).await;
    cronjobs
        .patch(
            "paused",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"suspend": false}})),
        )
        .await
        .unwrap();
    let resumed = jobs
        .list(&ListParams::default().labels("app=paused"))
        .await
        .unwrap()
        .items;
    assert_eq!(scheduled_times(&resumed), vec!["2026-01-04T00:00:00Z"]);
}

#[tokio::test]
async fn forbid_skips_runs_while_one_is_active_and_failed_history_is_kept_to_its_limit() {
    let (cluster, client) = cluster(Controllers {
        jobs: Some(JobRules {
            duration: Duration::from_secs(7 * 60),
            rules: vec![JobRule {
                matches: Match::Label("app".into(), "flaky".into()),
                outcome: Outcome::Fail,
                duration: Some(MINUTE),
            }],
        }),
        cronjobs: true,
        ..Controllers::default()
    });
    let cronjobs: Api<CronJob> = Api::default_namespaced(client.clone());
    let jobs: Api<Job> = Api::default_namespaced(client);
    cronjobs
        .create(
            &PostParams::default(),
            &cronjob(
                "slow",
                "*/5 * * * *",
                json!({"concurrencyPolicy": "Forbid", "startingDeadlineSeconds": 60}),
            ),
        )
        .await
        .unwrap();
    cronjobs
        .create(
            &PostParams::default(),
            &cronjob("flaky", "*/5 * * * *", json!({"failedJobsHistoryLimit": 2})),
        )
        .await
        .unwrap();
    cluster.clock().advance(5 * MINUTE).await;
    let slow = status(&cronjobs.get("slow").await.unwrap());
    assert_eq!(slow["active"].as_array().unwrap().len(), 1);
    // The 00:10 run is skipped (the 00:05 one runs until 00:12), and by then it is past its
    // starting deadline; 00:15 runs.
    cluster.clock().advance(10 * MINUTE).await;
    let listed = jobs
        .list(&ListParams::default().labels("app=slow"))
        .await
        .unwrap()
        .items;
    assert_eq!(
        scheduled_times(&listed),
        vec!["2026-01-01T00:05:00Z", "2026-01-01T00:15:00Z"]
    );
    // The 00:15 run of `flaky` fails at 00:16; only then is the oldest failure pruned.
    cluster.clock().advance(MINUTE).await;
    let flaky = jobs
        .list(&ListParams::default().labels("app=flaky"))
        .await
        .unwrap()
        .items;
    assert_eq!(
        scheduled_times(&flaky),
        vec!["2026-01-01T00:10:00Z", "2026-01-01T00:15:00Z"],
        "the oldest failed run is pruned"
    );
    let flaky_status = status(&cronjobs.get("flaky").await.unwrap());
    assert!(flaky_status.get("lastSuccessfulTime").is_none());
}

#[tokio::test]
async fn an_autoscaler_keeps_its_target_within_bounds_and_reports_status() {
    let (_cluster, client) = cluster(Controllers::all());
    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    let hpas: Api<HorizontalPodAutoscaler> = Api::default_namespaced(client);
    let hpa: HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "barbican"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "barbican"},
            "minReplicas": 4, "maxReplicas": 6},
    }))
    .unwrap();
    hpas.create(&PostParams::default(), &hpa).await.unwrap();
    let s = status(&hpas.get("barbican").await.unwrap());
    assert_eq!(
        condition(&s["conditions"], "AbleToScale").1,
        "FailedGetScale"
    );

    deployments
        .create(&PostParams::default(), &deployment("barbican", "barbican"))
        .await
        .unwrap();
    let d = deployments.get("barbican").await.unwrap();
    assert_eq!(d.spec.replicas, Some(4), "scaled up to minReplicas");
    assert_eq!(status(&d)["readyReplicas"], 4);
    let s = status(&hpas.get("barbican").await.unwrap());
    assert_eq!(s["currentReplicas"], 4);
    assert_eq!(s["desiredReplicas"], 4);
    assert_eq!(condition(&s["conditions"], "AbleToScale").0, "True");
    assert_eq!(condition(&s["conditions"], "ScalingActive").0, "True");
    assert_eq!(s["lastScaleTime"], "2026-01-01T00:00:00Z");
}

#[tokio::test]
async fn services_get_cluster_ips_and_the_defaults_kube_apiserver_fills() {
    let (_cluster, client) = cluster(Controllers::default());
    let api: Api<Service> = Api::default_namespaced(client);
    let svc = |name: &str, spec: Value| -> Service {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap()
    };
    let ports = json!([{"port": 9311}]);
    let a = api
        .create(&PostParams::default(), &svc("a", json!({"ports": ports})))
        .await
        .unwrap()
        .spec
        .unwrap();
    let b = api
        .create(&PostParams::default(), &svc("b", json!({"ports": ports})))
        .await
        .unwrap()
        .spec
        .unwrap();
    let headless = api
        .create(
            &PostParams::default(),
            &svc("h", json!({"clusterIP": "None", "ports": ports})),
        )
        .await
        .unwrap()
        .spec
        .unwrap();
    assert_eq!(a.type_.as_deref(), Some("ClusterIP"));
    let (ip_a, ip_b) = (a.cluster_ip.unwrap(), b.cluster_ip.unwrap());
    assert!(ip_a.starts_with("10.96.") && ip_a != ip_b, "{ip_a} {ip_b}");
    assert_eq!(a.cluster_ips, Some(vec![ip_a]));
    assert_eq!(headless.cluster_ip.as_deref(), Some("None"));
    assert_eq!(a.ip_families, Some(vec!["IPv4".to_string()]));
}

#[tokio::test]
async fn timestamps_and_token_lifetimes_follow_the_virtual_clock() {
    let (cluster, client) = cluster(Controllers::default());
    let accounts: Api<ServiceAccount> = Api::default_namespaced(client.clone());
    let account: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "barbican"}})).unwrap();
    let created = accounts
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(created.metadata.creation_timestamp).unwrap(),
        "2026-01-01T00:00:00Z"
    );
    let token = accounts
        .create_token_request(
            "barbican",
            &PostParams::default(),
            &serde_json::from_value(
                json!({"spec": {"audiences": ["openbao"], "expirationSeconds": 3600}}),
            )
            .unwrap(),
        )
        .await
        .unwrap()
        .status
        .unwrap();
    assert_eq!(
        serde_json::to_value(&token.expiration_timestamp).unwrap(),
        "2026-01-01T01:00:00Z"
    );
    let reviews: Api<TokenReview> = Api::all(client);
    let review = |token: String| {
        let reviews = reviews.clone();
        async move {
            let r: TokenReview =
                serde_json::from_value(json!({"spec": {"token": token, "audiences": ["openbao"]}}))
                    .unwrap();
            reviews
                .create(&PostParams::default(), &r)
                .await
                .unwrap()
                .status
                .unwrap()
                .authenticated
        }
    };
    cluster.clock().advance(59 * MINUTE).await;
    assert_eq!(review(token.token.clone().unwrap()).await, Some(true));
    cluster.clock().advance(2 * MINUTE).await;
    assert_eq!(
        review(token.token.unwrap()).await,
        Some(false),
        "expired by virtual time"
    );
}
