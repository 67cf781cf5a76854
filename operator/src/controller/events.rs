//! Kubernetes Events about the CRs, stamped by the operator's [`Clock`] so a scenario on
//! virtual time reads them in its own time line.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::{
    api::{core::v1::ObjectReference, events::v1::Event},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
};
use kube::{
    Api, Client, Resource, ResourceExt,
    api::{Patch, PatchParams, PostParams},
};

use crate::{
    api::conditions::{EventReason, Reason},
    clock::Clock,
};

/// How long after its last occurrence an event that happens again joins its series instead of
/// being created anew (a stuck CR that repeats an event every 30 s makes one Event).
pub const SERIES_WINDOW: Duration = Duration::from_secs(30 * 60);
/// How often a series' count is written back at most (its second occurrence always is).
pub const SERIES_WRITE_INTERVAL: Duration = Duration::from_secs(5 * 60);
/// The most series remembered; past it the oldest are forgotten.
pub const MAX_SERIES: usize = 4096;

/// What one series of isomorphic events holds: the Event written for it, how often it
/// happened, and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Series {
    /// The name of the Event written for the series.
    pub event: String,
    /// How many times it happened.
    pub count: i32,
    /// When it last happened.
    pub last_seen: Timestamp,
    /// When the count was last written.
    pub written: Timestamp,
}

/// What to do with an event that happens at `now`, given its series so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// Write a new Event.
    Create,
    /// Write the series' count and last time onto its Event.
    Update {
        /// The Event.
        event: String,
        /// The count now.
        count: i32,
    },
    /// Count it; the write waits for the next interval.
    Count,
}

/// Folds an occurrence at `now` into `series` (`None`: none yet) as kube's event recorders
/// do: a repeat within [`SERIES_WINDOW`] counts toward the existing Event, whose count is
/// written on the second occurrence and then at most every [`SERIES_WRITE_INTERVAL`].
pub fn fold(series: Option<&mut Series>, now: Timestamp) -> Record {
    let within = |since: Timestamp, span: Duration| within(since, span, now);
    let Some(series) = series.filter(|s| within(s.last_seen, SERIES_WINDOW)) else {
        return Record::Create;
    };
    series.count = series.count.saturating_add(1);
    series.last_seen = now;
    if series.count == 2 || !within(series.written, SERIES_WRITE_INTERVAL) {
        series.written = now;
        Record::Update {
            event: series.event.clone(),
            count: series.count,
        }
    } else {
        Record::Count
    }
}

/// Whether less than `span` has passed from `since` to `now`.
fn within(since: Timestamp, span: Duration, now: Timestamp) -> bool {
    SignedDuration::try_from(span).is_ok_and(|span| now.duration_since(since) < span)
}

/// What makes two events the same one: the object, the type, the reason and the note.
type SeriesKey = (String, String, String, String, String, String);

/// The reporting controller named on every event.
pub const REPORTING_CONTROLLER: &str = "barbican-operator";

/// Normal or Warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Something expected happened.
    Normal,
    /// Something a human should look at.
    Warning,
}

impl Severity {
    fn as_str(self) -> &'static str {
        match self {
            Severity::Normal => "Normal",
            Severity::Warning => "Warning",
        }
    }
}

/// An Event's reason: one of its own, or the reason of the condition it reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventWhy {
    /// A reason only Events carry.
    Event(EventReason),
    /// A condition's reason, repeated on the Event that reports the condition's change.
    Condition(Reason),
}

impl EventWhy {
    /// The string written to the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Event(reason) => reason.as_str(),
            Self::Condition(reason) => reason.as_str(),
        }
    }
}

impl From<EventReason> for EventWhy {
    fn from(reason: EventReason) -> Self {
        Self::Event(reason)
    }
}

impl From<Reason> for EventWhy {
    fn from(reason: Reason) -> Self {
        Self::Condition(reason)
    }
}

/// Publishes events through one client.
#[derive(Clone)]
pub struct Events {
    client: Client,
    clock: Arc<dyn Clock>,
    instance: String,
    series: Arc<Mutex<HashMap<SeriesKey, Series>>>,
    /// Events named so far, for [`event_name`]'s sequence.
    named: Arc<std::sync::atomic::AtomicU64>,
}

