//! The credentials that never enter a rendered file: the environment variables they travel
//! in, and the digests the Deployment stamps on its pod template so a rotation rolls the pods.

use sha2::{Digest, Sha256};

/// The service-user password (`[keystone_authtoken] password`).
pub const KEYSTONE_PASSWORD_ENV: &str = "OS_KEYSTONE_AUTHTOKEN__PASSWORD";
/// The assembled DSN (`[database] connection`).
pub const DATABASE_CONNECTION_ENV: &str = "OS_DATABASE__CONNECTION";
/// The AppRole secret ID (`[vault_plugin] approle_secret_id`).
pub const APPROLE_SECRET_ID_ENV: &str = "OS_VAULT_PLUGIN__APPROLE_SECRET_ID";

/// Lowercase hex SHA-256 of a credential: what the `*-hash` pod annotations carry. An empty
/// credential has no digest, so a pass that could not read it causes no rollout.
pub fn digest(value: &[u8]) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    Some(hex(&Sha256::digest(value)))
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_lowercase_sha256_and_empty_has_none() {
        assert_eq!(
            digest(b"hunter2").as_deref(),
            Some("f52fbd32b2b3b86ff88ef6c490628285f482af15ddcb29541f94bcf526a3f6c7")
        );
        assert_eq!(digest(b""), None);
    }
}
