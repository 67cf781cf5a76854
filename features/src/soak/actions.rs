//! What the schedule does to the clusters: each [`Action`], the sabotages, and the repairs.

use super::*;

/// Whether every example CR is Ready and every Barbican runs its requested release.
pub(super) async fn all_ready(env: &SimEnv) -> Result<(), Error> {
    examples::all_ready(env, &examples::watched()).await?;
    for subject in &SUBJECTS {
        let barbican = env.barbican(subject.namespace, NAME).await?;
        let installed = barbican.status.and_then(|s| s.installed_release);
        if installed.as_deref() != Some(barbican.spec.open_stack_release.as_str()) {
            return Err(format!(
                "Barbican {}/{NAME} runs {installed:?}, asked for {}",
                subject.namespace, barbican.spec.open_stack_release
            ));
        }
    }
    Ok(())
}

/// Moves virtual time on by `span`, checking the invariants every [`STEP`].
pub(super) async fn run_for(env: &SimEnv, observer: &mut Observer, span: Duration) {
    let mut passed = Duration::ZERO;
    while passed < span {
        let next = STEP.min(span - passed);
        env.let_time_pass(next).await;
        passed += next;
        observer.check(env).await;
    }
}

/// Does one action of the schedule.
pub(super) async fn act(
    env: &mut SimEnv,
    observer: &mut Observer,
    action: &Action,
) -> Result<(), Error> {
    let site = env.site.clone();
    let target = env.target(REGION)?;
    let store_api =
        |namespace: &str| Api::<BarbicanSecretStore>::namespaced(env.client.clone(), namespace);
    let merge = |value: Value| Patch::Merge(value);
    match action {
        Action::ApiFault(rule) => env.cluster.add_fault(rule.parse()?),
        Action::ClearApiFaults => env.cluster.clear_faults(),
        Action::DropWatches => env.cluster.drop_watches(),
        Action::Compact => env.cluster.compact(),
        Action::RestartOperator => {
            observer.before_restart(env);
            env.restart_operator();
        }
        Action::OpenBaoDown | Action::OpenBaoUp => {
            let outage = if *action == Action::OpenBaoDown {
                barbican_fakes::openbao::Outage::Refused
            } else {
                barbican_fakes::openbao::Outage::None
            };
            if let Some(instance) = site.openbao.instance(NAMESPACE, "openbao-instance") {
                instance.set_outage(outage);
            }
        }
        Action::ExternalOpenBaoDown | Action::ExternalOpenBaoUp => {
            if let Some(server) = env.external_openbao("vault") {
                server.set_outage(if *action == Action::ExternalOpenBaoDown {
                    barbican_fakes::openbao::Outage::Refused
                } else {
                    barbican_fakes::openbao::Outage::None
                });
            }
        }
        Action::RevokeSecretId => {
            let secrets = Api::<Secret>::namespaced(env.client.clone(), NAMESPACE);
            if let Ok(Some(secret)) = secrets.get_opt(&format!("{STORE}-approle")).await
                && let Some(id) = secret.data.unwrap_or_default().get("secret-id")
                && let Some(instance) = site.openbao.instance(NAMESPACE, "openbao-instance")
            {
                instance.revoke_secret_id(&String::from_utf8_lossy(&id.0));
            }
        }
        Action::JobsFail | Action::JobsComplete => {
            let rules = if *action == Action::JobsFail {
                vec!["name=*-db-sync:fail".parse::<JobRule>()?]
            } else {
                vec![]
            };
            for cluster in [&env.cluster, &target.site.cluster] {
                cluster.set_controllers(Controllers {
                    jobs: Some(JobRules {
                        rules: rules.clone(),
                        ..JobRules::default()
                    }),
                    ..Controllers::all()
                });
            }
        }
        Action::MariaDbDown => {
            site.mariadb
                .mariadbs
                .hold(
                    NAMESPACE,
                    "openstack-mariadb",
                    "StatefulSetNotReady",
                    "the primary is unreachable",
                )
                .await;
        }
        Action::MariaDbUp => {
            site.mariadb
                .mariadbs
                .release(NAMESPACE, "openstack-mariadb")
                .await
        }
        Action::TargetDown => target.set_outage(true),
        Action::TargetUp => target.set_outage(false),
        Action::ReleaseBump(namespace) => {
            let release = BUMPS
                .iter()
                .find(|(n, _)| n == namespace)
                .map(|(_, r)| *r)
                .ok_or("no bump for that namespace")?;
            Api::<Barbican>::namespaced(env.client.clone(), namespace)
                .patch(
                    NAME,
                    &PatchParams::default(),
                    &merge(
                        json!({"spec": {"openStackRelease": release, "image": {"tag": release}}}),
                    ),
                )
                .await
                .map_err(|e| format!("bumping {namespace}: {e}"))?;
        }
        Action::DefaultOff | Action::DefaultOn => {
            let patch = merge(json!({"spec": {"isDefault": *action == Action::DefaultOn}}));
            // A detached store has nothing to switch; the repair re-applies it whole.
            let _ = store_api(NAMESPACE)
                .patch(STORE, &PatchParams::default(), &patch)
                .await;
        }
        Action::Detach => {
            let _ = store_api(NAMESPACE)
                .delete(STORE, &DeleteParams::default())
                .await;
        }
        Action::Reattach => reattach(env).await?,
        Action::UrlEdit | Action::UrlRestore => {
            let url = match action {
                Action::UrlEdit => UNSERVED_URL,
                _ => BROWNFIELD_URL,
            };
            store_api(LEGACY)
                .patch(
                    BROWNFIELD_STORE,
                    &PatchParams::default(),
                    &merge(json!({"spec": {"openBao": {"url": url}}})),
                )
                .await
                .map_err(|e| format!("editing the brownfield store's URL: {e}"))?;
        }
        Action::Sabotage(sabotage) => sabotage_retried(env, *sabotage).await?,
        Action::Repair => {
            // Every fault's own "off" action; the re-applied store is the default again.
            for undo in [
                Action::ClearApiFaults,
                Action::JobsComplete,
                Action::TargetUp,
                Action::OpenBaoUp,
                Action::ExternalOpenBaoUp,
                Action::MariaDbUp,
                Action::Reattach,
                Action::UrlRestore,
            ] {
                Box::pin(act(env, observer, &undo)).await?;
            }
            delete_failed_db_syncs(env).await;
        }
    }
    Ok(())
}

