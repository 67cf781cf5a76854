//! The rules of `validate_barbican`, one test per rule or family.

use serde_json::{Value, json};

use super::*;
use crate::{
    admission::lookups::KnownState,
    api::fixtures::{minimal_barbican, with_spec},
};

fn barbican(spec_patch: Value) -> Barbican {
    serde_json::from_value(with_spec(minimal_barbican(), &spec_patch)).unwrap()
}

fn fields(verdict: &Verdict) -> Vec<&str> {
    verdict
        .violations
        .iter()
        .map(|v| v.field.as_str())
        .collect()
}

/// One row: a spec patch and the field paths it must be refused on (empty: admitted).
fn check(rows: &[(Value, &[&str])]) {
    for (patch, expected) in rows {
        let verdict = validate_barbican(
            Operation::Create,
            None,
            &barbican(patch.clone()),
            &KnownState::default(),
        );
        assert_eq!(
            fields(&verdict),
            *expected,
            "{patch}: {}",
            verdict.message()
        );
    }
}

#[test]
fn the_minimal_barbican_is_admitted() {
    assert!(
        validate_barbican(
            Operation::Create,
            None,
            &barbican(json!({})),
            &KnownState::default()
        )
        .allowed()
    );
}

#[test]
fn five_independent_mistakes_are_all_named_at_once() {
    let verdict = validate_barbican(
        Operation::Create,
        None,
        &barbican(json!({
            "image": {"digest": format!("sha256:{}", "0".repeat(64))},
            "database": {"host": "db.example.com", "clusterRef": {"name": "db"}},
            "keystoneEndpoint": "https://",
            "region": "RegionOne\n[DEFAULT]\nhost_href = evil",
            "deployment": {"preStopSleepSeconds": 40}
        })),
        &KnownState::default(),
    );
    assert_eq!(
        fields(&verdict),
        [
            "spec.image",
            "spec.database",
            "spec.keystoneEndpoint",
            "spec.region",
            "spec.deployment.preStopSleepSeconds"
        ],
        "{}",
        verdict.message()
    );
    assert!(
        !verdict.message().contains("evil"),
        "an injected line is never echoed back"
    );
}

#[test]
fn shape_rules() {
    check(&[
        (
            json!({"deployment": {"replicas": 0}}),
            &["spec.deployment.replicas"],
        ),
        (json!({"image": {"tag": null}}), &["spec.image"]),
        (json!({"database": {"clusterRef": null, "host": "db"}}), &[]),
        (
            json!({"database": {"clusterRef": null, "host": "db", "credentialsMode": "Dynamic"}}),
            &["spec.database.credentialsMode"],
        ),
        (
            json!({"cache": {"clusterRef": null, "servers": ["mc:11211"]}}),
            &[],
        ),
        (
            json!({"cache": {"clusterRef": null, "servers": []}}),
            &["spec.cache"],
        ),
        (
            json!({"cache": {"clusterRef": null, "servers": ["mc:11211\nx"]}}),
            &["spec.cache.servers[0]"],
        ),
        (
            json!({"cache": {"clusterRef": {"name": "mc\r"}}}),
            &["spec.cache.clusterRef.name"],
        ),
        (
            json!({"networkPolicy": {"ingress": []}}),
            &["spec.networkPolicy.ingress"],
        ),
        (
            json!({"gateway": {"hostname": "", "parentRef": {"name": ""}}}),
            &["spec.gateway.hostname", "spec.gateway.parentRef.name"],
        ),
        (
            json!({"gateway": {"hostname": "b.example.com\n", "parentRef": {"name": "gw"}}}),
            &["spec.gateway.hostname"],
        ),
        (
            json!({"dbClean": {"retentionDays": 0}}),
            &["spec.dbClean.retentionDays"],
        ),
        (json!({"dbClean": {"retentionDays": 1}}), &[]),
    ]);
}

#[test]
fn the_messaging_audit_driver_and_only_it_names_a_transport_url_secret() {
    let field = "spec.audit.transportUrlSecretRef";
    check(&[
        (json!({"audit": {}}), &[]),
        (json!({"audit": {"driver": "log"}}), &[]),
        (
            json!({"audit": {"driver": "messaging", "transportUrlSecretRef": {"name": "rabbit"}}}),
            &[],
        ),
        (json!({"audit": {"driver": "messaging"}}), &[field]),
        (
            json!({"audit": {"transportUrlSecretRef": {"name": "rabbit"}}}),
            &[field],
        ),
        (
            json!({"audit": {"driver": "log", "transportUrlSecretRef": {"name": "rabbit"}}}),
            &[field],
        ),
    ]);
}

