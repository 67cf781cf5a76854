//! A fake mariadb-operator: MariaDB, Database, User and Grant become Ready after a delay; a
//! MariaDB can be held not-ready (an outage); Database, User and Grant carry the operator's
//! finalizers and are released after an optional slow teardown.
//!
//! With a real server ([`MariaDbOperator::start_real`]), Database, User (with its password
//! from the Secret and `max_user_connections`) and Grant are created in it before they turn
//! Ready, changed when their specs change, and dropped before their finalizers go.

use std::sync::Arc;

use barbican_sim::{clock::Clock, services::ServiceRegistry};
use futures::{FutureExt, future::BoxFuture};
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, Client, ResourceExt,
    api::{ApiResource, DynamicObject},
};
use tokio::sync::Mutex;

use crate::{
    controller::{Behaviour, FakeController, Realizer},
    mariadb_server::{MariaDbServer, identifier, literal},
};

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
        Self::start_with(client, clock, None)
    }

    /// Starts the controllers on a real server: Database, User and Grant exist in `server`
    /// before they turn Ready, and each MariaDB's Service name (`<name>.<namespace>.svc` on its
    /// `spec.port`, 3306 by default) reaches the server through `services`.
    pub fn start_real(
        client: Client,
        clock: Clock,
        server: Arc<Mutex<MariaDbServer>>,
        services: ServiceRegistry,
    ) -> Self {
        Self::start_with(client, clock, Some((server, services)))
    }

    fn start_with(
        client: Client,
        clock: Clock,
        real: Option<(Arc<Mutex<MariaDbServer>>, ServiceRegistry)>,
    ) -> Self {
        let controller =
            |kind: &str, plural: &str, reason: &'static str, finalizer: Option<&str>| {
                let mut behaviour = Behaviour::ready("Ready", reason);
                behaviour.finalizer = finalizer.map(String::from);
                let realizer = real.clone().map(|(server, services)| {
                    if kind == "MariaDB" {
                        return Arc::new(RealService { server, services }) as Arc<dyn Realizer>;
                    }
                    Arc::new(RealObject {
                        kind: kind.to_string(),
                        server,
                        client: client.clone(),
                    }) as Arc<dyn Realizer>
                });
                FakeController::start_realizing(
                    client.clone(),
                    clock.clone(),
                    resource(kind, plural),
                    behaviour,
                    None,
                    realizer,
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

/// A MariaDB made reachable: its Service name routed to the real server's loopback port.
struct RealService {
    server: Arc<Mutex<MariaDbServer>>,
    services: ServiceRegistry,
}

/// The namespace, name and port of a MariaDB's Service.
fn service_of(object: &DynamicObject) -> (String, String, u16) {
    let port = object.data["spec"]["port"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok())
        .unwrap_or(3306);
    (
        object.namespace().unwrap_or_default(),
        object.name_any(),
        port,
    )
}

impl Realizer for RealService {
    fn realize(&self, object: DynamicObject) -> BoxFuture<'static, Result<(), String>> {
        let (server, services) = (self.server.clone(), self.services.clone());
        async move {
            let (namespace, name, port) = service_of(&object);
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], server.lock().await.port()));
            services.register(&namespace, &name, port, addr);
            Ok(())
        }
        .boxed()
    }

    fn remove(&self, object: DynamicObject) -> BoxFuture<'static, Result<(), String>> {
        let services = self.services.clone();
        async move {
            let (namespace, name, port) = service_of(&object);
            services.unregister(&namespace, &name, port);
            Ok(())
        }
        .boxed()
    }
}

/// A Database, User or Grant made real in a server.
struct RealObject {
    kind: String,
    server: Arc<Mutex<MariaDbServer>>,
    client: Client,
}

impl Realizer for RealObject {
    fn realize(&self, object: DynamicObject) -> BoxFuture<'static, Result<(), String>> {
        let (kind, server, client) = (self.kind.clone(), self.server.clone(), self.client.clone());
        async move {
            let sql = match kind.as_str() {
                "Database" => create_database(&object)?,
                "User" => create_user(&object, &client).await?,
                _ => grant(&object, "GRANT", "TO")?,
            };
            let answer = server.lock().await.execute(&sql).await;
            answer
                .map(drop)
                .map_err(|e| without_statement(&e.to_string()))
        }
        .boxed()
    }

    fn remove(&self, object: DynamicObject) -> BoxFuture<'static, Result<(), String>> {
        let (kind, server) = (self.kind.clone(), self.server.clone());
        async move {
            let sql = match kind.as_str() {
                "Database" => format!(
                    "DROP DATABASE IF EXISTS {}",
                    identifier(&sql_name(&object)).map_err(|e| e.to_string())?
                ),
                "User" => format!("DROP USER IF EXISTS {}", account(&object)?),
                _ => grant(&object, "REVOKE", "FROM")?,
            };
            match server.lock().await.execute(&sql).await {
                Ok(_) => Ok(()),
                // A grant whose user or rows are gone already is revoked.
                Err(e) if kind == "Grant" && e.to_string().contains("There is no such grant") => {
                    Ok(())
                }
                Err(e) => Err(e.to_string()),
            }
        }
        .boxed()
    }
}

