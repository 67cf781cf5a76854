//! The HTTPRoute step: the full `spec.gateway` lifecycle. The route forwards the gateway's
//! hostname and path to the `{name}` Service on 9311, carries the block's annotations, and
//! reports the Gateway's Accepted condition. Removing the block deletes the route.

use std::time::Duration;

use kube::api::DynamicObject;
use serde_json::json;

use k8s_openapi::api::core::v1::ConfigMap;

use super::{
    backend_tls::{backend_tls_policy_resource, ca_config_map, ca_config_map_name, policy_spec},
    handoffs::{ApiTls, ServedTls},
    state::{State, owned_metadata},
};
use crate::{
    api::{
        conditions::{BarbicanConditionType as T, Reason},
        gateway::GatewaySpec,
        names::API_PORT,
    },
    controller::{
        discovery::{GatewayApi, http_route_resource},
        pipeline::{Outcome, StepFuture},
        status::Report,
        step_error::{StepError, api_error},
    },
};

/// HTTPRoute acceptance polling.
pub const ROUTE_REQUEUE: Duration = Duration::from_secs(10);

/// The path prefix: the block's path with a leading `/`, `/` by default.
pub fn path(gateway: &GatewaySpec) -> String {
    match gateway.path.as_deref() {
        None | Some("") => "/".into(),
        Some(p) if p.starts_with('/') => p.into(),
        Some(p) => format!("/{p}"),
    }
}

/// The route's spec.
pub fn route_spec(gateway: &GatewaySpec, service: &str) -> serde_json::Value {
    let mut parent = json!({"name": gateway.parent_ref.name});
    if let Some(ns) = &gateway.parent_ref.namespace {
        parent["namespace"] = json!(ns);
    }
    if let Some(section) = &gateway.parent_ref.section_name {
        parent["sectionName"] = json!(section);
    }
    json!({
        "parentRefs": [parent],
        "hostnames": [gateway.hostname],
        "rules": [{
            "matches": [{"path": {"type": "PathPrefix", "value": path(gateway)}}],
            "backendRefs": [{"name": service, "port": API_PORT}],
        }],
    })
}

/// Whether any parent accepted the route.
pub fn accepted(route: &serde_json::Value) -> bool {
    route["status"]["parents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["conditions"].as_array().into_iter().flatten())
        .any(|c| c["type"] == "Accepted" && c["status"] == "True")
}

/// What the step does, given what the cluster serves and whether the spec asks for a route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// No route wanted: report this (the pass sweeps any route left from before).
    Report(Report),
    /// A route is wanted but cannot be applied now: report this and keep any live route as
    /// it is (a probe that failed once does not take the route away).
    Keep(Report),
    /// Apply the route and report the Gateway's verdict.
    Apply,
}

/// The plan for `api` and the spec's gateway block.
pub fn plan(api: &GatewayApi, gateway: Option<&GatewaySpec>) -> Plan {
    let t = T::HTTPRouteReady;
    let not_required = || Report::ready(t, Reason::HTTPRouteNotRequired, "spec.gateway is not set");
    match (api, gateway) {
        (_, None) => Plan::Report(not_required()),
        (GatewayApi::NotInstalled, Some(_)) => Plan::Keep(Report::not_ready(
            t,
            Reason::GatewayAPINotInstalled,
            "spec.gateway is set but the Gateway API's HTTPRoute is not served on this cluster",
        )),
        (GatewayApi::ProbeFailed(error), Some(_)) => Plan::Keep(Report::not_ready(
            t,
            Reason::CapabilityProbeFailed,
            format!("probing for the Gateway API failed: {error}"),
        )),
        (GatewayApi::Installed, Some(_)) => Plan::Apply,
    }
}

/// With TLS on the API, what the Gateway needs to speak it to the pods: the BackendTLSPolicy
/// and the CA it names ([`super::backend_tls`]). `Some` report when the Gateway API does not
/// serve BackendTLSPolicy: the route would reach pods it cannot talk to.
async fn backend_tls(state: &State, tls: &ServedTls) -> Result<Option<Report>, StepError> {
    let (name, namespace) = (state.name(), state.namespace());
    let ca = tls
        .ca
        .as_deref()
        .and_then(|ca| ca_config_map(owned_metadata(state, &ca_config_map_name(&name)), ca));
    if let Some(config_map) = &ca {
        state
            .children
            .ensure(config_map)
            .await
            .map_err(|e| api_error("applying the ConfigMap of the API's CA", e))?;
    }
    let resource = backend_tls_policy_resource();
    let mut policy = DynamicObject::new(&name, &resource).within(&namespace);
    policy.metadata = owned_metadata(state, &name);
    policy.data = json!({"spec": policy_spec(&name, &namespace, ca.is_some())});
    match state.children.ensure_dynamic(&resource, &policy).await {
        Ok(_) => Ok(None),
        Err(e) if e.kind_not_served() => Ok(Some(Report::not_ready(
            T::HTTPRouteReady,
            Reason::GatewayAPINotInstalled,
            "spec.tls with spec.gateway needs the Gateway API's BackendTLSPolicy (gateway.networking.k8s.io/v1) for the Gateway to speak HTTPS to the pods, and it is not served on this cluster",
        ))),
        Err(e) => Err(api_error("applying the BackendTLSPolicy", e)),
    }
}

