//! The chart's alerts (`metrics.prometheusRule`) and Grafana dashboard (`metrics.dashboard`):
//! every expression selects only series the operator exports, by labels those series carry;
//! every alert has a severity, a summary, a description and a runbook that exists in
//! docs/operating.md; what an annotation prints is a label the alert's result has. A parser
//! test rather than promtool's: no Prometheus ships in PyPI, and what a rule can get wrong
//! here is a name, not the PromQL grammar.

use std::collections::{BTreeMap, BTreeSet};

use barbican_operator::metrics::Metrics;
use barbican_tests::{docs::anchors, workspace_root};
use serde_json::Value;

use super::{FULLNAME, find, kinds, rendered};

/// The operator's metric families and their label names.
fn families() -> BTreeMap<String, BTreeSet<String>> {
    Metrics::new()
        .families()
        .into_iter()
        .map(|(name, labels)| (name, labels.into_iter().collect()))
        .collect()
}

/// A selector in an expression: the metric and the label names its matchers use.
#[derive(Debug)]
struct Selector {
    metric: String,
    labels: Vec<String>,
}

/// The `barbican_operator_…` selectors of `expr`, and the labels of its `by (…)` clauses.
fn parse(expr: &str) -> (Vec<Selector>, Vec<String>) {
    let mut selectors = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("barbican_operator_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let metric = tail[..end].to_string();
        let mut labels = Vec::new();
        let after = &tail[end..];
        let consumed = if let Some(body) = after.strip_prefix('{') {
            let close = body.find('}').expect("a closed selector");
            for matcher in body[..close].split(',') {
                let name: String = matcher
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    labels.push(name);
                }
            }
            end + close + 2
        } else {
            end
        };
        selectors.push(Selector { metric, labels });
        rest = &tail[consumed..];
    }
    let mut by = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("by (") {
        let body = &rest[at + 4..];
        let close = body.find(')').expect("a closed by clause");
        by.extend(body[..close].split(',').map(|l| l.trim().to_string()));
        rest = &body[close..];
    }
    (selectors, by)
}

/// The family a selector's metric belongs to and the labels it may use (a histogram's
/// `_bucket` adds `le`).
fn family_of<'a>(
    families: &'a BTreeMap<String, BTreeSet<String>>,
    metric: &str,
) -> Option<(&'a String, BTreeSet<String>)> {
    if let Some((name, labels)) = families.get_key_value(metric) {
        return Some((name, labels.clone()));
    }
    for suffix in ["_bucket", "_count", "_sum"] {
        if let Some(base) = metric.strip_suffix(suffix)
            && let Some((name, labels)) = families.get_key_value(base)
        {
            let mut labels = labels.clone();
            if suffix == "_bucket" {
                labels.insert("le".into());
            }
            return Some((name, labels));
        }
    }
    None
}

/// What is wrong with `expr`; and the labels its result carries (its `by` labels, else the
/// labels of its series).
fn check(
    families: &BTreeMap<String, BTreeSet<String>>,
    expr: &str,
) -> Result<BTreeSet<String>, String> {
    let (selectors, by) = parse(expr);
    if selectors.is_empty() {
        return Err(format!("{expr:?} reads no series of the operator"));
    }
    let mut available = BTreeSet::new();
    for selector in &selectors {
        let (_, labels) = family_of(families, &selector.metric)
            .ok_or_else(|| format!("{expr:?}: the operator exports no {}", selector.metric))?;
        for label in &selector.labels {
            if !labels.contains(label) {
                return Err(format!(
                    "{expr:?}: {} has no label {label} (it has {labels:?})",
                    selector.metric
                ));
            }
        }
        available.extend(labels);
    }
    for label in &by {
        if !available.contains(label) {
            return Err(format!("{expr:?}: sums by {label}, which its series lack"));
        }
    }
    Ok(match by.is_empty() {
        true => available,
        false => by.into_iter().collect(),
    })
}

