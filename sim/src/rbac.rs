//! RBAC (`rbac.authorization.k8s.io/v1`): which requests a service account may make, decided
//! as kube-apiserver's RBAC authorizer decides them, so a chart's ClusterRole can be checked
//! against what a controller really sends (see [`crate::Cluster::enforce_rbac`]).
//!
//! A request is turned into attributes ([`attributes`]: verb, API group, resource,
//! subresource, namespace, name), and allowed when a rule of a role bound to the caller
//! matches them ([`allows`]). Discovery and other non-resource paths are open to every
//! authenticated caller, as the default `system:discovery` binding makes them.

use serde_json::Value;

/// What a request asks to do, in the terms RBAC rules are written in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Attributes {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete` or `deletecollection`.
    pub verb: String,
    /// The API group (`""` for the core group).
    pub group: String,
    /// The API version the request names.
    pub version: String,
    /// The resource's plural name.
    pub resource: String,
    /// The subresource (`status`, `token`, `proxy`, `portforward`), empty when none.
    pub subresource: String,
    /// The namespace, empty for cluster-scoped requests.
    pub namespace: String,
    /// The object's name, empty for collection requests.
    pub name: String,
}

impl Attributes {
    /// The resource as a rule names it: `pods` or `pods/portforward`.
    pub fn rule_resource(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }
}

/// The attributes of a request with `method` to `target` (the path, with or without its
/// query; `watch=true` there makes a read a watch). `None` for a non-resource path (discovery,
/// `/version`, OpenAPI).
pub fn attributes(method: &str, target: &str) -> Option<Attributes> {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let watch = query
        .split('&')
        .any(|p| p == "watch=true" || p == "watch=1");
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, version, mut rest) = match parts.as_slice() {
        ["api", version, rest @ ..] if !rest.is_empty() => {
            (String::new(), version.to_string(), rest)
        }
        ["apis", group, version, rest @ ..] if !rest.is_empty() => {
            (group.to_string(), version.to_string(), rest)
        }
        _ => return None,
    };
    let mut namespace = "";
    // `namespaces/<ns>/<resource>...` is namespaced; `namespaces/<ns>` alone is the Namespace.
    if rest.len() >= 3 && rest[0] == "namespaces" {
        namespace = rest[1];
        rest = &rest[2..];
    } else if rest.len() >= 2 && rest[0] == "namespaces" {
        namespace = rest[1];
    }
    let resource = rest.first()?.to_string();
    let name = rest.get(1).copied().unwrap_or_default().to_string();
    let subresource = rest.get(2).copied().unwrap_or_default().to_string();
    let verb = match (method, name.is_empty()) {
        _ if watch => "watch",
        // Port-forward, exec and attach are WebSocket upgrades of a GET; kube-apiserver 1.35
        // and later authorize them as `create` (AuthorizePodWebsocketUpgradeCreatePermission),
        // as the SPDY POST always was.
        ("GET", false) if matches!(subresource.as_str(), "portforward" | "exec" | "attach") => {
            "create"
        }
        ("GET" | "HEAD", false) => "get",
        ("GET" | "HEAD", true) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", false) => "delete",
        ("DELETE", true) => "deletecollection",
        (other, _) => return Some(Attributes::unknown(other, group, version, resource)),
    };
    Some(Attributes {
        verb: verb.to_string(),
        group,
        version,
        resource,
        subresource,
        namespace: namespace.to_string(),
        name,
    })
}

impl Attributes {
    fn unknown(method: &str, group: String, version: String, resource: String) -> Self {
        Self {
            verb: method.to_ascii_lowercase(),
            group,
            version,
            resource,
            subresource: String::new(),
            namespace: String::new(),
            name: String::new(),
        }
    }
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// Whether one `PolicyRule` allows the request.
pub fn rule_allows(rule: &Value, request: &Attributes) -> bool {
    let groups = strings(&rule["apiGroups"]);
    let resources = strings(&rule["resources"]);
    let verbs = strings(&rule["verbs"]);
    let names = strings(&rule["resourceNames"]);
    let resource = request.rule_resource();
    let resource_matches = resources.iter().any(|r| {
        *r == "*"
            || *r == resource
            || (request.subresource.is_empty() && *r == request.resource)
            || r.strip_prefix("*/") == Some(request.subresource.as_str())
                && !request.subresource.is_empty()
            || r.strip_suffix("/*") == Some(request.resource.as_str())
                && !request.subresource.is_empty()
    });
    groups.iter().any(|g| *g == "*" || *g == request.group)
        && resource_matches
        && verbs.iter().any(|v| *v == "*" || *v == request.verb)
        && (names.is_empty() || names.contains(&request.name.as_str()))
}

/// Whether any rule of `rules` allows the request.
pub fn allows(rules: &[Value], request: &Attributes) -> bool {
    rules.iter().any(|rule| rule_allows(rule, request))
}

/// A service account, the caller RBAC decides for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceAccount {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl ServiceAccount {
    /// The user name kube-apiserver gives it.
    pub fn user(&self) -> String {
        format!("system:serviceaccount:{}:{}", self.namespace, self.name)
    }

