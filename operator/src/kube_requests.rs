//! Every request the operator sends to an API server, counted by verb, resource and answer
//! (`barbican_operator_kube_requests_total{verb,resource,code}`) and bounded in time: a tower
//! layer on the operator's `kube::Client`. "The operator writes nothing in a steady state" is
//! then an alert a user can set on a real cluster (`increase(…{verb=~"create|update|patch|
//! delete"}[10m]) > 0` with every Barbican Ready), not a figure only the sim's audit shows.
//!
//! A request that has no answer within [`REQUEST_TIMEOUT`] fails (code `timeout`) instead of
//! holding its pass; a watch is exempt, as it is meant to stay open.

use std::{
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use http::{Request, Response};
use prometheus::IntCounterVec;
use tower::{BoxError, Layer, Service};

/// How long a request other than a watch waits for its answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The verb and resource of a request, as kube-apiserver's request info names them: `get`,
/// `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`; the resource as
/// `kubectl` writes it, `<resource>[.<group>][/<subresource>]` (`deployments.apps`,
/// `barbicans.barbican.openstack.c5c3.io/status`, `secrets`), and `nonresource` for
/// discovery and `/version`.
pub fn classify(method: &str, path: &str, query: &str) -> (&'static str, String) {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["api", _version, rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => return (verb_of(method, false, query), "nonresource".into()),
    };
    // `namespaces/<ns>/<resource>…` is a namespaced resource; `namespaces[/<name>]` is the
    // Namespace kind itself.
    let rest = match rest {
        ["namespaces", _namespace, inner @ ..] if !inner.is_empty() => inner,
        other => other,
    };
    let Some((resource, tail)) = rest.split_first() else {
        return (verb_of(method, false, query), "nonresource".into());
    };
    let named = !tail.is_empty();
    let mut label = if group.is_empty() {
        (*resource).to_string()
    } else {
        format!("{resource}.{group}")
    };
    if let Some(subresource) = tail.get(1) {
        label = format!("{label}/{subresource}");
    }
    (verb_of(method, named, query), label)
}

fn verb_of(method: &str, named: bool, query: &str) -> &'static str {
    let watch = query
        .split('&')
        .any(|pair| pair == "watch=true" || pair == "watch=1");
    match (method, named) {
        ("GET", _) if watch => "watch",
        ("GET" | "HEAD", true) => "get",
        ("GET" | "HEAD", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "other",
    }
}

/// The layer: wraps a client's service stack so each request is counted into `counter`
/// (labels `verb`, `resource`, `code`) and bounded by `timeout`.
#[derive(Clone)]
pub struct CountRequests {
    counter: IntCounterVec,
    timeout: Duration,
}

impl CountRequests {
    /// Counts into `counter` (labels `verb`, `resource`, `code`), failing a request other than
    /// a watch after `timeout`.
    pub fn new(counter: IntCounterVec, timeout: Duration) -> Self {
        Self { counter, timeout }
    }
}

impl<S> Layer<S> for CountRequests {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Counted<S> {
        Counted {
            inner,
            counter: self.counter.clone(),
            timeout: self.timeout,
        }
    }
}

/// A service stack whose requests are counted (see [`CountRequests`]).
#[derive(Clone)]
pub struct Counted<S> {
    inner: S,
    counter: IntCounterVec,
    timeout: Duration,
}

/// Why a request failed without an answer: no answer in time.
#[derive(Debug, thiserror::Error)]
#[error("the API server did not answer {verb} {resource} within {timeout:?}")]
pub struct TimedOut {
    verb: &'static str,
    resource: String,
    timeout: Duration,
}

impl<S, B, R> Service<Request<B>> for Counted<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    R: Send + 'static,
{
    type Response = Response<R>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<R>, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let (verb, resource) = classify(
            request.method().as_str(),
            request.uri().path(),
            request.uri().query().unwrap_or(""),
        );
        let answer = self.inner.call(request);
        let (counter, timeout) = (self.counter.clone(), self.timeout);
        Box::pin(async move {
            let outcome: Result<Response<R>, BoxError> = if verb == "watch" {
                answer.await.map_err(Into::into)
            } else {
                match tokio::time::timeout(timeout, answer).await {
                    Ok(answered) => answered.map_err(Into::into),
                    Err(_) => Err(Box::new(TimedOut {
                        verb,
                        resource: resource.clone(),
                        timeout,
                    })),
                }
            };
            let code = match &outcome {
                Ok(response) => response.status().as_u16().to_string(),
                Err(e) if e.is::<TimedOut>() => "timeout".into(),
                Err(_) => "error".into(),
            };
            counter.with_label_values(&[verb, &resource, &code]).inc();
            outcome
        })
    }
}
