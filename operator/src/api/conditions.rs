//! The condition and reason vocabulary of both kinds, in the spec's own words.
//!
//! Conditions are matched by string on the wire; naming them once here keeps the controllers,
//! the tests and the feature files from drifting apart.

macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The string written to the API.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant)),+
                }
            }

            /// The value written as `text`, if it is one.
            pub fn parse(text: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

/// The condition types of one kind: what a pipeline step reports through and the metrics
/// label it by. Both kinds' vocabularies are one.
pub trait ConditionType: Copy + Send + Sync + std::fmt::Debug + 'static {
    /// The `type` written to the CR's conditions.
    fn as_str(self) -> &'static str;
}

impl ConditionType for BarbicanConditionType {
    fn as_str(self) -> &'static str {
        BarbicanConditionType::as_str(self)
    }
}

impl ConditionType for StoreConditionType {
    fn as_str(self) -> &'static str {
        StoreConditionType::as_str(self)
    }
}

vocabulary! {
    /// Condition types of a `Barbican`.
    BarbicanConditionType {
        /// The aggregate: True when all eleven sub-conditions are.
        Ready,
        /// ESO store, credential Secrets, DSN Secret and config Secret.
        SecretsReady,
        /// The attached stores form a valid projection.
        SecretStoresReady,
        /// The db-clean CronJob.
        DBCleanReady,
        /// Schema provisioning, the release gate and db-sync.
        DatabaseReady,
        /// The API Deployment, Service and PDB.
        DeploymentReady,
        /// The `/healthcheck` probe.
        BarbicanAPIReady,
        /// The HorizontalPodAutoscaler.
        HPAReady,
        /// The NetworkPolicy.
        NetworkPolicyReady,
        /// The HTTPRoute.
        HTTPRouteReady,
        /// The registration in Keystone's service catalog (`spec.keystone.catalog`).
        KeystoneCatalogReady,
        /// The API's certificate (`spec.tls`): requested, issued and usable.
        TLSReady,
        /// Whether extraConfig overrides operator-owned keys; never aggregated.
        ExtraConfigHealthy,
    }
}

impl BarbicanConditionType {
    /// The eleven sub-conditions the aggregate `Ready` is computed from: the spec's nine, the
    /// catalog registration and the API's certificate (each True with its `…NotRequired`
    /// reason when its block is unset).
    pub const AGGREGATED: [BarbicanConditionType; 11] = [
        BarbicanConditionType::SecretsReady,
        BarbicanConditionType::DatabaseReady,
        BarbicanConditionType::SecretStoresReady,
        BarbicanConditionType::DeploymentReady,
        BarbicanConditionType::BarbicanAPIReady,
        BarbicanConditionType::HPAReady,
        BarbicanConditionType::NetworkPolicyReady,
        BarbicanConditionType::HTTPRouteReady,
        BarbicanConditionType::DBCleanReady,
        BarbicanConditionType::KeystoneCatalogReady,
        BarbicanConditionType::TLSReady,
    ];
}

vocabulary! {
    /// Condition types of a `BarbicanSecretStore`.
    StoreConditionType {
        /// The aggregate of the mode's sub-conditions.
        Ready,
        /// The credentials in hand are accepted by the server.
        CredentialsReady,
        /// The OpenBaoCluster carries the mount and the AppRole (managed mode only).
        ProvisioningReady,
        /// The parent's Deployment mounts a config carrying this store's section.
        ConfigProjected,
    }
}

vocabulary! {
    /// The reasons of the Events that do not repeat a condition's reason (those that do carry
    /// the condition's [`Reason`]).
    EventReason {
        /// A store attached to a Barbican is not projected (named in the note).
        BarbicanSecretStoreSkipped,
        /// A store that was projected no longer is.
        SecretStoreDetached,
        /// extraConfig overrides a key the operator owns.
        ExtraConfigOwnedKeyOverride,
        /// A terminal db-sync Job could not be recorded as counted; its metric waits.
        DBSyncMetricEmissionDeferred,
        /// A terminal db-clean Job could not be recorded as counted; its metric waits.
        DBCleanMetricEmissionDeferred,
        /// The children on a target cluster could not be removed and are left behind.
        RemoteChildrenAbandoned,
        /// The MariaDB CRs did not go within the bound; the finalizer is released anyway.
        DatabaseAbandoned,
        /// The MariaDB CRs are being deleted before the finalizer is released.
        FinalizingDatabase,
        /// Nothing is left to clean up; the finalizer is released.
        DatabaseFinalized,
    }
}

