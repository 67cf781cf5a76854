//! The chart's RBAC is exactly what the operator uses: the operator runs as the chart's
//! ServiceAccount on a sim that enforces RBAC while every example converges and is deleted
//! again; every request it sends must be granted, every grant used.

use super::*;

/// Every (group, resource, verb) the rules of `roles` grant.
pub(super) fn grants(roles: &[&Value]) -> BTreeSet<Grant> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(String::from))
            .collect()
    };
    let mut out = BTreeSet::new();
    for role in roles {
        for rule in role["rules"].as_array().into_iter().flatten() {
            for group in strings(&rule["apiGroups"]) {
                for resource in strings(&rule["resources"]) {
                    for verb in strings(&rule["verbs"]) {
                        out.insert((group.clone(), resource.clone(), verb));
                    }
                }
            }
        }
    }
    out
}

/// Merge-patches the full example's Barbican on the management cluster with `edit`.
pub(super) async fn edit_local_full_example(env: &SimEnv, edit: &Value) {
    Api::<DynamicObject>::namespaced_with(env.client.clone(), FULL_LOCAL, &cr_resource("Barbican"))
        .patch(
            NAME,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(edit),
        )
        .await
        .unwrap();
}

/// Deletes the CR `kind` `namespace/name`.
pub(super) async fn delete(env: &SimEnv, kind: &str, namespace: &str, name: &str) {
    let api: Api<DynamicObject> =
        Api::namespaced_with(env.client.clone(), namespace, &cr_resource(kind));
    api.delete(name, &DeleteParams::default()).await.unwrap();
}

pub(super) fn cr_resource(kind: &str) -> kube::api::ApiResource {
    kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
        "barbican.openstack.c5c3.io",
        "v1alpha1",
        kind,
    ))
}

/// Every (group, resource, verb) `cluster`'s RBAC decided for the ServiceAccount
/// `RELEASE_NAMESPACE/account`, after checking none was refused.
pub(super) fn used_by(cluster: &barbican_sim::Cluster, account: &str) -> BTreeSet<Grant> {
    let user = format!("system:serviceaccount:{RELEASE_NAMESPACE}:{account}");
    let checks: Vec<_> = cluster
        .rbac_checks()
        .into_iter()
        .filter(|c| c.user == user)
        .collect();
    let refused: String = checks
        .iter()
        .filter(|c| !c.allowed)
        .map(|c| format!("\n  {} {} in API group {:?}", c.verb, c.resource, c.group))
        .collect();
    assert!(
        refused.is_empty(),
        "the chart's RBAC refused the operator:{refused}"
    );
    checks
        .into_iter()
        .map(|c| (c.group, c.resource, c.verb))
        .collect()
}

/// The grants the run cannot show in use, each with why it is still needed: the cluster it is
/// granted on, the group, resource and verb, and the reason.
pub(super) const NEEDED_BEYOND_THE_RUN: &[(&str, &str, &str, &str, &str)] = &[
    (
        MANAGEMENT,
        "apps",
        "deployments",
        "delete",
        "a Deployment whose selector an older operator wrote is replaced (the selector is immutable)",
    ),
    (
        TARGET,
        "external-secrets.io",
        "clustersecretstores",
        "get",
        "a Barbican placed on a target can name a ClusterSecretStore (the full example names a SecretStore)",
    ),
    (
        MANAGEMENT,
        "external-secrets.io",
        "externalsecrets",
        "get",
        "a credential Secret that is missing is explained by reading the ExternalSecret of its name (the examples' Secrets all exist; the features on a kubeconfig run it as this account)",
    ),
    (
        MANAGEMENT,
        "k8s.mariadb.com",
        "mariadbs",
        "get",
        INPUT_WITHOUT_WATCH,
    ),
    (
        MANAGEMENT,
        "external-secrets.io",
        "secretstores",
        "get",
        INPUT_WITHOUT_WATCH,
    ),
    (
        MANAGEMENT,
        "external-secrets.io",
        "clustersecretstores",
        "get",
        INPUT_WITHOUT_WATCH,
    ),
    (
        MANAGEMENT,
        "openbao.org",
        "openbaoclusters",
        "get",
        INPUT_WITHOUT_WATCH,
    ),
];