/// The HTTPRoute step.
pub fn http_route(state: &mut State) -> StepFuture<'_> {
    Box::pin(async move {
        let name = state.name();
        let t = T::HTTPRouteReady;
        // A target cluster is probed on every pass; the management cluster's setup probe
        // answers otherwise.
        let api = match state.children.probe_gateway_api().await {
            Some(api) => api,
            None => state.env.gateway_api.clone(),
        };
        let gateway = match (
            plan(&api, state.barbican.spec.gateway.as_ref()),
            &state.barbican.spec.gateway,
        ) {
            (Plan::Report(report), _) => {
                state.report(report);
                return Ok(Outcome::Done);
            }
            (Plan::Keep(report), _) => {
                state.children.keep_dynamic(&http_route_resource(), &name);
                state
                    .children
                    .keep_dynamic(&backend_tls_policy_resource(), &name);
                state.children.keep::<ConfigMap>(&ca_config_map_name(&name));
                state.report(report);
                return Ok(Outcome::Done);
            }
            (Plan::Apply, Some(gateway)) => gateway.clone(),
            (Plan::Apply, None) => return Ok(Outcome::Done),
        };
        let mut metadata = owned_metadata(state, &name);
        metadata.annotations = gateway.annotations.clone().filter(|a| !a.is_empty());
        let mut route =
            DynamicObject::new(&name, &http_route_resource()).within(&state.namespace());
        route.metadata = metadata;
        route.data = json!({"spec": route_spec(&gateway, &name)});
        let live = state
            .children
            .ensure_dynamic(&http_route_resource(), &route)
            .await
            .map_err(|e| api_error("applying the HTTPRoute", e))?;
        let tls = state.handoffs.need::<ApiTls>()?.0.clone();
        if let Some(tls) = tls
            && let Some(report) = backend_tls(state, &tls).await?
        {
            state.report(report);
            return Ok(Outcome::Requeue(ROUTE_REQUEUE));
        }
        if accepted(&live.data) {
            state.report(Report::ready(
                t,
                Reason::HTTPRouteAccepted,
                format!("the Gateway accepted the route for {}", gateway.hostname),
            ));
            Ok(Outcome::Done)
        } else {
            state.report(Report::not_ready(
                t,
                Reason::HTTPRouteNotAccepted,
                format!(
                    "waiting for Gateway {:?} to accept the route",
                    gateway.parent_ref.name
                ),
            ));
            Ok(Outcome::Requeue(ROUTE_REQUEUE))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::gateway::GatewayParentRefSpec;

    fn gateway(path: Option<&str>) -> GatewaySpec {
        GatewaySpec {
            parent_ref: GatewayParentRefSpec {
                name: "public".into(),
                namespace: Some("gateways".into()),
                section_name: None,
            },
            hostname: "kms.example.com".into(),
            path: path.map(String::from),
            annotations: None,
        }
    }

    #[test]
    fn the_route_forwards_the_prefix_to_the_service() {
        let spec = route_spec(&gateway(Some("key-manager")), "kms");
        assert_eq!(
            spec["parentRefs"],
            json!([{"name": "public", "namespace": "gateways"}])
        );
        assert_eq!(spec["hostnames"], json!(["kms.example.com"]));
        assert_eq!(
            spec["rules"][0]["matches"][0]["path"],
            json!({"type": "PathPrefix", "value": "/key-manager"})
        );
        assert_eq!(
            spec["rules"][0]["backendRefs"],
            json!([{"name": "kms", "port": 9311}])
        );
        assert!(spec["rules"][0].get("timeouts").is_none());
        assert_eq!(path(&gateway(None)), "/");
    }

    #[test]
    fn the_plan_follows_the_probe_and_the_block() {
        let g = gateway(None);
        let reason = |p: Plan| match p {
            Plan::Report(r) | Plan::Keep(r) => Some((r.ready, r.reason)),
            Plan::Apply => None,
        };
        assert_eq!(
            reason(plan(&GatewayApi::Installed, None)),
            Some((true, Reason::HTTPRouteNotRequired))
        );
        for api in [
            GatewayApi::Installed,
            GatewayApi::NotInstalled,
            GatewayApi::ProbeFailed("503".into()),
        ] {
            assert!(matches!(plan(&api, None), Plan::Report(_)), "{api:?}");
        }
        assert!(matches!(
            plan(&GatewayApi::NotInstalled, Some(&g)),
            Plan::Keep(_)
        ));
        assert_eq!(
            reason(plan(&GatewayApi::NotInstalled, Some(&g))),
            Some((false, Reason::GatewayAPINotInstalled))
        );
        let failed = plan(&GatewayApi::ProbeFailed("503".into()), Some(&g));
        assert_eq!(
            reason(failed.clone()),
            Some((false, Reason::CapabilityProbeFailed))
        );
        assert!(matches!(failed, Plan::Keep(r) if r.message.contains("503")));
        assert_eq!(plan(&GatewayApi::Installed, Some(&g)), Plan::Apply);
    }

    #[test]
    fn any_parent_accepting_is_acceptance() {
        let route = json!({"status": {"parents": [
            {"conditions": [{"type": "Accepted", "status": "False"}]},
            {"conditions": [{"type": "Accepted", "status": "True"}]},
        ]}});
        assert!(accepted(&route));
        assert!(!accepted(&json!({"status": {"parents": []}})));
    }
}
