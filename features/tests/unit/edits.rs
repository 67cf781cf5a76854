//! Tests of `barbican_features::edits`.

use barbican_features::edits::*;

/// The 500 kube-apiserver (and the sim) answers when a webhook cannot be called in time is
/// applied again; a webhook's denial and the schema's refusal are not.
#[test]
fn only_an_unreachable_webhook_is_tried_again() {
    assert!(webhook_unreachable(
        "applying Barbican barbican: ApiError: Internal error occurred: failed calling webhook \"vbarbican.openstack.c5c3.io\": failed to call webhook: Post \"https://barbican-operator-webhook.barbican-system.svc:443/validate\": context deadline exceeded: InternalError"
    ));
    assert!(!webhook_unreachable(
        "admission webhook \"vbarbican.openstack.c5c3.io\" denied the request: spec.plugins: unknown plugin"
    ));
    assert!(!webhook_unreachable(
        "Barbican.barbican.c5c3.io \"b\" is invalid"
    ));
}

/// Seed 1110's fourth version drops `secretStoreRef.name` while the defaulted `kind`
/// stays: the mutating webhook refuses the merged object, as kube-apiserver's would. The
/// check reports the seed as not compared, with the refusal, instead of stopping.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_the_schema_refuses_leaves_its_seed_uncompared() {
    assert!(refused_by_schema(
        "admission webhook \"mbarbican.openstack.c5c3.io\" denied the request: the object does not match the schema: spec.secretStoreRef: missing field `name`"
    ));
    assert!(!refused_by_schema(
        "admission webhook denied the request: spec.plugins: unknown plugin"
    ));
    let mut told = Vec::new();
    let report = check(1110..1111, 4, 1, 1, false, &mut |p| told.push(p))
        .await
        .unwrap();
    assert_eq!(report.sequences, 1);
    assert_eq!(
        told,
        vec![Progress::Ran {
            done: 1,
            total: 1,
            differing: 0,
            not_compared: 1
        }]
    );
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let [(seed, why)] = report.not_installable.as_slice() else {
        panic!("{:?}", report.not_installable);
    };
    assert_eq!(*seed, 1110);
    assert!(why.contains("does not match the schema"), "{why}");
}
