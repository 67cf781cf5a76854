//! Faults on demand, seeded and deterministic: error answers and latency for the requests a
//! rule matches, and the cluster-wide faults (outage, rejected credentials, dropped watches,
//! compaction) that [`Cluster`](crate::Cluster) exposes.
//!
//! A rule is written the same way from Rust (`"verb=create,resource=configmaps,code=500,every=3"
//! .parse::<Fault>()`), on `barbican-sim serve --fault`, and to the control endpoint
//! (`POST /faults` with the rule as the body): comma-separated `key=value` pairs.
//!
//! | key | meaning |
//! |---|---|
//! | `verb` | `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection` (any if unset) |
//! | `resource` | plural, optionally `/status` (`deployments`, `barbicans/status`; any if unset) |
//! | `namespace`, `name` | globs (`*` for any run of characters) |
//! | `agent` | a glob over the client's `User-Agent`, to fault one client and not another |
//! | `code` | answer with this status: 409, 429, 500, 503, 504 or any other error code |
//! | `retry-after` | seconds, sent as `Retry-After` and in the Status details (with 429 or 503) |
//! | `timeout` | wait this long (`5s`, `300ms`), then answer 504 as kube-apiserver's request timeout does |
//! | `latency` | wait this long, then serve the request normally |
//! | `every` | fire on every n-th matching request (the n-th, 2n-th, ...) |
//! | `times` | fire on the first n matching requests only |
//! | `rate` | fire with this probability (0 to 1), drawn from the cluster's seeded generator |
//! | `script` | fire by pattern: `x` fires, `.` passes, one character per matching request; then passes |
//!
//! Without a trigger a rule fires on every matching request.

use std::{str::FromStr, time::Duration};

/// What a rule does to a request it fires on.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Answers with an error Status of this code.
    Status {
        /// The HTTP status code.
        code: u16,
        /// Seconds for `Retry-After`.
        retry_after: Option<u64>,
    },
    /// Waits, then answers 504 `Timeout`.
    Timeout(Duration),
    /// Waits, then serves the request.
    Latency(Duration),
}

/// When a rule fires among the requests it matches.
#[derive(Clone, Debug, PartialEq)]
pub enum Trigger {
    /// On every one.
    Always,
    /// On every n-th.
    Every(u64),
    /// On the first n.
    Times(u64),
    /// With this probability, from the seeded generator.
    Rate(f64),
    /// By pattern, then never.
    Script(Vec<bool>),
}

/// A fault rule.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// The verb it applies to (any if `None`).
    pub verb: Option<String>,
    /// The resource (plural, optionally `/status`) it applies to.
    pub resource: Option<String>,
    /// A glob over the namespace.
    pub namespace: Option<String>,
    /// A glob over the object's name.
    pub name: Option<String>,
    /// A glob over the client's `User-Agent`.
    pub agent: Option<String>,
    /// What it does.
    pub effect: Effect,
    /// When it fires.
    pub trigger: Trigger,
}

/// The verbs a rule may name.
pub const VERBS: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

/// A request, as a rule sees it.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The Kubernetes verb.
    pub verb: &'a str,
    /// Plural, with `/<subresource>` when there is one.
    pub resource: &'a str,
    /// The namespace (empty for cluster-scoped).
    pub namespace: &'a str,
    /// The object's name (empty for collections).
    pub name: &'a str,
    /// The client's `User-Agent` (empty when it sent none).
    pub agent: &'a str,
}

impl Fault {
    fn matches(&self, request: &Request<'_>) -> bool {
        self.verb.as_deref().is_none_or(|v| v == request.verb)
            && self
                .resource
                .as_deref()
                .is_none_or(|r| r == request.resource)
            && self
                .namespace
                .as_deref()
                .is_none_or(|g| crate::selectors::glob_matches(g, request.namespace))
            && self
                .name
                .as_deref()
                .is_none_or(|g| crate::selectors::glob_matches(g, request.name))
            && self
                .agent
                .as_deref()
                .is_none_or(|g| crate::selectors::glob_matches(g, request.agent))
    }
}