vocabulary! {
    /// Every reason either kind writes on a condition.
    Reason {
        /// Aggregate True.
        AllReady,
        /// Aggregate False.
        NotAllReady,
        /// SecretsReady True.
        SecretsAvailable,
        /// The target cluster is not registered or does not resolve.
        TargetClusterUnavailable,
        /// The selected ESO store is not Ready.
        SecretStoreNotReady,
        /// The database Secret lacks `username`/`password`.
        WaitingForDBCredentials,
        /// The service-user Secret lacks its key.
        WaitingForServiceUserCredentials,
        /// `spec.audit`'s transport URL Secret lacks its key.
        WaitingForAuditTransport,
        /// The config could not be rendered or stored.
        ConfigError,
        /// SecretStoresReady True.
        AllStoresProjected,
        /// Zero or several credential-ready defaults.
        NoDefaultSecretStore,
        /// Several credential-ready OpenBao stores.
        MultipleOpenBaoStores,
        /// A store's Secret was unreadable, or the cascade of a missing default store.
        WaitingForSecretStores,
        /// The CronJob is scheduled.
        DBCleanScheduled,
        /// The CronJob is paused (by the user or for a migration).
        DBCleanSuspended,
        /// The newest run failed.
        DBCleanJobFailed,
        /// Paused for a migration the release gate refused.
        DBCleanBlocked,
        /// DatabaseReady True.
        DatabaseSynced,
        /// The MariaDB children are not Ready.
        WaitingForDatabase,
        /// The referenced MariaDB cluster is not Ready.
        ClusterNotReady,
        /// db-sync is running.
        DBSyncInProgress,
        /// The dump before a migration (`spec.dbBackup`) is running; db-sync waits for it.
        DBBackupInProgress,
        /// The dump before a migration failed; db-sync does not run (retried on a backoff).
        DBBackupFailed,
        /// The PersistentVolumeClaim the dumps go to does not exist.
        WaitingForBackupVolume,
        /// db-sync failed with the current pod template.
        DBSyncFailed,
        /// A release did not parse.
        VersionParseError,
        /// The requested release is older than the installed one.
        DowngradeNotSupported,
        /// The requested release is more than one step ahead.
        UpgradePathInvalid,
        /// The image does not match the requested release.
        ImageReleaseMismatch,
        /// DeploymentReady True.
        DeploymentReady,
        /// The Deployment has not converged.
        WaitingForDeployment,
        /// The probe passed.
        APIHealthy,
        /// The probe answered with a non-2xx status.
        APIUnhealthy,
        /// The probe timed out.
        HealthCheckTimeout,
        /// The probe could not connect.
        ConnectionFailed,
        /// The probe failed otherwise.
        HealthCheckFailed,
        /// The probe waits for `status.endpoint`.
        EndpointNotReady,
        /// HPAReady True.
        HPAReady,
        /// No autoscaling requested.
        HPANotRequired,
        /// NetworkPolicyReady True.
        NetworkPolicyReady,
        /// No network policy requested.
        NetworkPolicyNotRequired,
        /// A parent Gateway accepted the route.
        HTTPRouteAccepted,
        /// No gateway requested.
        HTTPRouteNotRequired,
        /// No parent accepted the route yet.
        HTTPRouteNotAccepted,
        /// The Gateway API CRDs are missing.
        GatewayAPINotInstalled,
        /// The Gateway API probe failed.
        CapabilityProbeFailed,
        /// KeystoneCatalogReady True: the service and both endpoints are registered.
        CatalogRegistered,
        /// No catalog registration requested.
        CatalogNotRequired,
        /// Keystone did not answer (or answered something unreadable).
        KeystoneUnreachable,
        /// Keystone rejected the service user's credentials.
        KeystoneAuthenticationFailed,
        /// The service user may not read or write the catalog (it lacks the `admin` role).
        CatalogRegistrationDenied,
        /// The region to register in does not exist in Keystone.
        CatalogRegionNotFound,
        /// Another registration holds an interface of the service in the region (named in the
        /// message); it is left as it is.
        CatalogEndpointTaken,
        /// TLSReady True: the Secret holds a usable certificate and key.
        TLSCertificateReady,
        /// No TLS requested: the API serves HTTP.
        TLSNotRequired,
        /// The TLS Secret (or its keys) is not there yet; with `issuerRef`, the Certificate is
        /// not issued yet (its own condition quoted).
        WaitingForTLSCertificate,
        /// The TLS Secret holds something uWSGI could not serve (named in the message: not
        /// PEM, a key that does not match, an expired certificate).
        TLSSecretInvalid,
        /// `tls.issuerRef` is set but cert-manager's Certificate is not served.
        CertManagerNotInstalled,
        /// ExtraConfigHealthy True.
        NoOwnedKeysOverridden,
        /// ExtraConfigHealthy False.
        OwnedKeysOverridden,
        /// CredentialsReady True.
        CredentialsAvailable,
        /// A credentials key is missing or empty.
        WaitingForCredentials,
        /// The server rejects the credentials.
        InvalidCredentials,
        /// The AppRole policy lacks a capability on the probe path.
        InsufficientCapabilities,
        /// The server did not answer.
        OpenBaoUnreachable,
        /// The parent Barbican does not exist.
        WaitingForParent,
        /// ProvisioningReady True.
        Provisioned,
        /// No OpenBaoCluster of that name.
        InstanceNotFound,
        /// The instance is not Available yet.
        WaitingForInstance,
        /// The instance's CA Secret is not there yet.
        WaitingForInstanceTLS,
        /// The self-init requests did not run.
        InstanceNotProvisioned,
        /// A token or an OpenBao request was denied.
        ProvisioningDenied,
        /// ConfigProjected True.
        ConfigProjected,
        /// The projection has not landed yet.
        WaitingForProjection,
        /// A child's name is taken by an object this CR does not own (named in the message);
        /// the object is left as it is.
        NameTaken,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_parses_back_from_what_is_written() {
        for reason in Reason::ALL {
            assert_eq!(Reason::parse(reason.as_str()), Some(*reason));
        }
        for reason in EventReason::ALL {
            assert_eq!(EventReason::parse(reason.as_str()), Some(*reason));
            assert!(
                Reason::parse(reason.as_str()).is_none(),
                "{reason} is an Event's own reason, not a condition's"
            );
        }
        assert_eq!(Reason::parse("SomethingElse"), None);
    }

    #[test]
    fn the_aggregate_reads_eleven_sub_conditions_and_not_itself_or_extra_config() {
        let aggregated = BarbicanConditionType::AGGREGATED;
        assert_eq!(aggregated.len(), 11);
        assert!(aggregated.contains(&BarbicanConditionType::KeystoneCatalogReady));
        assert!(aggregated.contains(&BarbicanConditionType::TLSReady));
        assert!(!aggregated.contains(&BarbicanConditionType::Ready));
        assert!(!aggregated.contains(&BarbicanConditionType::ExtraConfigHealthy));
    }

    #[test]
    fn wire_strings_are_the_spec_spelling() {
        assert_eq!(BarbicanConditionType::DBCleanReady.as_str(), "DBCleanReady");
        assert_eq!(
            BarbicanConditionType::BarbicanAPIReady.as_str(),
            "BarbicanAPIReady"
        );
        assert_eq!(
            Reason::WaitingForInstanceTLS.to_string(),
            "WaitingForInstanceTLS"
        );
        assert_eq!(
            StoreConditionType::ConfigProjected.as_str(),
            "ConfigProjected"
        );
    }
}
