//! The control surface: a small HTTP API, served on its own port (an outage closes the API
//! port), through which a test harness or a person with `curl` injects faults into a running
//! `barbican-sim serve`.
//!
//! | request | effect |
//! |---|---|
//! | `POST /faults` (body: a rule, see [`crate::faults`]) | adds a fault rule |
//! | `GET /faults` | lists the rules in force |
//! | `DELETE /faults` | removes every rule |
//! | `POST /outage/start`, `POST /outage/end` | takes the API down (connections refused) and back |
//! | `POST /credentials/reject`, `POST /credentials/accept` | every request answered 401, or not |
//! | `POST /watches/drop` | ends every open watch stream |
//! | `POST /compact` | compacts the history (old resourceVersions get 410) |
//! | `POST /clock/advance?seconds=N` | advances a virtual clock (a wall clock refuses: 409) |
//! | `PUT /services/peers` (body: `<host>:<port> <address>:<port>` lines) | the names another process stands in for, reached by the kubelet's pods ([`crate::services::ServiceRegistry::set_peers`]) |

use std::time::Duration;

use axum::{
    Router,
    extract::{Query, State},
    http::StatusCode,
    routing::{post, put},
};

use crate::{Cluster, faults::Fault};

type Answer = (StatusCode, String);

fn done(what: &str) -> Answer {
    (StatusCode::OK, format!("{what}\n"))
}

/// A switch: its path, what it does to the cluster, and what it answers.
type Switch = (&'static str, fn(&Cluster), &'static str);

/// The switches.
const SWITCHES: &[Switch] = &[
    (
        "/outage/start",
        |c| c.set_outage(true),
        "outage started: the API refuses connections",
    ),
    ("/outage/end", |c| c.set_outage(false), "outage ended"),
    (
        "/credentials/reject",
        |c| c.reject_credentials(true),
        "every request is answered 401",
    ),
    (
        "/credentials/accept",
        |c| c.reject_credentials(false),
        "credentials are accepted again",
    ),
    (
        "/watches/drop",
        Cluster::drop_watches,
        "every open watch stream was ended",
    ),
    ("/compact", Cluster::compact, "history compacted"),
];

/// The control API for `cluster`.
pub fn router(cluster: Cluster) -> Router {
    let mut router = Router::new()
        .route(
            "/faults",
            post(add_fault).get(list_faults).delete(clear_faults),
        )
        .route("/clock/advance", post(advance))
        .route("/services/peers", put(set_peers));
    for (path, switch, said) in SWITCHES {
        router = router.route(
            path,
            post(move |State(cluster): State<Cluster>| async move {
                switch(&cluster);
                done(said)
            }),
        );
    }
    router.with_state(cluster)
}

async fn add_fault(State(cluster): State<Cluster>, body: String) -> Answer {
    match body.trim().parse::<Fault>() {
        Ok(fault) => {
            cluster.add_fault(fault);
            (StatusCode::CREATED, "fault added\n".into())
        }
        Err(e) => (StatusCode::BAD_REQUEST, format!("{e}\n")),
    }
}

async fn set_peers(State(cluster): State<Cluster>, body: String) -> Answer {
    match cluster.services().set_peers(&body) {
        Ok(n) => done(&format!("{n} name(s) now reach the peer's listeners")),
        Err(e) => (StatusCode::BAD_REQUEST, format!("{e}\n")),
    }
}

async fn list_faults(State(cluster): State<Cluster>) -> Answer {
    (StatusCode::OK, cluster.describe_faults())
}

async fn clear_faults(State(cluster): State<Cluster>) -> Answer {
    cluster.clear_faults();
    done("every fault rule removed")
}

#[derive(serde::Deserialize)]
struct Advance {
    seconds: u64,
}

async fn advance(State(cluster): State<Cluster>, Query(by): Query<Advance>) -> Answer {
    if !cluster.clock().is_virtual() {
        return (
            StatusCode::CONFLICT,
            "this cluster runs on wall time; only a virtual clock can be advanced\n".into(),
        );
    }
    let fired = cluster
        .clock()
        .advance(Duration::from_secs(by.seconds))
        .await;
    done(&format!(
        "advanced {} s to {}; {fired} timer(s) fired",
        by.seconds,
        cluster.clock().rfc3339()
    ))
}
