//! Tests of `barbican_features::soak`.

use std::collections::BTreeSet;
use std::time::Duration;

use barbican_features::examples;
use barbican_features::soak::*;

#[test]
fn a_seed_fixes_its_schedule_and_seeds_differ() {
    let span = Duration::from_secs(900);
    assert_eq!(schedule(7, span, &[]), schedule(7, span, &[]));
    assert_ne!(schedule(7, span, &[]), schedule(8, span, &[]));
    let plan = schedule(7, span, &[]);
    assert_eq!(
        plan.last().map(|(at, a)| (*at, a.clone())),
        Some((span, Action::Repair))
    );
    assert!(plan.windows(2).all(|w| w[0].0 <= w[1].0), "ordered by time");
}

#[test]
fn the_schedules_cover_every_kind_of_fault() {
    let mut seen = BTreeSet::new();
    for seed in 0..20 {
        for (_, action) in schedule(seed, Duration::from_secs(900), &[]) {
            let kind = format!("{action:?}");
            seen.insert(kind.split('(').next().unwrap_or_default().to_string());
        }
    }
    for kind in [
        "ApiFault",
        "ClearApiFaults",
        "DropWatches",
        "Compact",
        "RestartOperator",
        "OpenBaoDown",
        "ExternalOpenBaoDown",
        "RevokeSecretId",
        "JobsFail",
        "MariaDbDown",
        "TargetDown",
        "ReleaseBump",
        "DefaultOff",
        "Detach",
        "UrlEdit",
        "Repair",
    ] {
        assert!(seen.contains(kind), "no schedule has {kind}: {seen:?}");
    }
}

#[test]
fn the_url_edit_undoes_to_the_examples_own_url() {
    let example = examples::example("barbicansecretstore-brownfield.yaml").unwrap();
    assert!(example.contains(&format!("name: {BROWNFIELD_STORE}")));
    assert!(example.contains(&format!("url: {BROWNFIELD_URL}")));
    assert_ne!(url_port(UNSERVED_URL), url_port(BROWNFIELD_URL));
}

#[test]
fn a_release_is_bumped_at_most_once_per_seed() {
    for seed in 0..50 {
        let bumps: Vec<_> = schedule(seed, Duration::from_secs(3600), &[])
            .into_iter()
            .filter_map(|(_, a)| match a {
                Action::ReleaseBump(ns) => Some(ns),
                _ => None,
            })
            .collect();
        let distinct: BTreeSet<_> = bumps.iter().collect();
        assert_eq!(distinct.len(), bumps.len(), "seed {seed}: {bumps:?}");
    }
}

#[test]
fn ports_come_from_the_url_or_its_scheme() {
    assert_eq!(url_port("https://vault.example.com:8200"), Some(8200));
    assert_eq!(url_port("https://openbao.openbao.svc/v1"), Some(443));
    assert_eq!(url_port("http://openbao:80/x"), Some(80));
    assert_eq!(url_port("http://openbao"), Some(80));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_seeds_converge_with_no_violation() {
    let options = Options {
        faults_for: Duration::from_secs(8 * 60),
        ..Options::default()
    };
    for seed in [1, 2] {
        let report = run_seed(seed, &options).await.unwrap();
        assert!(
            report.violations.is_empty(),
            "seed {seed}:\n{}\nschedule:\n{}",
            report
                .violations
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            report.schedule.join("\n")
        );
        assert!(report.converged_after.is_some());
        assert!(report.schedule.len() > 5, "{:?}", report.schedule);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_injected_bug_is_caught_with_its_seed() {
    let options = Options {
        faults_for: Duration::from_secs(4 * 60),
        sabotage: Sabotage::ALL.to_vec(),
        ..Options::default()
    };
    let report = run_seed(11, &options).await.unwrap();
    for sabotage in Sabotage::ALL {
        let invariant = sabotage.caught_by();
        assert!(
            report
                .violations
                .iter()
                .any(|v| v.invariant == invariant && v.seed == 11),
            "{sabotage:?} was not caught as {invariant:?}: {:#?}",
            report.violations
        );
    }
}