    /// Whether a binding's subject names this account: itself, its user name, or one of the
    /// groups every service account (of its namespace) is in.
    pub fn is_subject(&self, subject: &Value) -> bool {
        let name = subject["name"].as_str().unwrap_or_default();
        match subject["kind"].as_str().unwrap_or_default() {
            "ServiceAccount" => {
                name == self.name
                    && subject["namespace"].as_str().unwrap_or_default() == self.namespace
            }
            "User" => name == self.user(),
            "Group" => {
                name == "system:authenticated"
                    || name == "system:serviceaccounts"
                    || name == format!("system:serviceaccounts:{}", self.namespace)
            }
            _ => false,
        }
    }
}

/// The RBAC objects of a cluster, as stored.
#[derive(Debug, Default)]
pub struct Policy {
    /// ClusterRoles.
    pub cluster_roles: Vec<Value>,
    /// ClusterRoleBindings.
    pub cluster_role_bindings: Vec<Value>,
    /// Roles.
    pub roles: Vec<Value>,
    /// RoleBindings.
    pub role_bindings: Vec<Value>,
}

impl Policy {
    fn role_rules(&self, role_ref: &Value, namespace: &str) -> Vec<Value> {
        let name = role_ref["name"].as_str().unwrap_or_default();
        let (objects, namespace) = match role_ref["kind"].as_str() {
            Some("ClusterRole") => (&self.cluster_roles, None),
            Some("Role") => (&self.roles, Some(namespace)),
            _ => return vec![],
        };
        objects
            .iter()
            .filter(|o| o["metadata"]["name"] == name)
            .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns))
            .flat_map(|o| o["rules"].as_array().cloned().unwrap_or_default())
            .collect()
    }

    /// Whether `account` may make `request`: a ClusterRoleBinding anywhere, or a RoleBinding
    /// in the request's namespace, binds it to a role with a matching rule.
    pub fn authorizes(&self, account: &ServiceAccount, request: &Attributes) -> bool {
        let binds = |binding: &Value| {
            binding["subjects"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| account.is_subject(s))
        };
        let cluster_wide = self
            .cluster_role_bindings
            .iter()
            .filter(|b| binds(b))
            .any(|b| allows(&self.role_rules(&b["roleRef"], ""), request));
        cluster_wide
            || (!request.namespace.is_empty()
                && self
                    .role_bindings
                    .iter()
                    .filter(|b| b["metadata"]["namespace"] == request.namespace.as_str())
                    .filter(|b| binds(b))
                    .any(|b| allows(&self.role_rules(&b["roleRef"], &request.namespace), request)))
    }
}

/// One authorization decision, as [`crate::Cluster::rbac_checks`] reports it: who asked for
/// which verb on which resource, and whether RBAC allowed it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Check {
    /// The caller's user name (`system:serviceaccount:<namespace>:<name>`).
    pub user: String,
    /// The API group.
    pub group: String,
    /// The resource as a rule names it (`pods/portforward`).
    pub resource: String,
    /// The verb.
    pub verb: String,
    /// Whether a rule allowed it.
    pub allowed: bool,
}

impl Check {
    /// The decision `allowed` for `account` making `request`.
    pub fn of(account: &ServiceAccount, request: &Attributes, allowed: bool) -> Self {
        Self {
            user: account.user(),
            group: request.group.clone(),
            resource: request.rule_resource(),
            verb: request.verb.clone(),
            allowed,
        }
    }
}

/// kube-apiserver's message for a denied request.
pub fn forbidden_message(account: &ServiceAccount, request: &Attributes) -> String {
    let object = if request.name.is_empty() {
        request.rule_resource()
    } else {
        format!("{} \"{}\"", request.rule_resource(), request.name)
    };
    let scope = if request.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{}\"", request.namespace)
    };
    format!(
        "{object} is forbidden: User \"{}\" cannot {} resource \"{}\" in API group \"{}\" {scope}",
        account.user(),
        request.verb,
        request.rule_resource(),
        request.group
    )
}
