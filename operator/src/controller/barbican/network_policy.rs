//! The NetworkPolicy step: ingress on 9311 from the listed sources (plus the gateway's and the
//! operator's namespaces); egress auto-derived (DNS, the database, Keystone, the cache, the
//! OpenBao servers) with `additionalEgress` after it. An empty ingress list is refused
//! (fail-closed): a policy with no source would cut the API off, and no policy would open it.

use std::collections::BTreeSet;

use k8s_openapi::{
    api::networking::v1::{
        NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
        NetworkPolicyPort, NetworkPolicySpec,
    },
    apimachinery::pkg::{apis::meta::v1::LabelSelector, util::intstr::IntOrString},
};

use super::{
    dsn::DEFAULT_PORT as DATABASE_PORT,
    labels,
    projection::Projection,
    state::{State, owned_metadata},
};
use crate::{
    api::{
        barbican::BarbicanSpec,
        conditions::{BarbicanConditionType as T, Reason},
        names::API_PORT,
    },
    controller::{
        pipeline::{Outcome, StepFuture},
        status::Report,
        step_error::{StepError, api_error},
    },
};

/// memcached's port.
pub const MEMCACHED_PORT: i32 = 11211;
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The scheme and the explicit port of an `http(s)://host[:port]/…` URL.
fn scheme_and_port(url: &str) -> (Option<&str>, Option<i32>) {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    let port = match host_port.rfind(':') {
        Some(i) if !host_port[i..].contains(']') => host_port
            .get(i.saturating_add(1)..)
            .and_then(|port| port.parse().ok()),
        _ => None,
    };
    (scheme, port)
}

/// A URL's port: explicit, else 80 for http, else 443.
pub fn url_port(url: &str) -> i32 {
    match scheme_and_port(url) {
        (_, Some(port)) => port,
        (Some(scheme), None) if scheme.eq_ignore_ascii_case("http") => 80,
        _ => 443,
    }
}

/// The cache ports: each server's port (11211 when absent), deduplicated in order; 11211 for
/// a managed cluster.
pub fn cache_ports(spec: &BarbicanSpec) -> Vec<i32> {
    let servers = spec.cache.servers.as_deref().unwrap_or_default();
    if servers.is_empty() {
        return vec![MEMCACHED_PORT];
    }
    let mut seen = BTreeSet::new();
    servers
        .iter()
        .map(|s| scheme_and_port(s).1.unwrap_or(MEMCACHED_PORT))
        .filter(|p| seen.insert(*p))
        .collect()
}

fn port(protocol: &str, number: i32) -> NetworkPolicyPort {
    NetworkPolicyPort {
        protocol: Some(protocol.into()),
        port: Some(IntOrString::Int(number)),
        end_port: None,
    }
}

fn to_ports(ports: Vec<NetworkPolicyPort>) -> NetworkPolicyEgressRule {
    NetworkPolicyEgressRule {
        ports: Some(ports),
        to: None,
    }
}

fn namespace_peer(namespace: &str) -> NetworkPolicyPeer {
    NetworkPolicyPeer {
        namespace_selector: Some(LabelSelector {
            match_labels: Some([(NAMESPACE_NAME_LABEL.to_string(), namespace.to_string())].into()),
            ..LabelSelector::default()
        }),
        ..NetworkPolicyPeer::default()
    }
}

/// Everything the policy is built from besides the spec.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// The Barbican's name and namespace.
    pub name: String,
    /// See `name`.
    pub namespace: String,
    /// The namespace the operator runs in.
    pub operator_namespace: String,
    /// The OpenBao server URLs to allow.
    pub openbao_urls: Vec<String>,
}

/// The policy's spec; an error names the field when the ingress list is empty.
pub fn policy_spec(spec: &BarbicanSpec, inputs: &Inputs) -> Result<NetworkPolicySpec, String> {
    let Some(np) = &spec.network_policy else {
        return Err("spec.networkPolicy is not set".into());
    };
    if np.ingress.is_empty() {
        return Err(
            "spec.networkPolicy.ingress: at least one source is required (fail-closed)".into(),
        );
    }
    let mut from: Vec<NetworkPolicyPeer> = np
        .ingress
        .iter()
        .map(|source| NetworkPolicyPeer {
            namespace_selector: Some(source.namespace_selector.clone()),
            pod_selector: source.pod_selector.clone(),
            ..NetworkPolicyPeer::default()
        })
        .collect();
    if let Some(gateway) = &spec.gateway {
        let ns = gateway
            .parent_ref
            .namespace
            .clone()
            .unwrap_or_else(|| inputs.namespace.clone());
        from.push(namespace_peer(&ns));
    }
    from.push(namespace_peer(&inputs.operator_namespace));

    let mut egress = vec![
        to_ports(vec![port("UDP", 53), port("TCP", 53)]),
        to_ports(vec![port(
            "TCP",
            spec.database.port.unwrap_or(DATABASE_PORT),
        )]),
        to_ports(vec![port("TCP", url_port(&spec.keystone_endpoint))]),
        to_ports(
            cache_ports(spec)
                .into_iter()
                .map(|p| port("TCP", p))
                .collect(),
        ),
    ];
    let openbao: BTreeSet<i32> = inputs.openbao_urls.iter().map(|u| url_port(u)).collect();
    if !openbao.is_empty() {
        egress.push(to_ports(
            openbao.into_iter().map(|p| port("TCP", p)).collect(),
        ));
    }
    egress.extend(np.additional_egress.iter().flatten().cloned());
    Ok(NetworkPolicySpec {
        pod_selector: Some(LabelSelector {
            match_labels: Some(labels::selector(&inputs.name)),
            ..LabelSelector::default()
        }),
        policy_types: Some(vec!["Ingress".into(), "Egress".into()]),
        ingress: Some(vec![NetworkPolicyIngressRule {
            from: Some(from),
            ports: Some(vec![port("TCP", API_PORT)]),
        }]),
        egress: Some(egress),
    })
}

