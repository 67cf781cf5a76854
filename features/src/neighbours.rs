//! Foreign neighbours: objects of every kind the operator writes, under the very names a
//! Barbican's children take, made and owned by someone else (team B). The operator's ownership
//! rule says none of them is ever modified or deleted, whatever the Barbican's spec or history;
//! [`plant`] makes them, [`touched`] proves the rule by reading them back.

use cucumber::{given, then};
use serde_json::{Value, json};

use crate::{
    BarbicanWorld,
    sim_env::{Error, SimEnv},
};

/// The label every neighbour carries, so a reader tells them from the operator's children.
pub const TEAM_LABEL: (&str, &str) = ("example.com/team", "b");

/// The children a Barbican named `barbican` with the stores `stores` takes names for, as
/// (kind, name): one object per kind under the Barbican's own name, the three by-suffix
/// children, and each store's credentials Secret.
pub fn child_names(barbican: &str, stores: &[&str]) -> Vec<(&'static str, String)> {
    let mut names: Vec<(&'static str, String)> = [
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "HorizontalPodAutoscaler",
        "NetworkPolicy",
        "HTTPRoute",
        "Database",
        "User",
        "Grant",
    ]
    .into_iter()
    .map(|kind| (kind, barbican.to_string()))
    .collect();
    names.extend([
        ("Secret", format!("{barbican}-db-connection")),
        ("Job", format!("{barbican}-db-sync")),
        ("CronJob", format!("{barbican}-db-clean")),
    ]);
    names.extend(stores.iter().map(|store| {
        (
            "Secret",
            barbican_operator::api::names::approle_secret_name(store),
        )
    }));
    names
}

/// A small valid object of `kind` named `name` in `namespace`, as team B would write it: its
/// own labels and selector, no ownerReference, no owner labels.
pub fn object(kind: &str, name: &str, namespace: &str) -> Result<Value, Error> {
    let (api_version, kind) = crate::sim_env::api_version_of(kind)?;
    let labels = json!({TEAM_LABEL.0: TEAM_LABEL.1});
    let pod = json!({
        "metadata": {"labels": labels},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "app", "image": "team-b/app:1"}]}
    });
    let spec = match kind {
        "Deployment" => json!({"replicas": 0, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "team-b/app:1"}]}}}),
        "Service" => json!({"selector": labels, "ports": [{"port": 80}]}),
        "PodDisruptionBudget" => json!({"maxUnavailable": 1, "selector": {"matchLabels": labels}}),
        "HorizontalPodAutoscaler" => json!({"minReplicas": 1, "maxReplicas": 2,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "team-b-app"}}),
        "NetworkPolicy" => {
            json!({"podSelector": {"matchLabels": labels}, "policyTypes": ["Ingress"]})
        }
        "HTTPRoute" => json!({"parentRefs": [{"name": "team-b-gateway"}],
            "rules": [{"backendRefs": [{"name": "team-b-app", "port": 80}]}]}),
        "Database" => json!({"mariaDbRef": {"name": "team-b-mariadb"}, "name": "team_b"}),
        "User" => json!({"mariaDbRef": {"name": "team-b-mariadb"},
            "passwordSecretKeyRef": {"name": "team-b-db", "key": "password"}}),
        "Grant" => json!({"mariaDbRef": {"name": "team-b-mariadb"}, "privileges": ["SELECT"],
            "database": "team_b", "table": "*", "username": "team_b"}),
        "Job" => json!({"template": pod}),
        "CronJob" => json!({"schedule": "0 3 * * *", "suspend": true,
            "jobTemplate": {"spec": {"template": pod}}}),
        "Secret" => {
            return Ok(json!({"apiVersion": api_version, "kind": kind,
                "metadata": {"name": name, "namespace": namespace, "labels": labels},
                "data": {"owner": "dGVhbS1i"}}));
        }
        other => return Err(format!("no neighbour of kind {other}")),
    };
    Ok(json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec}))
}