/// The grants a run uses or not depending on timing, each with why: the operator reads its CRs
/// from the watch cache unless its own last write has not come back through the watch yet,
/// and then reads them from the API server (`controller::runtime::cache::current`). Whether a run
/// catches the cache behind depends on how fast the watches are read, so these must be
/// granted and may go unused.
pub(super) const NEEDED_WHEN_THE_CACHE_LAGS: &[(&str, &str, &str, &str, &str)] = &[
    (
        MANAGEMENT,
        "events.k8s.io",
        "events",
        "patch",
        "the operator writes an Event's series count when the same event repeats (controller::events), which a run may or may not see",
    ),
    (
        MANAGEMENT,
        "barbican.openstack.c5c3.io",
        "barbicans",
        "get",
        "a pass reads its Barbican when the watch has not delivered the operator's last write",
    ),
    (
        MANAGEMENT,
        "barbican.openstack.c5c3.io",
        "barbicansecretstores",
        "get",
        "a pass reads its store when the watch has not delivered the operator's last write",
    ),
];

/// Whether `grant` is the `get` or `patch` of a kind the run creates: a child is created by
/// POST, read after a 409 (an object already holds its name: the operator's own, made since the
/// cache looked, or another team's, which it then refuses) and applied when what the spec asks
/// of it changes. Whether a run meets either depends on its edits and on timing.
fn created_then_claimed(grant: &Grant, used: &BTreeSet<Grant>) -> bool {
    matches!(grant.2.as_str(), "get" | "patch")
        && used.contains(&(grant.0.clone(), grant.1.clone(), "create".to_string()))
}

/// Why the management cluster grants `get` on the inputs the run finds in the watch cache.
pub(super) const INPUT_WITHOUT_WATCH: &str = "an input whose CRD is installed after the operator started has no watch, so it is read from the API server";

pub(super) const MANAGEMENT: &str = "management cluster";
pub(super) const TARGET: &str = "target cluster";

/// Checks that `granted` is `used` plus what [`NEEDED_BEYOND_THE_RUN`] and
/// [`NEEDED_WHEN_THE_CACHE_LAGS`] explain.
pub(super) fn assert_exactly(what: &str, granted: &BTreeSet<Grant>, used: &BTreeSet<Grant>) {
    let show = |grants: Vec<&Grant>| -> String {
        grants
            .iter()
            .map(|(g, r, v)| format!("\n  {v} {r} in API group {g:?}"))
            .collect()
    };
    if std::env::var_os("BARBICAN_SHOW_RBAC").is_some() {
        println!("{what} used:{}", show(used.iter().collect()));
    }
    // Every listed grant must be granted; only those beyond the run must also go unused by it.
    let listed: Vec<_> = NEEDED_BEYOND_THE_RUN
        .iter()
        .map(|e| (e, true))
        .chain(NEEDED_WHEN_THE_CACHE_LAGS.iter().map(|e| (e, false)))
        .filter(|(e, _)| e.0 == what)
        .collect();
    let explained = |g: &Grant| {
        listed.iter().any(|((_, group, resource, verb, _), _)| {
            (*group, *resource, *verb) == (&g.0[..], &g.1[..], &g.2[..])
        }) || created_then_claimed(g, used)
    };
    for ((_, group, resource, verb, why), beyond_the_run) in &listed {
        let grant = (group.to_string(), resource.to_string(), verb.to_string());
        assert!(
            granted.contains(&grant),
            "{what}: {verb} {resource} is listed as needed ({why}) but not granted"
        );
        assert!(
            !(*beyond_the_run && used.contains(&grant)),
            "{what}: the run now uses {verb} {resource}: drop it from NEEDED_BEYOND_THE_RUN"
        );
    }
    let unused = show(granted.difference(used).filter(|g| !explained(g)).collect());
    assert!(
        unused.is_empty(),
        "{what}: the chart grants what the operator never asked for:{unused}"
    );
    let ungranted = show(used.difference(granted).collect());
    assert!(
        ungranted.is_empty(),
        "{what}: used but not granted:{ungranted}"
    );
}