#[test]
fn the_catalog_registration_needs_url_shaped_endpoints_and_a_region_id() {
    let catalog = |c: Value| json!({"keystone": {"catalog": c}});
    check(&[
        (json!({"keystone": {}}), &[]),
        (catalog(json!({})), &[]),
        (
            catalog(
                json!({"region": "RegionTwo", "publicUrl": "https://kms.example.com",
                "internalUrl": "http://barbican.openstack.svc:9311"}),
            ),
            &[],
        ),
        (
            catalog(json!({"publicUrl": "kms.example.com"})),
            &["spec.keystone.catalog.publicUrl"],
        ),
        (
            catalog(json!({"internalUrl": "http://user:pw@kms:9311"})),
            &["spec.keystone.catalog.internalUrl"],
        ),
        (
            catalog(json!({"region": "Region One/.."})),
            &["spec.keystone.catalog.region"],
        ),
    ]);
    // spec.region stands in for the catalog's region, and is checked as one only then.
    let spaced = json!({"region": "Region One"});
    check(&[(spaced.clone(), &[])]);
    let mut with_catalog = spaced;
    with_catalog["keystone"] = json!({"catalog": {}});
    check(&[(with_catalog, &["spec.region"])]);
}

#[test]
fn keystone_urls_need_a_scheme_and_a_host() {
    check(&[
        (
            json!({"keystoneEndpoint": "https://keystone.example.com"}),
            &[],
        ),
        (json!({"keystoneEndpoint": "http://[fd00::1]:5000/v3"}), &[]),
        (
            json!({"keystoneEndpoint": "keystone:5000"}),
            &["spec.keystoneEndpoint"],
        ),
        (
            json!({"keystoneEndpoint": "http://:5000/v3"}),
            &["spec.keystoneEndpoint"],
        ),
        (
            json!({"keystoneEndpoint": "http://keystone:port/v3"}),
            &["spec.keystoneEndpoint"],
        ),
        (
            json!({"keystonePublicEndpoint": "https://"}),
            &["spec.keystonePublicEndpoint"],
        ),
    ]);
}

#[test]
fn identity_fields_refuse_line_breaks() {
    check(&[
        (
            json!({"serviceUser": {"username": "a\nb"}}),
            &["spec.serviceUser.username"],
        ),
        (
            json!({"serviceUser": {"projectName": "a\rb"}}),
            &["spec.serviceUser.projectName"],
        ),
        (
            json!({"serviceUser": {"userDomainName": "a\nb"}}),
            &["spec.serviceUser.userDomainName"],
        ),
        (
            json!({"serviceUser": {"projectDomainName": "a\nb"}}),
            &["spec.serviceUser.projectDomainName"],
        ),
        (
            json!({"serviceUser": {"username": "key-manager"}, "region": "RegionTwo"}),
            &[],
        ),
    ]);
}

#[test]
fn logging_levels_per_logger() {
    check(&[
        (
            json!({"logging": {"perLoggerLevels": {"sqlalchemy": "WARNING"}}}),
            &[],
        ),
        (
            json!({"logging": {"perLoggerLevels": {"sqlalchemy": "LOUD"}}}),
            &["spec.logging.perLoggerLevels[sqlalchemy]"],
        ),
        (
            json!({"logging": {"perLoggerLevels": {"": "INFO"}}}),
            &["spec.logging.perLoggerLevels"],
        ),
    ]);
}

#[test]
fn graceful_termination_arithmetic() {
    check(&[
        (json!({"deployment": {"preStopSleepSeconds": 29}}), &[]),
        (
            json!({"deployment": {"preStopSleepSeconds": 30}}),
            &["spec.deployment.preStopSleepSeconds"],
        ),
        (
            json!({"deployment": {"terminationGracePeriodSeconds": 5}}),
            &["spec.deployment.preStopSleepSeconds"],
        ),
        (json!({"apiServer": {"uwsgi": {"harakiri": 24}}}), &[]),
        (
            json!({"apiServer": {"uwsgi": {"harakiri": 25}}}),
            &["spec.apiServer.uwsgi.harakiri"],
        ),
        (
            json!({"deployment": {"terminationGracePeriodSeconds": 60, "preStopSleepSeconds": 10}, "apiServer": {"uwsgi": {"harakiri": 49}}}),
            &[],
        ),
    ]);
}

