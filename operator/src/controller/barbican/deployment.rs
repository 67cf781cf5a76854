//! The Deployment step: the API Deployment, its Service (port 9311) and PDB; the Service
//! selector narrowed once the rollout converged; `status.endpoint` once the pods are ready.
//! Nothing is created while the projection is invalid.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::{
    api::{
        apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment},
        core::v1::{
            Container, ContainerPort, ExecAction, HTTPGetAction, Lifecycle, LifecycleHandler,
            PodSecurityContext, PodSpec, PodTemplateSpec, Probe, ResourceRequirements, Service,
            TopologySpreadConstraint,
        },
        policy::v1::PodDisruptionBudget,
    },
    apimachinery::pkg::{
        api::resource::Quantity,
        apis::meta::v1::{LabelSelector, ObjectMeta},
        util::intstr::IntOrString,
    },
};

use super::{
    credential_env::{self, Digests, Sources},
    handoffs::{ApiTls, AuditTransportDigest, AuthtokenDigest, ConfigSecret, DbConnectionDigest},
    labels, pdb,
    pod::{BARBICAN_UID, Inputs, api_tls_volume, restricted, volumes},
    projection::Projection,
    service,
    state::State,
    uwsgi,
};
use crate::{
    api::{
        barbican::{Barbican, BarbicanSpec},
        conditions::{BarbicanConditionType as T, Reason},
        names::API_PORT,
    },
    controller::{
        pipeline::{Outcome, StepFuture},
        status::Report,
        step_error::api_error,
    },
    render::barbican_conf::endpoint,
};

/// Deployment readiness polling.
pub const DEPLOYMENT_REQUEUE: Duration = Duration::from_secs(10);
/// The API container's name (and its port's).
pub const CONTAINER: &str = "barbican-api";
/// `GET /healthcheck` on the API port, over HTTPS when the API serves TLS (the kubelet does
/// not verify the certificate).
fn http_probe(tls: bool) -> HTTPGetAction {
    HTTPGetAction {
        path: Some("/healthcheck".into()),
        port: IntOrString::Int(API_PORT),
        scheme: tls.then(|| "HTTPS".to_string()),
        ..HTTPGetAction::default()
    }
}

fn probes(tls: bool) -> (Probe, Probe, Probe) {
    let probe = |f: fn(&mut Probe)| {
        let mut p = Probe {
            http_get: Some(http_probe(tls)),
            ..Probe::default()
        };
        f(&mut p);
        p
    };
    (
        probe(|p| {
            p.failure_threshold = Some(30);
            p.period_seconds = Some(10);
            p.timeout_seconds = Some(8);
        }),
        probe(|p| {
            p.initial_delay_seconds = Some(15);
            p.period_seconds = Some(20);
        }),
        probe(|p| {
            p.initial_delay_seconds = Some(10);
            p.period_seconds = Some(15);
            p.timeout_seconds = Some(10);
            p.failure_threshold = Some(3);
        }),
    )
}

fn quantities(cpu: &str, memory: &str) -> BTreeMap<String, Quantity> {
    BTreeMap::from([
        ("cpu".to_string(), Quantity(cpu.into())),
        ("memory".to_string(), Quantity(memory.into())),
    ])
}

/// The resources when the spec sets none (the webhook writes the same defaults).
pub fn default_resources() -> ResourceRequirements {
    ResourceRequirements {
        requests: Some(quantities("100m", "256Mi")),
        limits: Some(quantities("500m", "512Mi")),
        ..ResourceRequirements::default()
    }
}

/// Zone and hostname, maxSkew 1, ScheduleAnyway, over the API pods.
pub fn default_topology(name: &str) -> Vec<TopologySpreadConstraint> {
    ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]
        .into_iter()
        .map(|key| TopologySpreadConstraint {
            max_skew: 1,
            topology_key: key.into(),
            when_unsatisfiable: "ScheduleAnyway".into(),
            label_selector: Some(LabelSelector {
                match_labels: Some(labels::selector(name)),
                ..LabelSelector::default()
            }),
            ..TopologySpreadConstraint::default()
        })
        .collect()
}

