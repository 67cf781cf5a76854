//! What a new kube-apiserver holds before anyone writes: the `default/kubernetes` Service that
//! points at the API server itself, and the bootstrap ClusterRoles (`cluster-admin`, and the
//! user-facing `admin`, `edit` and `view` that RoleBindings refer to), with `cluster-admin`
//! bound to the `system:masters` group, and the healthy ComponentStatuses (deprecated, still
//! served: kube-rs's event recorder test reads `scheduler`). The default namespaces are the store's to create
//! (with a `default` ServiceAccount each, as every namespace gets).

use serde_json::{Value, json};

/// The resources `view` reads: the namespaced kinds of everyday use.
const VIEWED: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "pods",
            "pods/log",
            "pods/status",
            "replicationcontrollers",
            "serviceaccounts",
            "services",
            "events",
            "limitranges",
            "resourcequotas",
            "namespaces",
        ],
    ),
    (
        "apps",
        &[
            "daemonsets",
            "deployments",
            "deployments/scale",
            "replicasets",
            "statefulsets",
        ],
    ),
    ("autoscaling", &["horizontalpodautoscalers"]),
    ("batch", &["cronjobs", "jobs"]),
    ("policy", &["poddisruptionbudgets"]),
    ("networking.k8s.io", &["ingresses", "networkpolicies"]),
    ("discovery.k8s.io", &["endpointslices"]),
    ("events.k8s.io", &["events"]),
];

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];

/// The objects to create, each as (group, plural, namespace, object).
pub fn objects() -> Vec<(&'static str, &'static str, &'static str, Value)> {
    let labels = json!({"kubernetes.io/bootstrapping": "rbac-defaults"});
    let role = |name: &str, rules: Vec<Value>| {
        json!({"metadata": {"name": name, "labels": labels,
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
            "rules": rules})
    };
    let rules = |verbs: &[&str], secrets: bool| -> Vec<Value> {
        VIEWED
            .iter()
            .map(|(group, resources)| {
                let mut resources: Vec<&str> = resources.to_vec();
                if secrets && group.is_empty() {
                    resources.push("secrets");
                }
                json!({"apiGroups": [group], "resources": resources, "verbs": verbs})
            })
            .collect()
    };
    let all_verbs: Vec<&str> = READ.iter().chain(WRITE).copied().collect();
    let view = rules(READ, false);
    let edit: Vec<Value> = rules(&all_verbs, true);
    let mut admin = edit.clone();
    admin.push(json!({"apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["roles", "rolebindings"], "verbs": all_verbs}));
    admin.push(json!({"apiGroups": ["authorization.k8s.io"],
        "resources": ["localsubjectaccessreviews"], "verbs": ["create"]}));
    let rbac = "rbac.authorization.k8s.io";
    let namespace = |name: &str| json!({"metadata": {"name": name}});
    vec![
        // Namespaces first: the objects after them live in them.
        ("", "namespaces", "", namespace("default")),
        ("", "namespaces", "", namespace("kube-system")),
        ("", "namespaces", "", namespace("kube-public")),
        (
            "",
            "services",
            "default",
            json!({"metadata": {"name": "kubernetes",
                "labels": {"component": "apiserver", "provider": "kubernetes"}},
                "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1",
                    "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                        "targetPort": 6443}]}}),
        ),
        (
            rbac,
            "clusterroles",
            "",
            role(
                "cluster-admin",
                vec![
                    json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}),
                    json!({"nonResourceURLs": ["*"], "verbs": ["*"]}),
                ],
            ),
        ),
        (rbac, "clusterroles", "", role("admin", admin)),
        (rbac, "clusterroles", "", role("edit", edit)),
        (rbac, "clusterroles", "", role("view", view)),
        (
            rbac,
            "clusterrolebindings",
            "",
            json!({"metadata": {"name": "cluster-admin", "labels": labels,
                "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
                "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "cluster-admin"},
                "subjects": [{"apiGroup": rbac, "kind": "Group", "name": "system:masters"}]}),
        ),
    ]
    .into_iter()
    .chain(COMPONENTS.iter().map(|name| {
        (
            "",
            "componentstatuses",
            "",
            json!({"metadata": {"name": name},
                "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}),
        )
    }))
    .collect()
}

/// The components `kubectl get componentstatuses` reports on (kube-apiserver probes them on
/// every read; the sim's are always healthy).
const COMPONENTS: [&str; 3] = ["scheduler", "controller-manager", "etcd-0"];
