//! The examples of `deploy/examples/`, applied each where it can become Ready: what the demo
//! shows and what the chart's RBAC test runs the operator through.

use crate::sim_env::{Error, MINIMAL_PREREQUISITES, SERVICE_USER_PASSWORD, SimEnv};

/// The minimal example's namespace.
pub const NAMESPACE: &str = "openstack";
/// The Barbican every example names.
pub const NAME: &str = "barbican";
/// The managed store the minimal example attaches.
pub const STORE: &str = "openbao-primary";

/// The text of `deploy/examples/<file>`.
pub fn example(file: &str) -> Result<String, String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("no workspace")?
        .join("deploy/examples")
        .join(file);
    std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))
}

/// `yaml` with its `openstack` namespace replaced by `namespace`.
pub fn in_namespace(yaml: &str, namespace: &str) -> String {
    yaml.replace("namespace: openstack", &format!("namespace: {namespace}"))
        .replace("{name: openstack}", &format!("{{name: {namespace}}}"))
}

/// The brownfield example's namespace, and the full example's (on the target cluster).
pub const LEGACY: &str = "legacy";
/// The full example's namespace.
pub const FULL: &str = "full";
/// The target cluster `barbican-full.yaml` names.
pub const REGION: &str = "region-one";

/// What the full example reads on its target cluster besides the minimal prerequisites.
pub const FULL_PREREQUISITES: &str = "\
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: {name: openstack-tenant-store, namespace: full}
spec: {provider: {vault: {server: 'https://openbao.openbao.svc:8200'}}}
---
apiVersion: v1
kind: Secret
metadata: {name: mariadb-ca, namespace: full}
stringData: {ca.crt: demo-ca}
---
apiVersion: v1
kind: Secret
metadata: {name: barbican-db-client-tls, namespace: full}
stringData: {tls.crt: demo-cert, tls.key: demo-key}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: barbican-policy, namespace: full}
data: {policy.yaml: '\"secrets:list\": \"role:reader\"'}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: barbican-db-backups, namespace: full}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: selfsigned, namespace: full}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: openstack-ca, namespace: full}
spec: {isCA: true, commonName: openstack-ca, secretName: openstack-ca, issuerRef: {name: selfsigned}}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: openstack-ca, namespace: full}
spec: {ca: {secretName: openstack-ca}}
";

/// The PriorityClass `barbican-full.yaml` names: the admission webhook refuses a
/// `priorityClassName` the management cluster does not have, as it refuses a user's.
pub const CONTROL_PLANE_PRIORITY_CLASS: &str = "\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: openstack-control-plane}
value: 100000
description: OpenStack control-plane services
";

/// Makes the site's Keystone (the one the operator and barbican's pods reach as
/// `keystone.openstack.svc`) know the examples' service user `barbican` with the password of
/// the prerequisites' Secret, and the `admin` and `service` roles on `service`, as
/// kolla-ansible and openstack-helm grant them: authtoken validates tokens as it, and the
/// full example registers the catalog as it.
pub fn keystone_knows_the_service_user(env: &SimEnv) {
    env.site.keystone.add_user(barbican_fakes::keystone::User {
        name: "barbican".into(),
        password: SERVICE_USER_PASSWORD.into(),
        project: "service".into(),
        roles: vec!["admin".into(), "service".into()],
    });
}

/// Applies the minimal example (`barbican.yaml`) with its managed store and prerequisites
/// into [`NAMESPACE`].
pub async fn apply_minimal_example(env: &SimEnv) -> Result<(), Error> {
    keystone_knows_the_service_user(env);
    env.apply_yaml(MINIMAL_PREREQUISITES).await?;
    env.apply_yaml(&example("barbicansecretstore-managed.yaml")?)
        .await?;
    env.apply_yaml(&example("barbican.yaml")?).await?;
    println!(
        "applied into {NAMESPACE}: barbican.yaml, barbicansecretstore-managed.yaml and their prerequisites"
    );
    Ok(())
}

