//! Names the operator fixes: finalizers, annotations, labels, child names and name bounds.

/// Finalizer that holds a Barbican until its MariaDB children are deleted.
pub const BARBICAN_FINALIZER: &str = "barbican.openstack.c5c3.io/finalizer";
/// Finalizer that holds a resource until its children on a target cluster are swept.
pub const REMOTE_CHILDREN_FINALIZER: &str = "openstack.c5c3.io/remote-children";

/// Pod-template digest of the service-user password.
pub const AUTHTOKEN_HASH_ANNOTATION: &str = "barbican.c5c3.io/authtoken-hash";
/// Pod-template digest of the database DSN.
pub const DB_CONNECTION_HASH_ANNOTATION: &str = "barbican.c5c3.io/db-connection-hash";
/// Pod-template digest of the AppRole secret ID.
pub const SECRET_STORE_CREDENTIALS_HASH_ANNOTATION: &str =
    "barbican.c5c3.io/secret-store-credentials-hash";
/// Pod-template digest of the audit notifications' transport URL.
pub const AUDIT_TRANSPORT_HASH_ANNOTATION: &str = "barbican.c5c3.io/audit-transport-hash";
/// Pod-template digest of the API's TLS certificate and key (`spec.tls`).
pub const TLS_HASH_ANNOTATION: &str = "barbican.c5c3.io/tls-hash";
/// When the AppRole secret ID in `<store>-approle` was minted (RFC 3339, UTC).
pub const SECRET_ID_MINTED_AT_ANNOTATION: &str = "barbican.c5c3.io/secret-id-minted-at";
/// TTL of that secret ID in seconds; 0 means it does not expire.
pub const SECRET_ID_TTL_SECONDS_ANNOTATION: &str = "barbican.c5c3.io/secret-id-ttl-seconds";
/// The target cluster a store's children were written to.
pub const CHILDREN_CLUSTER_ANNOTATION: &str = "openstack.c5c3.io/children-cluster";

/// Owner labels on children written to a target cluster (which carry no ownerReferences).
pub const OWNER_KIND_LABEL: &str = "openstack.c5c3.io/owner-kind";
/// See [`OWNER_KIND_LABEL`].
pub const OWNER_NAME_LABEL: &str = "openstack.c5c3.io/owner-name";
/// See [`OWNER_KIND_LABEL`].
pub const OWNER_NAMESPACE_LABEL: &str = "openstack.c5c3.io/owner-namespace";

/// Kubernetes caps a CronJob name at 52 characters (its controller appends an 11-character suffix).
pub const MAX_CRONJOB_NAME_LENGTH: usize = 52;
/// Suffix of the db-clean CronJob.
pub const DB_CLEAN_SUFFIX: &str = "-db-clean";
/// Longest Barbican name admitted on create: the db-clean CronJob must still fit.
pub const MAX_BARBICAN_NAME_LENGTH: usize = MAX_CRONJOB_NAME_LENGTH - DB_CLEAN_SUFFIX.len();
/// Suffix of a managed store's AppRole credentials Secret.
pub const APPROLE_SECRET_SUFFIX: &str = "-approle";
/// Longest store name admitted on create: `<store>-approle` must fit a 63-character name.
pub const MAX_SECRET_STORE_NAME_LENGTH: usize = 63 - APPROLE_SECRET_SUFFIX.len();

/// The ClusterSecretStore credential Secrets arrive through when `spec.secretStoreRef` is unset.
pub const DEFAULT_ESO_STORE: &str = "openbao-cluster-store";
/// Port of the Barbican API.
pub const API_PORT: i32 = 9311;

/// Name of the derived DSN Secret of a Barbican.
pub fn db_connection_secret_name(barbican: &str) -> String {
    format!("{barbican}-db-connection")
}

/// The data key of the DSN in `{name}-db-connection`.
pub const CONNECTION_KEY: &str = "connection";

/// Name of the Secret the Certificate a Barbican requests (`spec.tls.issuerRef`) is issued
/// into.
pub fn tls_secret_name(barbican: &str) -> String {
    format!("{barbican}-tls")
}

/// Name of the Job that dumps a Barbican's database before a migration (`spec.dbBackup`).
pub fn db_backup_job_name(barbican: &str) -> String {
    format!("{barbican}-db-backup")
}

/// Name of the db-sync Job of a Barbican.
pub fn db_sync_job_name(barbican: &str) -> String {
    format!("{barbican}-db-sync")
}

/// Name of a managed store's AppRole credentials Secret.
pub fn approle_secret_name(store: &str) -> String {
    format!("{store}{APPROLE_SECRET_SUFFIX}")
}

/// The field manager of every apply (the reference's, so both operators can hand over).
pub const FIELD_MANAGER: &str = "cobaltcore-operator";

/// The port a managed OpenBao instance's Service serves on.
pub const INSTANCE_PORT: u16 = 8200;

/// The in-cluster URL of a managed OpenBao instance (its certificate's name): where the store
/// controller logs in and what the Barbican's rendered config points at.
pub fn instance_url(instance: &str, namespace: &str) -> String {
    format!("https://{instance}.{namespace}.svc:{INSTANCE_PORT}")
}

/// The Secret holding a managed OpenBao instance's CA bundle.
pub fn instance_ca_secret_name(instance: &str) -> String {
    format!("{instance}-tls-ca")
}

/// The pod volume of the API Deployment that mounts the config Secret.
pub const CONFIG_VOLUME: &str = "config";

/// The config Secret a live API Deployment mounts, if any: what the store controller reads to
/// see its section projected, and what the Barbican controller keeps for rollback.
pub fn mounted_config(deployment: &k8s_openapi::api::apps::v1::Deployment) -> Option<String> {
    deployment
        .spec
        .template
        .spec
        .as_ref()?
        .volumes
        .iter()
        .flatten()
        .find(|v| v.name == CONFIG_VOLUME)?
        .secret
        .as_ref()?
        .secret_name
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_bounds_follow_from_the_child_names() {
        assert_eq!(MAX_BARBICAN_NAME_LENGTH, 43);
        assert_eq!(MAX_SECRET_STORE_NAME_LENGTH, 55);
    }

    #[test]
    fn child_names_use_the_spec_suffixes() {
        assert_eq!(
            db_connection_secret_name("barbican"),
            "barbican-db-connection"
        );
        assert_eq!(db_sync_job_name("barbican"), "barbican-db-sync");
        assert_eq!(
            approle_secret_name("openbao-primary"),
            "openbao-primary-approle"
        );
    }
}
