//! Generated edit sequences: random Barbican specs built block by block from the CRD's
//! properties (every optional block switched on and off, values varied), random store edits
//! (attach, detach, moving the default, managed ⇄ brownfield by delete and create), and
//! release bumps the release gate admits. Only what the operator's admission functions admit is
//! kept: an edit they refuse is drawn again.

use std::collections::BTreeMap;

use barbican_operator::{
    admission::{
        barbican::validate_barbican, catalog, lookups::KnownState,
        secret_store::validate_secret_store, verdict::Operation,
    },
    api::{Barbican, BarbicanSecretStore},
    controller::barbican::release,
};
use serde_json::{Value, json};

use crate::rng::Rng;

/// The Barbican every sequence edits.
pub const NAME: &str = "barbican";
/// The PriorityClass the prerequisites create (admission looks it up).
pub const PRIORITY_CLASS: &str = "barbican-high";
/// The names a store can take.
const STORE_NAMES: [&str; 3] = ["store-a", "store-b", "store-c"];

/// What a store is, in a version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Store {
    /// An existing OpenBao the operator only validates against (else a managed one).
    pub brownfield: bool,
    /// `isDefault`.
    pub default: bool,
}

/// One state of a sequence: the Barbican's spec and the stores attached to it, by name.
#[derive(Clone, Debug, PartialEq)]
pub struct Version {
    /// The Barbican's `spec`.
    pub spec: Value,
    /// The stores in the namespace, all attached to the Barbican.
    pub stores: BTreeMap<String, Store>,
}

/// One write that takes a namespace from one version to the next, in the order a user must
/// make them: deletions first, then defaults switched off, then the rest.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    /// Delete the store and wait until it is gone.
    DeleteStore(String),
    /// Apply the store.
    ApplyStore(String, Store),
    /// Apply the Barbican with this spec.
    ApplyBarbican(Value),
}

/// The properties of `spec` the generator draws, by the CRD's names; a test checks that every
/// property of the schema is here. Required ones always get a value, optional ones are
/// switched on and off. `targetClusterRef` is listed but never set: it is immutable, so a
/// sequence keeps the placement it starts with.
pub const BLOCKS: [&str; 21] = [
    "deployment",
    "image",
    "database",
    "cache",
    "keystonePublicEndpoint",
    "serviceUser",
    "region",
    "apiServer",
    "dbClean",
    "gateway",
    "networkPolicy",
    "autoscaling",
    "logging",
    "secretStoreRef",
    "policyOverrides",
    "middleware",
    "plugins",
    "extraConfig",
    "openStackRelease",
    "keystoneEndpoint",
    "targetClusterRef",
];

pub use super::side::{AUDIT_TRANSPORT, MISSING_REGION, SERVED_TLS, SIDE_BLOCKS};
use super::side::{side, side_block};

/// The Secret every `serviceUser` names (the prerequisites make it).
pub const SERVICE_USER_SECRET: &str = "barbican-keystone";

/// The service users a `serviceUser` names: the default one and one more. The prerequisites
/// make them in the site's Keystone.
pub const SERVICE_USERS: [&str; 2] = ["barbican", "kms"];

/// The supported releases, oldest first.
pub fn releases() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = catalog::releases().collect();
    all.sort();
    all
}

/// The image for `release`: its tag, or (one time in four) a digest that changes with `salt`.
fn image(rng: &mut Rng, release: &str) -> Value {
    if rng.one_in(4) {
        json!({"repository": "ghcr.io/c5c3/barbican",
            "digest": format!("sha256:{:064x}", u128::from(rng.next_u64()))})
    } else if rng.one_in(4) {
        json!({"repository": "ghcr.io/c5c3/barbican", "tag": format!("{release}-p1")})
    } else {
        json!({"repository": "ghcr.io/c5c3/barbican", "tag": release})
    }
}