pub(super) fn roles_of(objects: &[Value]) -> BTreeSet<Grant> {
    let roles: Vec<&Value> = objects
        .iter()
        .filter(|o| o["kind"] == "ClusterRole" || o["kind"] == "Role")
        .collect();
    grants(&roles)
}

/// Applies the ServiceAccount and RBAC objects of `objects` through `client`.
pub(super) async fn apply_rbac(env: &SimEnv, client: &kube::Client, objects: &[Value]) {
    let rbac_kinds = [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
    ];
    for object in objects
        .iter()
        .filter(|o| rbac_kinds.contains(&o["kind"].as_str().unwrap_or_default()))
    {
        env.apply_with(client.clone(), object.clone())
            .await
            .unwrap();
    }
}

pub(super) fn namespaces(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {n}}}\n"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(super) async fn the_rbac_grants_exactly_what_the_operator_uses() {
    rbac_run(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(super) async fn with_watched_namespaces_roles_grant_exactly_what_the_operator_uses() {
    rbac_run(&[NAMESPACE, LEGACY, FULL, FULL_LOCAL]).await;
}

/// Runs the examples through the operator as the chart's ServiceAccount, watching `watch`
/// (every namespace when empty), and checks the chart's grants against its requests.
pub(super) async fn rbac_run(watch: &[&str]) {
    let watch_value = format!("watchNamespaces={{{}}}", watch.join(","));
    let mut values = vec![
        "rbac.secretStoreNamespaces.openstack={openbao-instance}",
        "rbac.secretStoreNamespaces.full-local={openbao-instance}",
    ];
    if watch.is_empty() {
        values.push("watchAllNamespaces=true");
    } else {
        values.push(&watch_value);
    }
    let operator_objects = rendered(&values);
    if !watch.is_empty() {
        let cluster_role = find(&operator_objects, "ClusterRole", FULLNAME).unwrap();
        let resources: BTreeSet<&str> = cluster_role["rules"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["resources"].as_array().unwrap())
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(
            resources,
            BTreeSet::from(["clustersecretstores", "priorityclasses"]),
            "with watched namespaces the ClusterRole holds the cluster-scoped kinds only"
        );
    }
    let target_objects = rendered(&[
        "mode=target",
        "rbac.secretStoreNamespaces.full={openbao-instance}",
    ]);
    let mut env = SimEnv::start(true).await.unwrap();
    env.apply_yaml(&namespaces(&[
        RELEASE_NAMESPACE,
        NAMESPACE,
        LEGACY,
        FULL,
        FULL_LOCAL,
        CLUSTERS_NAMESPACE,
    ]))
    .await
    .unwrap();
    apply_rbac(&env, &env.client.clone(), &operator_objects).await;
    if !watch.is_empty() {
        env.set_watch_scope(WatchScope::parse(&watch.join(",")).unwrap());
    }
    let token = env
        .run_operator_as(RELEASE_NAMESPACE, FULLNAME)
        .await
        .unwrap();
    let operator = env.cluster.client_with_token(OPERATOR_AGENT, &token);

    // The target cluster the full example is placed on: the operator reaches it as the
    // target-mode release's ServiceAccount.
    let target = env.start_target(REGION, "unused").await.unwrap();
    let on_target = target.client.clone();
    for namespace in [RELEASE_NAMESPACE, FULL] {
        env.apply_with(
            on_target.clone(),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        )
        .await
        .unwrap();
    }
    apply_rbac(&env, &on_target, &target_objects).await;
    env.run_target_operator_as(REGION, RELEASE_NAMESPACE, FULLNAME)
        .await
        .unwrap();

    // The leader election of `run`: as the first replica (it creates the Lease), and as one
    // that waits for another to let go (it watches the Lease while it waits).
    use barbican_operator::leader::{Election, acquire};
    acquire(
        operator.clone(),
        &Election::new(RELEASE_NAMESPACE, "rbac-test"),
    )
    .await
    .expect("leadership")
    .release()
    .await;
    let other = acquire(
        env.client.clone(),
        &Election::new(RELEASE_NAMESPACE, "other"),
    )
    .await
    .expect("the other replica's leadership");
    let waiting = tokio::spawn({
        let operator = operator.clone();
        async move { acquire(operator, &Election::new(RELEASE_NAMESPACE, "rbac-test")).await }
    });
    env.eventually(Duration::from_secs(10), || async {
        let lease_watch = ("coordination.k8s.io", "leases", "watch");
        let watches = used_by(&env.cluster, FULLNAME).contains(&(
            lease_watch.0.into(),
            lease_watch.1.into(),
            lease_watch.2.into(),
        ));
        watches
            .then_some(())
            .ok_or_else(|| "the waiting replica does not watch the Lease yet".to_string())
    })
    .await
    .unwrap();
    other.release().await;
    waiting.await.unwrap().expect("leadership").release().await;

    // Every example converges, through the operator alone.
    apply_examples(&env).await.unwrap();
    apply_full_example_locally(&env).await.unwrap();
    let crs = || {
        let mut crs = watched();
        crs.push(("BarbicanSecretStore", FULL_LOCAL, STORE));
        crs.push(("Barbican", FULL_LOCAL, NAME));
        crs
    };
    let everything = crs();
    env.eventually(Duration::from_secs(300), || all_ready(&env, &everything))
        .await
        .unwrap();

    // The optional blocks go away and the config changes: the children they made are
    // deleted, and the previous config Secret is pruned after the rollout.
    let edit = json!({"spec": {"gateway": null, "networkPolicy": null, "autoscaling": null,
        "tls": null, "extraConfig": {"DEFAULT": {"max_allowed_secret_in_bytes": "30000"}}}});
    edit_local_full_example(&env, &edit).await;
    env.eventually(Duration::from_secs(300), || async {
        for (kind, name) in [
            ("HorizontalPodAutoscaler", NAME),
            ("HTTPRoute", NAME),
            ("BackendTLSPolicy", NAME),
            ("Certificate", NAME),
            ("ConfigMap", "barbican-tls-ca"),
        ] {
            if env.get(kind, FULL_LOCAL, name).await?.is_some() {
                return Err(format!("{kind} {FULL_LOCAL}/{name} is still there"));
            }
        }
        all_ready(&env, &everything).await
    })
    .await
    .unwrap();
    // An upgrade of both full examples: the dump before the migration (spec.dbBackup) reads
    // its claim and runs its Job, on the management cluster and on the target.
    let upgrade = json!({"spec": {"openStackRelease": "2026.2", "image": {"tag": "2026.2"}}});
    edit_local_full_example(&env, &upgrade).await;
    Api::<DynamicObject>::namespaced_with(env.client.clone(), FULL, &cr_resource("Barbican"))
        .patch(
            NAME,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&upgrade),
        )
        .await
        .unwrap();
    env.eventually(Duration::from_secs(300), || async {
        for namespace in [FULL, FULL_LOCAL] {
            let barbican = env
                .get("Barbican", namespace, NAME)
                .await?
                .ok_or("no Barbican")?;
            if barbican.data["status"]["installedRelease"] != "2026.2" {
                return Err(format!("{namespace}/{NAME} is not at 2026.2 yet"));
            }
        }
        all_ready(&env, &everything).await
    })
    .await
    .unwrap();
    // Each config change rolls out a new config Secret; past the history kept, the oldest go.
    let mounted = || async {
        let deployment = env
            .get("Deployment", FULL_LOCAL, NAME)
            .await?
            .ok_or("no Deployment")?;
        let volumes = deployment.data["spec"]["template"]["spec"]["volumes"].clone();
        volumes
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == "config")
            .and_then(|v| v["secret"]["secretName"].as_str().map(String::from))
            .ok_or_else(|| "the Deployment mounts no config Secret".to_string())
    };
    let history = barbican_operator::controller::barbican::config::HISTORY;
    for size in 0..=history {
        let before = mounted().await.unwrap();
        let edit = json!({"spec": {"extraConfig": {"DEFAULT": {"max_allowed_secret_in_bytes": format!("{}", 40000 + size)}}}});
        edit_local_full_example(&env, &edit).await;
        env.eventually(Duration::from_secs(300), || async {
            let now = mounted().await?;
            if now == before {
                return Err(format!("the Deployment still mounts {before}"));
            }
            all_ready(&env, &everything).await
        })
        .await
        .unwrap();
    }
    let config_secrets =
        Api::<k8s_openapi::api::core::v1::Secret>::namespaced(env.client.clone(), FULL_LOCAL);
    let selector = format!(
        "{}={NAME}-config",
        barbican_operator::controller::barbican::config::CONFIG_BASE_LABEL
    );
    env.eventually(Duration::from_secs(120), || async {
        let kept = config_secrets
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| e.to_string())?
            .items
            .len();
        if kept == history + 1 {
            Ok(())
        } else {
            Err(format!("{kept} config Secrets, not {}", history + 1))
        }
    })
    .await
    .unwrap();

    // The webhooks' lookups, as the validating endpoints make them.
    let lookups = barbican_operator::admission::server::ApiLookups::new(operator.clone());
    for (endpoint, kind, object) in [
        (
            barbican_operator::admission::review::Endpoint::ValidateBarbican,
            "Barbican",
            json!({"apiVersion": "barbican.openstack.c5c3.io/v1alpha1", "kind": "Barbican",
                   "metadata": {"name": "b", "namespace": NAMESPACE},
                   "spec": {"deployment": {"priorityClassName": "high"}}}),
        ),
        (
            barbican_operator::admission::review::Endpoint::ValidateSecretStore,
            "BarbicanSecretStore",
            json!({"apiVersion": "barbican.openstack.c5c3.io/v1alpha1", "kind": "BarbicanSecretStore",
                   "metadata": {"name": "s", "namespace": NAMESPACE}, "spec": {}}),
        ),
    ] {
        let review: kube::core::admission::AdmissionReview<DynamicObject> =
            serde_json::from_value(json!({
                "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "request": {"uid": "1", "kind": {"group": "barbican.openstack.c5c3.io", "version": "v1alpha1", "kind": kind},
                    "resource": {"group": "barbican.openstack.c5c3.io", "version": "v1alpha1", "resource": "x"},
                    "operation": "CREATE", "namespace": NAMESPACE, "name": "x",
                    "userInfo": {}, "object": object}
            }))
            .unwrap();
        let request = review.try_into().unwrap();
        use barbican_operator::admission::server::LookupSource as _;
        let known = lookups.known_state(endpoint, &request).await;
        assert_eq!(
            known.unavailable, None,
            "{endpoint:?}'s lookups are granted"
        );
    }

    // Every CR is deleted, and the operator lets each go.
    for (kind, namespace, name) in crs() {
        delete(&env, kind, namespace, name).await;
    }
    env.eventually(Duration::from_secs(600), || async {
        for (kind, namespace, name) in crs() {
            if env.get(kind, namespace, name).await?.is_some() {
                return Err(format!("{kind} {namespace}/{name} is still there"));
            }
        }
        Ok(())
    })
    .await
    .unwrap();

    assert_exactly(
        MANAGEMENT,
        &roles_of(&operator_objects),
        &used_by(&env.cluster, FULLNAME),
    );
    assert_exactly(
        TARGET,
        &roles_of(&target_objects),
        &used_by(&target.site.cluster, FULLNAME),
    );
}
