//! A target cluster's Gateway API is probed on every pass (the spec's "on every pass"): a
//! probe that failed while the cluster was down does not stick once it is back. The fault soak
//! found the old engagement-time probe stuck on `CapabilityProbeFailed` (seed 101).

use barbican_operator::controller::{
    discovery::GatewayApi,
    runtime::children::{Children, Owner},
};
use barbican_sim::Cluster;

fn owner() -> Owner {
    Owner {
        kind: "Barbican".into(),
        name: "kms".into(),
        namespace: "openstack".into(),
        uid: Some("uid-1".into()),
    }
}

#[tokio::test]
async fn a_targets_gateway_api_is_probed_each_time_it_is_asked() {
    let target = Cluster::new();
    barbican_fakes::crds::install(&target, true).unwrap();
    let children = Children::remote(target.client(), owner(), "edge-1", None);
    assert_eq!(
        children.probe_gateway_api().await,
        Some(GatewayApi::Installed)
    );
    target.set_outage(true);
    assert!(
        matches!(
            children.probe_gateway_api().await,
            Some(GatewayApi::ProbeFailed(_))
        ),
        "a cluster that is down fails the probe"
    );
    target.set_outage(false);
    assert_eq!(
        children.probe_gateway_api().await,
        Some(GatewayApi::Installed)
    );

    let without = Cluster::new();
    barbican_fakes::crds::install(&without, false).unwrap();
    let children = Children::remote(without.client(), owner(), "edge-2", None);
    assert_eq!(
        children.probe_gateway_api().await,
        Some(GatewayApi::NotInstalled)
    );

    let local = Children::local(target.client(), owner(), Default::default());
    assert_eq!(
        local.probe_gateway_api().await,
        None,
        "the setup probe answers locally"
    );
}
