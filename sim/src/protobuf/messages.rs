//! The messages the sim reads and writes in protobuf, by their field numbers (from
//! Kubernetes' `generated.proto`) and Go's pointer-ness, for the kinds kubectl sends: what
//! [`super`]'s codec walks.

/// How a field's value is written and what JSON it becomes.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    /// A string.
    Text,
    /// An int32 or int64 (varint, two's complement).
    Int,
    /// A bool.
    Bool,
    /// A message.
    Message(&'static Message),
    /// `map<string, string>`.
    TextMap,
    /// `map<string, bytes>`, base64 in JSON.
    BytesMap,
    /// `bytes`, base64 in JSON.
    Bytes,
    /// `meta.v1.FieldsV1`: a message whose field 1 holds JSON, which is its JSON form.
    RawJson,
    /// `meta.v1.Time`: seconds and nanos, RFC 3339 in JSON.
    Time,
    /// `intstr.IntOrString`: a number or a string in JSON.
    IntOrString,
    /// `map<string, resource.Quantity>`: quantities as strings in JSON.
    QuantityMap,
    /// One `resource.Quantity` (its field 1 is the string), a string in JSON.
    Quantity,
    /// A message Go embeds (`json:",inline"`): its fields are the enclosing object's.
    Inline(&'static Message),
    /// A status sent with a create or update of a kind whose status the API server resets
    /// there: not read.
    Discarded,
}

/// One field of a message: its number, its JSON name, its kind, whether it repeats, and
/// whether Go holds it as a pointer.
///
/// Go's protobuf writes every non-pointer field, zero or not, and its JSON leaves a zero
/// non-pointer field out (`omitempty`): so a zero there is no field at all, while a zero in a
/// pointer field (`replicas: 0`, `backoffLimit: 0`) is a value and is kept.
pub(super) struct Field {
    pub(super) number: u64,
    pub(super) name: &'static str,
    pub(super) kind: Kind,
    pub(super) repeated: bool,
    pub(super) pointer: bool,
}

/// A message: its name (for errors) and its fields.
pub(super) struct Message {
    pub(super) name: &'static str,
    pub(super) fields: &'static [Field],
}

const fn one(number: u64, name: &'static str, kind: Kind) -> Field {
    Field {
        number,
        name,
        kind,
        repeated: false,
        pointer: false,
    }
}

/// A pointer field: its zero value is kept.
const fn opt(number: u64, name: &'static str, kind: Kind) -> Field {
    Field {
        number,
        name,
        kind,
        repeated: false,
        pointer: true,
    }
}

const fn many(number: u64, name: &'static str, kind: Kind) -> Field {
    Field {
        number,
        name,
        kind,
        repeated: true,
        pointer: false,
    }
}

use Kind::{Bool, BytesMap, Int, IntOrString, QuantityMap, Text, TextMap, Time};

mod options;
mod pod;
mod reviews;

use options::DELETE_OPTIONS;
use pod::POD_TEMPLATE_SPEC;
use reviews::{SELF_SUBJECT_ACCESS_REVIEW, SELF_SUBJECT_REVIEW, TOKEN_REQUEST};

static OWNER_REFERENCE: Message = Message {
    name: "OwnerReference",
    fields: &[
        one(1, "kind", Text),
        one(3, "name", Text),
        one(4, "uid", Text),
        one(5, "apiVersion", Text),
        opt(6, "controller", Bool),
        opt(7, "blockOwnerDeletion", Bool),
    ],
};

static OBJECT_META: Message = Message {
    name: "ObjectMeta",
    fields: &[
        one(1, "name", Text),
        one(2, "generateName", Text),
        one(3, "namespace", Text),
        one(4, "selfLink", Text),
        one(5, "uid", Text),
        one(6, "resourceVersion", Text),
        one(7, "generation", Int),
        one(8, "creationTimestamp", Time),
        one(9, "deletionTimestamp", Time),
        opt(10, "deletionGracePeriodSeconds", Int),
        one(11, "labels", TextMap),
        one(12, "annotations", TextMap),
        many(13, "ownerReferences", Kind::Message(&OWNER_REFERENCE)),
        many(14, "finalizers", Text),
        many(17, "managedFields", Kind::Message(&MANAGED_FIELDS_ENTRY)),
    ],
};

/// What a client read (a GET answers managedFields) and sends back, as `kubectl certificate
/// approve` does.
static MANAGED_FIELDS_ENTRY: Message = Message {
    name: "ManagedFieldsEntry",
    fields: &[
        one(1, "manager", Text),
        one(2, "operation", Text),
        one(3, "apiVersion", Text),
        one(4, "time", Time),
        one(6, "fieldsType", Text),
        one(7, "fieldsV1", Kind::RawJson),
        one(8, "subresource", Text),
    ],
};

const METADATA: Field = one(1, "metadata", Kind::Message(&OBJECT_META));

static NAMESPACE_SPEC: Message = Message {
    name: "NamespaceSpec",
    fields: &[many(1, "finalizers", Text)],
};

static NAMESPACE_CONDITION: Message = Message {
    name: "NamespaceCondition",
    fields: &[
        one(1, "type", Text),
        one(2, "status", Text),
        one(4, "lastTransitionTime", Time),
        one(5, "reason", Text),
        one(6, "message", Text),
    ],
};

static NAMESPACE_STATUS: Message = Message {
    name: "NamespaceStatus",
    fields: &[
        one(1, "phase", Text),
        many(2, "conditions", Kind::Message(&NAMESPACE_CONDITION)),
    ],
};

// Go writes every non-pointer struct field, so a client's body carries an empty `status`.
static NAMESPACE: Message = Message {
    name: "Namespace",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&NAMESPACE_SPEC)),
        one(3, "status", Kind::Message(&NAMESPACE_STATUS)),
    ],
};

