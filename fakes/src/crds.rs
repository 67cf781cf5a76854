//! CustomResourceDefinitions of the third-party APIs the operator uses, with schemas covering
//! the fields it writes: cert-manager, mariadb-operator, External Secrets, OpenBaoCluster and
//! Gateway API.
//! Their status is open (`x-kubernetes-preserve-unknown-fields`), as the fake controllers write it.

use serde_json::{Value, json};

fn open_object() -> Value {
    json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
}

fn reference() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}, "namespace": {"type": "string"},
        "kind": {"type": "string"}, "key": {"type": "string"}}})
}

/// A namespaced (or cluster-scoped) CRD with a status subresource.
fn crd(
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
    spec: Value,
) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "scope": if namespaced { "Namespaced" } else { "Cluster" },
            "names": {"kind": kind, "plural": plural, "singular": kind.to_ascii_lowercase(),
                "listKind": format!("{kind}List")},
            "versions": [{"name": version, "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": spec, "status": open_object()}}}}]},
    })
}

/// mariadb-operator: MariaDB, Database, User (with `maxUserConnections`) and Grant.
pub fn mariadb() -> Vec<Value> {
    let group = "k8s.mariadb.com";
    let mariadb_ref = json!({"type": "object", "properties": {"name": {"type": "string"},
        "namespace": {"type": "string"}, "waitForIt": {"type": "boolean"}}});
    let password_ref = json!({"type": "object", "properties": {"name": {"type": "string"},
        "key": {"type": "string"}, "generate": {"type": "boolean"}}});
    vec![
        crd(
            group,
            "v1alpha1",
            "MariaDB",
            "mariadbs",
            true,
            open_object(),
        ),
        crd(
            group,
            "v1alpha1",
            "Database",
            "databases",
            true,
            json!({"type": "object", "properties": {
            "mariaDbRef": mariadb_ref, "name": {"type": "string"}, "characterSet": {"type": "string"},
            "collate": {"type": "string"}, "cleanupPolicy": {"type": "string", "enum": ["Skip", "Delete"]},
            "requeueInterval": {"type": "string"}, "retryInterval": {"type": "string"}}}),
        ),
        crd(
            group,
            "v1alpha1",
            "User",
            "users",
            true,
            json!({"type": "object", "properties": {
            "mariaDbRef": mariadb_ref, "name": {"type": "string"}, "host": {"type": "string"},
            "passwordSecretKeyRef": password_ref, "maxUserConnections": {"type": "integer", "minimum": 0},
            "cleanupPolicy": {"type": "string", "enum": ["Skip", "Delete"]},
            "requeueInterval": {"type": "string"}, "retryInterval": {"type": "string"}}}),
        ),
        crd(
            group,
            "v1alpha1",
            "Grant",
            "grants",
            true,
            json!({"type": "object", "properties": {
            "mariaDbRef": mariadb_ref, "privileges": {"type": "array", "items": {"type": "string"}},
            "database": {"type": "string"}, "table": {"type": "string"}, "username": {"type": "string"},
            "host": {"type": "string"}, "grantOption": {"type": "boolean"},
            "cleanupPolicy": {"type": "string", "enum": ["Skip", "Delete"]},
            "requeueInterval": {"type": "string"}, "retryInterval": {"type": "string"}}}),
        ),
    ]
}

/// External Secrets: ClusterSecretStore, SecretStore and ExternalSecret.
pub fn external_secrets() -> Vec<Value> {
    let group = "external-secrets.io";
    vec![
        crd(
            group,
            "v1",
            "ClusterSecretStore",
            "clustersecretstores",
            false,
            open_object(),
        ),
        crd(
            group,
            "v1",
            "SecretStore",
            "secretstores",
            true,
            open_object(),
        ),
        crd(
            group,
            "v1",
            "ExternalSecret",
            "externalsecrets",
            true,
            json!({"type": "object", "properties": {
            "secretStoreRef": reference(), "refreshInterval": {"type": "string"},
            "target": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"name": {"type": "string"}, "creationPolicy": {"type": "string"}}},
            "data": {"type": "array", "items": {"type": "object", "properties": {
                "secretKey": {"type": "string"},
                "remoteRef": {"type": "object", "properties": {"key": {"type": "string"},
                    "property": {"type": "string"}, "version": {"type": "string"}}}}}},
            "dataFrom": {"type": "array", "items": open_object()}}}),
        ),
    ]
}