impl FromStr for Fault {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut fault = Fault {
            verb: None,
            resource: None,
            namespace: None,
            name: None,
            agent: None,
            effect: Effect::Status {
                code: 0,
                retry_after: None,
            },
            trigger: Trigger::Always,
        };
        let (mut code, mut retry_after, mut effect) = (None, None, None);
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?}: expected key=value"))?;
            let number = |what: &str| {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("{key}={value}: {what}"))
            };
            match key {
                "verb" if VERBS.contains(&value) => fault.verb = Some(value.into()),
                "verb" => {
                    return Err(format!(
                        "verb={value}: allowed verbs are {}",
                        VERBS.join(", ")
                    ));
                }
                "resource" => fault.resource = Some(value.into()),
                "namespace" => fault.namespace = Some(value.into()),
                "name" => fault.name = Some(value.into()),
                "agent" => fault.agent = Some(value.into()),
                "code" => {
                    let c = number("an HTTP status code from 400 to 599")?;
                    if !(400..600).contains(&c) {
                        return Err(format!("code={value}: an HTTP status code from 400 to 599"));
                    }
                    code = Some(c as u16);
                }
                "retry-after" => retry_after = Some(number("whole seconds")?),
                "timeout" => {
                    effect = Some(Effect::Timeout(crate::durations::duration(key, value)?))
                }
                "latency" => {
                    effect = Some(Effect::Latency(crate::durations::duration(key, value)?))
                }
                "every" => fault.trigger = Trigger::Every(number("a count of at least 1")?.max(1)),
                "times" => fault.trigger = Trigger::Times(number("a count")?),
                "rate" => {
                    let r: f64 = value
                        .parse()
                        .ok()
                        .filter(|r| (0.0..=1.0).contains(r))
                        .ok_or_else(|| format!("rate={value}: a probability from 0 to 1"))?;
                    fault.trigger = Trigger::Rate(r);
                }
                "script" if value.chars().all(|c| c == 'x' || c == '.') => {
                    fault.trigger = Trigger::Script(value.chars().map(|c| c == 'x').collect());
                }
                "script" => {
                    return Err(format!(
                        "script={value}: x fires, . passes (for example xx.x)"
                    ));
                }
                other => {
                    return Err(format!(
                        "unknown key {other:?}: allowed are verb, resource, namespace, name, agent, code, retry-after, timeout, latency, every, times, rate, script"
                    ));
                }
            }
        }
        fault.effect = match (code, effect) {
            (Some(_), Some(_)) => {
                return Err("a rule has one effect: code, timeout or latency".into());
            }
            (Some(code), None) => Effect::Status { code, retry_after },
            (None, Some(effect)) => effect,
            (None, None) => {
                return Err(
                    "a rule needs an effect: code=<status>, timeout=<d> or latency=<d>".into(),
                );
            }
        };
        Ok(fault)
    }
}

impl std::fmt::Display for Fault {
    /// The rule in the grammar it is parsed from.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        for (key, value) in [
            ("verb", &self.verb),
            ("resource", &self.resource),
            ("namespace", &self.namespace),
            ("name", &self.name),
            ("agent", &self.agent),
        ] {
            if let Some(v) = value {
                parts.push(format!("{key}={v}"));
            }
        }
        match &self.effect {
            Effect::Status { code, retry_after } => {
                parts.push(format!("code={code}"));
                if let Some(s) = retry_after {
                    parts.push(format!("retry-after={s}"));
                }
            }
            Effect::Timeout(d) => parts.push(format!("timeout={}ms", d.as_millis())),
            Effect::Latency(d) => parts.push(format!("latency={}ms", d.as_millis())),
        }
        match &self.trigger {
            Trigger::Always => {}
            Trigger::Every(n) => parts.push(format!("every={n}")),
            Trigger::Times(n) => parts.push(format!("times={n}")),
            Trigger::Rate(r) => parts.push(format!("rate={r}")),
            Trigger::Script(p) => parts.push(format!(
                "script={}",
                p.iter()
                    .map(|x| if *x { 'x' } else { '.' })
                    .collect::<String>()
            )),
        }
        f.write_str(&parts.join(","))
    }
}

/// The rules in force, with what each has seen.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Vec<(Fault, u64)>,
    rng: u64,
}

impl Faults {
    /// No rules; `rate` draws start from `seed`.
    pub fn seeded(seed: u64) -> Self {
        Self {
            rules: Vec::new(),
            rng: seed,
        }
    }

    /// Adds a rule; the first rule that fires on a request decides.
    pub fn add(&mut self, fault: Fault) {
        self.rules.push((fault, 0));
    }

    /// Removes every rule.
    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// The rules in force.
    pub fn rules(&self) -> impl Iterator<Item = &Fault> {
        self.rules.iter().map(|(f, _)| f)
    }

    /// splitmix64: small, seedable, and the same on every platform.
    fn draw(&mut self) -> f64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The effect on `request`, if a rule fires. Every matching rule counts the request.
    pub fn decide(&mut self, request: &Request<'_>) -> Option<Effect> {
        let mut decided = None;
        for i in 0..self.rules.len() {
            if !self.rules[i].0.matches(request) {
                continue;
            }
            self.rules[i].1 += 1;
            let seen = self.rules[i].1;
            let fires = match &self.rules[i].0.trigger {
                Trigger::Always => true,
                Trigger::Every(n) => seen.is_multiple_of(*n),
                Trigger::Times(n) => seen <= *n,
                Trigger::Script(pattern) => pattern.get(seen as usize - 1) == Some(&true),
                Trigger::Rate(r) => {
                    let r = *r;
                    self.draw() < r
                }
            };
            if fires && decided.is_none() {
                decided = Some(self.rules[i].0.effect.clone());
            }
        }
        decided
    }
}
