//! A managed store (`instanceRef`): the operator provisions against an OpenBaoCluster in the
//! store's namespace and mints the AppRole credentials barbican logs in with.
//!
//! Each pass follows the reference's order:
//! 1. the instance is Available;
//! 2. its CA Secret carries `ca.crt`;
//! 3. a bound token for `<instance>-provisioner` (TokenRequest, audience the instance, ten
//!    minutes, used once and never stored);
//! 4. a Kubernetes login as `provisioner`;
//! 5. the `barbican` KV mount and AppRole exist (the role ID is read);
//! 6. the credentials ladder over `<store>-approle`;
//! 7. the provisioner token is revoked on every exit.

use std::collections::BTreeMap;

use k8s_openapi::{
    ByteString,
    api::{
        authentication::v1::{TokenRequest, TokenRequestSpec},
        core::v1::{Secret, ServiceAccount},
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use kube::{
    Resource, ResourceExt,
    api::{ApiResource, DynamicObject, PostParams},
};

use super::{
    approle::{self, RETRY, Stamp, Step},
    status::Findings,
    verified::Verified,
};
use crate::{
    api::{
        conditions::Reason,
        names::{INSTANCE_PORT, approle_secret_name, instance_ca_secret_name, instance_url},
        secret_store::{BarbicanSecretStore, CA_KEY, ROLE_ID_KEY, SECRET_ID_KEY},
    },
    clusters::tunnel::Tunnel,
    controller::{
        runtime::children::{ChildError, Children},
        runtime::env::Env,
    },
    metrics::Trigger,
    openbao::{self, BARBICAN_ROLE, OpenBao, PROVISIONER_ROLE, Target},
    render::secrets::value,
};

/// The OpenBaoCluster kind of the OpenBao operator.
pub fn openbao_cluster_resource() -> ApiResource {
    ApiResource {
        group: "openbao.org".into(),
        version: "v1alpha1".into(),
        api_version: "openbao.org/v1alpha1".into(),
        kind: "OpenBaoCluster".into(),
        plural: "openbaoclusters".into(),
    }
}

/// The lifetime of the provisioner token the operator asks for.
pub const PROVISIONER_TOKEN_SECONDS: i64 = 600;

/// The ServiceAccount the operator mints a bound token for.
pub fn provisioner_account(instance: &str) -> String {
    format!("{instance}-provisioner")
}

/// A Secret's non-empty value under `key`, as text.
pub fn text(secret: Option<&Secret>, key: &str) -> Option<String> {
    String::from_utf8(value(secret?, key)?.to_vec()).ok()
}

fn available(cluster: &DynamicObject) -> bool {
    cluster.data["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Available" && c["status"] == "True")
}

/// A request about `<store>-approle` that did not go through: the API server's error as it
/// is, or a foreign Secret in its place as the store's own failure on CredentialsReady.
fn name_taken(error: ChildError) -> Result<Findings, kube::Error> {
    match error {
        ChildError::Api(error) => Err(error),
        ChildError::NameTaken(taken) => Ok(Findings::credentials_failed(
            true,
            Reason::NameTaken,
            taken.to_string(),
            RETRY,
        )),
    }
}

fn provisioning(reason: Reason, message: impl Into<String>) -> Findings {
    Findings::provisioning_failed(reason, message, RETRY)
}

/// Why a call on the provisioner's behalf failed: 403 is a denial, anything else means the
/// server could not be worked with.
fn provisioner_failure(what: &str, error: &openbao::Error) -> Findings {
    if error.is_denied() {
        provisioning(
            Reason::ProvisioningDenied,
            format!("OpenBao denied the provisioner {what}: {error}"),
        )
    } else {
        // Provisioning could not be checked: it stays as last observed.
        Findings {
            provisioning: None,
            ..Findings::credentials_failed(
                true,
                Reason::OpenBaoUnreachable,
                format!("{what}: {error}"),
                RETRY,
            )
        }
    }
}

/// What the self-init did not put in place.
const NOT_PROVISIONED: &str =
    "the self-init requests barbican_kv, approle_auth, barbican_approle_role have not run";

/// What the Provision step found for a managed store.
pub enum Provision {
    /// Nothing to mint with: a failure, or a verdict reused (with its requeue).
    Found(Findings),
    /// A provisioner session, logged in, whose KV mount and AppRole exist.
    Session(Box<Session>),
}

/// The Provision step's work for a managed store naming `instance`: the instance and its CA,
/// `<store>-approle`'s name, a verdict to reuse, then a provisioner login (steps 1-5 of the
/// module's order).
pub async fn provision(
    env: &Env,
    verified: &Verified,
    store: &BarbicanSecretStore,
    children: &Children,
    instance: &str,
) -> Result<Provision, kube::Error> {
    let found = |findings| Ok(Provision::Found(findings));
    let namespace = store.namespace().unwrap_or_default();
    let Some(cluster) = children
        .get_dynamic(&openbao_cluster_resource(), instance)
        .await
        .or_else(|e| match e {
            // The OpenBao operator's CRD is not installed: there is no such instance.
            kube::Error::Api(s) if s.code == 404 => Ok(None),
            e => Err(e),
        })?
    else {
        return found(provisioning(
            Reason::InstanceNotFound,
            format!("no OpenBaoCluster {instance:?} in namespace {namespace:?}"),
        ));
    };
    if !available(&cluster) {
        return found(provisioning(
            Reason::WaitingForInstance,
            format!("OpenBaoCluster {instance:?} is not Available yet"),
        ));
    }
    let ca_name = instance_ca_secret_name(instance);
    let ca_secret = children.get::<Secret>(&ca_name).await?;
    let ca_version = ca_secret.as_ref().and_then(|s| s.resource_version());
    let Some(ca) = text(ca_secret.as_ref(), CA_KEY) else {
        return found(provisioning(
            Reason::WaitingForInstanceTLS,
            format!("Secret {ca_name:?} does not carry {CA_KEY} yet"),
        ));
    };
    let secret_name = approle_secret_name(&store.name_any());
    // Before anything is minted: a foreign Secret in `<store>-approle`'s place is neither
    // read as this store's credentials nor overwritten.
    let secret = match children.own::<Secret>(&secret_name).await {
        Ok(secret) => secret,
        Err(error) => return name_taken(error).map(Provision::Found),
    };
    let key = super::verified::key(store);
    // A passing verdict drawn from these same inputs is reused until it is due. The instance's
    // generation, not its resourceVersion: its status moves often, and only its availability
    // (checked above) and its CA matter here.
    let drawn_from = format!(
        "{:?}/{:?}/{:?}",
        store.metadata.generation, cluster.metadata.generation, ca_version
    );
    let now = env.clock.now();
    if let Some(reused) = verified.reuse(&key, &fingerprint(&drawn_from, secret.as_ref()), now) {
        return found(reused);
    }
    let account = provisioner_account(instance);
    let jwt = match mint_token(children, &account, instance).await {
        Ok(jwt) => jwt,
        Err(kube::Error::Api(s)) if s.code == 404 => {
            return found(provisioning(
                Reason::WaitingForInstance,
                format!("the ServiceAccount {account:?} does not exist yet"),
            ));
        }
        Err(kube::Error::Api(s)) if s.code == 403 => {
            return found(provisioning(
                Reason::ProvisioningDenied,
                format!(
                    "the operator may not mint a token for ServiceAccount {account:?}: {}",
                    s.message
                ),
            ));
        }
        Err(e) => return Err(e),
    };
    let target = Target {
        url: instance_url(instance, &namespace),
        ca_pem: Some(ca.into_bytes()),
        namespace: None,
    };
    // On a target cluster the instance is reached through a port-forward tunnel: the URL, and
    // so the certificate check, stay the in-cluster ones.
    let tunnel = match children.cluster() {
        None => None,
        Some(_) => match Tunnel::open(children.client(), &namespace, instance, INSTANCE_PORT).await
        {
            Ok(tunnel) => Some(tunnel),
            Err(e) => {
                return found(Findings {
                    provisioning: None,
                    ..Findings::credentials_failed(
                        true,
                        Reason::OpenBaoUnreachable,
                        e.to_string(),
                        RETRY,
                    )
                });
            }
        },
    };
    let tunnel_resolver = tunnel.as_ref().map(Tunnel::resolver);
    let resolver: &dyn crate::resolve::Resolve = match &tunnel_resolver {
        Some(through_tunnel) => through_tunnel,
        None => env.resolver.as_ref(),
    };
    let server = match OpenBao::connect(&target, resolver, openbao::TIMEOUT) {
        Ok(server) => server,
        Err(e) => return found(provisioner_failure("building the client", &e)),
    };
    let provisioner = match server.kubernetes_login(PROVISIONER_ROLE, &jwt).await {
        Ok(token) => server.with_token(token),
        Err(e) => {
            return found(provisioner_failure(
                "logging in through kubernetes auth",
                &e,
            ));
        }
    };
    let role_id = match provisioned(&provisioner).await {
        Ok(role_id) => role_id,
        Err(findings) => {
            provisioner.revoke_self().await;
            verified.forget(&key);
            return found(findings);
        }
    };
    Ok(Provision::Session(Box::new(Session {
        _tunnel: tunnel,
        server,
        provisioner,
        role_id,
        secret,
        key,
        drawn_from,
    })))
}

/// The fingerprint of a verdict: what the provisioning was drawn from, and `<store>-approle`'s
/// resourceVersion.
fn fingerprint(drawn_from: &str, secret: Option<&Secret>) -> String {
    format!(
        "{drawn_from}/{:?}",
        secret.and_then(|s| s.resource_version())
    )
}

/// A provisioner session over a managed store's instance: from Provision to Credentials, which
/// revokes its token when done.
pub struct Session {
    /// Keeps the port-forward to a target cluster's instance open while the session lasts.
    _tunnel: Option<Tunnel>,
    server: OpenBao,
    provisioner: OpenBao,
    role_id: String,
    /// `<store>-approle` as it stood before the pass.
    secret: Option<Secret>,
    key: String,
    drawn_from: String,
}

/// The Credentials step's work for a managed store: the ladder over `<store>-approle` with the
/// session's provisioner, whose token is revoked on every exit; a passing verdict is kept.
pub async fn credentials(
    env: &Env,
    verified: &Verified,
    store: &BarbicanSecretStore,
    children: &Children,
    session: &Session,
) -> Result<Findings, kube::Error> {
    let mint = Mint {
        env,
        store,
        children,
        server: &session.server,
        provisioner: &session.provisioner,
        role_id: &session.role_id,
    };
    let found = ladder(&mint, session.secret.clone()).await;
    session.provisioner.revoke_self().await;
    let (findings, secret) = found?;
    verified.record(
        &session.key,
        fingerprint(&session.drawn_from, secret.as_ref()),
        &findings,
        env.clock.now(),
    );
    Ok(findings)
}

async fn mint_token(
    children: &Children,
    account: &str,
    instance: &str,
) -> Result<String, kube::Error> {
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            audiences: Some(vec![instance.to_string()]),
            expiration_seconds: Some(PROVISIONER_TOKEN_SECONDS),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let answer = children
        .api::<ServiceAccount>()
        .create_token_request(account, &PostParams::default(), &request)
        .await?;
    Ok(answer.status.and_then(|s| s.token).unwrap_or_default())
}

/// What a pass found, and the `<store>-approle` Secret as it stands afterwards.
type Found = (Findings, Option<Secret>);

/// The barbican role's ID, once the self-init's KV mount and AppRole are seen in place.
async fn provisioned(provisioner: &OpenBao) -> Result<String, Findings> {
    match provisioner
        .mount_exists(crate::api::secret_store::DEFAULT_KV_MOUNTPOINT)
        .await
    {
        Ok(true) => {}
        Ok(false) => {
            return Err(provisioning(
                Reason::InstanceNotProvisioned,
                format!("the barbican KV mount is missing: {NOT_PROVISIONED}"),
            ));
        }
        Err(e) => return Err(provisioner_failure("reading the barbican mount", &e)),
    }
    match provisioner.role_id(BARBICAN_ROLE).await {
        Ok(Some(role_id)) => Ok(role_id),
        Ok(None) => Err(provisioning(
            Reason::InstanceNotProvisioned,
            format!("the barbican AppRole is missing: {NOT_PROVISIONED}"),
        )),
        // AppRole auth itself is not enabled.
        Err(e) if e.code() == Some(400) => Err(provisioning(
            Reason::InstanceNotProvisioned,
            format!("AppRole auth is not enabled ({e}): {NOT_PROVISIONED}"),
        )),
        Err(e) => Err(provisioner_failure("reading the barbican role ID", &e)),
    }
}

/// The credentials ladder over `secret` (`<store>-approle`): mint, re-mint, or probe what is
/// in hand.
async fn ladder(mint: &Mint<'_>, secret: Option<Secret>) -> Result<Found, kube::Error> {
    let held_role = text(secret.as_ref(), ROLE_ID_KEY).unwrap_or_default();
    let held_secret = text(secret.as_ref(), SECRET_ID_KEY).unwrap_or_default();
    let stamp = secret
        .as_ref()
        .and_then(|s| approle::stamp(s.annotations()));
    let now = mint.env.clock.now();
    match approle::step(&held_role, &held_secret, stamp.as_ref(), now) {
        Step::Mint => mint.run(None).await,
        Step::RemintProactively => mint.run(Some(Trigger::Proactive)).await,
        Step::Probe => {
            // `step` answers Probe only for a stamped Secret; without a stamp, mint afresh.
            let Some(stamp) = stamp else {
                return mint.run(None).await;
            };
            let held = |findings: Findings| Ok((findings, secret.clone()));
            match probe(mint.server, &held_role, &held_secret).await {
                Ok(()) => held(Findings::available(
                    true,
                    approle::logs_in_message(&stamp),
                    approle::requeue_after(&stamp, now),
                )),
                Err(e) if e.rejects_credentials() => {
                    if approle::may_remint_reactively(&stamp, now) {
                        mint.run(Some(Trigger::Reactive)).await
                    } else {
                        held(Findings::credentials_failed(
                            true,
                            Reason::InvalidCredentials,
                            format!(
                                "OpenBao rejects the secret ID minted at {} ({e}); the next re-mint is allowed ten minutes after it",
                                stamp.minted_at
                            ),
                            RETRY,
                        ))
                    }
                }
                Err(e) => held(Findings::credentials_failed(
                    true,
                    Reason::OpenBaoUnreachable,
                    format!("the login probe failed: {e}"),
                    RETRY,
                )),
            }
        }
    }
}

/// A login with the credentials, its token revoked at once.
async fn probe(server: &OpenBao, role_id: &str, secret_id: &str) -> Result<(), openbao::Error> {
    let token = server.approle_login(role_id, secret_id).await?;
    server.with_token(token).revoke_self().await;
    Ok(())
}

struct Mint<'a> {
    env: &'a Env,
    store: &'a BarbicanSecretStore,
    children: &'a Children,
    server: &'a OpenBao,
    provisioner: &'a OpenBao,
    role_id: &'a str,
}

impl Mint<'_> {
    /// Mints a secret ID, records it in `<store>-approle`, counts a re-mint (`trigger`), and
    /// verifies it with a login.
    async fn run(&self, trigger: Option<Trigger>) -> Result<Found, kube::Error> {
        let minted = match self.provisioner.mint_secret_id(BARBICAN_ROLE).await {
            Ok(minted) => minted,
            Err(e) => return Ok((provisioner_failure("minting a secret ID", &e), None)),
        };
        let now = self.env.clock.now();
        let stamp = Stamp {
            // Whole seconds, as the annotation records it.
            minted_at: jiff::Timestamp::from_second(now.as_second()).unwrap_or(now),
            ttl: std::time::Duration::from_secs(minted.ttl_seconds),
        };
        let mut desired = approle_secret(self.store, self.role_id, &minted.value, &stamp);
        // On a target cluster the owner labels stand in for the ownerReference.
        self.children.stamp(&mut desired.metadata, self.store);
        let written = match self.children.ensure(&desired).await {
            Ok(written) => written,
            Err(error) => return name_taken(error).map(|findings| (findings, None)),
        };
        let (store, namespace) = (
            self.store.name_any(),
            self.store.namespace().unwrap_or_default(),
        );
        if let Some(trigger) = trigger {
            self.env.metrics.remint(&store, &namespace, trigger);
        }
        tracing::info!(store = %store, namespace = %namespace, trigger = trigger.map_or("initial", |t| t.as_str()), ttl_seconds = minted.ttl_seconds, "minted an AppRole secret ID");
        let findings = match probe(self.server, self.role_id, &minted.value).await {
            Ok(()) => Findings::available(
                true,
                approle::logs_in_message(&stamp),
                approle::requeue_after(&stamp, now),
            ),
            Err(e) if e.is_denied() => Findings::credentials_failed(
                true,
                Reason::InvalidCredentials,
                format!("OpenBao rejects the secret ID just minted: {e}"),
                RETRY,
            ),
            Err(e) => Findings::credentials_failed(
                true,
                Reason::OpenBaoUnreachable,
                format!("the login probe of the new secret ID failed: {e}"),
                RETRY,
            ),
        };
        Ok((findings, Some(written)))
    }
}

