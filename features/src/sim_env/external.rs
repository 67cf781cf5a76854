//! External (brownfield) OpenBao servers: started, exposed, provisioned, their credentials and CA
//! published as a person would.

use super::*;

impl SimEnv {
    /// Starts an external OpenBao called `name`, reachable as `https://<service>.<namespace>.svc:8200`.
    pub async fn start_external_openbao(
        &self,
        name: &str,
        namespace: &str,
        service: &str,
    ) -> Result<Arc<FakeOpenBao>, Error> {
        let fake = Arc::new(
            FakeOpenBao::start(self.clock().clone())
                .await
                .map_err(text)?,
        );
        self.cluster
            .services()
            .register(namespace, service, 8200, fake.addr());
        self.externals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), fake.clone());
        Ok(fake)
    }

    /// Also serves the external OpenBao `name` as `host:port` (a name outside the cluster,
    /// such as `vault.example.com`); its certificate is issued for whatever name is asked.
    pub fn expose_external_openbao(&self, name: &str, host: &str, port: u16) -> Result<(), Error> {
        let fake = self.started_external(name)?;
        self.cluster
            .services()
            .register_host(host, port, fake.addr());
        Ok(())
    }

    /// Gives the external OpenBao `name` a KV v2 `mount`, a `barbican` policy with the five
    /// capabilities on its data path, and AppRole auth, in its OpenBao `namespace`.
    pub fn provision_external_openbao(
        &self,
        name: &str,
        mount: &str,
        namespace: &str,
    ) -> Result<(), Error> {
        let fake = self.started_external(name)?;
        let path = format!("{mount}/data/*");
        let capabilities = ["create", "read", "update", "delete", "list"];
        fake.with_state(|state| {
            let space = state.space(namespace);
            space.mounts.insert(
                mount.to_string(),
                (
                    "kv".into(),
                    BTreeMap::from([("version".into(), "2".into())]),
                ),
            );
            space.policies.insert(
                "barbican".into(),
                Policy::new(&[(path.as_str(), &capabilities[..])]),
            );
            space.approle_enabled = true;
        });
        Ok(())
    }

    /// Creates the `barbican` AppRole of the external OpenBao `name` in its OpenBao
    /// `namespace`, with one secret ID, and writes the pair into the Secret `secret` in
    /// `secret_namespace` (`role-id`, `secret-id`).
    pub async fn issue_external_credentials(
        &self,
        name: &str,
        namespace: &str,
        secret: &str,
        secret_namespace: &str,
    ) -> Result<(), Error> {
        let fake = self.started_external(name)?;
        let (role_id, secret_id) = fake.with_state(|state| {
            let (role_id, secret_id, accessor) = (state.mint(""), state.mint(""), state.mint(""));
            state.space(namespace).approles.insert(
                "barbican".into(),
                AppRole {
                    role_id: role_id.clone(),
                    token_policies: vec!["barbican".into()],
                    secret_id_ttl: 0,
                    token_ttl: 3600,
                    secret_ids: BTreeMap::from([(
                        secret_id.clone(),
                        SecretId {
                            accessor,
                            expires: None,
                            revoked: false,
                        },
                    )]),
                },
            );
            (role_id, secret_id)
        });
        self.apply(serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": secret, "namespace": secret_namespace},
            "stringData": {"role-id": role_id, "secret-id": secret_id}}))
            .await
            .map(|_| ())
    }

    /// Writes the CA bundle of the external OpenBao `name` as `ca.crt` of the Secret `secret`.
    pub async fn publish_external_ca(
        &self,
        name: &str,
        secret: &str,
        namespace: &str,
    ) -> Result<(), Error> {
        let fake = self.started_external(name)?;
        self.apply(serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": secret, "namespace": namespace},
            "stringData": {"ca.crt": fake.ca_pem()}}))
            .await
            .map(|_| ())
    }

    /// The external OpenBao called `name`, or the error of a scenario that never started it.
    pub fn started_external(&self, name: &str) -> Result<Arc<FakeOpenBao>, Error> {
        self.external_openbao(name)
            .ok_or_else(|| format!("no external OpenBao {name:?} was started"))
    }

    /// The external OpenBao called `name`.
    pub fn external_openbao(&self, name: &str) -> Option<Arc<FakeOpenBao>> {
        self.externals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }
}