fn default_strategy() -> DeploymentStrategy {
    DeploymentStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDeployment {
            max_unavailable: Some(IntOrString::Int(0)),
            max_surge: Some(IntOrString::Int(1)),
        }),
    }
}

/// The API Deployment.
pub fn deployment(spec: &BarbicanSpec, inputs: &Inputs) -> Deployment {
    let name = &inputs.name;
    let knobs = spec.deployment.clone().unwrap_or_default();
    let tls = inputs.tls.as_ref();
    let (startup, liveness, readiness) = probes(tls.is_some());
    let (mut volumes, mut mounts) = volumes(spec, inputs);
    if let Some(tls) = tls {
        let (volume, mount) = api_tls_volume(&tls.secret);
        volumes.push(volume);
        mounts.push(mount);
    }
    let service_user = &spec.service_user.secret_ref;
    let sources = Sources {
        service_user: (
            service_user.name.clone(),
            service_user
                .key
                .clone()
                .unwrap_or_else(|| "password".into()),
        ),
        store_credentials: inputs.projection.credentials_secret.clone(),
        audit_transport: spec.audit.as_ref().and_then(|a| a.transport_url_source()),
    };
    let container = Container {
        name: CONTAINER.into(),
        image: Some(spec.image.reference()),
        command: Some(uwsgi::command(
            spec.api_server.as_ref().and_then(|a| a.uwsgi.as_ref()),
            &spec.open_stack_release,
            tls.is_some(),
        )),
        ports: Some(vec![ContainerPort {
            name: Some(CONTAINER.into()),
            container_port: API_PORT,
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]),
        env: Some(credential_env::env(name, &sources)),
        resources: Some(knobs.resources.clone().unwrap_or_else(default_resources)),
        startup_probe: Some(startup),
        liveness_probe: Some(liveness),
        readiness_probe: Some(readiness),
        lifecycle: Some(Lifecycle {
            pre_stop: Some(LifecycleHandler {
                exec: Some(ExecAction {
                    command: Some(vec![
                        "/bin/sh".into(),
                        "-c".into(),
                        format!("sleep {}", knobs.effective_pre_stop_sleep_seconds()),
                    ]),
                }),
                ..LifecycleHandler::default()
            }),
            ..Lifecycle::default()
        }),
        security_context: Some(restricted()),
        volume_mounts: Some(mounts),
        ..Container::default()
    };
    let annotations = credential_env::annotations(&inputs.digests);
    let replicas = if spec.autoscaling.is_some() {
        Some(inputs.live_replicas.unwrap_or(1))
    } else {
        Some(knobs.effective_replicas())
    };
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(inputs.namespace.clone()),
            labels: Some(labels::api(name)),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas,
            selector: LabelSelector {
                match_labels: Some(labels::selector(name)),
                ..LabelSelector::default()
            },
            strategy: Some(knobs.strategy.clone().unwrap_or_else(default_strategy)),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels::api(name)),
                    annotations: (!annotations.is_empty()).then_some(annotations),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    volumes: Some(volumes),
                    security_context: Some(PodSecurityContext {
                        fs_group: Some(BARBICAN_UID),
                        ..PodSecurityContext::default()
                    }),
                    termination_grace_period_seconds: Some(
                        knobs.effective_termination_grace_period_seconds(),
                    ),
                    topology_spread_constraints: Some(
                        knobs
                            .topology_spread_constraints
                            .clone()
                            .unwrap_or_else(|| default_topology(name)),
                    ),
                    priority_class_name: knobs.priority_class_name.clone(),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        status: None,
    }
}