/// The OpenBao URLs to allow: the valid projection's, or the last-good record when this pass's
/// projection is invalid (never re-derived from the live store specs).
pub fn openbao_urls(projection: &Projection, last_good: &[String]) -> Vec<String> {
    if projection.valid {
        projection.stores.iter().map(|s| s.url.clone()).collect()
    } else {
        last_good.to_vec()
    }
}

/// The NetworkPolicy step.
pub fn network_policy(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let name = state.name();
        // Unset, the pass sweeps any NetworkPolicy left from before (see `runtime::sweep`).
        if state.barbican.spec.network_policy.is_none() {
            state.report(Report::ready(
                T::NetworkPolicyReady,
                Reason::NetworkPolicyNotRequired,
                "spec.networkPolicy is not set",
            ));
            return Ok(Outcome::Done);
        }
        let inputs = Inputs {
            name: name.clone(),
            namespace: state.namespace(),
            operator_namespace: state.env.operator_namespace.clone(),
            openbao_urls: openbao_urls(
                state.handoffs.need::<Projection>()?,
                &state.status.projected_secret_store_hosts,
            ),
        };
        let spec = policy_spec(&state.barbican.spec, &inputs).map_err(StepError::invalid_input)?;
        let policy = NetworkPolicy {
            metadata: owned_metadata(state, &name),
            spec: Some(spec),
        };
        state
            .children
            .ensure(&policy)
            .await
            .map_err(|e| api_error("applying the NetworkPolicy", e))?;
        state.report(Report::ready(
            T::NetworkPolicyReady,
            Reason::NetworkPolicyReady,
            "ingress restricted to port 9311 from the listed sources",
        ));
        Ok(Outcome::Done)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{
        fixtures,
        network_policy::{NetworkPolicyIngressSource, NetworkPolicySpec as Np},
    };

    #[test]
    fn ports_come_from_the_url_or_its_scheme() {
        assert_eq!(url_port("http://keystone.openstack.svc:5000/v3"), 5000);
        assert_eq!(url_port("http://keystone/v3"), 80);
        assert_eq!(url_port("https://keystone"), 443);
        assert_eq!(url_port("https://[fd00::1]:8200"), 8200);
        assert_eq!(url_port("https://[fd00::1]/x"), 443);
    }

    fn inputs() -> Inputs {
        Inputs {
            name: "kms".into(),
            namespace: "openstack".into(),
            operator_namespace: "barbican-system".into(),
            openbao_urls: vec![
                "https://bao.openbao.svc:8200".into(),
                "https://vault:8200".into(),
            ],
        }
    }

    #[test]
    fn an_empty_ingress_list_is_refused() {
        let mut spec = fixtures::barbican().spec;
        spec.network_policy = Some(Np::default());
        let error = policy_spec(&spec, &inputs()).unwrap_err();
        assert!(error.contains("spec.networkPolicy.ingress"), "{error}");
    }

    #[test]
    fn egress_is_dns_database_keystone_cache_openbao_then_additional() {
        let mut spec = fixtures::barbican().spec;
        spec.keystone_endpoint = "http://keystone.openstack.svc:5000/v3".into();
        spec.cache.cluster_ref = None;
        spec.cache.servers = Some(vec![
            "mc-0:11211".into(),
            "mc-1:11211".into(),
            "mc-2:11311".into(),
        ]);
        spec.network_policy = Some(Np {
            ingress: vec![NetworkPolicyIngressSource::default()],
            additional_egress: Some(vec![NetworkPolicyEgressRule::default()]),
        });
        let built = policy_spec(&spec, &inputs()).unwrap();
        let ports: Vec<Vec<(String, i32)>> = built
            .egress
            .unwrap()
            .iter()
            .map(|r| {
                r.ports
                    .iter()
                    .flatten()
                    .map(|p| {
                        let IntOrString::Int(n) = p.port.clone().unwrap() else {
                            panic!()
                        };
                        (p.protocol.clone().unwrap(), n)
                    })
                    .collect()
            })
            .collect();
        let tcp = |n| ("TCP".to_string(), n);
        assert_eq!(
            ports,
            vec![
                vec![("UDP".to_string(), 53), tcp(53)],
                vec![tcp(3306)],
                vec![tcp(5000)],
                vec![tcp(11211), tcp(11311)],
                vec![tcp(8200)],
                vec![],
            ]
        );
        let ingress = &built.ingress.unwrap()[0];
        assert_eq!(
            ingress.from.as_ref().unwrap().len(),
            2,
            "the source and the operator namespace"
        );
        assert_eq!(built.policy_types.unwrap(), ["Ingress", "Egress"]);
    }
}