static CONFIG_MAP: Message = Message {
    name: "ConfigMap",
    fields: &[
        METADATA,
        one(2, "data", TextMap),
        one(3, "binaryData", BytesMap),
        opt(4, "immutable", Bool),
    ],
};

static SECRET: Message = Message {
    name: "Secret",
    fields: &[
        METADATA,
        one(2, "data", BytesMap),
        one(3, "type", Text),
        one(4, "stringData", TextMap),
        opt(5, "immutable", Bool),
    ],
};

static OBJECT_REFERENCE: Message = Message {
    name: "ObjectReference",
    fields: &[
        one(1, "kind", Text),
        one(2, "namespace", Text),
        one(3, "name", Text),
        one(4, "uid", Text),
        one(5, "apiVersion", Text),
        one(6, "resourceVersion", Text),
        one(7, "fieldPath", Text),
    ],
};

static LOCAL_OBJECT_REFERENCE: Message = Message {
    name: "LocalObjectReference",
    fields: &[one(1, "name", Text)],
};

static SERVICE_ACCOUNT: Message = Message {
    name: "ServiceAccount",
    fields: &[
        METADATA,
        many(2, "secrets", Kind::Message(&OBJECT_REFERENCE)),
        many(
            3,
            "imagePullSecrets",
            Kind::Message(&LOCAL_OBJECT_REFERENCE),
        ),
        opt(4, "automountServiceAccountToken", Bool),
    ],
};

static POLICY_RULE: Message = Message {
    name: "PolicyRule",
    fields: &[
        many(1, "verbs", Text),
        many(2, "apiGroups", Text),
        many(3, "resources", Text),
        many(4, "resourceNames", Text),
        many(5, "nonResourceURLs", Text),
    ],
};

static LABEL_SELECTOR_REQUIREMENT: Message = Message {
    name: "LabelSelectorRequirement",
    fields: &[
        one(1, "key", Text),
        one(2, "operator", Text),
        many(3, "values", Text),
    ],
};