/// Whether the rollout is ready: the status has seen the generation, enough pods are ready,
/// and the Deployment reports Available.
pub fn ready(live: &Deployment, desired_replicas: i32) -> bool {
    let Some(status) = &live.status else {
        return false;
    };
    status.observed_generation.unwrap_or(0) >= live.metadata.generation.unwrap_or(0)
        && status.ready_replicas.unwrap_or(0) >= desired_replicas
        && status
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_.as_deref() == Some("Available") && c.status.as_deref() == Some("True"))
}

fn selector_of(deployment: &Deployment) -> Option<&BTreeMap<String, String>> {
    deployment.spec.selector.match_labels.as_ref()
}

fn own<K: kube::Resource>(mut object: K, state: &State) -> K {
    state.stamp(object.meta_mut());
    object
}

fn waiting_for_stores(barbican: &Barbican) -> String {
    format!(
        "the API is not deployed until the secret stores of {:?} form a valid projection",
        barbican.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The Deployment step.
pub fn deployment_step(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let handoffs = &state.handoffs;
        let config_secret = handoffs.need::<ConfigSecret>()?.0.clone();
        let projection = handoffs.need::<Projection>()?.clone();
        let tls = handoffs.need::<ApiTls>()?.0.clone();
        let digests = Digests {
            db_connection: handoffs.need::<DbConnectionDigest>()?.0.clone(),
            authtoken: handoffs.need::<AuthtokenDigest>()?.0.clone(),
            secret_store_credentials: projection.credentials_digest.clone(),
            audit_transport: handoffs.need::<AuditTransportDigest>()?.0.clone(),
            tls: tls.as_ref().map(|t| t.digest.clone()),
        };
        if !projection.valid || config_secret.is_empty() {
            // The API keeps running as it is while it waits: nothing of it is swept.
            let name = state.name();
            state.children.keep::<Deployment>(&name);
            state.children.keep::<Service>(&name);
            state.children.keep::<PodDisruptionBudget>(&name);
            let message = waiting_for_stores(&state.barbican);
            state.report(Report::not_ready(
                T::DeploymentReady,
                Reason::WaitingForSecretStores,
                message,
            ));
            return Ok(Outcome::Done);
        }
        let (name, namespace) = (state.name(), state.namespace());
        let live = state
            .children
            .own::<Deployment>(&name)
            .await
            .map_err(|e| api_error("reading the Deployment", e))?;
        let inputs = Inputs {
            name: name.clone(),
            namespace: namespace.clone(),
            config_secret,
            projection,
            digests,
            live_replicas: live.as_ref().and_then(|d| d.spec.replicas),
            tls,
        };
        let desired = own(deployment(&state.barbican.spec, &inputs), state);
        // The selector is immutable: a live Deployment selecting differently is replaced.
        if let Some(live) = &live
            && selector_of(live) != selector_of(&desired)
        {
            state
                .children
                .delete::<Deployment>(&name)
                .await
                .map_err(|e| api_error("replacing the Deployment", e))?;
            state.report(Report::not_ready(
                T::DeploymentReady,
                Reason::WaitingForDeployment,
                "replacing the Deployment, whose selector differs",
            ));
            return Ok(Outcome::Requeue(DEPLOYMENT_REQUEUE));
        }
        // An HPA left from a removed `spec.autoscaling` keeps scaling the Deployment back to its
        // minimum while this step waits for the replica count the spec now gives, and the HPA
        // step that removes it runs only once this one is through: it goes first, or the two
        // controllers take turns setting the replicas.
        if state.barbican.spec.autoscaling.is_none() {
            state
                .children
                .delete::<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler>(&name)
                .await
                .map_err(|e| api_error("deleting the HorizontalPodAutoscaler", e))?;
        }
        let live = state
            .children
            .ensure(&desired)
            .await
            .map_err(|e| api_error("applying the Deployment", e))?;

        let live_service = state
            .children
            .own::<Service>(&name)
            .await
            .map_err(|e| api_error("reading the Service", e))?;
        let narrow = service::selector(&name, true, true);
        let live_is_narrow = live_service
            .as_ref()
            .and_then(|s| s.spec.as_ref()?.selector.as_ref())
            .is_some_and(|s| *s == narrow);
        let selector = service::selector(&name, live_is_narrow, service::converged(&live));
        state
            .children
            .ensure(&own(service::service(&name, &namespace, selector), state))
            .await
            .map_err(|e| api_error("applying the Service", e))?;

        let replicas = desired.spec.replicas.unwrap_or(1);
        state
            .children
            .ensure::<PodDisruptionBudget>(&own(pdb::pdb(&name, &namespace, replicas), state))
            .await
            .map_err(|e| api_error("applying the PodDisruptionBudget", e))?;

        if !ready(&live, replicas) {
            state.report(Report::not_ready(
                T::DeploymentReady,
                Reason::WaitingForDeployment,
                format!(
                    "{}/{replicas} API pods ready",
                    live.status
                        .as_ref()
                        .and_then(|s| s.ready_replicas)
                        .unwrap_or(0)
                ),
            ));
            return Ok(Outcome::Requeue(DEPLOYMENT_REQUEUE));
        }
        state.status.endpoint = Some(endpoint(&name, &namespace, &state.barbican.spec));
        state.report(Report::ready(
            T::DeploymentReady,
            Reason::DeploymentReady,
            format!("{replicas} API pods ready"),
        ));
        Ok(Outcome::Done)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::fixtures;
    use crate::controller::barbican::{credential_env::Digests, projection::Projection};

    fn inputs() -> Inputs {
        Inputs {
            name: "kms".into(),
            namespace: "openstack".into(),
            config_secret: "kms-config-0123abcd".into(),
            projection: Projection {
                valid: true,
                credentials_secret: Some("default-approle".into()),
                ca_secret: Some("bao-tls-ca".into()),
                ..Projection::default()
            },
            digests: Digests {
                db_connection: Some("d".into()),
                authtoken: Some("a".into()),
                secret_store_credentials: None,
                audit_transport: None,
                tls: None,
            },
            live_replicas: Some(5),
            tls: None,
        }
    }

    fn pod(d: &Deployment) -> &PodSpec {
        d.spec.template.spec.as_ref().unwrap()
    }

    #[test]
    fn the_deployment_has_the_reference_shape() {
        let spec = fixtures::barbican().spec;
        let d = deployment(&spec, &inputs());
        let spec_ = &d.spec;
        assert_eq!(spec_.replicas, Some(3));
        assert_eq!(
            spec_.selector.match_labels.as_ref().unwrap(),
            &labels::selector("kms")
        );
        let strategy = spec_
            .strategy
            .as_ref()
            .unwrap()
            .rolling_update
            .as_ref()
            .unwrap();
        assert_eq!(strategy.max_unavailable, Some(IntOrString::Int(0)));
        assert_eq!(strategy.max_surge, Some(IntOrString::Int(1)));
        let template = spec_.template.metadata.as_ref().unwrap();
        assert_eq!(template.labels.as_ref().unwrap(), &labels::api("kms"));
        let annotations = template.annotations.as_ref().unwrap();
        assert_eq!(annotations.len(), 2, "the empty digest is left out");
        let pod = pod(&d);
        assert_eq!(pod.security_context.as_ref().unwrap().fs_group, Some(42424));
        assert_eq!(pod.termination_grace_period_seconds, Some(30));
        assert_eq!(pod.topology_spread_constraints.as_ref().unwrap().len(), 2);
        let c = &pod.containers[0];
        assert_eq!(c.name, "barbican-api");
        assert_eq!(c.command.as_ref().unwrap()[0], "uwsgi");
        assert_eq!(c.ports.as_ref().unwrap()[0].container_port, 9311);
        let env: Vec<&str> = c.env.iter().flatten().map(|e| e.name.as_str()).collect();
        assert_eq!(
            env,
            [
                "OS_DATABASE__CONNECTION",
                "OS_KEYSTONE_AUTHTOKEN__PASSWORD",
                "OS_VAULT_PLUGIN__APPROLE_SECRET_ID"
            ]
        );
        assert!(c.env.iter().flatten().all(|e| e.value.is_none()));
        let startup = c.startup_probe.as_ref().unwrap();
        assert_eq!(
            (
                startup.failure_threshold,
                startup.period_seconds,
                startup.timeout_seconds
            ),
            (Some(30), Some(10), Some(8))
        );
        let readiness = c.readiness_probe.as_ref().unwrap();
        assert_eq!(readiness.initial_delay_seconds, Some(10));
        assert_eq!(c.liveness_probe.as_ref().unwrap().period_seconds, Some(20));
        let security = c.security_context.as_ref().unwrap();
        assert_eq!(security.read_only_root_filesystem, Some(true));
        assert_eq!(security.run_as_non_root, Some(true));
        let pre_stop = c.lifecycle.as_ref().unwrap().pre_stop.as_ref().unwrap();
        assert_eq!(
            pre_stop.exec.as_ref().unwrap().command.as_ref().unwrap(),
            &["/bin/sh", "-c", "sleep 5"]
        );
        let resources = c.resources.as_ref().unwrap();
        assert_eq!(resources.limits.as_ref().unwrap()["memory"].0, "512Mi");
        let mounts: Vec<(&str, &str)> = c
            .volume_mounts
            .iter()
            .flatten()
            .map(|m| (m.name.as_str(), m.mount_path.as_str()))
            .collect();
        assert_eq!(
            mounts,
            [
                ("config", "/etc/barbican"),
                ("secret-store-ca", "/etc/barbican-secret-store-ca")
            ]
        );
        let config = &pod.volumes.as_ref().unwrap()[0];
        assert_eq!(
            config.secret.as_ref().unwrap().secret_name.as_deref(),
            Some("kms-config-0123abcd")
        );
    }

    #[test]
    fn with_autoscaling_the_live_replica_count_is_kept_and_one_on_create() {
        let mut spec = fixtures::barbican().spec;
        spec.autoscaling = Some(Default::default());
        let kept = deployment(&spec, &inputs());
        assert_eq!(kept.spec.replicas, Some(5));
        let created = deployment(
            &spec,
            &Inputs {
                live_replicas: None,
                ..inputs()
            },
        );
        assert_eq!(created.spec.replicas, Some(1));
    }

    #[test]
    fn database_tls_projects_the_keypair_read_only() {
        let mut spec = fixtures::barbican().spec;
        spec.database.tls = Some(crate::api::database::DatabaseTlsSpec {
            mode: None,
            ca_bundle_secret_ref: crate::api::refs::SecretRefSpec {
                name: "db-ca".into(),
                key: None,
            },
            client_cert_secret_ref: crate::api::refs::SecretRefSpec {
                name: "db-client".into(),
                key: None,
            },
        });
        let d = deployment(&spec, &inputs());
        let tls = pod(&d)
            .volumes
            .iter()
            .flatten()
            .find(|v| v.name == "db-tls")
            .unwrap();
        let projected = tls.projected.as_ref().unwrap();
        assert_eq!(projected.default_mode, Some(0o400));
        assert_eq!(projected.sources.as_ref().unwrap().len(), 2);
    }

    #[test]
    fn readiness_needs_the_generation_the_pods_and_available() {
        let mut d = Deployment::default();
        d.metadata.generation = Some(2);
        assert!(!ready(&d, 1));
        d.status = Some(k8s_openapi::api::apps::v1::DeploymentStatus {
            observed_generation: Some(2),
            ready_replicas: Some(3),
            conditions: Some(vec![k8s_openapi::api::apps::v1::DeploymentCondition {
                type_: Some("Available".into()),
                status: Some("True".into()),
                ..Default::default()
            }]),
            ..Default::default()
        });
        assert!(ready(&d, 3));
        assert!(!ready(&d, 4));
        d.metadata.generation = Some(3);
        assert!(!ready(&d, 3));
    }
}
