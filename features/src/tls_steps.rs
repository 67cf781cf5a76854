//! Steps about the API's certificate (`spec.tls`): cert-manager renewing one it issued, and
//! a Secret holding a certificate someone else issued (or a key that is not its own).

use cucumber::{given, when};
use serde_json::json;

use barbican_fakes::cert_manager::{Issued, Request, renew, sign};

use crate::{sim_env::SimEnv, world::BarbicanWorld};

/// A self-signed certificate for `host` and its key, as PEM.
fn self_signed(host: &str) -> Issued {
    let request = Request {
        secret_name: String::new(),
        dns_names: vec![host.to_string()],
        common_name: None,
        is_ca: false,
        issuer_kind: "Issuer".into(),
        issuer_name: "scenario".into(),
    };
    sign(&request, None).expect("signing a certificate")
}

/// Writes a `kubernetes.io/tls` Secret with `tls.crt` (and `ca.crt`, the same self-signed
/// certificate) and `tls.key`, where the scenario works.
async fn write(env: &SimEnv, namespace: &str, name: &str, certificate: &str, key: &str) {
    env.apply(json!({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
        "metadata": {"name": name, "namespace": namespace},
        "stringData": {"tls.crt": certificate, "tls.key": key, "ca.crt": certificate},
    }))
    .await
    .expect("writing the TLS Secret");
}

#[when(expr = "cert-manager renews the Certificate {string} in {string}")]
async fn renews(world: &mut BarbicanWorld, name: String, namespace: String) {
    let client = world.env().scenario_client();
    renew(client, &namespace, &name)
        .await
        .expect("renewing the Certificate");
}

#[given(expr = "the Secret {string} in {string} holds a certificate for {string} and its key")]
#[when(expr = "the Secret {string} in {string} holds a certificate for {string} and its key")]
async fn certificate_and_key(
    world: &mut BarbicanWorld,
    name: String,
    namespace: String,
    host: String,
) {
    let issued = self_signed(&host);
    write(
        world.env(),
        &namespace,
        &name,
        &issued.certificate,
        &issued.key,
    )
    .await;
}

#[when(
    expr = "the Secret {string} in {string} holds a certificate for {string} and another certificate's key"
)]
async fn certificate_and_other_key(
    world: &mut BarbicanWorld,
    name: String,
    namespace: String,
    host: String,
) {
    let (issued, other) = (self_signed(&host), self_signed(&host));
    write(
        world.env(),
        &namespace,
        &name,
        &issued.certificate,
        &other.key,
    )
    .await;
}
