//! The resource types a cluster serves: the built-in ones the operator and kubectl need, and
//! those of every CustomResourceDefinition installed at runtime.

use std::{collections::BTreeMap, sync::Arc};

use kube::core::cel::CompiledSchema;
use serde_json::Value;

/// The CEL rules of a schema, compiled once when the CRD is installed rather than on every
/// write.
#[derive(Clone)]
pub struct CompiledRules(pub Arc<CompiledSchema>);

impl std::fmt::Debug for CompiledRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledRules")
    }
}

/// Compiled from the same schema, so equal exactly when they are the same compilation.
impl PartialEq for CompiledRules {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CompiledRules {}

/// One served resource type at one version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceType {
    /// API group; empty for core.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name, as in URLs.
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether `status` is a subresource (main writes ignore it, status writes touch only it).
    pub status_subresource: bool,
    /// Short names for kubectl.
    pub short_names: Vec<String>,
    /// Printer columns (from a CRD), as the CRD declares them.
    pub printer_columns: Vec<Value>,
    /// The structural schema of a CRD version: writes are pruned to it and defaulted from it.
    /// Shared: every request clones its resource type, and a CRD's schema is large.
    pub schema: Option<Arc<Value>>,
    /// The schema's `x-kubernetes-validations`, compiled.
    pub rules: Option<CompiledRules>,
    /// The categories it belongs to (`kubectl get all` lists the `all` category).
    pub categories: Vec<String>,
    /// Where its `scale` subresource reads and writes, when it has one.
    pub scale: Option<ScalePaths>,
    /// The fields a field selector may name beyond `metadata.name` and `metadata.namespace`
    /// (a built-in kind's list; a CRD version's `selectableFields`), dotted, no leading dot.
    pub selectable_fields: Vec<String>,
}

/// A `scale` subresource: the JSON paths (`.spec.replicas`) of the desired and observed
/// replicas and of the label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalePaths {
    /// The desired replicas, written by a scale.
    pub spec_replicas: String,
    /// The observed replicas.
    pub status_replicas: String,
    /// The label selector: a string in the object, or a structured LabelSelector at
    /// `.spec.selector` for the built-in workloads.
    pub label_selector: Option<String>,
}

impl ScalePaths {
    /// The built-in workloads' scale: `.spec.replicas`, `.status.replicas`, `.spec.selector`.
    fn workload() -> Self {
        Self {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".spec.selector".into()),
        }
    }
}

