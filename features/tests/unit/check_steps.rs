//! Tests of `barbican_features::check_steps`.

use barbican_features::check_steps::*;

#[test]
fn an_ini_key_is_read_from_its_section_only() {
    let conf =
        "[DEFAULT]\ndebug = false\n\n[secretstore:vault]\nsecret_store_plugin = vault_plugin\n";
    assert_eq!(
        ini_value(conf, "secretstore:vault", "secret_store_plugin").as_deref(),
        Some("vault_plugin")
    );
    assert_eq!(ini_value(conf, "DEFAULT", "secret_store_plugin"), None);
    assert_eq!(
        ini_value(conf, "DEFAULT", "debug").as_deref(),
        Some("false")
    );
}

#[test]
fn a_metric_is_found_by_name_and_a_subset_of_its_labels() {
    let text = "# HELP x_total help\nx_total{barbican=\"a\",result=\"ok\"} 2\nx_total{barbican=\"b\",result=\"ok\"} 5\nx_total_other 9\n";
    assert_eq!(metric_value(text, "x_total", "barbican=b"), Some(5.0));
    assert_eq!(
        metric_value(text, "x_total", "barbican=a,result=ok"),
        Some(2.0)
    );
    assert_eq!(metric_value(text, "x_total", "barbican=c"), None);
    assert_eq!(metric_value(text, "x_total_other", ""), Some(9.0));
}

#[test]
fn the_requests_refused_with_403_are_read_from_the_metrics_page() {
    let page = "# HELP barbican_operator_kube_requests_total Requests\n\
barbican_operator_kube_requests_total{code=\"200\",resource=\"secrets\",verb=\"get\"} 7\n\
barbican_operator_kube_requests_total{code=\"403\",resource=\"horizontalpodautoscalers.autoscaling\",verb=\"list\"} 2\n\
barbican_operator_kube_requests_total{code=\"403\",resource=\"events.events.k8s.io\",verb=\"create\"} 1\n\
barbican_operator_kube_requests_total{code=\"404\",resource=\"secrets\",verb=\"get\"} 3\n\
barbican_operator_kube_requests_total{code=\"403\",resource=\"leases.coordination.k8s.io\",verb=\"get\"} 0\n\
barbican_operator_reconcile_panics_total{code=\"403\"} 4\n";
    assert_eq!(
        forbidden_requests(page),
        vec![
            (
                "list".to_string(),
                "horizontalpodautoscalers.autoscaling".to_string(),
                2.0
            ),
            ("create".into(), "events.events.k8s.io".into(), 1.0),
        ]
    );
    assert!(forbidden_requests("").is_empty());
}