/// The longest object name the API server accepts (a DNS subdomain).
const MAX_NAME: usize = 253;

/// The name of a new Event about `regarding`: `<regarding>.<hex time><hex sequence>`, as
/// client-go names Events (`<name>.<hex UnixNano>`), with four hex digits of this process's
/// sequence so two Events at one instant (a virtual clock stands still) do not collide. A
/// long object name is cut so the whole stays a DNS subdomain. Not a `generateName` of
/// `<regarding>.`: kube-apiserver validates the prefix itself and refuses one ending in '.'.
pub fn event_name(regarding: &str, time: Timestamp, sequence: u64) -> String {
    let suffix = format!(".{:x}{:04x}", time.as_nanosecond(), sequence & 0xffff);
    let mut base = regarding
        .get(..MAX_NAME.saturating_sub(suffix.len()))
        .unwrap_or(regarding);
    base = base.trim_end_matches(['-', '.']);
    if base.is_empty() {
        base = "event";
    }
    format!("{base}{suffix}")
}

/// The most bytes an Event's note may hold: events.k8s.io/v1 validates `note` at 1 KiB of
/// UTF-8 (not characters), and refuses the Event past it.
pub const MAX_NOTE_BYTES: usize = 1024;

/// `note` cut to at most [`MAX_NOTE_BYTES`] bytes, on a character boundary.
pub fn clip_note(note: &str) -> &str {
    if note.len() <= MAX_NOTE_BYTES {
        return note;
    }
    let mut end = MAX_NOTE_BYTES;
    while !note.is_char_boundary(end) {
        end = end.saturating_sub(1);
    }
    note.get(..end).unwrap_or_default()
}

/// The reference to an object events are about.
pub fn reference<K: Resource<DynamicType = ()>>(object: &K) -> ObjectReference {
    object.object_ref(&())
}

impl Events {
    /// Events written through `client`, stamped by `clock`, reported by `instance` (the pod).
    pub fn new(client: Client, clock: Arc<dyn Clock>, instance: &str) -> Self {
        Self {
            client,
            clock,
            instance: instance.to_string(),
            series: Arc::default(),
            named: Arc::default(),
        }
    }