/// Applies every example of `deploy/examples/`, each where it can become Ready: the minimal
/// one with the managed store in `openstack`; the brownfield store (with its own Barbican) in
/// `legacy`, against an external OpenBao served as `vault.example.com`; the full one in
/// `full`, placed on the target cluster `region-one` with a managed store there.
pub async fn apply_examples(env: &SimEnv) -> Result<(), Error> {
    apply_minimal_example(env).await?;

    env.apply_yaml(&in_namespace(MINIMAL_PREREQUISITES, LEGACY))
        .await?;
    env.start_external_openbao("vault", LEGACY, "vault").await?;
    env.expose_external_openbao("vault", "vault.example.com", 8200)?;
    env.provision_external_openbao("vault", "secret-barbican", "tenant-a")?;
    env.issue_external_credentials("vault", "tenant-a", "vault-barbican-approle", LEGACY)
        .await?;
    env.publish_external_ca("vault", "vault-ca", LEGACY).await?;
    env.apply_yaml(&in_namespace(
        &example("barbicansecretstore-brownfield.yaml")?,
        LEGACY,
    ))
    .await?;
    env.apply_yaml(&in_namespace(&example("barbican.yaml")?, LEGACY))
        .await?;
    println!(
        "applied into {LEGACY}: barbicansecretstore-brownfield.yaml (an external OpenBao as vault.example.com) and barbican.yaml"
    );

    env.register_target(REGION).await?;
    env.focus_on(Some(REGION))?;
    env.apply_yaml(&in_namespace(MINIMAL_PREREQUISITES, FULL))
        .await?;
    env.apply_yaml(FULL_PREREQUISITES).await?;
    env.apply_yaml(CONTROL_PLANE_PRIORITY_CLASS).await?;
    env.focus_on(None)?;
    env.apply_yaml(CONTROL_PLANE_PRIORITY_CLASS).await?;
    env.apply_yaml(&format!(
        "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {FULL}}}\n"
    ))
    .await?;
    env.apply_yaml(&in_namespace(
        &example("barbicansecretstore-managed.yaml")?,
        FULL,
    ))
    .await?;
    env.apply_yaml(&in_namespace(&example("barbican-full.yaml")?, FULL))
        .await?;
    println!(
        "applied into {FULL}: barbican-full.yaml, placed on the target cluster {REGION} (a second simulated cluster), with a managed store there\n"
    );
    Ok(())
}

/// Where [`apply_full_example_locally`] puts the full example.
pub const FULL_LOCAL: &str = "full-local";

/// Applies the full example on the management cluster, in [`FULL_LOCAL`] with a managed store,
/// without its `targetClusterRef`: every optional block then runs where the operator runs.
pub async fn apply_full_example_locally(env: &SimEnv) -> Result<(), Error> {
    keystone_knows_the_service_user(env);
    env.apply_yaml(&in_namespace(MINIMAL_PREREQUISITES, FULL_LOCAL))
        .await?;
    env.apply_yaml(
        &FULL_PREREQUISITES.replace("namespace: full", &format!("namespace: {FULL_LOCAL}")),
    )
    .await?;
    env.apply_yaml(&in_namespace(
        &example("barbicansecretstore-managed.yaml")?,
        FULL_LOCAL,
    ))
    .await?;
    env.apply_yaml(CONTROL_PLANE_PRIORITY_CLASS).await?;
    let full = in_namespace(&example("barbican-full.yaml")?, FULL_LOCAL);
    let target = format!("  targetClusterRef:\n    name: {REGION}\n");
    if !full.contains(&target) {
        return Err(format!(
            "barbican-full.yaml no longer names {REGION} as its target"
        ));
    }
    env.apply_yaml(&full.replace(&target, "")).await
}

/// Whether every CR of `crs` (kind, namespace, name) is Ready; the error names the first that
/// is not and its conditions that are not True.
pub async fn all_ready(
    env: &SimEnv,
    crs: &[(&'static str, &'static str, &'static str)],
) -> Result<(), Error> {
    for (kind, namespace, name) in crs {
        let conditions = env.conditions(kind, namespace, name).await?;
        if !conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
        {
            let unready: Vec<String> = conditions
                .iter()
                .filter(|c| c.status != "True" && c.type_ != "Ready")
                .map(|c| format!("{} {} {}: {}", c.type_, c.status, c.reason, c.message))
                .collect();
            return Err(format!(
                "{kind} {namespace}/{name} is not Ready: {}",
                if unready.is_empty() {
                    "no conditions yet".to_string()
                } else {
                    unready.join("; ")
                }
            ));
        }
    }
    Ok(())
}

/// The CRs the demo waits on, in the order it prints them.
pub fn watched() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("BarbicanSecretStore", NAMESPACE, STORE),
        ("Barbican", NAMESPACE, NAME),
        ("BarbicanSecretStore", LEGACY, "vault-legacy"),
        ("Barbican", LEGACY, NAME),
        ("BarbicanSecretStore", FULL, STORE),
        ("Barbican", FULL, NAME),
    ]
}
