//! A fake mariadb-operator: MariaDB, Database, User and Grant become Ready after a delay; a
//! MariaDB can be held not-ready (an outage); Database, User and Grant carry the operator's
//! finalizers and are released after an optional slow teardown.

use barbican_sim::clock::Clock;
use kube::{Client, api::ApiResource};

use crate::controller::{Behaviour, FakeController};

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "k8s.mariadb.com".into(),
        version: "v1alpha1".into(),
        api_version: "k8s.mariadb.com/v1alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The four controllers.
pub struct MariaDbOperator {
    /// MariaDB servers.
    pub mariadbs: FakeController,
    /// Databases.
    pub databases: FakeController,
    /// Users.
    pub users: FakeController,
    /// Grants.
    pub grants: FakeController,
}

impl MariaDbOperator {
    /// Starts the controllers; everything becomes Ready at once until told otherwise.
    pub fn start(client: Client, clock: Clock) -> Self {
        let controller =
            |kind: &str, plural: &str, reason: &'static str, finalizer: Option<&str>| {
                let mut behaviour = Behaviour::ready("Ready", reason);
                behaviour.finalizer = finalizer.map(String::from);
                FakeController::start(
                    client.clone(),
                    clock.clone(),
                    resource(kind, plural),
                    behaviour,
                    None,
                )
            };
        Self {
            mariadbs: controller("MariaDB", "mariadbs", "StatefulSetReady", None),
            databases: controller(
                "Database",
                "databases",
                "Created",
                Some("database.k8s.mariadb.com/finalizer"),
            ),
            users: controller(
                "User",
                "users",
                "Created",
                Some("user.k8s.mariadb.com/finalizer"),
            ),
            grants: controller(
                "Grant",
                "grants",
                "Created",
                Some("grant.k8s.mariadb.com/finalizer"),
            ),
        }
    }
}
