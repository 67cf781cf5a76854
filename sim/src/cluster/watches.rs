//! Watches: the initial events, bookmarks, and the stream of changes from a resourceVersion.

use super::*;

pub(super) fn watch(
    cluster: &Cluster,
    target: &Target,
    q: &BTreeMap<String, String>,
    presentation: Presentation,
) -> Result<Response, ApiError> {
    let (labels, fields) = selectors(&target.t, q)?;
    let storage_key = target.t.storage_key();
    let namespace = target.namespace.clone();
    let t = target.t.clone();
    // The event as this watch sees it: its type and its object as this watch's version
    // serves it, when it matches the selectors there (an events.k8s.io watch sees
    // `regarding` where a core one sees `involvedObject`). An update that makes an object
    // match is ADDED, one that makes it stop matching is DELETED with the object as it was
    // and the update's resourceVersion (kube-apiserver's cacheWatcher.convertToWatchEvent).
    let selected = {
        let t = t.clone();
        move |e: &Event| -> Option<(&'static str, Value)> {
            if e.storage_key != storage_key
                || !(namespace.is_empty()
                    || e.object["metadata"]["namespace"].as_str() == Some(namespace.as_str()))
            {
                return None;
            }
            let passes = |object: &Value| labels.matches(object) && fields.matches(object);
            let object = crate::store::presented(&e.object, &t);
            let now = passes(&object);
            let previous = e
                .previous
                .as_deref()
                .map(|p| crate::store::presented(p, &t));
            let before = previous.as_deref().map_or(now, passes);
            match (e.kind, before, now) {
                (EventType::Modified, false, true) => Some(("ADDED", object.into_owned())),
                (EventType::Modified, true, false) => {
                    let mut gone = previous?.into_owned();
                    gone["metadata"]["resourceVersion"] =
                        object["metadata"]["resourceVersion"].clone();
                    Some(("DELETED", gone))
                }
                (_, _, true) => Some((e.kind.as_str(), object.into_owned())),
                (_, _, false) => None,
            }
        }
    };
    let bookmarks = flag(q, "allowWatchBookmarks");
    let initial_events = flag(q, "sendInitialEvents");
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs);
    let requested: Option<u64> = q
        .get("resourceVersion")
        .filter(|v| !v.is_empty())
        .and_then(|v| v.parse().ok());

    let (tx, rx) = mpsc::channel::<Bytes>(256);
    // `kubectl get -w` asks for Tables: each event then carries a one-row Table; a metadata
    // watch gets each object as PartialObjectMetadata.
    let clock = cluster.clock.clone();
    let render = {
        let t = target.t.clone();
        move |kind: &str, object: &Value| {
            let object = if matches!(kind, "ADDED" | "MODIFIED" | "DELETED") {
                present_one(&t, presentation, object.clone(), clock.now())
            } else {
                object.clone()
            };
            Bytes::from(format!("{}\n", crate::wire_order::event(kind, &object)))
        }
    };
    let line = |kind: &str, object: &Value| render(kind, object);
    let resource = format!("{}/{}", t.group, t.plural);
    let (backlog, mut live, mut last) = {
        let state = cluster.lock();
        let live = state.store.subscribe();
        let current = state.store.revision();
        let mut backlog = Vec::new();
        let start = match requested {
            Some(rv) if rv < state.store.oldest_resumable() => {
                let gone = ApiError::gone(format!(
                    "too old resource version: {rv} ({})",
                    state.store.oldest_resumable()
                ));
                backlog.push(line("ERROR", &gone.status()));
                None
            }
            Some(rv) if !initial_events && rv != 0 => Some(rv),
            _ => {
                // No (or 0) resourceVersion, or sendInitialEvents: start with the current state.
                let namespace = (!target.namespace.is_empty()).then_some(target.namespace.as_str());
                for object in state.store.list(&t, namespace) {
                    let event = Event {
                        revision: 0,
                        storage_key: t.storage_key(),
                        kind: EventType::Added,
                        object: object.into(),
                        previous: None,
                    };
                    if let Some((_, object)) = selected(&event) {
                        backlog.push(line("ADDED", &object));
                    }
                }
                if initial_events {
                    backlog.push(line("BOOKMARK", &json!({"apiVersion": t.api_version(), "kind": t.kind,
                        "metadata": {"resourceVersion": current.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}})));
                }
                Some(current)
            }
        };
        let mut last = start.unwrap_or(u64::MAX);
        if let Some(rv) = start {
            for event in state.store.history_after(rv) {
                if let Some((kind, object)) = selected(&event) {
                    backlog.push(line(kind, &object));
                }
                last = last.max(event.revision);
            }
        }
        (backlog, live, last)
    };
    if last == u64::MAX {
        cluster.watch_ended(&resource, "expired");
    }
    let api_version = t.api_version();
    let kind = t.kind.clone();
    let mut drops = cluster.lock().watch_drops.subscribe();
    drops.mark_unchanged();
    let cluster = cluster.clone();
    tokio::spawn(async move {
        for bytes in backlog {
            if tx.send(bytes).await.is_err() {
                return;
            }
        }
        if last == u64::MAX {
            return;
        }
        let ended = |reason| cluster.watch_ended(&resource, reason);
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        let mut next_bookmark = bookmark_after(tokio::time::Instant::now(), deadline);
        loop {
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                received = live.recv() => match received {
                    Ok(event) => {
                        if event.revision <= last {
                            continue;
                        }
                        last = event.revision;
                        if let Some((kind, object)) = selected(&event)
                            && tx.send(render(kind, &object)).await.is_err()
                        {
                            return;
                        }
                    }
                    // The client read too slowly for the events to wait for it. kube-apiserver
                    // closes such a watcher's stream without an error; the client watches
                    // again from the last resourceVersion it saw, which the history still
                    // holds unless it too has moved on (then 410, and the client lists).
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        ended("unresponsive");
                        return;
                    }
                    Err(_) => return,
                },
                () = async move {
                    match next_bookmark {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                }, if bookmarks => {
                    let bookmark = json!({"type": "BOOKMARK", "object": {"apiVersion": api_version, "kind": kind, "metadata": {"resourceVersion": last.to_string()}}});
                    if tx.send(Bytes::from(format!("{bookmark}\n"))).await.is_err() {
                        return;
                    }
                    next_bookmark = bookmark_after(tokio::time::Instant::now(), deadline);
                }
                () = sleep => {
                    ended("timeout");
                    return;
                }
                () = tx.closed() => return,
                _ = drops.changed() => {
                    ended("dropped");
                    return;
                }
            }
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(stream),
    )
        .into_response())
}

/// How often kube-apiserver's watch cache sends a watcher a bookmark.
pub const BOOKMARK_PERIOD: Duration = Duration::from_secs(60);

/// When a watcher that allows bookmarks gets its next one, as kube-apiserver's cacher decides
/// (`nextBookmarkTime`): a minute from now, or two seconds before the watch's deadline when
/// that comes first, so a client can resume from a fresh resourceVersion; none once that time
/// has passed.
pub fn bookmark_after(
    now: tokio::time::Instant,
    deadline: Option<tokio::time::Instant>,
) -> Option<tokio::time::Instant> {
    let heartbeat = now + BOOKMARK_PERIOD;
    let Some(deadline) = deadline else {
        return Some(heartbeat);
    };
    let before_deadline = deadline.checked_sub(Duration::from_secs(2))?;
    let at = heartbeat.min(before_deadline);
    (at > now).then_some(at)
}
