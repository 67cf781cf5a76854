//! The operator's plain-HTTP endpoints: `/metrics` (Prometheus text) on the metrics address,
//! `/healthz` and `/readyz` on the health-probe address.
//!
//! `/healthz` answers 200 while the controllers run, and 503 once one of them has ended on its
//! own (the process exits right after, non-zero; the failing probe covers the moment between,
//! and a runtime that wedges instead of exiting). `/readyz` answers 200 once the operator has
//! reached its API server, and 503 before: a replica waiting for the leader Lease is ready (it
//! can take over at once), a replica that cannot reach the API server is not.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use axum::{
    Router, extract::State, http::StatusCode, http::header, response::IntoResponse, routing::get,
};

use crate::metrics::Metrics;

/// The text-format content type Prometheus scrapes.
pub const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Whether the operator is ready to serve.
#[derive(Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// Marks the operator ready (or not).
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::SeqCst);
    }

    /// Whether it is.
    pub fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Whether the controllers still run; a new one is alive.
#[derive(Clone, Default)]
pub struct Liveness(Arc<AtomicBool>);

impl Liveness {
    /// Marks the process as failed: `/healthz` answers 503 from now on.
    pub fn fail(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether it still runs.
    pub fn alive(&self) -> bool {
        !self.0.load(Ordering::SeqCst)
    }
}

/// `/metrics`.
pub fn metrics_router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route(
            "/metrics",
            get(|State(metrics): State<Arc<Metrics>>| async move {
                ([(header::CONTENT_TYPE, PROMETHEUS_TEXT)], metrics.render())
            }),
        )
        .with_state(metrics)
}

/// `/healthz` and `/readyz`.
pub fn health_router(readiness: Readiness, liveness: Liveness) -> Router {
    Router::new()
        .route(
            "/healthz",
            get(move || async move {
                if liveness.alive() {
                    (StatusCode::OK, "ok").into_response()
                } else {
                    (StatusCode::SERVICE_UNAVAILABLE, "a controller stopped").into_response()
                }
            }),
        )
        .route(
            "/readyz",
            get(|State(readiness): State<Readiness>| async move {
                if readiness.get() {
                    (StatusCode::OK, "ok").into_response()
                } else {
                    (StatusCode::SERVICE_UNAVAILABLE, "not ready").into_response()
                }
            }),
        )
        .with_state(readiness)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    async fn get_(router: Router, path: &str) -> (StatusCode, String) {
        let response = router
            .oneshot(axum::http::Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn readyz_follows_readiness_and_healthz_follows_the_controllers() {
        let (readiness, liveness) = (Readiness::default(), Liveness::default());
        let router = health_router(readiness.clone(), liveness.clone());
        assert_eq!(get_(router.clone(), "/healthz").await.0, StatusCode::OK);
        assert_eq!(
            get_(router.clone(), "/readyz").await.0,
            StatusCode::SERVICE_UNAVAILABLE
        );
        readiness.set(true);
        assert_eq!(get_(router.clone(), "/readyz").await.0, StatusCode::OK);
        liveness.fail();
        assert_eq!(
            get_(router, "/healthz").await.0,
            StatusCode::SERVICE_UNAVAILABLE
        );
    }

    #[tokio::test]
    async fn metrics_serves_the_pipeline_series() {
        let metrics = Arc::new(Metrics::new());
        crate::controller::pipeline::Recorder::duration(
            metrics.as_ref(),
            "Secrets",
            std::time::Duration::from_millis(3),
        );
        let (status, body) = get_(metrics_router(metrics), "/metrics").await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            body.contains(
                "barbican_operator_reconcile_duration_seconds_count{sub_reconciler=\"Secrets\"} 1"
            ),
            "{body}"
        );
    }
}