    /// Publishes one event about `regarding`; a failure is logged, never fatal: an event is a
    /// courtesy, the conditions carry the state.
    pub async fn publish(
        &self,
        regarding: &ObjectReference,
        severity: Severity,
        reason: impl Into<EventWhy>,
        note: &str,
    ) {
        let reason = reason.into().as_str();
        let namespace = regarding.namespace.clone().unwrap_or_default();
        let now = self.clock.now();
        let note = clip_note(note).to_string();
        let key: SeriesKey = (
            namespace.clone(),
            regarding.name.clone().unwrap_or_default(),
            regarding.uid.clone().unwrap_or_default(),
            severity.as_str().to_string(),
            reason.to_string(),
            note.clone(),
        );
        let record = {
            let mut series = self.series.lock().unwrap_or_else(|p| p.into_inner());
            series.retain(|_, s| within(s.last_seen, SERIES_WINDOW, now));
            if series.len() >= MAX_SERIES {
                series.clear();
            }
            fold(series.get_mut(&key), now)
        };
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        match record {
            Record::Count => return,
            Record::Update { event, count } => {
                let patch = serde_json::json!({"series": {
                    "count": count,
                    "lastObservedTime": MicroTime(now),
                }});
                match api
                    .patch(&event, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    Ok(_) => return,
                    // The Event is gone (expired, deleted): the series starts over below.
                    Err(kube::Error::Api(s)) if s.code == 404 => {}
                    Err(error) => {
                        tracing::warn!(%error, reason, "updating an event series failed");
                        return;
                    }
                }
            }
            Record::Create => {}
        }
        let event = Event {
            metadata: ObjectMeta {
                name: Some(event_name(
                    regarding.name.as_deref().unwrap_or_default(),
                    now,
                    self.named
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                )),
                namespace: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            type_: Some(severity.as_str().to_string()),
            reason: Some(reason.to_string()),
            note: Some(note),
            action: Some("Reconcile".to_string()),
            regarding: Some(regarding.clone()),
            reporting_controller: Some(REPORTING_CONTROLLER.to_string()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        };
        match api.create(&PostParams::default(), &event).await {
            Ok(created) => {
                self.series
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(
                        key,
                        Series {
                            event: created.name_any(),
                            count: 1,
                            last_seen: now,
                            written: now,
                        },
                    );
            }
            Err(error) => {
                tracing::warn!(%error, reason, object = regarding.name.as_deref().unwrap_or(""), "publishing an event failed");
            }
        }
    }
}

/// The name an event's object goes by in logs.
pub fn describe<K: Resource>(object: &K) -> String {
    format!(
        "{}/{}",
        object.namespace().unwrap_or_default(),
        object.name_any()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_named_as_client_go_names_it_and_stays_a_valid_unique_name() {
        let at = Timestamp::from_second(1_800_000_000).unwrap();
        let name = event_name("barbican", at, 1);
        assert_eq!(name, format!("barbican.{:x}0001", at.as_nanosecond()));
        // One instant, two Events: two names.
        assert_ne!(event_name("barbican", at, 1), event_name("barbican", at, 2));
        // The longest object name, and one whose cut would end in '-' or '.'.
        for regarding in [
            "a".repeat(253),
            format!("{}-b", "a".repeat(229)),
            format!("{}.b", "a".repeat(229)),
        ] {
            let name = event_name(&regarding, at, 7);
            assert!(name.len() <= 253, "{}", name.len());
            let first_label_end = name.find('.').unwrap_or(name.len());
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.'),
                "{name}"
            );
            assert!(!name.contains("-.") && !name.contains(".."), "{name}");
            assert!(first_label_end > 0);
        }
    }

    #[test]
    fn a_note_is_cut_at_one_kib_of_utf8_on_a_character_boundary() {
        assert_eq!(clip_note("short"), "short");
        let ascii = "a".repeat(2000);
        assert_eq!(clip_note(&ascii).len(), 1024);
        // 'é' is two bytes and 'あ' three: 1024 characters of them are far over 1 KiB.
        for text in ["é".repeat(1024), format!("a{}", "あ".repeat(600))] {
            let clipped = clip_note(&text);
            assert!(clipped.len() <= MAX_NOTE_BYTES, "{}", clipped.len());
            assert!(
                clipped.len() > MAX_NOTE_BYTES - 4,
                "cut no shorter than it must be"
            );
            assert!(text.starts_with(clipped));
        }
    }

    #[test]
    fn an_event_carries_its_own_reason_or_the_condition_s() {
        assert_eq!(
            EventWhy::from(EventReason::DatabaseFinalized).as_str(),
            "DatabaseFinalized"
        );
        assert_eq!(
            EventWhy::from(Reason::InvalidCredentials).as_str(),
            "InvalidCredentials"
        );
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    #[test]
    fn a_repeating_event_is_one_event_with_a_series() {
        assert_eq!(fold(None, at(0)), Record::Create);
        let mut series = Series {
            event: "kms.1".into(),
            count: 1,
            last_seen: at(0),
            written: at(0),
        };
        // Every 30 s, as a stuck finalizer repeats FinalizingDatabase.
        let mut writes = Vec::new();
        for step in 1..=40 {
            match fold(Some(&mut series), at(step * 30)) {
                Record::Update { count, .. } => writes.push((step, count)),
                Record::Count => {}
                Record::Create => panic!("a repeat within the window created a new Event"),
            }
        }
        assert_eq!(series.count, 41);
        // The second occurrence at once, then once per five minutes.
        assert_eq!(writes, [(1, 2), (11, 12), (21, 22), (31, 32)]);
    }

    #[test]
    fn an_event_after_a_quiet_window_starts_a_new_series() {
        let mut series = Series {
            event: "kms.1".into(),
            count: 7,
            last_seen: at(0),
            written: at(0),
        };
        assert_eq!(fold(Some(&mut series), at(30 * 60)), Record::Create);
    }
}