#[test]
fn keepalive_and_strategy_pairings() {
    check(&[
        (
            json!({"apiServer": {"uwsgi": {"httpKeepAliveTimeout": 10}}}),
            &[],
        ),
        (
            json!({"apiServer": {"uwsgi": {"httpKeepAlive": false, "httpKeepAliveTimeout": 10}}}),
            &["spec.apiServer.uwsgi.httpKeepAliveTimeout"],
        ),
        (
            json!({"deployment": {"strategy": {"type": "Recreate"}}}),
            &[],
        ),
        (
            json!({"deployment": {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}}),
            &["spec.deployment.strategy.rollingUpdate"],
        ),
    ]);
}

#[test]
fn autoscaling_bounds_use_the_implicit_min_replicas() {
    check(&[
        (
            json!({"autoscaling": {"maxReplicas": 5, "targetCPUUtilization": 80}}),
            &[],
        ),
        (
            json!({"autoscaling": {"maxReplicas": 5}}),
            &["spec.autoscaling"],
        ),
        (
            json!({"autoscaling": {"minReplicas": 6, "maxReplicas": 5, "targetCPUUtilization": 80}}),
            &["spec.autoscaling.minReplicas"],
        ),
        // deployment.replicas defaults to 3, above maxReplicas 2.
        (
            json!({"autoscaling": {"maxReplicas": 2, "targetMemoryUtilization": 80}}),
            &["spec.autoscaling.minReplicas (defaulted from spec.deployment.replicas)"],
        ),
    ]);
}

#[test]
fn policy_rules_need_names_and_values() {
    check(&[
        (
            json!({"policyOverrides": {"rules": {"secrets:get": "role:admin"}}}),
            &[],
        ),
        (json!({"policyOverrides": {}}), &["spec.policyOverrides"]),
        (
            json!({"policyOverrides": {"rules": {"secrets:get": ""}}}),
            &["spec.policyOverrides.rules[secrets:get]"],
        ),
        (
            json!({"policyOverrides": {"rules": {"": "role:admin"}}}),
            &["spec.policyOverrides.rules"],
        ),
    ]);
}

#[test]
fn the_name_bound_applies_on_create_only() {
    let mut long = barbican(json!({}));
    long.metadata.name = Some("b".repeat(44));
    let created = validate_barbican(Operation::Create, None, &long, &KnownState::default());
    assert_eq!(fields(&created), ["metadata.name"]);
    let updated = validate_barbican(
        Operation::Update,
        Some(&long),
        &long,
        &KnownState::default(),
    );
    assert!(updated.allowed(), "{}", updated.message());
    long.metadata.name = Some("b".repeat(43));
    assert!(validate_barbican(Operation::Create, None, &long, &KnownState::default()).allowed());
}

#[test]
fn target_cluster_ref_is_immutable_with_the_reason_appended() {
    let local = barbican(json!({}));
    let east = barbican(json!({"targetClusterRef": {"name": "east"}}));
    let west = barbican(json!({"targetClusterRef": {"name": "west"}}));
    assert!(
        validate_barbican(
            Operation::Update,
            Some(&east),
            &east,
            &KnownState::default()
        )
        .allowed()
    );
    for (old, new) in [(&local, &east), (&east, &local), (&east, &west)] {
        let verdict = validate_barbican(Operation::Update, Some(old), new, &KnownState::default());
        assert_eq!(fields(&verdict), ["spec.targetClusterRef"]);
        assert!(
            verdict
                .message()
                .contains("targetClusterRef is immutable: changing it would strand"),
            "{}",
            verdict.message()
        );
    }
}

fn with_lookups(patch: Value, lookups: &KnownState) -> Verdict {
    validate_barbican(Operation::Create, None, &barbican(patch), lookups)
}

