//! Tests of `barbican_sim::faults`.

use std::time::Duration;

use barbican_sim::faults::*;

fn request(verb: &'static str, name: &'static str) -> Request<'static> {
    Request {
        verb,
        resource: "configmaps",
        namespace: "default",
        name,
        agent: "barbican-operator",
    }
}

fn fired(faults: &mut Faults, n: usize) -> String {
    (0..n)
        .map(|_| {
            if faults.decide(&request("create", "x")).is_some() {
                'x'
            } else {
                '.'
            }
        })
        .collect()
}

#[test]
fn rules_parse_from_the_documented_grammar() {
    let fault: Fault =
        "verb=create,resource=configmaps,name=barbican-*,code=429,retry-after=2,every=3"
            .parse()
            .unwrap();
    assert_eq!(fault.verb.as_deref(), Some("create"));
    assert_eq!(
        fault.effect,
        Effect::Status {
            code: 429,
            retry_after: Some(2)
        }
    );
    assert_eq!(fault.trigger, Trigger::Every(3));
    assert_eq!(
        "timeout=250ms".parse::<Fault>().unwrap().effect,
        Effect::Timeout(Duration::from_millis(250))
    );
    assert_eq!(
        "latency=2s,script=x.x".parse::<Fault>().unwrap().trigger,
        Trigger::Script(vec![true, false, true])
    );
}

#[test]
fn rules_print_in_the_grammar_they_parse_from() {
    for rule in [
        "verb=create,resource=configmaps,name=b-*,code=429,retry-after=2,every=3",
        "namespace=kube-*,timeout=250ms,script=x.x",
        "latency=2000ms,rate=0.25",
        "code=500,times=1",
        "agent=barbican-*,code=409,rate=0.5",
    ] {
        let fault: Fault = rule.parse().unwrap();
        assert_eq!(fault.to_string(), rule);
        assert_eq!(fault.to_string().parse::<Fault>().unwrap(), fault);
    }
}

#[test]
fn bad_rules_name_the_key_and_what_is_allowed() {
    for (bad, says) in [
        ("verb=explode,code=500", "allowed verbs are"),
        ("code=200", "from 400 to 599"),
        ("code=500,latency=1s", "one effect"),
        ("resource=pods", "needs an effect"),
        ("code=500,rate=2", "probability from 0 to 1"),
        ("code=500,script=xyz", "x fires"),
        ("latency=soon", "ms, s or m"),
        ("colour=red", "unknown key"),
    ] {
        let error = bad.parse::<Fault>().unwrap_err();
        assert!(error.contains(says), "{bad}: {error}");
    }
}

#[test]
fn triggers_fire_deterministically() {
    for (rule, pattern) in [
        ("code=500", "xxxxxx"),
        ("code=500,every=3", "..x..x"),
        ("code=500,times=2", "xx...."),
        ("code=500,script=x..x", "x..x.."),
    ] {
        let mut faults = Faults::seeded(7);
        faults.add(rule.parse().unwrap());
        assert_eq!(fired(&mut faults, 6), pattern, "{rule}");
    }
    let run = |seed| {
        let mut faults = Faults::seeded(seed);
        faults.add("code=500,rate=0.5".parse().unwrap());
        fired(&mut faults, 64)
    };
    assert_eq!(run(42), run(42), "the same seed gives the same faults");
    assert_ne!(run(42), run(43));
    let hits = run(42).matches('x').count();
    assert!((16..=48).contains(&hits), "about half: {hits}");
}

#[test]
fn rules_match_verb_resource_namespace_and_name() {
    let mut faults = Faults::seeded(0);
    faults.add("verb=delete,name=barbican-*,code=500".parse().unwrap());
    assert!(faults.decide(&request("create", "barbican-a")).is_none());
    assert!(faults.decide(&request("delete", "other")).is_none());
    assert!(faults.decide(&request("delete", "barbican-a")).is_some());
    faults.clear();
    faults.add(
        "namespace=kube-*,resource=configmaps,code=503"
            .parse()
            .unwrap(),
    );
    assert!(faults.decide(&request("delete", "barbican-a")).is_none());
    assert!(
        faults
            .decide(&Request {
                namespace: "kube-system",
                ..request("get", "x")
            })
            .is_some()
    );
}

#[test]
fn a_rule_can_fault_one_client_and_spare_another() {
    let mut faults = Faults::seeded(0);
    faults.add("agent=barbican-*,code=500".parse().unwrap());
    assert!(faults.decide(&request("get", "x")).is_some());
    let scenario = Request {
        agent: "scenario",
        ..request("get", "x")
    };
    assert!(faults.decide(&scenario).is_none());
}