/// One of team B's objects.
#[derive(Clone, Debug)]
pub struct Neighbour {
    /// Its kind.
    pub kind: String,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl Neighbour {
    /// Team B's `kind` named `name` in `namespace`.
    pub fn new(kind: &str, namespace: &str, name: &str) -> Self {
        Self {
            kind: kind.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }
}

/// Whether the operator holds any field of `object`: its apply field manager, or the manager
/// the API server names after its User-Agent for its patches.
fn operator_manages(object: &kube::api::DynamicObject) -> bool {
    let agent = barbican_operator::clusters::USER_AGENT
        .split('/')
        .next()
        .unwrap_or_default();
    object
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .any(|entry| {
            let manager = entry.manager.as_deref().unwrap_or_default();
            manager == barbican_operator::api::names::FIELD_MANAGER || manager == agent
        })
}

/// Makes team B's object of each (kind, name) of `names` in `namespace`, where the scenario
/// works.
pub async fn plant(
    env: &SimEnv,
    namespace: &str,
    names: &[(&str, String)],
) -> Result<Vec<Neighbour>, Error> {
    let mut planted = Vec::new();
    for (kind, name) in names {
        env.apply(object(kind, name, namespace)?).await?;
        planted.push(Neighbour::new(kind, namespace, name));
    }
    Ok(planted)
}

/// What became of `neighbours` that should not have, read where the scenario works. Each
/// must exist, carry team B's label and no owner of the operator's (an ownerReference, its
/// owner labels, a field held by its field manager or user agent), and still say everything
/// [`object`] made it say. What other controllers write of anyone's objects (status, the
/// Deployment controller's revision annotation, mariadb-operator's finalizers, server
/// defaults) is not the operator's doing and is allowed. An object the operator deleted and
/// made anew would carry its ownership, so a record of the uid is not needed. Empty: every
/// one is as team B made it.
pub async fn touched(env: &SimEnv, neighbours: &[Neighbour]) -> Result<Vec<String>, Error> {
    let mut touched = Vec::new();
    for Neighbour {
        kind,
        namespace,
        name,
    } in neighbours
    {
        let Some(live) = env.get(kind, namespace, name).await? else {
            touched.push(format!("{kind} {namespace}/{name} was deleted"));
            continue;
        };
        let made = object(kind, name, namespace)?;
        let value = serde_json::to_value(&live).unwrap_or_default();
        let labels = &value["metadata"]["labels"];
        let problem = if live.metadata.deletion_timestamp.is_some() {
            Some("is being deleted")
        } else if operator_manages(&live) {
            Some("carries fields the operator applied")
        } else if live.metadata.owner_references.is_some() {
            Some("carries an ownerReference")
        } else if !labels[barbican_operator::api::names::OWNER_NAME_LABEL].is_null() {
            Some("carries the operator's owner labels")
        } else if labels[TEAM_LABEL.0] != TEAM_LABEL.1
            || !within(&made["spec"], &value["spec"])
            || !within(&made["data"], &value["data"])
        {
            Some("no longer says what team B made it say")
        } else {
            None
        };
        if let Some(problem) = problem {
            touched.push(format!("{kind} {namespace}/{name} {problem}"));
        }
    }
    Ok(touched)
}

/// Whether `have` says everything `want` says (what the server defaults besides is allowed).
fn within(want: &Value, have: &Value) -> bool {
    match (want, have) {
        (Value::Null, _) => true,
        (Value::Object(want), Value::Object(have)) => want
            .iter()
            .all(|(k, w)| have.get(k).is_some_and(|h| within(w, h))),
        (Value::Array(want), Value::Array(have)) => {
            want.len() == have.len() && want.iter().zip(have).all(|(w, h)| within(w, h))
        }
        (want, have) => want == have,
    }
}

/// [`touched`] as a check: an error listing every neighbour the operator modified or deleted.
pub async fn untouched(env: &SimEnv, neighbours: &[Neighbour]) -> Result<(), Error> {
    let touched = touched(env, neighbours).await?;
    if touched.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "team B's objects were touched: {}",
            touched.join("; ")
        ))
    }
}

#[given(expr = "team B's {word} {string} in {string}")]
async fn one_neighbour(world: &mut BarbicanWorld, kind: String, name: String, namespace: String) {
    let planted = plant(world.env(), &namespace, &[(kind.as_str(), name)])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    world.neighbours.extend(planted);
}

/// Team B's object that copies the labels the Barbican's children carry (the common labels,
/// `managed-by` included) under a name of its own: a label is anyone's to set, so only an
/// ownerReference makes a child the operator's on its own cluster, and the sweep after each
/// pass must leave this one alone.
#[given(
    expr = "team B's {word} {string} in {string} carries the labels of the Barbican {string}'s children"
)]
async fn labelled_neighbour(
    world: &mut BarbicanWorld,
    kind: String,
    name: String,
    namespace: String,
    barbican: String,
) {
    let mut made = object(&kind, &name, &namespace).unwrap_or_else(|e| panic!("{e}"));
    let labels = &mut made["metadata"]["labels"];
    for (key, value) in barbican_operator::controller::barbican::labels::common(&barbican) {
        labels[key] = Value::String(value);
    }
    world
        .env()
        .apply(made)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    world
        .neighbours
        .push(Neighbour::new(&kind, &namespace, &name));
}

#[given(
    expr = "team B's objects under every child name of the Barbican {string} with the store {string} in {string}"
)]
async fn every_neighbour(
    world: &mut BarbicanWorld,
    barbican: String,
    store: String,
    namespace: String,
) {
    let names = child_names(&barbican, &[store.as_str()]);
    let planted = plant(world.env(), &namespace, &names)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    world.neighbours.extend(planted);
}

#[then("team B's objects are untouched")]
async fn neighbours_untouched(world: &mut BarbicanWorld) {
    assert!(!world.neighbours.is_empty(), "no neighbour was planted");
    untouched(world.env(), &world.neighbours)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}