/// Applies the minimal example's store again (as the default).
pub(super) async fn reattach(env: &SimEnv) -> Result<(), Error> {
    env.apply_yaml(&examples::example("barbicansecretstore-managed.yaml")?)
        .await
}

/// Deletes every failed db-sync Job, on every cluster.
pub(super) async fn delete_failed_db_syncs(env: &SimEnv) {
    let Ok(target) = env.target(REGION) else {
        return;
    };
    for subject in &SUBJECTS {
        let client = match subject.site {
            None => env.client.clone(),
            Some(_) => target.client.clone(),
        };
        let jobs = Api::<Job>::namespaced(client, subject.namespace);
        if let Ok(Some(job)) = jobs.get_opt(&format!("{NAME}-db-sync")).await {
            let failed = job
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Failed" && c.status == "True");
            if failed {
                let _ = jobs
                    .delete(&format!("{NAME}-db-sync"), &DeleteParams::background())
                    .await;
            }
        }
    }
}

/// [`sabotage_now`], tried again on failure: the sabotage writes as the operator, so the
/// fault rules the schedule set for the operator's client (a 429 on creates, say) refuse it
/// too, where the operator would have retried. The last error is returned after ten tries.
pub(super) async fn sabotage_retried(env: &SimEnv, sabotage: Sabotage) -> Result<(), Error> {
    let mut last = Ok(());
    for _ in 0..10 {
        last = sabotage_now(env, sabotage).await;
        if last.is_ok() {
            break;
        }
    }
    last
}