/// The `<store>-approle` Secret: the pair, the stamps, a controller ownerReference to the
/// store (garbage collection reclaims it with the store), no labels.
pub fn approle_secret(
    store: &BarbicanSecretStore,
    role_id: &str,
    secret_id: &str,
    stamp: &Stamp,
) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(approle_secret_name(&store.name_any())),
            namespace: store.namespace(),
            annotations: Some(approle::annotations(stamp)),
            owner_references: store.controller_owner_ref(&()).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([
            (
                ROLE_ID_KEY.to_string(),
                ByteString(role_id.as_bytes().to_vec()),
            ),
            (
                SECRET_ID_KEY.to_string(),
                ByteString(secret_id.as_bytes().to_vec()),
            ),
        ])),
        type_: Some("Opaque".into()),
        ..Secret::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instance_conventions_follow_its_name() {
        assert_eq!(
            instance_url("openbao-instance", "openstack"),
            "https://openbao-instance.openstack.svc:8200"
        );
        assert_eq!(instance_ca_secret_name("bao"), "bao-tls-ca");
        assert_eq!(provisioner_account("bao"), "bao-provisioner");
    }

    #[test]
    fn the_approle_secret_is_owned_by_the_store_and_stamped() {
        let mut store: BarbicanSecretStore =
            serde_json::from_value(crate::api::fixtures::managed_store()).unwrap();
        store.metadata.uid = Some("u-1".into());
        let stamp = Stamp {
            minted_at: "2026-01-01T00:00:00Z".parse().unwrap(),
            ttl: std::time::Duration::from_secs(3600),
        };
        let secret = approle_secret(&store, "role", "sid", &stamp);
        assert_eq!(
            secret.metadata.name.as_deref(),
            Some(approle_secret_name(&store.name_any()).as_str())
        );
        let owner = &secret.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
            ("BarbicanSecretStore", "u-1", Some(true))
        );
        assert_eq!(approle::stamp(secret.annotations()), Some(stamp));
        assert!(secret.metadata.labels.is_none());
        assert_eq!(text(Some(&secret), SECRET_ID_KEY).as_deref(), Some("sid"));
    }

    #[test]
    fn a_denied_provisioner_call_is_provisioning_denied_and_anything_else_unreachable() {
        let denied = provisioner_failure(
            "x",
            &openbao::Error::Status {
                code: 403,
                message: "permission denied".into(),
            },
        );
        assert_eq!(
            denied.provisioning.unwrap().reason,
            Reason::ProvisioningDenied
        );
        let down = provisioner_failure("x", &openbao::Error::Unreachable("refused".into()));
        assert_eq!(down.credentials.unwrap().reason, Reason::OpenBaoUnreachable);
    }
}
