//! What a Gateway needs to reach pods that serve HTTPS (`spec.gateway` with `spec.tls`): a
//! Gateway API BackendTLSPolicy `{name}` on the `{name}` Service, naming the host the
//! certificate must be valid for and the CA it must chain to (the TLS Secret's `ca.crt`,
//! copied into the ConfigMap `{name}-tls-ca`, the kind every implementation reads), or the
//! gateway's system roots when the Secret has no `ca.crt`. Pure builders; the HTTPRoute step
//! applies them.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ApiResource;
use serde_json::{Value, json};

/// `gateway.networking.k8s.io/v1` BackendTLSPolicy (Gateway API 1.4 and later).
pub fn backend_tls_policy_resource() -> ApiResource {
    ApiResource {
        group: "gateway.networking.k8s.io".into(),
        version: "v1".into(),
        api_version: "gateway.networking.k8s.io/v1".into(),
        kind: "BackendTLSPolicy".into(),
        plural: "backendtlspolicies".into(),
    }
}

/// The ConfigMap holding the CA a Gateway verifies the pods with.
pub fn ca_config_map_name(name: &str) -> String {
    format!("{name}-tls-ca")
}

/// The host name the Gateway verifies the pods' certificate for: the Service's, which a
/// requested certificate always carries.
pub fn verified_host(name: &str, namespace: &str) -> String {
    format!("{name}.{namespace}.svc")
}

/// The policy's spec for the Barbican `name`: its Service, verified against the ConfigMap's
/// `ca.crt` when `with_ca`, else the gateway's system roots.
pub fn policy_spec(name: &str, namespace: &str, with_ca: bool) -> Value {
    let mut validation = json!({"hostname": verified_host(name, namespace)});
    if with_ca {
        validation["caCertificateRefs"] =
            json!([{"group": "", "kind": "ConfigMap", "name": ca_config_map_name(name)}]);
    } else {
        validation["wellKnownCACertificates"] = json!("System");
    }
    json!({
        "targetRefs": [{"group": "", "kind": "Service", "name": name}],
        "validation": validation,
    })
}

/// The ConfigMap's data: the CA under `ca.crt`, where BackendTLSPolicy reads it.
pub fn ca_data(ca: &[u8]) -> Option<BTreeMap<String, String>> {
    let text = std::str::from_utf8(ca).ok()?;
    Some(BTreeMap::from([("ca.crt".to_string(), text.to_string())]))
}

/// The ConfigMap `{name}-tls-ca` (metadata from the caller, which owns it).
pub fn ca_config_map(
    metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    ca: &[u8],
) -> Option<ConfigMap> {
    Some(ConfigMap {
        metadata,
        data: ca_data(ca),
        ..ConfigMap::default()
    })
    .filter(|c| c.data.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_verifies_the_service_name_against_the_copied_ca_or_the_system_roots() {
        let with = policy_spec("kms", "ns", true);
        assert_eq!(
            with["targetRefs"],
            json!([{"group": "", "kind": "Service", "name": "kms"}])
        );
        assert_eq!(with["validation"]["hostname"], "kms.ns.svc");
        assert_eq!(
            with["validation"]["caCertificateRefs"],
            json!([{"group": "", "kind": "ConfigMap", "name": "kms-tls-ca"}])
        );
        assert!(with["validation"].get("wellKnownCACertificates").is_none());
        let without = policy_spec("kms", "ns", false);
        assert_eq!(without["validation"]["wellKnownCACertificates"], "System");
        assert!(without["validation"].get("caCertificateRefs").is_none());
    }

    #[test]
    fn a_ca_that_is_not_text_makes_no_config_map() {
        let meta = Default::default();
        assert!(ca_config_map(meta, &[0xff, 0xfe]).is_none());
        let made = ca_config_map(Default::default(), b"-----BEGIN CERTIFICATE-----").unwrap();
        assert_eq!(made.data.unwrap()["ca.crt"], "-----BEGIN CERTIFICATE-----");
    }
}