/// Does a deliberate bug on the operator's behalf.
pub(super) async fn sabotage_now(env: &SimEnv, sabotage: Sabotage) -> Result<(), Error> {
    let operator = env.cluster.client_as(OPERATOR_AGENT);
    match sabotage {
        Sabotage::DeleteMountedConfig => {
            let deployment = Api::<Deployment>::namespaced(operator.clone(), NAMESPACE)
                .get(NAME)
                .await
                .map_err(|e| e.to_string())?;
            let mounted = mounted_config(&deployment).ok_or("no mounted config")?;
            Api::<Secret>::namespaced(operator, NAMESPACE)
                .delete(&mounted, &DeleteParams::default())
                .await
                .map_err(|e| e.to_string())?;
        }
        Sabotage::LeakSecretId => {
            let id = env
                .issued_secret_ids()
                .into_iter()
                .next()
                .ok_or("no secret ID was issued")?;
            let event: k8s_openapi::api::events::v1::Event = serde_json::from_value(json!({
                "metadata": {"name": "barbican.sabotage", "namespace": NAMESPACE},
                "eventTime": env.clock().rfc3339(),
                "reason": "Sabotage", "type": "Normal", "action": "Reconcile",
                "reportingController": "barbican-operator", "reportingInstance": "soak",
                "regarding": {"kind": "Barbican", "name": NAME, "namespace": NAMESPACE},
                "note": format!("minted {id}"),
            }))
            .map_err(|e| e.to_string())?;
            Api::<k8s_openapi::api::events::v1::Event>::namespaced(operator, NAMESPACE)
                .create(&Default::default(), &event)
                .await
                .map_err(|e| e.to_string())?;
        }
        Sabotage::PromoteWithoutSync => {
            Api::<Barbican>::namespaced(operator, NAMESPACE)
                .patch_status(
                    NAME,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"status": {"installedRelease": "2026.2"}})),
                )
                .await
                .map_err(|e| e.to_string())?;
        }
        Sabotage::CountJobTwice => {
            env.metrics
                .job_finished(JobKind::DbSync, NAME, NAMESPACE, true, None);
        }
        Sabotage::WidenEgress => {
            let api = Api::<NetworkPolicy>::namespaced(operator, LEGACY);
            let mut policy = api.get(NAME).await.map_err(|e| e.to_string())?;
            if let Some(spec) = policy.spec.as_mut() {
                let rule: k8s_openapi::api::networking::v1::NetworkPolicyEgressRule =
                    serde_json::from_value(json!({"ports": [{"protocol": "TCP", "port": 9999}]}))
                        .map_err(|e| e.to_string())?;
                spec.egress.get_or_insert_with(Vec::new).push(rule);
            }
            policy.metadata.managed_fields = None;
            api.replace(NAME, &Default::default(), &policy)
                .await
                .map_err(|e| e.to_string())?;
        }
        Sabotage::TakeOverNeighbour => {
            let labels = barbican_operator::controller::runtime::children::owner_labels(
                "Barbican", NAME, NEIGHBOURS,
            );
            Api::<k8s_openapi::api::core::v1::Service>::namespaced(operator, NEIGHBOURS)
                .patch(
                    NAME,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"labels": labels}})),
                )
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Gives the brownfield Barbican a NetworkPolicy, so egress is checked on a store whose URL
/// can be edited.
pub(super) async fn restrict_legacy_egress(env: &SimEnv) -> Result<(), Error> {
    Api::<Barbican>::namespaced(env.client.clone(), LEGACY)
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(json!({
                "spec": {"networkPolicy": {"ingress": [{"namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}
                }}]}},
            })),
        )
        .await
        .map_err(|e| format!("adding a NetworkPolicy to {LEGACY}/{NAME}: {e}"))?;
    Ok(())
}
