//! The pod both the Deployment and the db-sync Job run: what it is built from, its volumes and
//! mounts, the restricted security context, and how to read which config Secret a live
//! Deployment mounts.

use k8s_openapi::api::core::v1::{
    Capabilities, KeyToPath, ProjectedVolumeSource, SeccompProfile, SecretProjection,
    SecretVolumeSource, SecurityContext, Volume, VolumeMount, VolumeProjection,
};

use super::{credential_env::Digests, dsn::TLS_DIR, projection::Projection};
use crate::{
    api::{BarbicanSpec, names::CONFIG_VOLUME},
    render::barbican_conf::SECRET_STORE_CA_FILE,
};

/// Where the config Secret is mounted: barbican's search path.
pub const CONFIG_DIR: &str = "/etc/barbican";

/// The uid, gid and fsGroup of barbican's images.
pub const BARBICAN_UID: i64 = 42424;

/// The CA volume of a store.
pub const SECRET_STORE_CA_VOLUME: &str = "secret-store-ca";

/// The database TLS volume.
pub const DB_TLS_VOLUME: &str = "db-tls";

/// The API's TLS volume (`spec.tls`).
pub const API_TLS_VOLUME: &str = "api-tls";

/// Everything the Deployment is built from besides the spec.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The Barbican's name and namespace.
    pub name: String,
    /// See `name`.
    pub namespace: String,
    /// The config Secret to mount.
    pub config_secret: String,
    /// What the SecretStores step found.
    pub projection: Projection,
    /// The credential digests for the pod-template annotations.
    pub digests: Digests,
    /// The live Deployment's replicas (kept when an HPA owns the count).
    pub live_replicas: Option<i32>,
    /// The API's certificate, with `spec.tls` (the API pods only).
    pub tls: Option<super::handoffs::ServedTls>,
}

/// The restricted container security context every barbican container runs with.
pub fn restricted() -> SecurityContext {
    SecurityContext {
        run_as_user: Some(BARBICAN_UID),
        run_as_group: Some(BARBICAN_UID),
        run_as_non_root: Some(true),
        read_only_root_filesystem: Some(true),
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            add: None,
        }),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".into(),
            localhost_profile: None,
        }),
        ..SecurityContext::default()
    }
}

pub(super) fn mount(name: &str, path: &str) -> VolumeMount {
    VolumeMount {
        name: name.into(),
        mount_path: path.into(),
        read_only: Some(true),
        ..VolumeMount::default()
    }
}

pub(super) fn item(key: &str) -> KeyToPath {
    KeyToPath {
        key: key.into(),
        path: key.into(),
        mode: None,
        user: None,
    }
}

/// The volumes and mounts: the config Secret, the store CA, the database TLS keypair.
pub fn volumes(spec: &BarbicanSpec, inputs: &Inputs) -> (Vec<Volume>, Vec<VolumeMount>) {
    let mut volumes = vec![Volume {
        name: CONFIG_VOLUME.into(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(inputs.config_secret.clone()),
            ..SecretVolumeSource::default()
        }),
        ..Volume::default()
    }];
    let mut mounts = vec![mount(CONFIG_VOLUME, CONFIG_DIR)];
    if let Some(ca) = &inputs.projection.ca_secret {
        volumes.push(Volume {
            name: SECRET_STORE_CA_VOLUME.into(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(ca.clone()),
                items: Some(vec![item("ca.crt")]),
                default_mode: Some(0o444),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        });
        let dir = SECRET_STORE_CA_FILE.trim_end_matches("/ca.crt");
        mounts.push(mount(SECRET_STORE_CA_VOLUME, dir));
    }
    if let Some((volume, mount)) = db_tls_volume(spec) {
        volumes.push(volume);
        mounts.push(mount);
    }
    (volumes, mounts)
}

/// The database's TLS volume and mount, with `spec.database.tls`: the CA bundle and the client
/// keypair projected read-only (mode 0400) at [`TLS_DIR`].
pub fn db_tls_volume(spec: &BarbicanSpec) -> Option<(Volume, VolumeMount)> {
    let tls = spec.database.tls.as_ref()?;
    let project = |secret: &str, keys: &[&str]| VolumeProjection {
        secret: Some(SecretProjection {
            name: secret.into(),
            items: Some(keys.iter().map(|k| item(k)).collect()),
            optional: None,
        }),
        ..VolumeProjection::default()
    };
    Some((
        Volume {
            name: DB_TLS_VOLUME.into(),
            projected: Some(ProjectedVolumeSource {
                default_mode: Some(0o400),
                default_user: None,
                sources: Some(vec![
                    project(&tls.ca_bundle_secret_ref.name, &["ca.crt"]),
                    project(&tls.client_cert_secret_ref.name, &["tls.crt", "tls.key"]),
                ]),
            }),
            ..Volume::default()
        },
        mount(DB_TLS_VOLUME, &format!("{TLS_DIR}/")),
    ))
}

/// The API pods' TLS volume and mount: `tls.crt` and `tls.key` of `secret`, read-only at
/// [`super::uwsgi::TLS_DIR`], readable by the pod's group only (the key is a credential).
pub fn api_tls_volume(secret: &str) -> (Volume, VolumeMount) {
    (
        Volume {
            name: API_TLS_VOLUME.into(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(secret.into()),
                items: Some(vec![item("tls.crt"), item("tls.key")]),
                default_mode: Some(0o400),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        },
        mount(API_TLS_VOLUME, super::uwsgi::TLS_DIR),
    )
}
