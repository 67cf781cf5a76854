//! Go's zero value of each built-in kind, as far as field ownership can tell it apart from an
//! empty object: the struct fields that are values, not pointers.
//!
//! kube-apiserver's field manager records an ordinary write (create, update, patch) by comparing
//! the object before it with the object after it (structured-merge-diff's `Compare`), and a
//! create compares with `New()` of the kind, whose JSON already holds every value-typed struct
//! (`spec`, `status`, a Deployment's `spec.template`, …). A map or struct the write adds where
//! the object before had none becomes a member of its own, written `.` in FieldsV1 beside its
//! fields; one already present in the zero value does not. A custom resource's zero value is an
//! empty object: everything a create writes under it is added.
//!
//! The paths come from the Go types (`k8s.io/api/*/v1`): a field listed here is a struct value in
//! its parent struct, never a pointer, a map or a list.

use serde_json::{Map, Value};

/// Where a kind holds a pod spec: the shared table of the workloads
/// ([`crate::validation::pod_spec_path`]) and a PodTemplate's own.
fn pod_spec_path(group: &str, kind: &str) -> Option<&'static str> {
    crate::validation::pod_spec_path(group, kind).or_else(|| {
        (group, kind)
            .eq(&("", "PodTemplate"))
            .then_some("template.spec")
    })
}

/// The lists a kind's zero value holds as `null`: Go fields without `omitempty` (a pod spec's
/// `containers`, a role's `rules`). A write that fills one does not add it as a member.
fn null_lists(group: &str, kind: &str) -> Vec<String> {
    if let Some(spec) = pod_spec_path(group, kind) {
        return vec![format!("{spec}.containers")];
    }
    match (group, kind) {
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole") => vec!["rules".into()],
        ("discovery.k8s.io", "EndpointSlice") => vec!["endpoints".into()],
        _ => Vec::new(),
    }
}

/// The value-typed struct fields of a built-in `kind`, as dotted paths from the object's root;
/// a path's parents are struct values too (made by [`zero_object`]).
fn value_structs(group: &str, kind: &str) -> Vec<String> {
    let own: &[&str] = match (group, kind) {
        (
            "",
            "Pod" | "Namespace" | "PersistentVolume" | "ReplicationController" | "ResourceQuota",
        )
        | ("policy", "PodDisruptionBudget") => &["spec", "status"],
        ("", "LimitRange") | ("coordination.k8s.io", "Lease") => &["spec"],
        ("", "PersistentVolumeClaim") => &["spec.resources", "status"],
        ("", "Service") | ("networking.k8s.io", "Ingress") => &["spec", "status.loadBalancer"],
        ("", "Node") => &[
            "spec",
            "status.daemonEndpoints.kubeletEndpoint",
            "status.nodeInfo",
        ],
        ("", "Event") => &["involvedObject", "source"],
        ("events.k8s.io", "Event") => &["regarding"],
        ("apps", "Deployment") => &["spec.strategy", "status"],
        ("apps", "ReplicaSet") | ("batch", "Job") => &["status"],
        ("apps", "StatefulSet" | "DaemonSet") => &["spec.updateStrategy", "status"],
        ("batch", "CronJob") => &["spec.jobTemplate.metadata", "status"],
        ("autoscaling", "HorizontalPodAutoscaler") => &["spec.scaleTargetRef", "status"],
        ("networking.k8s.io", "NetworkPolicy") => &["spec.podSelector"],
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => &["roleRef"],
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            &["spec.names", "status.acceptedNames"]
        }
        _ => &[],
    };
    let mut paths: Vec<String> = own.iter().map(|p| p.to_string()).collect();
    // A pod template's metadata and spec are values wherever one is held.
    if let Some(template) = pod_spec_path(group, kind).and_then(|s| s.strip_suffix(".spec")) {
        paths.extend([format!("{template}.metadata"), format!("{template}.spec")]);
    }
    paths
}

/// The zero value of a built-in kind as its JSON shows the value-typed structs and the `null`
/// lists: each struct an object (empty unless something lies under it). A kind whose zero
/// value holds none (a ConfigMap, a Secret), and a group and kind the table does not know,
/// get an empty object.
pub fn zero_object(api_version: &str, kind: &str) -> Value {
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    let mut root = Map::new();
    for path in value_structs(group, kind) {
        let fields: Vec<&str> = path.split('.').collect();
        object_at(&mut root, &fields);
    }
    for path in null_lists(group, kind) {
        let mut fields: Vec<&str> = path.split('.').collect();
        let last = fields.pop().unwrap_or_default();
        object_at(&mut root, &fields).insert(last.to_string(), Value::Null);
    }
    Value::Object(root)
}

/// The object at `fields` under `node`, made (empty) where missing.
fn object_at<'a>(node: &'a mut Map<String, Value>, fields: &[&str]) -> &'a mut Map<String, Value> {
    let Some((first, rest)) = fields.split_first() else {
        return node;
    };
    let child = node
        .entry(first.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !child.is_object() {
        *child = Value::Object(Map::new());
    }
    match child {
        Value::Object(map) => object_at(map, rest),
        _ => unreachable!("made an object above"),
    }
}