/// A value for the block `name`, or `None` to leave it out. Required blocks always get one.
fn block(rng: &mut Rng, name: &str, release: &str) -> Option<Value> {
    let value = match name {
        "openStackRelease" => json!(release),
        "image" => image(rng, release),
        "keystoneEndpoint" => json!(rng.pick(&[
            "http://keystone.openstack.svc.cluster.local:5000/v3",
            "https://keystone.internal.example.com/v3",
        ])),
        "database" => {
            let mut database = json!({"clusterRef": {"name": "openstack-mariadb"},
                "database": rng.pick(&["barbican", "kms"]), "secretRef": {"name": "barbican-db"}});
            if rng.one_in(4) {
                database = json!({"host": "mariadb.legacy.example.com",
                    "database": "barbican", "secretRef": {"name": "barbican-db"}});
            }
            if rng.one_in(3) {
                database["port"] = json!(rng.pick(&[3306, 3307]));
            }
            if database.get("clusterRef").is_some() && rng.one_in(4) {
                database["credentialsMode"] = json!(rng.pick(&["Static", "Dynamic"]));
            }
            if rng.one_in(3) {
                database["tls"] = json!({"mode": "verify-full",
                    "caBundleSecretRef": {"name": "mariadb-ca"},
                    "clientCertSecretRef": {"name": "barbican-db-client-tls"}});
            }
            database
        }
        "cache" => {
            if rng.one_in(2) {
                json!({"clusterRef": {"name": "openstack-memcached"}})
            } else {
                json!({"servers": rng.pick(&[
                    &["memcached-0.memcached.svc:11211"][..],
                    &["memcached-0.memcached.svc:11211", "memcached-1.memcached.svc:11212"][..],
                ])})
            }
        }
        "serviceUser" => {
            let mut user = json!({"secretRef": {"name": SERVICE_USER_SECRET}});
            if rng.one_in(2) {
                user["username"] = json!(rng.pick(&SERVICE_USERS));
            }
            if rng.one_in(3) {
                user["projectName"] = json!("service");
                user["userDomainName"] = json!("Default");
            }
            user
        }
        _ if rng.one_in(2) => return None,
        "deployment" => {
            let mut deployment = json!({});
            if rng.one_in(2) {
                deployment["replicas"] = json!(1 + rng.below(4));
            }
            if rng.one_in(3) {
                deployment["resources"] = rng
                    .pick(&[
                        json!({"requests": {"cpu": "100m", "memory": "256Mi"},
                            "limits": {"cpu": "1", "memory": "1Gi"}}),
                        json!({"requests": {"cpu": "200m", "memory": "256Mi"},
                            "limits": {"memory": "512Mi", "ephemeral-storage": "1Gi"}}),
                    ])
                    .clone();
            }
            if rng.one_in(3) {
                deployment["terminationGracePeriodSeconds"] = json!(rng.pick(&[45, 90]));
                deployment["preStopSleepSeconds"] = json!(rng.pick(&[5, 20]));
            }
            if rng.one_in(4) {
                deployment["strategy"] = json!({"type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}});
            }
            if rng.one_in(4) {
                deployment["topologySpreadConstraints"] = json!([{"maxSkew": 2,
                    "topologyKey": "topology.kubernetes.io/region",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": NAME}}}]);
            }
            if rng.one_in(4) {
                deployment["priorityClassName"] = json!(PRIORITY_CLASS);
            }
            deployment
        }
        "keystonePublicEndpoint" => json!("https://keystone.example.com/v3"),
        "region" => json!(rng.pick(&["RegionOne", "RegionTwo"])),
        "apiServer" => {
            let mut uwsgi = json!({"processes": 1 + rng.below(4), "threads": 1 + rng.below(2)});
            if rng.one_in(2) {
                uwsgi["harakiri"] = json!(rng.pick(&[30, 60]));
            }
            if rng.one_in(3) {
                uwsgi["httpKeepAlive"] = json!(false);
            }
            json!({"uwsgi": uwsgi})
        }
        "dbClean" => {
            let mut clean = json!({});
            for (field, values) in [
                ("schedule", json!(["@daily", "30 3 * * 1"])),
                ("suspend", json!([true, false])),
                ("retentionDays", json!([7, 30])),
                ("softDeleteExpiredSecrets", json!([true, false])),
                ("cleanUnassociatedProjects", json!([true, false])),
            ] {
                if rng.one_in(2)
                    && let Some(values) = values.as_array()
                {
                    clean[field] = rng.pick(values).clone();
                }
            }
            clean
        }
        "gateway" => {
            let mut parent = json!({"name": rng.pick(&["public-gateway", "internal-gateway"])});
            if rng.one_in(2) {
                parent["namespace"] = json!("gateways");
            }
            if rng.one_in(2) {
                parent["sectionName"] = json!("https");
            }
            let mut gateway = json!({"hostname": rng.pick(&["barbican.example.com", "kms.example.com"]),
                "parentRef": parent});
            if rng.one_in(2) {
                gateway["path"] = json!(rng.pick(&["/", "/key-manager"]));
            }
            if rng.one_in(2) {
                gateway["annotations"] = json!({"example.com/rate-limit": "100"});
            }
            gateway
        }
        "networkPolicy" => {
            let mut source = json!({"namespaceSelector": {"matchLabels":
                {"kubernetes.io/metadata.name": rng.pick(&["openstack", "monitoring"])}}});
            if rng.one_in(2) {
                source["podSelector"] =
                    json!({"matchLabels": {"app.kubernetes.io/part-of": "openstack"}});
            }
            let mut policy = json!({"ingress": [source]});
            if rng.one_in(2) {
                policy["additionalEgress"] = json!([{"to": [{"ipBlock": {"cidr": "192.0.2.0/24"}}],
                    "ports": [{"protocol": "TCP", "port": rng.pick(&[8443, 9443])}]}]);
            }
            policy
        }
        "autoscaling" => {
            let max = 3 + rng.below(4);
            let mut autoscaling = json!({"maxReplicas": max});
            if rng.one_in(2) {
                autoscaling["minReplicas"] = json!(rng.pick(&[1, 2]));
            }
            if rng.one_in(2) {
                autoscaling["targetCPUUtilization"] = json!(rng.pick(&[70, 80]));
            } else {
                autoscaling["targetMemoryUtilization"] = json!(90);
            }
            if rng.one_in(3) {
                autoscaling["targetMemoryUtilization"] = json!(85);
            }
            autoscaling
        }
        "logging" => {
            let mut logging = json!({});
            if rng.one_in(2) {
                logging["format"] = json!(rng.pick(&["json", "text"]));
            }
            if rng.one_in(2) {
                logging["level"] = json!(rng.pick(&["INFO", "WARNING", "DEBUG"]));
            }
            if rng.one_in(3) {
                logging["perLoggerLevels"] = json!({"sqlalchemy.engine": "WARNING"});
            }
            logging
        }
        "secretStoreRef" => json!({"kind": "SecretStore", "name": "openstack-tenant-store"}),
        "policyOverrides" => rng
            .pick(&[
                json!({"rules": {"secrets:get": "role:admin"}}),
                json!({"configMapRef": {"name": "barbican-policy"}}),
                json!({"rules": {"secrets:get": "role:admin or role:creator"},
                    "configMapRef": {"name": "barbican-policy"}}),
            ])
            .clone(),
        "middleware" => json!([{"name": "sizelimit",
            "filterFactory": "oslo_middleware.sizelimit:RequestBodySizeLimiter.factory",
            "position": rng.pick(&["before", "after"]),
            "config": {"max_request_body_size": rng.pick(&["114688", "65536"])}}]),
        "plugins" => json!([{"name": "simple-crypto", "configSection": "simple_crypto_plugin",
            "config": {"plugin_name": rng.pick(&["Software Only Crypto", "Soft Crypto"])}}]),
        "extraConfig" => rng
            .pick(&[
                json!({"DEFAULT": {"max_allowed_secret_in_bytes": "20000"}}),
                json!({"oslo_messaging_notifications": {"driver": "messagingv2"}}),
                json!({"DEFAULT": {"max_allowed_request_size_in_bytes": "30000"},
                    "oslo_messaging_notifications": {"driver": "noop"}}),
            ])
            .clone(),
        _ => return None,
    };
    Some(value)
}

/// A spec at `release` with every block drawn.
fn fresh_spec(rng: &mut Rng, release: &str, namespace: &str) -> Value {
    let mut spec = json!({});
    for name in BLOCKS {
        if let Some(value) = block(rng, name, release) {
            spec[name] = value;
        }
    }
    for name in SIDE_BLOCKS {
        if let Some(value) = side_block(rng, name, namespace) {
            spec[name] = value;
        }
    }
    spec
}

/// The Barbican object with `spec` in `namespace`.
pub fn barbican(namespace: &str, spec: &Value) -> Value {
    json!({"apiVersion": "barbican.openstack.c5c3.io/v1alpha1", "kind": "Barbican",
        "metadata": {"name": NAME, "namespace": namespace}, "spec": spec})
}

/// The store object `name` in `namespace`.
pub fn store(namespace: &str, name: &str, store: Store) -> Value {
    let spec = if store.brownfield {
        json!({"barbicanRef": {"name": NAME}, "type": "OpenBao", "isDefault": store.default,
            "openBao": {"server": {"url": "https://vault.example.com:8200",
                "caBundleSecretRef": {"name": "vault-ca"},
                "credentialsSecretRef": {"name": "vault-barbican-approle"}},
                "kvMountpoint": "secret-barbican", "namespace": namespace}})
    } else {
        json!({"barbicanRef": {"name": NAME}, "type": "OpenBao", "isDefault": store.default,
            "openBao": {"instanceRef": {"name": "openbao-instance"}}})
    };
    json!({"apiVersion": "barbican.openstack.c5c3.io/v1alpha1", "kind": "BarbicanSecretStore",
        "metadata": {"name": name, "namespace": namespace}, "spec": spec})
}

/// The writes from `from` (`None`: an empty namespace) to `to`, in a user's order.
pub fn writes(from: Option<&Version>, to: &Version) -> Vec<Write> {
    let empty = BTreeMap::new();
    let before = from.map_or(&empty, |v| &v.stores);
    let mut deletes = vec![];
    let mut defaults_off = vec![];
    let mut rest = vec![];
    for (name, old) in before {
        match to.stores.get(name) {
            None => deletes.push(Write::DeleteStore(name.clone())),
            Some(new) if new.brownfield != old.brownfield => {
                deletes.push(Write::DeleteStore(name.clone()));
                rest.push(Write::ApplyStore(name.clone(), *new));
            }
            Some(new) if new != old && old.default && !new.default => {
                defaults_off.push(Write::ApplyStore(name.clone(), *new));
            }
            Some(new) if new != old => rest.push(Write::ApplyStore(name.clone(), *new)),
            Some(_) => {}
        }
    }
    for (name, new) in &to.stores {
        if !before.contains_key(name) {
            rest.push(Write::ApplyStore(name.clone(), *new));
        }
    }
    let mut all = deletes;
    all.extend(defaults_off);
    all.extend(rest);
    if from.is_none_or(|v| v.spec != to.spec) {
        all.push(Write::ApplyBarbican(to.spec.clone()));
    }
    all
}

/// Whether every write from `from` to `to` is admitted, in order, by the admission functions:
/// the error names the first refusal.
pub fn admitted(namespace: &str, from: Option<&Version>, to: &Version) -> Result<(), String> {
    let typed = |value: Value| -> Result<BarbicanSecretStore, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    };
    let mut stores: BTreeMap<String, BarbicanSecretStore> = BTreeMap::new();
    for (name, s) in from.map(|v| v.stores.clone()).unwrap_or_default() {
        stores.insert(name.clone(), typed(store(namespace, &name, s))?);
    }
    let known = |stores: &BTreeMap<String, BarbicanSecretStore>| KnownState {
        priority_classes: vec![PRIORITY_CLASS.to_string()],
        secret_stores: stores.values().cloned().collect(),
        unavailable: None,
    };
    let old_barbican: Option<Barbican> = from
        .map(|v| serde_json::from_value(barbican(namespace, &v.spec)))
        .transpose()
        .map_err(|e| e.to_string())?;
    for write in writes(from, to) {
        match write {
            Write::DeleteStore(name) => {
                stores.remove(&name);
            }
            Write::ApplyStore(name, s) => {
                let new = typed(store(namespace, &name, s))?;
                let old = stores.get(&name).cloned();
                let operation = if old.is_some() {
                    Operation::Update
                } else {
                    Operation::Create
                };
                let verdict = validate_secret_store(operation, old.as_ref(), &new, &known(&stores));
                if !verdict.allowed() {
                    return Err(format!("store {name}: {}", verdict.message()));
                }
                stores.insert(name, new);
            }
            Write::ApplyBarbican(spec) => {
                let schema_errors = barbican_sim::schema::validate(
                    &barbican_schema(),
                    &barbican(namespace, &spec),
                    "",
                );
                if let Some(e) = schema_errors.first() {
                    return Err(format!("Barbican: the schema refuses {e}"));
                }
                let new: Barbican = serde_json::from_value(barbican(namespace, &spec))
                    .map_err(|e| format!("the generated spec does not parse: {e}"))?;
                let operation = if old_barbican.is_some() {
                    Operation::Update
                } else {
                    Operation::Create
                };
                let verdict =
                    validate_barbican(operation, old_barbican.as_ref(), &new, &known(&stores));
                if !verdict.allowed() {
                    return Err(format!("Barbican: {}", verdict.message()));
                }
            }
        }
    }
    Ok(())
}

/// The Barbican CRD's `openAPIV3Schema`: what the API server checks before admission runs.
pub fn barbican_schema() -> Value {
    use kube::CustomResourceExt;
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            serde_json::to_value(Barbican::crd())
                .map(|crd| crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone())
                .unwrap_or_default()
        })
        .clone()
}

/// The release a version names (`openStackRelease`).
pub fn release_of(version: &Version) -> String {
    version.spec["openStackRelease"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Whether `to`'s release is `from`'s or the one after it: the release gate's path, one
/// release at a time. A shrunk sequence must keep it: taking 2026.1 out of 2025.2 → 2026.1 →
/// 2026.2 leaves a skip the gate refuses by design (seed 10898's first shrink did).
pub fn release_follows(from: &Version, to: &Version) -> bool {
    let (from, to) = (release_of(from), release_of(to));
    if from == to {
        return true;
    }
    let all = releases();
    all.iter()
        .position(|r| *r == from)
        .and_then(|i| all.get(i.saturating_add(1)))
        .is_some_and(|next| *next == to)
}

/// Whether `version` converges to Ready, so the schema reaches its release: a default store
/// exists (the Barbican waits for one otherwise).
pub fn installs(version: &Version) -> bool {
    version.stores.values().any(|s| s.default)
}

/// The properties that are plain values: nothing inside them to take away.
const REQUIRED_SCALARS: [&str; 4] = [
    "openStackRelease",
    "keystoneEndpoint",
    "keystonePublicEndpoint",
    "region",
];

/// Removes one field somewhere inside `value` (a map, or an item of a list of maps): a key of
/// a nested map one time in two, else a key at this level.
fn take_one_field_away(rng: &mut Rng, value: &mut Value) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = rng.pick(&keys).clone();
            let nested = map
                .get(&key)
                .is_some_and(|v| v.as_object().is_some_and(|m| !m.is_empty()) || v.is_array());
            if nested && rng.one_in(2) {
                if let Some(inner) = map.get_mut(&key) {
                    take_one_field_away(rng, inner);
                }
            } else {
                map.remove(&key);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let at = rng.below(items.len() as u64) as usize;
            if let Some(item) = items.get_mut(at) {
                take_one_field_away(rng, item);
            }
        }
        _ => {}
    }
}

/// One edit of `from`: a few blocks drawn again, one field taken away, a store edit, or a
/// release bump.
fn edit(rng: &mut Rng, from: &Version, installed: Option<&str>, namespace: &str) -> Version {
    let mut to = from.clone();
    let release = release_of(from);
    match rng.below(8) {
        // A release bump with its image, only from an installed release (the gate's rule).
        0 if installed == Some(release.as_str()) => {
            let all = releases();
            if let Some(next) = all
                .iter()
                .position(|r| *r == release)
                .and_then(|i| all.get(i + 1))
            {
                to.spec["openStackRelease"] = json!(next);
                to.spec["image"] = image(rng, next);
            }
        }
        1 | 2 => {
            let mut stores = to.stores.clone();
            let name = rng.pick(&STORE_NAMES).to_string();
            match (stores.get(&name).copied(), rng.below(3)) {
                (None, _) => {
                    let default = !stores.values().any(|s| s.default) && !rng.one_in(4);
                    stores.insert(
                        name,
                        Store {
                            brownfield: rng.one_in(2),
                            default,
                        },
                    );
                }
                (Some(_), 0) => {
                    stores.remove(&name);
                }
                (Some(s), 1) => {
                    stores.insert(
                        name,
                        Store {
                            brownfield: !s.brownfield,
                            ..s
                        },
                    );
                }
                (Some(s), _) => {
                    // Moving the default here: the old default stops being default first.
                    for other in stores.values_mut() {
                        other.default = false;
                    }
                    stores.insert(
                        name,
                        Store {
                            default: !s.default,
                            ..s
                        },
                    );
                }
            }
            to.stores = stores;
        }
        // One field taken away and nothing else: what a converged pass must not skip.
        3..=5 => {
            let present: Vec<&str> = BLOCKS
                .iter()
                .copied()
                .filter(|b| !REQUIRED_SCALARS.contains(b) && to.spec.get(*b).is_some())
                .collect();
            if !present.is_empty() {
                let name = *rng.pick(&present);
                take_one_field_away(rng, &mut to.spec[name]);
            }
        }
        _ => {
            for _ in 0..=rng.below(3) {
                let name = *rng.pick(&BLOCKS);
                if matches!(name, "openStackRelease" | "image" | "targetClusterRef") {
                    continue;
                }
                match block(rng, name, &release) {
                    Some(value) => to.spec[name] = value,
                    None => {
                        if let Some(spec) = to.spec.as_object_mut() {
                            spec.remove(name);
                        }
                    }
                }
            }
        }
    }
    // One edit in four also redraws a side block, from the side stream of where the main
    // stream now stands.
    if side(rng, "edit").one_in(4) {
        for name in SIDE_BLOCKS {
            match side_block(rng, name, namespace) {
                Some(value) => to.spec[name] = value,
                None => {
                    if let Some(spec) = to.spec.as_object_mut() {
                        spec.remove(name);
                    }
                }
            }
        }
    }
    to
}

/// The sequence of seed `seed`: a first version and `steps` admitted edits of it.
pub fn sequence(seed: u64, steps: usize, namespace: &str) -> Result<Vec<Version>, String> {
    let mut rng = Rng(seed);
    let all = releases();
    // Leave room for a bump or two.
    let release = all[rng.below(all.len().saturating_sub(1).max(1) as u64) as usize];
    let mut first = None;
    for _ in 0..100 {
        let candidate = Version {
            spec: fresh_spec(&mut rng, release, namespace),
            stores: BTreeMap::from([(
                STORE_NAMES[0].to_string(),
                Store {
                    brownfield: rng.one_in(3),
                    default: !rng.one_in(8),
                },
            )]),
        };
        if admitted(namespace, None, &candidate).is_ok() {
            first = Some(candidate);
            break;
        }
    }
    let first = first.ok_or_else(|| format!("seed {seed}: no admitted first spec in 100 draws"))?;
    let mut versions = vec![first];
    let mut installed = None;
    while versions.len() <= steps {
        let Some(last) = versions.last().cloned() else {
            break;
        };
        if installs(&last) {
            installed = Some(release_of(&last));
        }
        let mut next = None;
        for _ in 0..100 {
            let candidate = edit(&mut rng, &last, installed.as_deref(), namespace);
            // The last version must be installable: without a default store the projection
            // is invalid, and the spec keeps the last good one (history, by design).
            let last_step = versions.len() == steps;
            if candidate != last
                && (!last_step || installs(&candidate))
                && gate_admits(&candidate, installed.as_deref())
                && admitted(namespace, Some(&last), &candidate).is_ok()
            {
                next = Some(candidate);
                break;
            }
        }
        if next.is_none() {
            // Stuck (the last version must install, and no drawn edit both installs and is
            // admitted): make the attached store the default, or attach a managed default
            // one, the edit a user would make (a Barbican has one OpenBao store).
            let mut fix = last.clone();
            match fix.stores.values_mut().next() {
                Some(store) => store.default = true,
                None => {
                    fix.stores.insert(
                        STORE_NAMES[0].to_string(),
                        Store {
                            brownfield: false,
                            default: true,
                        },
                    );
                }
            }
            if fix != last
                && gate_admits(&fix, installed.as_deref())
                && admitted(namespace, Some(&last), &fix).is_ok()
            {
                next = Some(fix);
            }
        }
        versions.push(next.ok_or_else(|| format!("seed {seed}: no admitted edit in 100 draws"))?);
    }
    Ok(versions)
}

/// Whether the release gate would let `version` run against the `installed` release.
fn gate_admits(version: &Version, installed: Option<&str>) -> bool {
    let release = release_of(version);
    let tag = version.spec["image"]["tag"].as_str();
    release::tag_mismatch(tag, &release).is_none()
        && match installed {
            None => true,
            Some(installed) => {
                installed == release
                    || release::parse(installed)
                        .is_ok_and(|i| release::parse(&release).is_ok_and(|r| r == i.next()))
            }
        }
}
