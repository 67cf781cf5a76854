//! What a scenario reads back: the mounted barbican.conf, values remembered between steps,
//! JSON pointers into objects, where secret material must not appear, and Events.

use super::*;

impl SimEnv {
    /// The config Secret the Deployment `namespace/name` mounts, and its barbican.conf.
    pub async fn mounted_conf(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<(String, String), Error> {
        let deployment = self
            .get("Deployment", namespace, name)
            .await?
            .ok_or_else(|| format!("Deployment {namespace}/{name} does not exist"))?;
        let secret = deployment
            .data
            .pointer("/spec/template/spec/volumes/0/secret/secretName")
            .and_then(|v| v.as_str())
            .ok_or("the Deployment mounts no config Secret")?
            .to_string();
        let config = self
            .get("Secret", namespace, &secret)
            .await?
            .ok_or_else(|| format!("config Secret {secret} does not exist"))?;
        let encoded = config.data["data"]["barbican.conf"]
            .as_str()
            .unwrap_or_default();
        let conf = barbican_sim::tokens::base64_decode(encoded)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        Ok((secret, conf))
    }

    /// Notes `value` under `key`.
    pub fn remember(&self, key: &str, value: String) {
        self.notes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_string(), value);
    }

    /// What was noted under `key`.
    pub fn remembered(&self, key: &str) -> Option<String> {
        self.notes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    /// The value at the JSON `pointer` of an object of `kind` (strings as they are, anything
    /// else as JSON); `None` when the field is not set.
    pub async fn read_pointer(
        &self,
        kind: &str,
        namespace: &str,
        name: &str,
        pointer: &str,
    ) -> Result<Option<String>, Error> {
        let object = self
            .get(kind, namespace, name)
            .await?
            .ok_or_else(|| format!("{kind} {namespace}/{name} does not exist"))?;
        let json = serde_json::to_value(&object).map_err(text)?;
        Ok(json.pointer(pointer).map(|v| {
            v.as_str()
                .map(String::from)
                .unwrap_or_else(|| v.to_string())
        }))
    }

    /// Every secret ID any OpenBao of the scenario issued: on the management cluster, on every
    /// target cluster, and the external ones.
    pub(crate) fn issued_secret_ids(&self) -> Vec<String> {
        let mut sites = vec![self.site.clone()];
        sites.extend(
            self.targets
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .values()
                .map(|t| t.site.clone()),
        );
        let mut servers: Vec<Arc<FakeOpenBao>> = sites
            .iter()
            .flat_map(|site| {
                site.openbao
                    .instances
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .values()
                    .cloned()
                    .collect::<Vec<_>>()
            })
            .collect();
        servers.extend(
            self.externals
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .values()
                .cloned(),
        );
        servers
            .iter()
            .flat_map(|s| {
                s.with_state(|state| {
                    state
                        .spaces
                        .values()
                        .flat_map(|space| space.approles.values())
                        .flat_map(|role| role.secret_ids.keys().cloned())
                        .collect::<Vec<_>>()
                })
            })
            .collect()
    }

    /// Checks that no issued secret ID appears in `namespace` outside the Secrets that hold
    /// credentials (a `secret-id` key): not in a config Secret, an event, a condition, a
    /// Deployment's pod template, or the operator's log.
    pub async fn secret_ids_stay_put(&self, namespace: &str) -> Result<(), Error> {
        let ids = self.issued_secret_ids();
        if ids.is_empty() {
            return Err("no OpenBao issued a secret ID: nothing to check".into());
        }
        self.nowhere_in(namespace, &ids, "a secret ID").await
    }

    /// Checks that none of `planted` appears in `namespace` outside the Secrets that hold
    /// credentials (a `secret-id` key) and the registration Secrets: not in another Secret, an
    /// event, a CR or a Deployment, not in the operator's log, and not in its `/metrics`.
    pub async fn nowhere_in(
        &self,
        namespace: &str,
        planted: &[String],
        what: &str,
    ) -> Result<(), Error> {
        let mut places: Vec<(String, String)> = Vec::new();
        self.operator_in_process()?;
        places.push(("the operator's /metrics".into(), self.metrics.render()));
        let secrets = Api::<k8s_openapi::api::core::v1::Secret>::namespaced(
            self.scenario_client(),
            namespace,
        )
        .list(&Default::default())
        .await
        .map_err(text)?;
        for secret in secrets.items {
            let data = secret.data.clone().unwrap_or_default();
            if data.contains_key("secret-id") {
                continue;
            }
            let content: String = data
                .values()
                .map(|v| String::from_utf8_lossy(&v.0).into_owned())
                .collect();
            places.push((format!("Secret {}", secret.name_any()), content));
        }
        for (reason, note) in [self.all_events(namespace).await?].concat() {
            places.push((format!("event {reason}"), note));
        }
        for kind in ["Barbican", "BarbicanSecretStore", "Deployment"] {
            let list = self
                .api_of(kind, namespace)
                .await?
                .list(&Default::default())
                .await
                .map_err(text)?;
            for object in list.items {
                // A CR's spec is what its tenant wrote; what the operator wrote is its status.
                let mut json = serde_json::to_value(&object).map_err(text)?;
                if kind != "Deployment"
                    && let Some(fields) = json.as_object_mut()
                {
                    fields.remove("spec");
                }
                places.push((format!("{kind} {}", object.name_any()), json.to_string()));
            }
        }
        let log = crate::log_capture::contents();
        if log.is_empty() {
            return Err("the operator's log is not captured in this process".into());
        }
        places.push(("the operator's log".into(), log));
        let leaks: Vec<String> = places
            .iter()
            .filter(|(_, content)| planted.iter().any(|id| content.contains(id.as_str())))
            .map(|(place, _)| place.clone())
            .collect();
        if leaks.is_empty() {
            Ok(())
        } else {
            Err(format!("{what} appears in: {}", leaks.join(", ")))
        }
    }

    pub(super) async fn all_events(&self, namespace: &str) -> Result<Vec<(String, String)>, Error> {
        let api =
            Api::<k8s_openapi::api::events::v1::Event>::namespaced(self.client.clone(), namespace);
        Ok(api
            .list(&Default::default())
            .await
            .map_err(text)?
            .items
            .into_iter()
            .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
            .collect())
    }

    /// The Events about `name` in `namespace`.
    pub(super) async fn events_about(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Vec<k8s_openapi::api::events::v1::Event>, Error> {
        let api =
            Api::<k8s_openapi::api::events::v1::Event>::namespaced(self.client.clone(), namespace);
        let events = api
            .list(&Default::default())
            .await
            .map_err(|e| format!("listing events: {e}"))?;
        Ok(events
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .collect())
    }

    /// The series counts of the `reason` Events about `name` in `namespace`, one entry per
    /// Event object (1 for an Event without a series).
    pub async fn event_counts(
        &self,
        namespace: &str,
        name: &str,
        reason: &str,
    ) -> Result<Vec<i32>, Error> {
        Ok(self
            .events_about(namespace, name)
            .await?
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .map(|e| e.series.map_or(1, |s| s.count))
            .collect())
    }

    /// The reasons of the events about `name` in `namespace` with type `severity`.
    pub async fn event_reasons(
        &self,
        namespace: &str,
        name: &str,
        severity: &str,
    ) -> Result<Vec<(String, String)>, Error> {
        Ok(self
            .events_about(namespace, name)
            .await?
            .into_iter()
            .filter(|e| e.type_.as_deref() == Some(severity))
            .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
            .collect())
    }
}
