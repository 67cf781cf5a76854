//! What a run measured and how it is read: the report, the request tallies it is made from, and
//! the operator process's peak memory and CPU.

use super::*;

/// Requests by verb and resource.
pub type Requests = BTreeMap<String, u64>;

/// What one run measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// Barbicans created.
    pub barbicans: usize,
    /// The foreign objects beside them.
    pub foreign: Foreign,
    /// Wall seconds from the first create until every Barbican was Ready.
    pub converge_seconds: f64,
    /// The operator's requests until then, as `verb group/resource`.
    pub convergence_requests: Requests,
    /// The steady-state window, in seconds.
    pub steady_seconds: f64,
    /// The operator's requests during it.
    pub steady_requests: Requests,
    /// The operator's writes during convergence, per Barbican.
    pub writes_per_barbican: f64,
    /// The least a Barbican needs: one write per object the operator owns for it, its
    /// finalizer, and one status write for it and for its store.
    pub minimum_writes_per_barbican: f64,
    /// Where the writes above that minimum went, per Barbican, by `group/resource`.
    pub writes_above_minimum_per_barbican: BTreeMap<String, f64>,
    /// The operator's reads until Ready, per Barbican, as `verb resource`, as its own
    /// `barbican_operator_kube_requests_total` counts them.
    pub reads_per_barbican: BTreeMap<String, f64>,
    /// The least reads per Barbican of each verb, and why ([`READ_FLOORS`]).
    pub read_floors: BTreeMap<String, (f64, String)>,
    /// Writes during the steady state.
    pub steady_writes: u64,
    /// Reads other than watches during the steady state (get and list).
    pub steady_non_watch_reads: u64,
    /// How the watch streams ended during convergence, as `group/resource reason` (see
    /// [`barbican_sim::cluster::WatchEndings`]; only the operator watches in this run). An
    /// `expired` ending costs a relist.
    pub convergence_watch_endings: Requests,
    /// How the watch streams ended during the steady state.
    pub steady_watch_endings: Requests,
    /// The writes the operator counted itself (`barbican_operator_kube_requests_total`,
    /// answered ones), which the run checks equal the API server's count.
    pub operator_counted_writes: u64,
    /// The operator's peak resident memory, in MiB (VmHWM).
    pub operator_peak_rss_mib: f64,
    /// The operator's user and system CPU time, in seconds.
    pub operator_cpu_seconds: f64,
}

impl Report {
    /// One line for logs and the README.
    pub fn summary(&self) -> String {
        format!(
            "bench: {} Barbicans{} Ready in {:.1}s; {:.1} writes per Barbican (minimum {:.1}; above it: {}); reads per Barbican (floor 0 each, see read_floors): {}; steady state over {:.0}s: {} writes, {} non-watch reads, {} watches expired; the operator counted {} writes, as the API server did; operator peak RSS {:.1} MiB, {:.1} CPU s",
            self.barbicans,
            self.foreign_summary(),
            self.converge_seconds,
            self.writes_per_barbican,
            self.minimum_writes_per_barbican,
            self.above_summary(),
            self.reads_summary(),
            self.steady_seconds,
            self.steady_writes,
            self.steady_non_watch_reads,
            expired(&self.steady_watch_endings),
            self.operator_counted_writes,
            self.operator_peak_rss_mib,
            self.operator_cpu_seconds
        )
    }
}

impl Report {
    /// The writes above the minimum, largest first, as `1.0 apps/deployments, …`.
    fn above_summary(&self) -> String {
        largest_first(&self.writes_above_minimum_per_barbican)
    }

    /// The reads per Barbican, largest first, as `11.5 get deployments.apps, …`.
    fn reads_summary(&self) -> String {
        largest_first(&self.reads_per_barbican)
    }

    /// ` beside …` naming the foreign objects, or nothing when there are none.
    fn foreign_summary(&self) -> String {
        let f = &self.foreign;
        if f.secrets == 0 && f.deployments == 0 {
            return String::new();
        }
        format!(
            " beside {} foreign Secrets of {} KiB and {} foreign Deployments",
            f.secrets,
            f.secret_bytes / 1024,
            f.deployments
        )
    }
}

/// The figures of 0.05 or more, largest first, as `3.5 barbicans/status, 1.0 /services`;
/// `none` when there are none.
fn largest_first(figures: &BTreeMap<String, f64>) -> String {
    let mut shown: Vec<(&String, &f64)> = figures.iter().filter(|(_, n)| **n >= 0.05).collect();
    shown.sort_by(|a, b| b.1.total_cmp(a.1));
    let text: Vec<String> = shown.iter().map(|(r, n)| format!("{n:.1} {r}")).collect();
    if text.is_empty() {
        "none".to_string()
    } else {
        text.join(", ")
    }
}

/// The watch endings between two counts, as `group/resource reason`.
pub(super) fn watch_endings_between(before: &WatchEndings, after: &WatchEndings) -> Requests {
    growth(before, after)
        .map(|((resource, reason), n)| (format!("{resource} {reason}"), n))
        .collect()
}

/// How many watches had to list again (their resourceVersion was past the history).
pub(super) fn expired(endings: &Requests) -> u64 {
    total(endings, |key| key.ends_with(" expired"))
}

