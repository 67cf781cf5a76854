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

/// A pod template's value-typed structs, relative to the field that holds the template.
const TEMPLATE: &[&str] = &["template", "template.metadata", "template.spec"];

/// The lists a kind's zero value holds as `null`: Go fields without `omitempty` (a pod spec's
/// `containers`, a role's `rules`). A write that fills one does not add it as a member.
fn null_lists(group: &str, kind: &str) -> Vec<String> {
    let pod_spec = match (group, kind) {
        ("", "Pod") => Some("spec"),
        ("", "PodTemplate") => Some("template.spec"),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") | ("batch", "Job") => {
            Some("spec.template.spec")
        }
        ("batch", "CronJob") => Some("spec.jobTemplate.spec.template.spec"),
        _ => None,
    };
    match (group, kind, pod_spec) {
        (_, _, Some(spec)) => vec![format!("{spec}.containers")],
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole", _) => vec!["rules".into()],
        ("discovery.k8s.io", "EndpointSlice", _) => vec!["endpoints".into()],
        _ => Vec::new(),
    }
}

/// The value-typed struct fields of a built-in `kind`, as dotted paths from the object's root.
fn value_structs(group: &str, kind: &str) -> Vec<String> {
    let spec_status = || vec!["spec".to_string(), "status".to_string()];
    let under = |prefix: &str, paths: &[&str]| -> Vec<String> {
        paths.iter().map(|p| format!("{prefix}.{p}")).collect()
    };
    let mut paths = match (group, kind) {
        ("", "Pod" | "Namespace" | "PersistentVolume" | "ReplicationController")
        | ("", "ResourceQuota")
        | ("policy", "PodDisruptionBudget") => spec_status(),
        ("", "LimitRange") | ("coordination.k8s.io", "Lease") => vec!["spec".into()],
        ("", "PersistentVolumeClaim") => {
            let mut p = spec_status();
            p.push("spec.resources".into());
            p
        }
        ("", "Service") | ("networking.k8s.io", "Ingress") => {
            let mut p = spec_status();
            p.push("status.loadBalancer".into());
            p
        }
        ("", "Node") => {
            let mut p = spec_status();
            p.extend(
                [
                    "status.daemonEndpoints",
                    "status.daemonEndpoints.kubeletEndpoint",
                ]
                .map(String::from),
            );
            p.push("status.nodeInfo".into());
            p
        }
        ("", "PodTemplate") => TEMPLATE.iter().map(|p| p.to_string()).collect(),
        ("", "Event") => vec!["involvedObject".into(), "source".into()],
        ("events.k8s.io", "Event") => vec!["regarding".into()],
        ("apps", "Deployment") => {
            let mut p = spec_status();
            p.extend(under("spec", TEMPLATE));
            p.push("spec.strategy".into());
            p
        }
        ("apps", "ReplicaSet") | ("batch", "Job") => {
            let mut p = spec_status();
            p.extend(under("spec", TEMPLATE));
            p
        }
        ("apps", "StatefulSet" | "DaemonSet") => {
            let mut p = spec_status();
            p.extend(under("spec", TEMPLATE));
            p.push("spec.updateStrategy".into());
            p
        }
        ("batch", "CronJob") => {
            let mut p = spec_status();
            p.extend(
                [
                    "spec.jobTemplate",
                    "spec.jobTemplate.metadata",
                    "spec.jobTemplate.spec",
                ]
                .map(String::from),
            );
            p.extend(under("spec.jobTemplate.spec", TEMPLATE));
            p
        }
        ("autoscaling", "HorizontalPodAutoscaler") => {
            let mut p = spec_status();
            p.push("spec.scaleTargetRef".into());
            p
        }
        ("networking.k8s.io", "NetworkPolicy") => vec!["spec".into(), "spec.podSelector".into()],
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => {
            vec!["roleRef".into()]
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            let mut p = spec_status();
            p.extend(["spec.names", "status.acceptedNames"].map(String::from));
            p
        }
        _ => Vec::new(),
    };
    paths.sort();
    paths
}

/// The zero value of a built-in kind as its JSON shows the value-typed structs and the `null`
/// lists: each struct an object (empty unless something lies under it). `None` for a kind whose zero value
/// holds none (a ConfigMap, a Secret) and for a group and kind the table does not know: an
/// empty object.
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