static LABEL_SELECTOR: Message = Message {
    name: "LabelSelector",
    fields: &[
        one(1, "matchLabels", TextMap),
        many(
            2,
            "matchExpressions",
            Kind::Message(&LABEL_SELECTOR_REQUIREMENT),
        ),
    ],
};

static AGGREGATION_RULE: Message = Message {
    name: "AggregationRule",
    fields: &[many(
        1,
        "clusterRoleSelectors",
        Kind::Message(&LABEL_SELECTOR),
    )],
};

static ROLE: Message = Message {
    name: "Role",
    fields: &[METADATA, many(2, "rules", Kind::Message(&POLICY_RULE))],
};

static CLUSTER_ROLE: Message = Message {
    name: "ClusterRole",
    fields: &[
        METADATA,
        many(2, "rules", Kind::Message(&POLICY_RULE)),
        one(3, "aggregationRule", Kind::Message(&AGGREGATION_RULE)),
    ],
};

static SUBJECT: Message = Message {
    name: "Subject",
    fields: &[
        one(1, "kind", Text),
        one(2, "apiGroup", Text),
        one(3, "name", Text),
        one(4, "namespace", Text),
    ],
};

static ROLE_REF: Message = Message {
    name: "RoleRef",
    fields: &[
        one(1, "apiGroup", Text),
        one(2, "kind", Text),
        one(3, "name", Text),
    ],
};

static ROLE_BINDING: Message = Message {
    name: "RoleBinding",
    fields: &[
        METADATA,
        many(2, "subjects", Kind::Message(&SUBJECT)),
        one(3, "roleRef", Kind::Message(&ROLE_REF)),
    ],
};

// The workload kinds `kubectl create deployment|job|cronjob|service` send: every scalar field
// of their specs; their pod template is described in `pod`.

static ROLLING_UPDATE_DEPLOYMENT: Message = Message {
    name: "RollingUpdateDeployment",
    fields: &[
        one(1, "maxUnavailable", IntOrString),
        one(2, "maxSurge", IntOrString),
    ],
};

static DEPLOYMENT_STRATEGY: Message = Message {
    name: "DeploymentStrategy",
    fields: &[
        one(1, "type", Text),
        one(
            2,
            "rollingUpdate",
            Kind::Message(&ROLLING_UPDATE_DEPLOYMENT),
        ),
    ],
};

/// The status a client's Go struct carries: kube-apiserver resets it on create and keeps the
/// stored one on update of these kinds, so it is not read.
const STATUS: Field = one(3, "status", Kind::Discarded);

static DEPLOYMENT_SPEC: Message = Message {
    name: "DeploymentSpec",
    fields: &[
        opt(1, "replicas", Int),
        one(2, "selector", Kind::Message(&LABEL_SELECTOR)),
        one(3, "template", Kind::Message(&POD_TEMPLATE_SPEC)),
        one(4, "strategy", Kind::Message(&DEPLOYMENT_STRATEGY)),
        one(5, "minReadySeconds", Int),
        opt(6, "revisionHistoryLimit", Int),
        one(7, "paused", Bool),
        opt(9, "progressDeadlineSeconds", Int),
    ],
};

static DEPLOYMENT: Message = Message {
    name: "Deployment",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&DEPLOYMENT_SPEC)),
        STATUS,
    ],
};

static JOB_SPEC: Message = Message {
    name: "JobSpec",
    fields: &[
        opt(1, "parallelism", Int),
        opt(2, "completions", Int),
        opt(3, "activeDeadlineSeconds", Int),
        one(4, "selector", Kind::Message(&LABEL_SELECTOR)),
        opt(5, "manualSelector", Bool),
        one(6, "template", Kind::Message(&POD_TEMPLATE_SPEC)),
        opt(7, "backoffLimit", Int),
        opt(8, "ttlSecondsAfterFinished", Int),
        one(9, "completionMode", Text),
        opt(10, "suspend", Bool),
        opt(12, "backoffLimitPerIndex", Int),
        opt(13, "maxFailedIndexes", Int),
        one(14, "podReplacementPolicy", Text),
        one(15, "managedBy", Text),
    ],
};