/// The counts that grew from `before` to `after`, by how much.
pub(super) fn growth<'a, K: Ord>(
    before: &'a BTreeMap<K, u64>,
    after: &'a BTreeMap<K, u64>,
) -> impl Iterator<Item = (&'a K, u64)> {
    after.iter().filter_map(|(key, count)| {
        let earlier = before.get(key).copied().unwrap_or(0);
        (*count > earlier).then(|| (key, count - earlier))
    })
}

/// The sum of the counts whose key `keep` selects.
pub(super) fn total(requests: &Requests, keep: impl Fn(&str) -> bool) -> u64 {
    requests
        .iter()
        .filter(|(key, _)| keep(key))
        .map(|(_, n)| n)
        .sum()
}

/// Whether a user agent is the operator's: everything but the bench's own client and the
/// fakes'.
pub(super) fn is_operators(agent: &str) -> bool {
    agent != AGENT && agent != "fakes"
}

/// The operator's requests other than watches, one per line; a write is followed by the
/// start of its body. (The audit log keeps the last 20,000 requests of every client.)
pub(super) fn steady_log(entries: &[Entry]) -> String {
    let mut text = String::new();
    for entry in entries {
        if !is_operators(&entry.user_agent) || entry.is_watch() {
            continue;
        }
        text.push_str(&format!("{entry}\n"));
        if entry.is_write() && !entry.body.is_empty() {
            text.push_str(&format!("    {}\n", entry.body.replace('\n', " ")));
        }
    }
    text
}

/// Whether a request key (`verb group/resource`) is a write.
pub(super) fn is_write(key: &str) -> bool {
    [
        "create ",
        "update ",
        "patch ",
        "delete ",
        "deletecollection ",
    ]
    .iter()
    .any(|verb| key.starts_with(verb))
}

/// The operator's requests between two tallies, as `verb group/resource`.
pub(super) fn operator_requests(before: &Tally, after: &Tally) -> Requests {
    let mut out = Requests::new();
    for ((agent, verb, resource), n) in growth(before, after) {
        if is_operators(agent) {
            *out.entry(format!("{verb} {resource}")).or_default() += n;
        }
    }
    out
}

/// The requests an operator's `/metrics` page counts in `barbican_operator_kube_requests_total`,
/// as (verb, resource, code, count).
pub(super) fn counted_requests(metrics: &str) -> Vec<(String, String, String, u64)> {
    metrics
        .lines()
        .filter_map(|line| line.strip_prefix("barbican_operator_kube_requests_total{"))
        .filter_map(|rest| rest.split_once("} "))
        .filter_map(|(labels, value)| {
            let label = |name: &str| {
                labels
                    .split(',')
                    .find_map(|l| l.strip_prefix(&format!("{name}=\"")))
                    .map(|v| v.trim_end_matches('"').to_string())
            };
            let count = value.trim().parse::<f64>().ok()? as u64;
            Some((label("verb")?, label("resource")?, label("code")?, count))
        })
        .collect()
}

/// The answered writes an operator's `/metrics` page counts in
/// `barbican_operator_kube_requests_total` (code a status, not `timeout` or `error`).
pub(super) fn counted_writes(metrics: &str) -> u64 {
    counted_requests(metrics)
        .into_iter()
        .filter(|(verb, _, code, _)| {
            is_write(&format!("{verb} ")) && code.chars().all(|c| c.is_ascii_digit())
        })
        .map(|(_, _, _, n)| n)
        .sum()
}

/// The reads an operator's `/metrics` page counts, per Barbican, as `verb resource` (every
/// answer counted: a 404 is a read too).
pub(super) fn counted_reads_per_barbican(metrics: &str, n: f64) -> BTreeMap<String, f64> {
    let mut reads = BTreeMap::<String, f64>::new();
    for (verb, resource, _, count) in counted_requests(metrics) {
        if READ_FLOORS.iter().any(|(v, _, _)| *v == verb) {
            *reads.entry(format!("{verb} {resource}")).or_default() += count as f64 / n;
        }
    }
    reads
}

/// The least reads per Barbican a convergence needs, by verb, and why.
pub const READ_FLOORS: [(&str, f64, &str); 3] = [
    (
        "get",
        0.0,
        "every object a pass reads is in a watch cache, or is the answer to the operator's own write; a GET reads only what no cache holds",
    ),
    (
        "list",
        0.0,
        "one per watched kind when a watch starts or expires: per operator, not per Barbican",
    ),
    (
        "watch",
        0.0,
        "one per watched kind, renewed on its timeout: per operator, not per Barbican",
    ),
];

pub(super) fn writes(requests: &Requests) -> u64 {
    total(requests, is_write)
}

pub(super) fn non_watch_reads(requests: &Requests) -> u64 {
    total(requests, |key| {
        key.starts_with("get ") || key.starts_with("list ")
    })
}

/// The operator's peak RSS (MiB) and CPU seconds, from `/proc`.
pub(super) fn process_figures(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let peak_kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which may hold spaces) start after the last ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name and state.
    let cpu = (ticks(11) + ticks(12)) / 100.0;
    (peak_kib / 1024.0, cpu)
}