impl ResourceType {
    /// `group/version`, or `version` for core.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether `api_version` is [`ResourceType::api_version`], compared without building it
    /// (asked for every object a list or watch presents).
    pub fn is_api_version(&self, api_version: &str) -> bool {
        if self.group.is_empty() {
            api_version == self.version
        } else {
            api_version
                .strip_prefix(self.group.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                == Some(self.version.as_str())
        }
    }

    /// The storage key: objects are shared across the versions of a group and kind, and
    /// across the two Event APIs (see [`crate::versions`]).
    pub fn storage_key(&self) -> String {
        let (group, plural) = self.storage();
        format!("{group}/{plural}")
    }

    /// Whether this is a built-in kind, served from Go types: a CRD's version always has a
    /// structural schema (apiextensions.k8s.io/v1 requires one), a built-in kind none here.
    pub fn is_builtin(&self) -> bool {
        self.schema.is_none()
    }

    /// The items of a list as kube-apiserver encodes them: a built-in kind's list is a typed
    /// Go list whose items carry no `apiVersion` and `kind`; a custom resource's list is
    /// unstructured, each item whole.
    pub fn list_items(&self, mut items: Vec<Value>) -> Vec<Value> {
        if self.is_builtin() {
            for item in &mut items {
                if let Some(map) = item.as_object_mut() {
                    map.remove("apiVersion");
                    map.remove("kind");
                }
            }
        }
        items
    }

    /// Whether `storage_key` is this type's, compared without building the key.
    pub fn stores(&self, storage_key: &str) -> bool {
        storage_key.split_once('/') == Some(self.storage())
    }

    /// Whether this is `events.k8s.io`'s Event, which is stored with core's (see
    /// [`crate::versions`]).
    pub fn is_events_api(&self) -> bool {
        self.group == "events.k8s.io" && self.plural == "events"
    }

    /// The group and plural this type's objects are stored under.
    fn storage(&self) -> (&str, &str) {
        if self.is_events_api() {
            ("", self.plural.as_str())
        } else {
            (self.group.as_str(), self.plural.as_str())
        }
    }
}

fn builtin(
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
    status: bool,
    short: &[&str],
) -> ResourceType {
    ResourceType {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        plural: plural.into(),
        singular: kind.to_ascii_lowercase(),
        namespaced,
        status_subresource: status,
        short_names: short.iter().map(|s| s.to_string()).collect(),
        printer_columns: vec![],
        schema: None,
        rules: None,
        categories: if ALL_CATEGORY.contains(&(group, plural)) {
            vec!["all".into()]
        } else {
            vec![]
        },
        scale: SCALABLE
            .contains(&(group, plural))
            .then(ScalePaths::workload),
        selectable_fields: SELECTABLE
            .iter()
            .filter(|(g, p, _)| *g == group && *p == plural)
            .flat_map(|(_, _, fields)| fields.iter().map(|f| f.to_string()))
            .collect(),
    }
}

/// The fields kube-apiserver's field selectors accept for a built-in kind beyond
/// `metadata.name` and `metadata.namespace` (its `GetAttrs`/field label conversion functions).
const SELECTABLE: &[(&str, &str, &[&str])] = &[
    (
        "",
        "pods",
        &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
    ),
    ("", "secrets", &["type"]),
    ("", "nodes", &["spec.unschedulable"]),
    ("", "namespaces", &["status.phase"]),
    ("", "replicationcontrollers", &["status.replicas"]),
    (
        "",
        "events",
        &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
    ),
    ("apps", "replicasets", &["status.replicas"]),
    ("batch", "jobs", &["status.successful"]),
    (
        "events.k8s.io",
        "events",
        &[
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
            "reason",
            "reportingController",
            "type",
        ],
    ),
];

/// The built-in kinds of kube-apiserver's `all` category that this sim serves.
const ALL_CATEGORY: [(&str, &str); 10] = [
    ("", "pods"),
    ("", "services"),
    ("", "replicationcontrollers"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("autoscaling", "horizontalpodautoscalers"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
];

/// The built-in kinds with a `scale` subresource that this sim serves.
const SCALABLE: [(&str, &str); 4] = [
    ("", "replicationcontrollers"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
];

/// The Namespace type (what the store checks a namespaced create against).
pub fn namespace_type() -> ResourceType {
    builtin("", "v1", "Namespace", "namespaces", false, true, &["ns"])
}

/// The built-in resource types.
pub fn builtins() -> Vec<ResourceType> {
    let hpa = |version| {
        builtin(
            "autoscaling",
            version,
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            true,
            &["hpa"],
        )
    };
    vec![
        namespace_type(),
        builtin("", "v1", "Secret", "secrets", true, false, &[]),
        builtin("", "v1", "ConfigMap", "configmaps", true, false, &["cm"]),
        builtin("", "v1", "PodTemplate", "podtemplates", true, false, &[]),
        builtin(
            "",
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            true,
            true,
            &["pvc"],
        ),
        builtin("", "v1", "Service", "services", true, true, &["svc"]),
        builtin(
            "",
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            true,
            false,
            &["sa"],
        ),
        builtin("", "v1", "Event", "events", true, false, &["ev"]),
        builtin(
            "",
            "v1",
            "ResourceQuota",
            "resourcequotas",
            true,
            true,
            &["quota"],
        ),
        builtin("", "v1", "Pod", "pods", true, true, &["po"]),
        builtin("", "v1", "Node", "nodes", false, true, &["no"]),
        builtin(
            "",
            "v1",
            "ComponentStatus",
            "componentstatuses",
            false,
            false,
            &["cs"],
        ),
        builtin(
            "apiregistration.k8s.io",
            "v1",
            "APIService",
            "apiservices",
            false,
            true,
            &[],
        ),
        builtin(
            "discovery.k8s.io",
            "v1",
            "EndpointSlice",
            "endpointslices",
            true,
            false,
            &[],
        ),
        builtin(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            true,
            true,
            &["deploy"],
        ),
        builtin(
            "apps",
            "v1",
            "ReplicaSet",
            "replicasets",
            true,
            true,
            &["rs"],
        ),
        builtin(
            "apps",
            "v1",
            "StatefulSet",
            "statefulsets",
            true,
            true,
            &["sts"],
        ),
        builtin("apps", "v1", "DaemonSet", "daemonsets", true, true, &["ds"]),
        builtin(
            "",
            "v1",
            "ReplicationController",
            "replicationcontrollers",
            true,
            true,
            &["rc"],
        ),
        builtin(
            "certificates.k8s.io",
            "v1",
            "CertificateSigningRequest",
            "certificatesigningrequests",
            false,
            true,
            &["csr"],
        ),
        builtin("batch", "v1", "Job", "jobs", true, true, &[]),
        builtin("batch", "v1", "CronJob", "cronjobs", true, true, &["cj"]),
        builtin(
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
            true,
            &["pdb"],
        ),
        // Served at v1 too, as `kubectl autoscale` writes it; one storage, converted in
        // `crate::versions`.
        hpa("v2"),
        hpa("v1"),
        builtin(
            "networking.k8s.io",
            "v1",
            "Ingress",
            "ingresses",
            true,
            true,
            &["ing"],
        ),
        builtin(
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
            true,
            false,
            &["netpol"],
        ),
        builtin(
            "events.k8s.io",
            "v1",
            "Event",
            "events",
            true,
            false,
            &["ev"],
        ),
        builtin(
            "coordination.k8s.io",
            "v1",
            "Lease",
            "leases",
            true,
            false,
            &[],
        ),
        builtin(
            "scheduling.k8s.io",
            "v1",
            "PriorityClass",
            "priorityclasses",
            false,
            false,
            &["pc"],
        ),
        builtin(
            "admissionregistration.k8s.io",
            "v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            false,
            false,
            &[],
        ),
        builtin(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            false,
            false,
            &[],
        ),
        builtin(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
            true,
            &["crd", "crds"],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            false,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            "roles",
            true,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            true,
            false,
            &[],
        ),
        builtin(
            "authentication.k8s.io",
            "v1",
            "TokenReview",
            "tokenreviews",
            false,
            false,
            &[],
        ),
        builtin(
            "authentication.k8s.io",
            "v1",
            "SelfSubjectReview",
            "selfsubjectreviews",
            false,
            false,
            &[],
        ),
        builtin(
            "authorization.k8s.io",
            "v1",
            "SelfSubjectAccessReview",
            "selfsubjectaccessreviews",
            false,
            false,
            &[],
        ),
    ]
}

/// The resource types a CRD object declares: one per served version.
pub fn from_crd(crd: &Value) -> Vec<ResourceType> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"].as_bool().unwrap_or(true))
        .map(|v| ResourceType {
            group: text(&spec["group"]),
            version: text(&v["name"]),
            kind: text(&names["kind"]),
            plural: text(&names["plural"]),
            singular: names["singular"]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| text(&names["kind"]).to_ascii_lowercase()),
            namespaced: spec["scope"].as_str() != Some("Cluster"),
            status_subresource: v["subresources"]["status"].is_object(),
            short_names: names["shortNames"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect(),
            printer_columns: v["additionalPrinterColumns"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
            schema: v["schema"]["openAPIV3Schema"]
                .is_object()
                .then(|| Arc::new(v["schema"]["openAPIV3Schema"].clone())),
            rules: v["schema"]["openAPIV3Schema"].is_object().then(|| {
                CompiledRules(Arc::new(kube::core::cel::compile_schema(
                    &v["schema"]["openAPIV3Schema"],
                )))
            }),
            categories: names["categories"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect(),
            scale: v["subresources"]["scale"].as_object().map(|scale| {
                let path = |k: &str| scale.get(k).and_then(Value::as_str).map(String::from);
                ScalePaths {
                    spec_replicas: path("specReplicasPath").unwrap_or_default(),
                    status_replicas: path("statusReplicasPath").unwrap_or_default(),
                    label_selector: path("labelSelectorPath"),
                }
            }),
            selectable_fields: v["selectableFields"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["jsonPath"].as_str())
                .map(|path| path.trim_start_matches('.').to_string())
                .collect(),
        })
        .collect()
}

/// Kubernetes' order of preference between two versions of a group (`version.
/// CompareKubeAwareVersionStrings`): GA before beta before alpha, a higher major version first,
/// then a higher alpha or beta number; what is not shaped like a Kubernetes version comes last,
/// alphabetically. The first of a group's versions in this order is its preferred version.
pub fn by_preference(a: &str, b: &str) -> std::cmp::Ordering {
    // (stability: 2 GA, 1 beta, 0 alpha; major; minor)
    fn parse(v: &str) -> Option<(u8, u64, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        let (stability, number) = if tail.is_empty() {
            return Some((2, major, 0));
        } else if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (0, n)
        } else {
            return None;
        };
        Some((stability, major, number.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// The served resource types, by (group, version, plural).
#[derive(Clone, Debug, Default)]
pub struct Registry {
    types: BTreeMap<(String, String, String), ResourceType>,
}

impl Registry {
    /// The built-ins.
    pub fn with_builtins() -> Self {
        let mut registry = Self::default();
        for t in builtins() {
            registry.add(t);
        }
        registry
    }

    /// Serves `t`.
    pub fn add(&mut self, t: ResourceType) {
        self.types
            .insert((t.group.clone(), t.version.clone(), t.plural.clone()), t);
    }

    /// Stops serving every version of `group`/`plural`.
    pub fn remove(&mut self, group: &str, plural: &str) {
        self.types
            .retain(|(g, _, p), _| !(g == group && p == plural));
    }

    /// The type at `group`/`version`/`plural`.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceType> {
        self.types
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
    }

    /// The type of `apiVersion` and `kind`.
    pub fn by_kind(&self, api_version: &str, kind: &str) -> Option<&ResourceType> {
        self.types
            .values()
            .find(|t| t.api_version() == api_version && t.kind == kind)
    }

    /// Every served type.
    pub fn all(&self) -> impl Iterator<Item = &ResourceType> {
        self.types.values()
    }
}