static JOB: Message = Message {
    name: "Job",
    fields: &[METADATA, one(2, "spec", Kind::Message(&JOB_SPEC)), STATUS],
};

static JOB_TEMPLATE_SPEC: Message = Message {
    name: "JobTemplateSpec",
    fields: &[METADATA, one(2, "spec", Kind::Message(&JOB_SPEC))],
};

static CRON_JOB_SPEC: Message = Message {
    name: "CronJobSpec",
    fields: &[
        one(1, "schedule", Text),
        opt(2, "startingDeadlineSeconds", Int),
        one(3, "concurrencyPolicy", Text),
        opt(4, "suspend", Bool),
        one(5, "jobTemplate", Kind::Message(&JOB_TEMPLATE_SPEC)),
        opt(6, "successfulJobsHistoryLimit", Int),
        opt(7, "failedJobsHistoryLimit", Int),
        one(8, "timeZone", Text),
    ],
};

static CRON_JOB: Message = Message {
    name: "CronJob",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&CRON_JOB_SPEC)),
        STATUS,
    ],
};

static SERVICE_PORT: Message = Message {
    name: "ServicePort",
    fields: &[
        one(1, "name", Text),
        one(2, "protocol", Text),
        one(3, "port", Int),
        one(4, "targetPort", IntOrString),
        one(5, "nodePort", Int),
        one(6, "appProtocol", Text),
    ],
};

static SERVICE_SPEC: Message = Message {
    name: "ServiceSpec",
    fields: &[
        many(1, "ports", Kind::Message(&SERVICE_PORT)),
        one(2, "selector", TextMap),
        one(3, "clusterIP", Text),
        one(4, "type", Text),
        many(5, "externalIPs", Text),
        one(7, "sessionAffinity", Text),
        one(8, "loadBalancerIP", Text),
        many(9, "loadBalancerSourceRanges", Text),
        one(10, "externalName", Text),
        one(11, "externalTrafficPolicy", Text),
        one(12, "healthCheckNodePort", Int),
        one(13, "publishNotReadyAddresses", Bool),
        one(17, "ipFamilyPolicy", Text),
        many(18, "clusterIPs", Text),
        many(19, "ipFamilies", Text),
        opt(20, "allocateLoadBalancerNodePorts", Bool),
        one(21, "loadBalancerClass", Text),
        one(22, "internalTrafficPolicy", Text),
        one(23, "trafficDistribution", Text),
    ],
};

static CERTIFICATE_SIGNING_REQUEST_SPEC: Message = Message {
    name: "CertificateSigningRequestSpec",
    fields: &[
        one(1, "request", Kind::Bytes),
        one(2, "username", Text),
        one(3, "uid", Text),
        many(4, "groups", Text),
        many(5, "usages", Text),
        one(7, "signerName", Text),
        opt(8, "expirationSeconds", Int),
    ],
};

static CERTIFICATE_SIGNING_REQUEST_CONDITION: Message = Message {
    name: "CertificateSigningRequestCondition",
    fields: &[
        one(1, "type", Text),
        one(2, "reason", Text),
        one(3, "message", Text),
        one(4, "lastUpdateTime", Time),
        one(5, "lastTransitionTime", Time),
        one(6, "status", Text),
    ],
};

static CERTIFICATE_SIGNING_REQUEST_STATUS: Message = Message {
    name: "CertificateSigningRequestStatus",
    fields: &[
        many(
            1,
            "conditions",
            Kind::Message(&CERTIFICATE_SIGNING_REQUEST_CONDITION),
        ),
        one(2, "certificate", Kind::Bytes),
    ],
};

/// What `kubectl certificate approve|deny` sends to the `approval` subresource: the whole
/// request, its status conditions being what it changes.
static CERTIFICATE_SIGNING_REQUEST: Message = Message {
    name: "CertificateSigningRequest",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&CERTIFICATE_SIGNING_REQUEST_SPEC)),
        one(
            3,
            "status",
            Kind::Message(&CERTIFICATE_SIGNING_REQUEST_STATUS),
        ),
    ],
};

