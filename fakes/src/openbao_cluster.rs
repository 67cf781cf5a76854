//! A fake of the OpenBao operator: an OpenBaoCluster becomes Available, and gets what the real
//! one provides: a running (fake) OpenBao with the managed self-init in place, its CA published
//! as the `<instance>-tls-ca` Secret (`ca.crt`), the `<instance>-provisioner` ServiceAccount, and
//! the in-cluster name `<instance>.<namespace>.svc:8200` in the sim's service registry.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use barbican_sim::{clock::Clock, services::ServiceRegistry};
use futures::FutureExt;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DynamicObject, Patch, PatchParams},
};
use serde_json::json;

use crate::{
    controller::{Behaviour, FakeController, Hook},
    openbao::{FakeOpenBao, KubeTokenReviewer, SelfInit},
};

/// The fake OpenBao of each instance, by `(namespace, name)`.
pub type Instances = Arc<Mutex<BTreeMap<(String, String), Arc<FakeOpenBao>>>>;

/// The controller and the servers it started.
pub struct OpenBaoOperator {
    /// OpenBaoClusters.
    pub clusters: FakeController,
    /// The fake OpenBao behind each instance.
    pub instances: Instances,
}

impl OpenBaoOperator {
    /// Starts the controller; new instances get a complete self-init.
    pub fn start(client: Client, clock: Clock, services: ServiceRegistry) -> Self {
        let instances: Instances = Arc::default();
        let provide: Hook = {
            let (client, clock, instances) = (client.clone(), clock.clone(), instances.clone());
            Arc::new(move |cluster: DynamicObject| {
                let (client, clock, instances, services) = (
                    client.clone(),
                    clock.clone(),
                    instances.clone(),
                    services.clone(),
                );
                async move { provide(client, clock, services, instances, cluster).await }.boxed()
            })
        };
        let clusters = FakeController::start(
            client,
            clock,
            ApiResource {
                group: "openbao.org".into(),
                version: "v1alpha1".into(),
                api_version: "openbao.org/v1alpha1".into(),
                kind: "OpenBaoCluster".into(),
                plural: "openbaoclusters".into(),
            },
            Behaviour::ready("Available", "ClusterReady"),
            Some(provide),
        );
        Self {
            clusters,
            instances,
        }
    }

    /// The fake OpenBao of an instance, once it is Available.
    pub fn instance(&self, namespace: &str, name: &str) -> Option<Arc<FakeOpenBao>> {
        self.instances
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(namespace.to_string(), name.to_string()))
            .cloned()
    }
}

async fn provide(
    client: Client,
    clock: Clock,
    services: ServiceRegistry,
    instances: Instances,
    cluster: DynamicObject,
) -> Result<(), String> {
    let namespace = cluster.namespace().unwrap_or_default();
    let name = cluster.name_any();
    let key = (namespace.clone(), name.clone());
    let known = instances
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .cloned();
    let fake = match known {
        Some(fake) => fake,
        None => {
            let fake = Arc::new(FakeOpenBao::start(clock).await.map_err(|e| e.to_string())?);
            fake.self_init(&name, &namespace, SelfInit::COMPLETE);
            fake.review_tokens_with(KubeTokenReviewer(client.clone()));
            services.register(&namespace, &name, 8200, fake.addr());
            services.register_pod(&namespace, &format!("{name}-0"), 8200, fake.addr());
            instances
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key, fake.clone());
            fake
        }
    };
    let owner = json!([{"apiVersion": "openbao.org/v1alpha1", "kind": "OpenBaoCluster",
        "name": name, "uid": cluster.uid(), "controller": true}]);
    let apply = PatchParams::apply("openbao-operator").force();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    secrets
        .patch(
            &format!("{name}-tls-ca"),
            &apply,
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": format!("{name}-tls-ca"), "ownerReferences": owner},
                "stringData": {"ca.crt": fake.ca_pem()}})),
        )
        .await
        .map_err(|e| e.to_string())?;
    // What a port-forward finds behind the instance's Service: one ready Pod.
    let pod = format!("{name}-0");
    let selector = json!({"app.kubernetes.io/instance": name});
    for (api_version, kind, object) in [
        (
            "v1",
            "Service",
            json!({"metadata": {"name": name, "ownerReferences": owner},
            "spec": {"selector": selector, "ports": [{"name": "https", "port": 8200, "targetPort": 8200}]}}),
        ),
        (
            "v1",
            "Pod",
            json!({"metadata": {"name": pod, "labels": selector, "ownerReferences": owner},
            "spec": {"containers": [{"name": "openbao", "image": "openbao/openbao"}]}}),
        ),
        (
            "discovery.k8s.io/v1",
            "EndpointSlice",
            json!({
            "metadata": {"name": format!("{name}-sim"), "ownerReferences": owner,
                "labels": {"kubernetes.io/service-name": name}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.10"], "conditions": {"ready": true},
                "targetRef": {"kind": "Pod", "name": pod, "namespace": namespace}}],
            "ports": [{"name": "https", "port": 8200, "protocol": "TCP"}]}),
        ),
    ] {
        let mut object = object;
        object["apiVersion"] = json!(api_version);
        object["kind"] = json!(kind);
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let resource = kube::api::ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
        };
        Api::<kube::api::DynamicObject>::namespaced_with(client.clone(), &namespace, &resource)
            .patch(
                object["metadata"]["name"].as_str().unwrap_or_default(),
                &apply,
                &Patch::Apply(object.clone()),
            )
            .await
            .map_err(|e| e.to_string())?;
    }
    let accounts: Api<ServiceAccount> = Api::namespaced(client, &namespace);
    accounts
        .patch(
            &format!("{name}-provisioner"),
            &apply,
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": format!("{name}-provisioner"), "ownerReferences": owner}})),
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}
