//! Tests of `barbican_sim::kubelet::firewall`: what a pod reaches on the host. The second
//! needs what the kubelet needs (root, iproute2) and nftables, which `ci/install-crun.sh`
//! installs beside crun.

use barbican_sim::kubelet::{firewall::*, sandbox::PodNetwork};

#[test]
fn the_ruleset_drops_what_a_pod_opens_to_the_host_but_the_services() {
    let rules = ruleset("bsim-7", "bs7h*");
    assert!(rules.starts_with("table inet bsim-7 {"), "{rules}");
    let lines: Vec<&str> = rules.lines().map(str::trim).collect();
    let position = |line: &str| lines.iter().position(|l| *l == line);
    let replies = position("iifname \"bs7h*\" ct state established,related accept").unwrap();
    let services = position("iifname \"bs7h*\" ip daddr . tcp dport @services accept").unwrap();
    let drop = position("iifname \"bs7h*\" drop").unwrap();
    assert!(replies < drop && services < drop, "{rules}");
}

/// A process listening on every host address is out of a pod's reach through its gateway
/// until the (address, port) is a Service's; the host still reaches the pod.
#[tokio::test]
async fn a_pod_reaches_a_host_listener_only_as_a_service() {
    // An id no kubelet of this process uses.
    let kubelet = 90_000 + std::process::id() % 9_000;
    // Its things are a live run's: a launcher starting beside this test leaves them be.
    let _run = barbican_sim::leftovers::RunLock::hold(kubelet).expect("root");
    let network = PodNetwork::plan(kubelet, 1, 251).unwrap();
    network.create().await.expect("root and iproute2");
    let filter = HostFilter::install(kubelet)
        .await
        .expect("nftables (ci/install-crun.sh installs it)");
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = || {
        std::process::Command::new("ip")
            .args(["netns", "exec", &network.netns, "python3", "-c"])
            .arg(format!(
                "import socket; socket.create_connection(('{}', {port}), timeout=1)",
                network.gateway
            ))
            .output()
            .unwrap()
            .status
            .success()
    };
    let refused = connect();
    filter.allow(network.gateway, port).await.unwrap();
    let admitted = connect();
    filter.remove().await;
    network.remove().await;
    assert!(!refused, "a host listener is no pod's to reach");
    assert!(admitted, "a Service's address and port are");
}