static SERVICE: Message = Message {
    name: "Service",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&SERVICE_SPEC)),
        STATUS,
    ],
};

/// The kinds whose protobuf the sim reads, by `apiVersion` and `kind`.
static POD_DISRUPTION_BUDGET_SPEC: Message = Message {
    name: "PodDisruptionBudgetSpec",
    fields: &[
        opt(1, "minAvailable", IntOrString),
        opt(2, "selector", Kind::Message(&LABEL_SELECTOR)),
        opt(3, "maxUnavailable", IntOrString),
        opt(4, "unhealthyPodEvictionPolicy", Text),
    ],
};

static POD_DISRUPTION_BUDGET: Message = Message {
    name: "PodDisruptionBudget",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&POD_DISRUPTION_BUDGET_SPEC)),
        STATUS,
    ],
};

static PRIORITY_CLASS: Message = Message {
    name: "PriorityClass",
    fields: &[
        METADATA,
        // `json:"value"` without omitempty: a zero is written.
        opt(2, "value", Int),
        one(3, "globalDefault", Bool),
        one(4, "description", Text),
        opt(5, "preemptionPolicy", Text),
    ],
};

static SCOPED_RESOURCE_SELECTOR_REQUIREMENT: Message = Message {
    name: "ScopedResourceSelectorRequirement",
    fields: &[
        one(1, "scopeName", Text),
        one(2, "operator", Text),
        many(3, "values", Text),
    ],
};

static SCOPE_SELECTOR: Message = Message {
    name: "ScopeSelector",
    fields: &[many(
        1,
        "matchExpressions",
        Kind::Message(&SCOPED_RESOURCE_SELECTOR_REQUIREMENT),
    )],
};

static RESOURCE_QUOTA_SPEC: Message = Message {
    name: "ResourceQuotaSpec",
    fields: &[
        one(1, "hard", QuantityMap),
        many(2, "scopes", Text),
        opt(3, "scopeSelector", Kind::Message(&SCOPE_SELECTOR)),
    ],
};

static RESOURCE_QUOTA: Message = Message {
    name: "ResourceQuota",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&RESOURCE_QUOTA_SPEC)),
        STATUS,
    ],
};

static SERVICE_BACKEND_PORT: Message = Message {
    name: "ServiceBackendPort",
    fields: &[one(1, "name", Text), one(2, "number", Int)],
};

static INGRESS_SERVICE_BACKEND: Message = Message {
    name: "IngressServiceBackend",
    fields: &[
        one(1, "name", Text),
        one(2, "port", Kind::Message(&SERVICE_BACKEND_PORT)),
    ],
};

static TYPED_LOCAL_OBJECT_REFERENCE: Message = Message {
    name: "TypedLocalObjectReference",
    fields: &[
        opt(1, "apiGroup", Text),
        one(2, "kind", Text),
        one(3, "name", Text),
    ],
};

static INGRESS_BACKEND: Message = Message {
    name: "IngressBackend",
    fields: &[
        opt(3, "resource", Kind::Message(&TYPED_LOCAL_OBJECT_REFERENCE)),
        opt(4, "service", Kind::Message(&INGRESS_SERVICE_BACKEND)),
    ],
};

static HTTP_INGRESS_PATH: Message = Message {
    name: "HTTPIngressPath",
    fields: &[
        one(1, "path", Text),
        one(2, "backend", Kind::Message(&INGRESS_BACKEND)),
        opt(3, "pathType", Text),
    ],
};

static HTTP_INGRESS_RULE_VALUE: Message = Message {
    name: "HTTPIngressRuleValue",
    fields: &[many(1, "paths", Kind::Message(&HTTP_INGRESS_PATH))],
};