/// The `$labels.x` an annotation prints.
fn printed_labels(text: &str) -> Vec<String> {
    text.split("$labels.")
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

fn enabled() -> Vec<Value> {
    rendered(&[
        "metrics.prometheusRule.enabled=true",
        "metrics.prometheusRule.labels.release=prometheus",
        "metrics.prometheusRule.additionalLabels.team=openstack",
        "metrics.dashboard.enabled=true",
    ])
}

#[test]
fn every_alert_reads_exported_series_and_names_its_runbook() {
    let families = families();
    let objects = enabled();
    let rule = find(&objects, "PrometheusRule", FULLNAME).expect("a PrometheusRule");
    assert_eq!(rule["metadata"]["labels"]["release"], "prometheus");
    let guide = std::fs::read_to_string(workspace_root().join("docs/operating.md")).unwrap();
    let runbooks = anchors(&guide);
    let mut wrong = Vec::new();
    let mut alerts = 0;
    for group in rule["spec"]["groups"].as_array().unwrap() {
        for alert in group["rules"].as_array().unwrap() {
            alerts += 1;
            let name = alert["alert"].as_str().unwrap();
            let expr = alert["expr"].as_str().unwrap();
            let result = match check(&families, expr) {
                Ok(labels) => labels,
                Err(e) => {
                    wrong.push(format!("{name}: {e}"));
                    continue;
                }
            };
            if !["critical", "warning", "info"]
                .contains(&alert["labels"]["severity"].as_str().unwrap_or(""))
            {
                wrong.push(format!("{name}: no severity"));
            }
            if alert["labels"]["team"] != "openstack" {
                wrong.push(format!("{name}: additionalLabels are not applied"));
            }
            for annotation in ["summary", "description", "runbook_url"] {
                let text = alert["annotations"][annotation].as_str().unwrap_or("");
                if text.is_empty() {
                    wrong.push(format!("{name}: no {annotation}"));
                }
                for label in printed_labels(text) {
                    if !result.contains(&label) {
                        wrong.push(format!(
                            "{name}: its {annotation} prints $labels.{label}, which {expr:?} does not carry"
                        ));
                    }
                }
            }
            let runbook = alert["annotations"]["runbook_url"].as_str().unwrap_or("");
            let anchor = runbook.rsplit_once('#').map_or("", |(_, a)| a);
            if !runbook.contains("/docs/operating.md#") || anchor != name.to_lowercase() {
                wrong.push(format!(
                    "{name}: runbook_url {runbook:?} is not docs/operating.md#{}",
                    name.to_lowercase()
                ));
            } else if !runbooks.contains(anchor) {
                wrong.push(format!(
                    "{name}: docs/operating.md has no heading {name} (#{anchor})"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(alerts >= 10, "the alerts are found ({alerts})");
}

#[test]
fn every_dashboard_query_reads_exported_series() {
    let families = families();
    let objects = enabled();
    let map = find(&objects, "ConfigMap", &format!("{FULLNAME}-dashboard")).expect("the dashboard");
    assert_eq!(map["metadata"]["labels"]["grafana_dashboard"], "1");
    let dashboard: Value =
        serde_json::from_str(map["data"]["barbican-operator.json"].as_str().unwrap()).unwrap();
    let mut ids = BTreeSet::new();
    let mut queries = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        assert!(
            ids.insert(panel["id"].as_u64().unwrap()),
            "panel ids are unique"
        );
        for target in panel["targets"].as_array().unwrap() {
            queries += 1;
            let expr = target["expr"].as_str().unwrap();
            if let Err(e) = check(&families, expr) {
                panic!("panel {:?}: {e}", panel["title"]);
            }
        }
    }
    assert!(queries >= 10, "the queries are found ({queries})");
}

#[test]
fn alerts_and_the_dashboard_are_opt_in_and_a_wrong_name_is_caught() {
    let kinds = kinds(&rendered(&[]));
    assert!(!kinds.contains("PrometheusRule"), "{kinds:?}");
    assert!(
        find(
            &rendered(&[]),
            "ConfigMap",
            &format!("{FULLNAME}-dashboard")
        )
        .is_none(),
        "no dashboard by default"
    );
    let families = families();
    for (expr, expected) in [
        (
            "barbican_operator_no_such_total > 0",
            "exports no barbican_operator_no_such_total",
        ),
        (
            "barbican_operator_condition_status{kind=\"Barbican\",type=\"Ready\"} == 0",
            "has no label type",
        ),
        (
            "sum by (store) (rate(barbican_operator_reconcile_errors_total[5m]))",
            "sums by store",
        ),
    ] {
        let found = check(&families, expr);
        assert!(
            found.as_ref().is_err_and(|e| e.contains(expected)),
            "{expr}: {found:?}"
        );
    }
    assert_eq!(
        check(
            &families,
            "histogram_quantile(0.95, sum by (le) (rate(barbican_operator_db_sync_duration_seconds_bucket[1h])))"
        ),
        Ok(BTreeSet::from(["le".to_string()]))
    );
}

/// promtool (`ci/install-promtool.sh` unpacks it from the distribution's prometheus package)
/// checks the rendered rules and runs their unit tests, `alerts.test.yaml` beside this file:
/// pending and firing at the right minute, with the labels and annotations a receiver gets.
/// Without promtool the test says so and passes, unless `CI` is set.
#[test]
fn promtool_accepts_the_rules_and_their_unit_tests_pass() {
    let promtool = workspace_root().join("target/tools/bin/promtool");
    if !promtool.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "in CI: no {} (ci/install-promtool.sh)",
            promtool.display()
        );
        println!("promtool not run: ci/install-promtool.sh installs it");
        return;
    }
    let objects = rendered(&["metrics.prometheusRule.enabled=true"]);
    let rule = find(&objects, "PrometheusRule", FULLNAME).expect("a PrometheusRule");
    let dir = tempfile::Builder::new()
        .prefix("barbican-alerts-")
        .tempdir()
        .unwrap();
    // JSON is YAML: the rule file promtool reads is the PrometheusRule's spec.
    std::fs::write(
        dir.path().join("rules.yaml"),
        serde_json::to_string(&serde_json::json!({"groups": rule["spec"]["groups"]})).unwrap(),
    )
    .unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/chart/alerts.test.yaml"),
        dir.path().join("alerts.test.yaml"),
    )
    .unwrap();
    for args in [
        ["check", "rules", "rules.yaml"],
        ["test", "rules", "alerts.test.yaml"],
    ] {
        let output = std::process::Command::new(&promtool)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "promtool {}:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