/// A server error without the part of the statement it quotes (`near '…'`), which can hold a
/// password: the message goes into a condition.
fn without_statement(error: &str) -> String {
    match error.find(" near '") {
        Some(at) => format!("{} (statement withheld)", &error[..at]),
        None => error.to_string(),
    }
}

/// `spec.name`, else the object's name: the name in the server.
fn sql_name(object: &DynamicObject) -> String {
    object.data["spec"]["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| object.name_any())
}

/// A character set or collation name: letters, digits and `_` only.
fn charset_word<'a>(
    object: &'a DynamicObject,
    field: &str,
    default: &'a str,
) -> Result<&'a str, String> {
    let word = object.data["spec"][field].as_str().unwrap_or(default);
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("spec.{field} must be letters, digits and '_'"));
    }
    Ok(word)
}

fn create_database(object: &DynamicObject) -> Result<String, String> {
    Ok(format!(
        "CREATE DATABASE IF NOT EXISTS {} CHARACTER SET {} COLLATE {}",
        identifier(&sql_name(object)).map_err(|e| e.to_string())?,
        charset_word(object, "characterSet", "utf8")?,
        charset_word(object, "collate", "utf8_general_ci")?
    ))
}

/// `'user'@'host'` of a User (its name) or Grant (`spec.username`); host `spec.host` or `%`.
fn account(object: &DynamicObject) -> Result<String, String> {
    let spec = &object.data["spec"];
    let user = match spec["username"].as_str() {
        Some(user) => user.to_string(),
        None => sql_name(object),
    };
    let host = spec["host"]
        .as_str()
        .filter(|h| !h.is_empty())
        .unwrap_or("%");
    let quoted = |text: &str| literal(text).map_err(|e| e.to_string());
    Ok(format!("{}@{}", quoted(&user)?, quoted(host)?))
}

async fn create_user(object: &DynamicObject, client: &Client) -> Result<String, String> {
    let spec = &object.data["spec"];
    let reference = &spec["passwordSecretKeyRef"];
    let (Some(secret), Some(key)) = (reference["name"].as_str(), reference["key"].as_str()) else {
        return Err("spec.passwordSecretKeyRef needs a name and a key".into());
    };
    let namespace = object.namespace().unwrap_or_default();
    let found = Api::<Secret>::namespaced(client.clone(), &namespace)
        .get_opt(secret)
        .await
        .map_err(|e| format!("reading the Secret {secret}: {e}"))?;
    let password = found
        .and_then(|s| s.data)
        .and_then(|d| d.get(key).cloned())
        .ok_or_else(|| format!("the Secret {secret} has no key {key}"))?;
    let password = String::from_utf8(password.0)
        .map_err(|_| format!("the key {key} of the Secret {secret} is not UTF-8"))?;
    let connections = spec["maxUserConnections"].as_u64().unwrap_or(10);
    let account = account(object)?;
    let password = literal(&password).map_err(|e| e.to_string())?;
    Ok(format!(
        "CREATE USER IF NOT EXISTS {account} IDENTIFIED BY {password};\n\
         ALTER USER {account} IDENTIFIED BY {password} WITH MAX_USER_CONNECTIONS {connections};"
    ))
}

/// `GRANT … ON db.table TO account` (or `REVOKE … FROM`).
fn grant(object: &DynamicObject, verb: &str, preposition: &str) -> Result<String, String> {
    let spec = &object.data["spec"];
    let privileges: Vec<&str> = spec["privileges"]
        .as_array()
        .map(|p| p.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    if privileges.is_empty()
        || privileges
            .iter()
            .any(|p| p.is_empty() || !p.chars().all(|c| c.is_ascii_uppercase() || c == ' '))
    {
        return Err("spec.privileges must be privilege names (upper-case words)".into());
    }
    let database = spec["database"].as_str().unwrap_or("*");
    let database = if database == "*" {
        "*".to_string()
    } else {
        identifier(database).map_err(|e| e.to_string())?
    };
    let table = spec["table"].as_str().unwrap_or("*");
    let table = if table == "*" {
        "*".to_string()
    } else {
        identifier(table).map_err(|e| e.to_string())?
    };
    Ok(format!(
        "{verb} {} ON {database}.{table} {preposition} {}",
        privileges.join(", "),
        account(object)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_error_loses_the_statement_it_quotes() {
        let error = "SQL failed: ERROR 1064 (42000) at line 1: You have an error in your SQL syntax; \
                     check the manual near 'IDENTIFIED BY 'hunter2'' at line 1";
        let shown = without_statement(error);
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.starts_with("SQL failed: ERROR 1064"), "{shown}");
        assert_eq!(without_statement("Can't connect"), "Can't connect");
    }
}