static INGRESS_RULE_VALUE: Message = Message {
    name: "IngressRuleValue",
    fields: &[opt(1, "http", Kind::Message(&HTTP_INGRESS_RULE_VALUE))],
};

static INGRESS_RULE: Message = Message {
    name: "IngressRule",
    fields: &[
        one(1, "host", Text),
        one(2, "ingressRuleValue", Kind::Inline(&INGRESS_RULE_VALUE)),
    ],
};

static INGRESS_TLS: Message = Message {
    name: "IngressTLS",
    fields: &[many(1, "hosts", Text), one(2, "secretName", Text)],
};

static INGRESS_SPEC: Message = Message {
    name: "IngressSpec",
    fields: &[
        opt(1, "defaultBackend", Kind::Message(&INGRESS_BACKEND)),
        many(2, "tls", Kind::Message(&INGRESS_TLS)),
        many(3, "rules", Kind::Message(&INGRESS_RULE)),
        opt(4, "ingressClassName", Text),
    ],
};

static INGRESS: Message = Message {
    name: "Ingress",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&INGRESS_SPEC)),
        STATUS,
    ],
};

static CROSS_VERSION_OBJECT_REFERENCE: Message = Message {
    name: "CrossVersionObjectReference",
    fields: &[
        one(1, "kind", Text),
        one(2, "name", Text),
        one(3, "apiVersion", Text),
    ],
};

static HORIZONTAL_POD_AUTOSCALER_SPEC: Message = Message {
    name: "HorizontalPodAutoscalerSpec",
    fields: &[
        one(
            1,
            "scaleTargetRef",
            Kind::Message(&CROSS_VERSION_OBJECT_REFERENCE),
        ),
        opt(2, "minReplicas", Int),
        // `json:"maxReplicas"` without omitempty: a zero is written.
        opt(3, "maxReplicas", Int),
        opt(4, "targetCPUUtilizationPercentage", Int),
    ],
};

/// `autoscaling/v1`'s, what `kubectl autoscale` sends.
static HORIZONTAL_POD_AUTOSCALER: Message = Message {
    name: "HorizontalPodAutoscaler",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&HORIZONTAL_POD_AUTOSCALER_SPEC)),
        STATUS,
    ],
};

pub(super) fn message_of(api_version: &str, kind: &str) -> Option<&'static Message> {
    Some(match (api_version, kind) {
        ("v1", "Namespace") => &NAMESPACE,
        ("v1", "ConfigMap") => &CONFIG_MAP,
        ("v1", "Secret") => &SECRET,
        ("v1", "ServiceAccount") => &SERVICE_ACCOUNT,
        ("v1", "Service") => &SERVICE,
        ("apps/v1", "Deployment") => &DEPLOYMENT,
        ("batch/v1", "Job") => &JOB,
        ("batch/v1", "CronJob") => &CRON_JOB,
        ("rbac.authorization.k8s.io/v1", "Role") => &ROLE,
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => &CLUSTER_ROLE,
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => &ROLE_BINDING,
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => &SELF_SUBJECT_ACCESS_REVIEW,
        ("authentication.k8s.io/v1", "SelfSubjectReview") => &SELF_SUBJECT_REVIEW,
        ("authentication.k8s.io/v1", "TokenRequest") => &TOKEN_REQUEST,
        ("certificates.k8s.io/v1", "CertificateSigningRequest") => &CERTIFICATE_SIGNING_REQUEST,
        ("v1", "ResourceQuota") => &RESOURCE_QUOTA,
        ("policy/v1", "PodDisruptionBudget") => &POD_DISRUPTION_BUDGET,
        ("scheduling.k8s.io/v1", "PriorityClass") => &PRIORITY_CLASS,
        ("networking.k8s.io/v1", "Ingress") => &INGRESS,
        ("autoscaling/v1", "HorizontalPodAutoscaler") => &HORIZONTAL_POD_AUTOSCALER,
        (_, "DeleteOptions") => &DELETE_OPTIONS,
        _ => return None,
    })
}
