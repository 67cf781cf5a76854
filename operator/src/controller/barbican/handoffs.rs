//! The values the Barbican pipeline's steps hand on to later ones, each declared in the table
//! (`pipeline()`) by the step that gives it and by the steps that need it. They live here, not
//! in the steps' modules, so no step imports another. The stores' [`Projection`] lives in its
//! own module, beside the rules that build it.
//!
//! [`Projection`]: super::projection::Projection

/// The digest of the service user's password: from Secrets to Deployment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthtokenDigest(pub Option<String>);

/// The digest of the audit notifications' transport URL (`None` without the messaging
/// driver): from Secrets to Deployment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditTransportDigest(pub Option<String>);

/// The digest of the DSN: from DBConnectionSecret to Deployment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbConnectionDigest(pub Option<String>);

/// The config Secret the pods mount: from Config to DBClean, Database and Deployment. This
/// pass's render, or (while the stores do not form a valid projection) the one the Deployment
/// mounts now; empty before the first valid render.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigSecret(pub String);

/// The API's certificate, when `spec.tls` asks for one and the TLS step found it usable: from
/// TLS to Deployment (the Secret to mount, the digest that rolls the pods) and HealthCheck
/// (the CA it trusts). `None` without `spec.tls`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiTls(pub Option<ServedTls>);

/// A usable certificate: where it is and what it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServedTls {
    /// The Secret holding `tls.crt` and `tls.key`.
    pub secret: String,
    /// The digest of both.
    pub digest: String,
    /// The Secret's `ca.crt`, when it has one.
    pub ca: Option<Vec<u8>>,
}