/// The OpenBao operator's OpenBaoCluster.
pub fn openbao_cluster() -> Vec<Value> {
    vec![crd(
        "openbao.org",
        "v1alpha1",
        "OpenBaoCluster",
        "openbaoclusters",
        true,
        open_object(),
    )]
}

/// Gateway API: Gateway, HTTPRoute and BackendTLSPolicy. Its group is one the Kubernetes
/// project owns, so each definition carries the approval annotation, as the published ones do.
pub fn gateway_api() -> Vec<Value> {
    let group = "gateway.networking.k8s.io";
    let reference = json!({"type": "object", "properties": {
        "group": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"},
        "sectionName": {"type": "string"}}});
    vec![
        crd(
            group,
            "v1",
            "BackendTLSPolicy",
            "backendtlspolicies",
            true,
            json!({"type": "object", "properties": {
            "targetRefs": {"type": "array", "items": reference},
            "validation": {"type": "object", "properties": {
                "caCertificateRefs": {"type": "array", "items": reference},
                "wellKnownCACertificates": {"type": "string", "enum": ["System"]},
                "hostname": {"type": "string"}}}}}),
        ),
        crd(group, "v1", "Gateway", "gateways", true, open_object()),
        crd(
            group,
            "v1",
            "HTTPRoute",
            "httproutes",
            true,
            json!({"type": "object", "properties": {
            "parentRefs": {"type": "array", "items": {"type": "object", "properties": {
                "group": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"},
                "namespace": {"type": "string"}, "sectionName": {"type": "string"}}}},
            "hostnames": {"type": "array", "items": {"type": "string"}},
            "rules": {"type": "array", "items": open_object()}}}),
        ),
    ]
    .into_iter()
    .map(|mut definition| {
        definition["metadata"]["annotations"] = json!({
            "api-approved.kubernetes.io": "https://github.com/kubernetes-sigs/gateway-api/pull/3328"
        });
        definition
    })
    .collect()
}

/// cert-manager: Issuer, ClusterIssuer and Certificate.
pub fn cert_manager() -> Vec<Value> {
    let group = "cert-manager.io";
    let issuer = json!({"type": "object", "properties": {
        "selfSigned": open_object(),
        "ca": {"type": "object", "properties": {"secretName": {"type": "string"}}}},
        "x-kubernetes-preserve-unknown-fields": true});
    vec![
        crd(group, "v1", "Issuer", "issuers", true, issuer.clone()),
        crd(
            group,
            "v1",
            "ClusterIssuer",
            "clusterissuers",
            false,
            issuer,
        ),
        crd(
            group,
            "v1",
            "Certificate",
            "certificates",
            true,
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
            "secretName": {"type": "string"}, "commonName": {"type": "string"},
            "dnsNames": {"type": "array", "items": {"type": "string"}},
            "isCA": {"type": "boolean"}, "duration": {"type": "string"},
            "renewBefore": {"type": "string"},
            "issuerRef": {"type": "object", "properties": {"name": {"type": "string"},
                "kind": {"type": "string"}, "group": {"type": "string"}}}}}),
        ),
    ]
}

/// Every third-party CRD the fakes serve.
pub fn all() -> Vec<Value> {
    [
        cert_manager(),
        mariadb(),
        external_secrets(),
        openbao_cluster(),
        gateway_api(),
    ]
    .concat()
}

/// The third-party CRDs a cluster serves: all of them, or all but the Gateway API's.
pub fn served(gateway_api: bool) -> Vec<Value> {
    let mut definitions = [
        cert_manager(),
        mariadb(),
        external_secrets(),
        openbao_cluster(),
    ]
    .concat();
    if gateway_api {
        definitions.extend(self::gateway_api());
    }
    definitions
}

/// Installs [`served`] on `cluster`.
pub fn install(cluster: &barbican_sim::Cluster, gateway_api: bool) -> Result<(), String> {
    for crd in served(gateway_api) {
        let name = crd["metadata"]["name"].as_str().unwrap_or("").to_string();
        cluster
            .install_crd(crd)
            .map_err(|e| format!("installing {name}: {e}"))?;
    }
    Ok(())
}
