//! `--watch-namespaces`: the operator reconciles the Barbicans of the namespaces it watches
//! and leaves every other namespace alone, through one watch per namespace.

use std::time::Duration;

use barbican_features::{
    examples::{example, in_namespace},
    sim_env::{MINIMAL_PREREQUISITES, SimEnv},
};
use barbican_operator::controller::runtime::scope::WatchScope;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_watched_namespaces_are_reconciled() {
    let mut env = SimEnv::start(true).await.unwrap();
    env.set_watch_scope(WatchScope::parse("openstack,elsewhere").unwrap());
    for namespace in ["openstack", "legacy"] {
        env.apply_yaml(&in_namespace(MINIMAL_PREREQUISITES, namespace))
            .await
            .unwrap();
        env.apply_yaml(&in_namespace(
            &example("barbicansecretstore-managed.yaml").unwrap(),
            namespace,
        ))
        .await
        .unwrap();
        env.apply_yaml(&in_namespace(&example("barbican.yaml").unwrap(), namespace))
            .await
            .unwrap();
    }
    env.eventually(Duration::from_secs(300), || async {
        let ready = env
            .conditions("Barbican", "openstack", "barbican")
            .await?
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        if ready {
            Ok(())
        } else {
            Err("the watched Barbican is not Ready".to_string())
        }
    })
    .await
    .unwrap();
    for kind in ["Barbican", "BarbicanSecretStore"] {
        let name = if kind == "Barbican" {
            "barbican"
        } else {
            "openbao-primary"
        };
        let unwatched = env.get(kind, "legacy", name).await.unwrap().unwrap();
        assert!(
            unwatched.data["status"].is_null(),
            "{kind} legacy/{name} was reconciled: {}",
            unwatched.data["status"]
        );
        assert!(
            unwatched.metadata.finalizers.is_none(),
            "{kind} legacy/{name} got finalizers"
        );
    }
    assert!(
        env.get("Deployment", "legacy", "barbican")
            .await
            .unwrap()
            .is_none(),
        "nothing is created in an unwatched namespace"
    );
}
