//! The credentials that never enter a rendered file: how one is read from its Secret, the
//! environment variables they travel in, and the digests the Deployment stamps on its pod template so a rotation rolls the pods.

use k8s_openapi::api::core::v1::Secret;
use sha2::{Digest, Sha256};

/// The service-user password (`[keystone_authtoken] password`).
pub const KEYSTONE_PASSWORD_ENV: &str = "OS_KEYSTONE_AUTHTOKEN__PASSWORD";
/// The assembled DSN (`[database] connection`).
pub const DATABASE_CONNECTION_ENV: &str = "OS_DATABASE__CONNECTION";
/// The AppRole secret ID (`[vault_plugin] approle_secret_id`).
pub const APPROLE_SECRET_ID_ENV: &str = "OS_VAULT_PLUGIN__APPROLE_SECRET_ID";
/// The audit notifications' transport URL (`[audit_middleware_notifications] transport_url`),
/// which carries the broker's password.
pub const AUDIT_TRANSPORT_URL_ENV: &str = "OS_AUDIT_MIDDLEWARE_NOTIFICATIONS__TRANSPORT_URL";

/// Lowercase hex SHA-256 of a credential: what the `*-hash` pod annotations carry. An empty
/// credential has no digest, so a pass that could not read it causes no rollout.
pub fn digest(value: &[u8]) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    Some(hex(&Sha256::digest(value)))
}

/// The digest of several values as one: each is length-prefixed, so no two different lists
/// of values digest alike.
pub fn digest_all(values: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for value in values {
        hasher.update((value.len() as u64).to_be_bytes());
        hasher.update(value);
    }
    hex(&hasher.finalize())
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The value of `key` in a Secret's data, when present and non-empty.
pub fn value<'a>(secret: &'a Secret, key: &str) -> Option<&'a [u8]> {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|v| v.0.as_slice())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_of_several_values_keeps_their_boundaries() {
        assert_ne!(digest_all(&[b"ab", b"c"]), digest_all(&[b"a", b"bc"]));
        assert_eq!(digest_all(&[b"ab", b"c"]), digest_all(&[b"ab", b"c"]));
        assert_eq!(digest_all(&[b"x"]).len(), 64);
    }

    #[test]
    fn digests_are_lowercase_sha256_and_empty_has_none() {
        assert_eq!(
            digest(b"hunter2").as_deref(),
            Some("f52fbd32b2b3b86ff88ef6c490628285f482af15ddcb29541f94bcf526a3f6c7")
        );
        assert_eq!(digest(b""), None);
    }
}