#[test]
fn db_clean_schedule_uses_the_kubernetes_cron_grammar() {
    check(&[
        (json!({"dbClean": {"schedule": "@daily"}}), &[]),
        (json!({"dbClean": {"schedule": "30 2 * * SUN"}}), &[]),
        (
            json!({"dbClean": {"schedule": "0 0 * * * *"}}),
            &["spec.dbClean.schedule"],
        ),
        (
            json!({"dbClean": {"schedule": "0 0 L * *"}}),
            &["spec.dbClean.schedule"],
        ),
    ]);
}

#[test]
fn secret_store_ref_names_a_dns_subdomain() {
    check(&[
        (
            json!({"secretStoreRef": {"name": "openbao-cluster-store"}}),
            &[],
        ),
        (
            json!({"secretStoreRef": {"kind": "SecretStore", "name": "Tenant_Store"}}),
            &["spec.secretStoreRef.name"],
        ),
        (
            json!({"secretStoreRef": {"name": ""}}),
            &["spec.secretStoreRef.name"],
        ),
    ]);
}

#[test]
fn requests_may_not_exceed_limits() {
    check(&[
        (
            json!({"deployment": {"resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}}}),
            &[],
        ),
        (
            json!({"deployment": {"resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "512Mi"}}}}),
            &["spec.deployment.resources.requests.memory"],
        ),
        (
            json!({"deployment": {"resources": {"requests": {"cpu": "2"}}}}),
            &[],
        ),
    ]);
}

#[test]
fn the_priority_class_must_exist() {
    let known = KnownState {
        priority_classes: vec!["openstack-control-plane".into()],
        ..Default::default()
    };
    let patch = |name: &str| json!({"deployment": {"priorityClassName": name}});
    assert!(with_lookups(patch("openstack-control-plane"), &known).allowed());
    let missing = with_lookups(patch("openstack-contrl-plane"), &known);
    assert_eq!(fields(&missing), ["spec.deployment.priorityClassName"]);
    assert!(
        missing
            .message()
            .contains("no PriorityClass of that name exists")
    );
    let down = KnownState {
        unavailable: Some("the server is unavailable".into()),
        ..Default::default()
    };
    let unknown = with_lookups(patch("openstack-control-plane"), &down);
    assert!(
        unknown
            .message()
            .contains("could not check that the PriorityClass exists: the server is unavailable")
    );
}

#[test]
fn topology_spread_selectors_must_select_this_barbicans_api_pods() {
    let constraint = |selector: Value| {
        let mut c = json!({"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"});
        if !selector.is_null() {
            c["labelSelector"] = selector;
        }
        json!({"deployment": {"topologySpreadConstraints": [c]}})
    };
    let field: &[&str] = &["spec.deployment.topologySpreadConstraints[0].labelSelector"];
    check(&[
        (
            constraint(
                json!({"matchLabels": {"app.kubernetes.io/name": "barbican", "app.kubernetes.io/instance": "barbican"}}),
            ),
            &[],
        ),
        (
            constraint(
                json!({"matchLabels": {"app.kubernetes.io/name": "barbican", "app.kubernetes.io/instance": "barbican"},
                "matchExpressions": [{"key": "app.kubernetes.io/component", "operator": "In", "values": ["api"]}]}),
            ),
            &[],
        ),
        (
            constraint(json!({"matchLabels": {"app.kubernetes.io/name": "barbican"}})),
            field,
        ),
        (
            constraint(
                json!({"matchLabels": {"app.kubernetes.io/name": "barbican", "app.kubernetes.io/instance": "other"}}),
            ),
            field,
        ),
        (
            constraint(
                json!({"matchLabels": {"app.kubernetes.io/name": "barbican", "app.kubernetes.io/instance": "barbican"},
                "matchExpressions": [{"key": "app.kubernetes.io/component", "operator": "In", "values": ["db-clean"]}]}),
            ),
            field,
        ),
        (constraint(Value::Null), field),
        (
            json!({"deployment": {"topologySpreadConstraints": []}}),
            &[],
        ),
    ]);
}

#[test]
fn extra_config_guards_names_line_breaks_and_the_three_credentials() {
    check(&[
        (json!({"extraConfig": {"DEFAULT": {"debug": "true"}}}), &[]),
        (
            json!({"extraConfig": {"": {"debug": "true"}}}),
            &["spec.extraConfig"],
        ),
        (
            json!({"extraConfig": {"DEFAULT": {"": "true"}}}),
            &["spec.extraConfig[DEFAULT]"],
        ),
        (
            json!({"extraConfig": {"DEFAULT\n[x]": {"debug": "true"}}}),
            &["spec.extraConfig"],
        ),
        (
            json!({"extraConfig": {"DEFAULT": {"debug": "true\nhost_href = x"}}}),
            &["spec.extraConfig[DEFAULT]"],
        ),
        (
            json!({"extraConfig": {"keystone_authtoken": {"password": "hunter2"}}}),
            &["spec.extraConfig[keystone_authtoken][password]"],
        ),
        (
            json!({"extraConfig": {"vault_plugin": {"approle_secret_id": "x"}}}),
            &["spec.extraConfig[vault_plugin][approle_secret_id]"],
        ),
        (
            json!({"extraConfig": {"vault_plugin": {"root_token_id": "x"}}}),
            &["spec.extraConfig[vault_plugin][root_token_id]"],
        ),
        // Other owned keys are honoured (and reported by the controller), not refused.
        (
            json!({"extraConfig": {"database": {"connection": "mysql+pymysql://x"}, "DEFAULT": {"host_href": "https://x"}}}),
            &[],
        ),
        (
            json!({"extraConfig": {"DEFAULT": {"no_such_option": "1"}}}),
            &["spec.extraConfig[DEFAULT][no_such_option]"],
        ),
        (
            json!({"extraConfig": {"secretstore:openbao-primary": {"anything": "1"}}}),
            &[],
        ),
    ]);
    let verdict = validate_barbican(
        Operation::Create,
        None,
        &barbican(json!({"extraConfig": {"keystone_authtoken": {"password": "hunter2"}}})),
        &KnownState::default(),
    );
    assert!(
        !verdict.message().contains("hunter2"),
        "a credential is never echoed"
    );
    assert!(
        verdict
            .message()
            .contains("OS_KEYSTONE_AUTHTOKEN__PASSWORD"),
        "{}",
        verdict.message()
    );
}

#[test]
fn plugins_and_extra_config_are_bounded_as_the_schema_bounds_them() {
    let many = |n: usize| {
        (0..n)
            .map(|i| (format!("o{i}"), json!("v")))
            .collect::<serde_json::Map<_, _>>()
    };
    let sections = (0..65)
        .map(|i| (format!("section_{i}"), json!({})))
        .collect::<serde_json::Map<_, _>>();
    // 33 spellings of one plugin section (the list-map keys differ, oslo.config reads one).
    let spelling = |i: usize| -> String {
        "vault_plugin"
            .chars()
            .enumerate()
            .map(|(bit, c)| {
                if i >> bit & 1 == 1 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect()
    };
    let plugins: Vec<Value> = (0..33)
        .map(|i| json!({"name": "p", "configSection": spelling(i)}))
        .collect();
    check(&[
        (
            json!({"extraConfig": {"DEFAULT": {"debug": "x".repeat(4096)}}}),
            &[],
        ),
        (
            json!({"extraConfig": {"DEFAULT": {"debug": "x".repeat(4097)}}}),
            &["spec.extraConfig[DEFAULT][debug]"],
        ),
        (
            // A store's section: the catalog leaves its option names alone.
            json!({"extraConfig": {"secretstore:bounded": many(129)}}),
            &["spec.extraConfig[secretstore:bounded]"],
        ),
        (json!({"extraConfig": sections}), &["spec.extraConfig"]),
        (json!({"plugins": plugins}), &["spec.plugins"]),
        (
            json!({"plugins": [{"name": "p", "configSection": "s", "config": many(129)}]}),
            &["spec.plugins[0].config", "spec.plugins[0].configSection"],
        ),
    ]);
}

#[test]
fn the_catalog_re_runs_on_update_only_when_its_inputs_change() {
    let stale = barbican(json!({"extraConfig": {"DEFAULT": {"no_such_option": "1"}}}));
    let mut scaled = stale.clone();
    scaled.spec.deployment = Some(serde_json::from_value(json!({"replicas": 5})).unwrap());
    assert!(
        validate_barbican(
            Operation::Update,
            Some(&stale),
            &scaled,
            &KnownState::default()
        )
        .allowed()
    );
    let mut bumped = scaled.clone();
    bumped.spec.open_stack_release = "2026.1".into();
    bumped.spec.image.tag = Some("2026.1".into());
    let verdict = validate_barbican(
        Operation::Update,
        Some(&stale),
        &bumped,
        &KnownState::default(),
    );
    assert_eq!(
        fields(&verdict),
        ["spec.extraConfig[DEFAULT][no_such_option]"]
    );
}

#[test]
fn an_unknown_release_is_admitted_with_a_warning() {
    let verdict = with_lookups(
        json!({"openStackRelease": "2030.1", "extraConfig": {"DEFAULT": {"x": "1"}}}),
        &KnownState::default(),
    );
    assert!(verdict.allowed(), "{}", verdict.message());
    assert!(
        verdict
            .warnings
            .iter()
            .any(|w| w.contains("no option catalog is embedded for OpenStack release 2030.1"))
    );
}

#[test]
fn warnings_name_what_a_clean_up_deletes() {
    let brownfield = barbican(json!({"database": {"clusterRef": null, "host": "db.example.com"}}));
    let created = validate_barbican(Operation::Create, None, &brownfield, &KnownState::default());
    assert!(created.allowed());
    assert_eq!(created.warnings.len(), 1);
    assert!(
        created.warnings[0].contains("brownfield database"),
        "{:?}",
        created.warnings
    );
    let staged = barbican(
        json!({"database": {"clusterRef": null, "host": "db"}, "dbClean": {"suspend": true}}),
    );
    assert!(
        validate_barbican(Operation::Create, None, &staged, &KnownState::default())
            .warnings
            .is_empty()
    );
    assert!(
        validate_barbican(
            Operation::Create,
            None,
            &barbican(json!({})),
            &KnownState::default()
        )
        .warnings
        .is_empty()
    );

    let before = barbican(json!({}));
    let lowered = barbican(json!({"dbClean": {"retentionDays": 30}}));
    let update = validate_barbican(
        Operation::Update,
        Some(&before),
        &lowered,
        &KnownState::default(),
    );
    assert!(update.allowed());
    assert_eq!(update.warnings.len(), 1);
    assert!(
        update.warnings[0].contains("drops from 90 to 30"),
        "{:?}",
        update.warnings
    );
    let raised = validate_barbican(
        Operation::Update,
        Some(&lowered),
        &before,
        &KnownState::default(),
    );
    assert!(raised.warnings.is_empty());
}

#[test]
fn the_finalizer_release_of_a_deleting_barbican_is_admitted() {
    let known = KnownState::default();
    // Admitted while its PriorityClass existed; the class is gone now.
    let old = barbican(json!({"deployment": {"priorityClassName": "gone"}}));
    let mut releasing = old.clone();
    default_barbican(&mut releasing.spec);
    releasing.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Default::default()),
    );
    assert!(validate_barbican(Operation::Update, Some(&old), &releasing, &known).allowed());
    // A deleting CR whose spec changes is still validated.
    let mut edited = releasing.clone();
    edited.spec.region = Some("RegionTwo".into());
    assert_eq!(
        fields(&validate_barbican(
            Operation::Update,
            Some(&old),
            &edited,
            &known
        )),
        ["spec.deployment.priorityClassName"]
    );
}

/// A refused section or option name is refused alone: the option checks quote the names, and a
/// name holding "; " (which separates violations in the message) would split one violation in
/// two (found by render_properties' generated specs: a plugin section "=; " with a
/// transport_url carrying credentials).
#[test]
fn a_refused_name_is_refused_alone_and_never_quoted_into_another_violation() {
    check(&[
        (
            json!({"plugins": [{"name": "p", "configSection": "=; ", "config": {"transport_url": "rabbit://u:p@h"}}]}),
            &["spec.plugins[0].configSection"],
        ),
        (
            json!({"extraConfig": {"DEFAULT": {"a; b_url": "https://u:p@h"}}}),
            &["spec.extraConfig[DEFAULT]"],
        ),
        (
            json!({"plugins": [{"name": "p", "configSection": "vault_plugin", "config": {"a; b_url": "https://u:p@h"}}]}),
            &["spec.plugins[0].config"],
        ),
    ]);
}
