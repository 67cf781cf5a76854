//! Protobuf request bodies, as kube-apiserver accepts them for built-in kinds: the `k8s\0`
//! envelope around a `runtime.Unknown` (type meta, then the object's own protobuf bytes),
//! decoded into the JSON object the rest of the sim works on.
//!
//! kubectl's generators (`kubectl create namespace|configmap|secret|serviceaccount|role|
//! rolebinding|token|deployment|job|cronjob|service …`, `kubectl auth can-i|whoami`) send protobuf. The messages are
//! described here by their field numbers (from Kubernetes' `generated.proto`), for the kinds
//! those commands send. A kind not described, or a field number a message does not have, is
//! refused naming it, never dropped: a field read wrongly would be stored wrongly.

use serde_json::{Map, Value, json};

/// The four bytes ahead of every Kubernetes protobuf body.
const MAGIC: &[u8] = b"k8s\0";

/// How a field's value is written and what JSON it becomes.
#[derive(Clone, Copy)]
enum Kind {
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
struct Field {
    number: u64,
    name: &'static str,
    kind: Kind,
    repeated: bool,
    pointer: bool,
}

/// A message: its name (for errors) and its fields.
struct Message {
    name: &'static str,
    fields: &'static [Field],
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

static SELECTOR_REQUIREMENT: Message = Message {
    name: "FieldSelectorRequirement",
    fields: &[
        one(1, "key", Text),
        one(2, "operator", Text),
        many(3, "values", Text),
    ],
};

static FIELD_SELECTOR_ATTRIBUTES: Message = Message {
    name: "FieldSelectorAttributes",
    fields: &[
        one(1, "rawSelector", Text),
        many(2, "requirements", Kind::Message(&SELECTOR_REQUIREMENT)),
    ],
};

static LABEL_SELECTOR_ATTRIBUTES: Message = Message {
    name: "LabelSelectorAttributes",
    fields: &[
        one(1, "rawSelector", Text),
        many(
            2,
            "requirements",
            Kind::Message(&LABEL_SELECTOR_REQUIREMENT),
        ),
    ],
};

static RESOURCE_ATTRIBUTES: Message = Message {
    name: "ResourceAttributes",
    fields: &[
        one(1, "namespace", Text),
        one(2, "verb", Text),
        one(3, "group", Text),
        one(4, "version", Text),
        one(5, "resource", Text),
        one(6, "subresource", Text),
        one(7, "name", Text),
        one(
            8,
            "fieldSelector",
            Kind::Message(&FIELD_SELECTOR_ATTRIBUTES),
        ),
        one(
            9,
            "labelSelector",
            Kind::Message(&LABEL_SELECTOR_ATTRIBUTES),
        ),
    ],
};

static NON_RESOURCE_ATTRIBUTES: Message = Message {
    name: "NonResourceAttributes",
    fields: &[one(1, "path", Text), one(2, "verb", Text)],
};

static SELF_SUBJECT_ACCESS_REVIEW_SPEC: Message = Message {
    name: "SelfSubjectAccessReviewSpec",
    fields: &[
        one(1, "resourceAttributes", Kind::Message(&RESOURCE_ATTRIBUTES)),
        one(
            2,
            "nonResourceAttributes",
            Kind::Message(&NON_RESOURCE_ATTRIBUTES),
        ),
    ],
};

static SUBJECT_ACCESS_REVIEW_STATUS: Message = Message {
    name: "SubjectAccessReviewStatus",
    fields: &[
        one(1, "allowed", Bool),
        one(2, "reason", Text),
        one(3, "evaluationError", Text),
        one(4, "denied", Bool),
    ],
};

static SELF_SUBJECT_ACCESS_REVIEW: Message = Message {
    name: "SelfSubjectAccessReview",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&SELF_SUBJECT_ACCESS_REVIEW_SPEC)),
        one(3, "status", Kind::Message(&SUBJECT_ACCESS_REVIEW_STATUS)),
    ],
};

static USER_INFO: Message = Message {
    name: "UserInfo",
    fields: &[
        one(1, "username", Text),
        one(2, "uid", Text),
        many(3, "groups", Text),
    ],
};

static SELF_SUBJECT_REVIEW_STATUS: Message = Message {
    name: "SelfSubjectReviewStatus",
    fields: &[one(1, "userInfo", Kind::Message(&USER_INFO))],
};

static SELF_SUBJECT_REVIEW: Message = Message {
    name: "SelfSubjectReview",
    fields: &[
        METADATA,
        one(2, "status", Kind::Message(&SELF_SUBJECT_REVIEW_STATUS)),
    ],
};

static BOUND_OBJECT_REFERENCE: Message = Message {
    name: "BoundObjectReference",
    fields: &[
        one(1, "kind", Text),
        one(2, "apiVersion", Text),
        one(3, "name", Text),
        one(4, "uid", Text),
    ],
};

static TOKEN_REQUEST_SPEC: Message = Message {
    name: "TokenRequestSpec",
    fields: &[
        many(1, "audiences", Text),
        one(3, "boundObjectRef", Kind::Message(&BOUND_OBJECT_REFERENCE)),
        opt(4, "expirationSeconds", Int),
    ],
};

static TOKEN_REQUEST_STATUS: Message = Message {
    name: "TokenRequestStatus",
    fields: &[one(1, "token", Text), one(2, "expirationTimestamp", Time)],
};

static TOKEN_REQUEST: Message = Message {
    name: "TokenRequest",
    fields: &[
        METADATA,
        one(2, "spec", Kind::Message(&TOKEN_REQUEST_SPEC)),
        one(3, "status", Kind::Message(&TOKEN_REQUEST_STATUS)),
    ],
};

// The workload kinds `kubectl create deployment|job|cronjob|service` send: every scalar field
// of their specs, and of the pod template what those commands set (containers with their
// ports, environment values and resources). A nested block beyond that (volumes, probes,
// security contexts, affinity) is refused by name.

static KEY_TO_PATH: Message = Message {
    name: "KeyToPath",
    fields: &[
        one(1, "key", Text),
        one(2, "path", Text),
        opt(3, "mode", Int),
    ],
};

static SECRET_VOLUME_SOURCE: Message = Message {
    name: "SecretVolumeSource",
    fields: &[
        one(1, "secretName", Text),
        many(2, "items", Kind::Message(&KEY_TO_PATH)),
        opt(3, "defaultMode", Int),
        opt(4, "optional", Bool),
    ],
};

static CONFIG_MAP_VOLUME_SOURCE: Message = Message {
    name: "ConfigMapVolumeSource",
    fields: &[
        one(
            1,
            "localObjectReference",
            Kind::Inline(&LOCAL_OBJECT_REFERENCE),
        ),
        many(2, "items", Kind::Message(&KEY_TO_PATH)),
        opt(3, "defaultMode", Int),
        opt(4, "optional", Bool),
    ],
};

static EMPTY_DIR_VOLUME_SOURCE: Message = Message {
    name: "EmptyDirVolumeSource",
    fields: &[one(1, "medium", Text), opt(2, "sizeLimit", Kind::Quantity)],
};

static PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE: Message = Message {
    name: "PersistentVolumeClaimVolumeSource",
    fields: &[one(1, "claimName", Text), one(2, "readOnly", Bool)],
};

/// A Secret's or ConfigMap's projection: the same fields.
static KEYS_PROJECTION: Message = Message {
    name: "SecretProjection",
    fields: &[
        one(
            1,
            "localObjectReference",
            Kind::Inline(&LOCAL_OBJECT_REFERENCE),
        ),
        many(2, "items", Kind::Message(&KEY_TO_PATH)),
        opt(4, "optional", Bool),
    ],
};

static SERVICE_ACCOUNT_TOKEN_PROJECTION: Message = Message {
    name: "ServiceAccountTokenProjection",
    fields: &[
        one(1, "audience", Text),
        opt(2, "expirationSeconds", Int),
        one(3, "path", Text),
    ],
};

static VOLUME_PROJECTION: Message = Message {
    name: "VolumeProjection",
    fields: &[
        opt(1, "secret", Kind::Message(&KEYS_PROJECTION)),
        opt(3, "configMap", Kind::Message(&KEYS_PROJECTION)),
        opt(
            4,
            "serviceAccountToken",
            Kind::Message(&SERVICE_ACCOUNT_TOKEN_PROJECTION),
        ),
    ],
};

static PROJECTED_VOLUME_SOURCE: Message = Message {
    name: "ProjectedVolumeSource",
    fields: &[
        many(1, "sources", Kind::Message(&VOLUME_PROJECTION)),
        opt(2, "defaultMode", Int),
    ],
};

static VOLUME_SOURCE: Message = Message {
    name: "VolumeSource",
    fields: &[
        opt(2, "emptyDir", Kind::Message(&EMPTY_DIR_VOLUME_SOURCE)),
        opt(6, "secret", Kind::Message(&SECRET_VOLUME_SOURCE)),
        opt(
            10,
            "persistentVolumeClaim",
            Kind::Message(&PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE),
        ),
        opt(19, "configMap", Kind::Message(&CONFIG_MAP_VOLUME_SOURCE)),
        opt(26, "projected", Kind::Message(&PROJECTED_VOLUME_SOURCE)),
    ],
};

static VOLUME: Message = Message {
    name: "Volume",
    fields: &[
        one(1, "name", Text),
        one(2, "volumeSource", Kind::Inline(&VOLUME_SOURCE)),
    ],
};

static VOLUME_MOUNT: Message = Message {
    name: "VolumeMount",
    fields: &[
        one(1, "name", Text),
        one(2, "readOnly", Bool),
        one(3, "mountPath", Text),
        one(4, "subPath", Text),
        opt(5, "mountPropagation", Text),
        one(6, "subPathExpr", Text),
        opt(7, "recursiveReadOnly", Text),
    ],
};

/// A key of a Secret or ConfigMap: the same fields.
static KEY_SELECTOR: Message = Message {
    name: "SecretKeySelector",
    fields: &[
        one(
            1,
            "localObjectReference",
            Kind::Inline(&LOCAL_OBJECT_REFERENCE),
        ),
        one(2, "key", Text),
        opt(3, "optional", Bool),
    ],
};

static OBJECT_FIELD_SELECTOR: Message = Message {
    name: "ObjectFieldSelector",
    fields: &[one(1, "apiVersion", Text), one(2, "fieldPath", Text)],
};

static ENV_VAR_SOURCE: Message = Message {
    name: "EnvVarSource",
    fields: &[
        opt(1, "fieldRef", Kind::Message(&OBJECT_FIELD_SELECTOR)),
        opt(3, "configMapKeyRef", Kind::Message(&KEY_SELECTOR)),
        opt(4, "secretKeyRef", Kind::Message(&KEY_SELECTOR)),
    ],
};

/// A whole Secret or ConfigMap as environment: the same fields.
static ENV_SOURCE: Message = Message {
    name: "SecretEnvSource",
    fields: &[
        one(
            1,
            "localObjectReference",
            Kind::Inline(&LOCAL_OBJECT_REFERENCE),
        ),
        opt(2, "optional", Bool),
    ],
};

static ENV_FROM_SOURCE: Message = Message {
    name: "EnvFromSource",
    fields: &[
        one(1, "prefix", Text),
        opt(2, "configMapRef", Kind::Message(&ENV_SOURCE)),
        opt(3, "secretRef", Kind::Message(&ENV_SOURCE)),
    ],
};

static CAPABILITIES: Message = Message {
    name: "Capabilities",
    fields: &[many(1, "add", Text), many(2, "drop", Text)],
};

static SECCOMP_PROFILE: Message = Message {
    name: "SeccompProfile",
    fields: &[one(1, "type", Text), opt(2, "localhostProfile", Text)],
};

static SECURITY_CONTEXT: Message = Message {
    name: "SecurityContext",
    fields: &[
        opt(1, "capabilities", Kind::Message(&CAPABILITIES)),
        opt(2, "privileged", Bool),
        opt(4, "runAsUser", Int),
        opt(5, "runAsNonRoot", Bool),
        opt(6, "readOnlyRootFilesystem", Bool),
        opt(7, "allowPrivilegeEscalation", Bool),
        opt(8, "runAsGroup", Int),
        opt(9, "procMount", Text),
        opt(11, "seccompProfile", Kind::Message(&SECCOMP_PROFILE)),
    ],
};

static POD_SECURITY_CONTEXT: Message = Message {
    name: "PodSecurityContext",
    fields: &[
        opt(2, "runAsUser", Int),
        opt(3, "runAsNonRoot", Bool),
        many(4, "supplementalGroups", Int),
        opt(5, "fsGroup", Int),
        opt(6, "runAsGroup", Int),
        opt(9, "fsGroupChangePolicy", Text),
        opt(10, "seccompProfile", Kind::Message(&SECCOMP_PROFILE)),
        opt(12, "supplementalGroupsPolicy", Text),
    ],
};

static EXEC_ACTION: Message = Message {
    name: "ExecAction",
    fields: &[many(1, "command", Text)],
};

static HTTP_HEADER: Message = Message {
    name: "HTTPHeader",
    fields: &[one(1, "name", Text), one(2, "value", Text)],
};

static HTTP_GET_ACTION: Message = Message {
    name: "HTTPGetAction",
    fields: &[
        one(1, "path", Text),
        one(2, "port", IntOrString),
        one(3, "host", Text),
        one(4, "scheme", Text),
        many(5, "httpHeaders", Kind::Message(&HTTP_HEADER)),
    ],
};

static TCP_SOCKET_ACTION: Message = Message {
    name: "TCPSocketAction",
    fields: &[one(1, "port", IntOrString), one(2, "host", Text)],
};

static PROBE_HANDLER: Message = Message {
    name: "ProbeHandler",
    fields: &[
        opt(1, "exec", Kind::Message(&EXEC_ACTION)),
        opt(2, "httpGet", Kind::Message(&HTTP_GET_ACTION)),
        opt(3, "tcpSocket", Kind::Message(&TCP_SOCKET_ACTION)),
    ],
};

static PROBE: Message = Message {
    name: "Probe",
    fields: &[
        one(1, "handler", Kind::Inline(&PROBE_HANDLER)),
        one(2, "initialDelaySeconds", Int),
        one(3, "timeoutSeconds", Int),
        one(4, "periodSeconds", Int),
        one(5, "successThreshold", Int),
        one(6, "failureThreshold", Int),
        opt(7, "terminationGracePeriodSeconds", Int),
    ],
};

static SLEEP_ACTION: Message = Message {
    name: "SleepAction",
    // `json:"seconds"` without omitempty: a zero is written.
    fields: &[opt(1, "seconds", Int)],
};

static LIFECYCLE_HANDLER: Message = Message {
    name: "LifecycleHandler",
    fields: &[
        opt(1, "exec", Kind::Message(&EXEC_ACTION)),
        opt(2, "httpGet", Kind::Message(&HTTP_GET_ACTION)),
        opt(3, "tcpSocket", Kind::Message(&TCP_SOCKET_ACTION)),
        opt(4, "sleep", Kind::Message(&SLEEP_ACTION)),
    ],
};

static LIFECYCLE: Message = Message {
    name: "Lifecycle",
    fields: &[
        opt(1, "postStart", Kind::Message(&LIFECYCLE_HANDLER)),
        opt(2, "preStop", Kind::Message(&LIFECYCLE_HANDLER)),
        opt(3, "stopSignal", Text),
    ],
};

static TOLERATION: Message = Message {
    name: "Toleration",
    fields: &[
        one(1, "key", Text),
        one(2, "operator", Text),
        one(3, "value", Text),
        one(4, "effect", Text),
        opt(5, "tolerationSeconds", Int),
    ],
};

static TOPOLOGY_SPREAD_CONSTRAINT: Message = Message {
    name: "TopologySpreadConstraint",
    fields: &[
        // `json:"maxSkew"` without omitempty: a zero is written.
        opt(1, "maxSkew", Int),
        one(2, "topologyKey", Text),
        one(3, "whenUnsatisfiable", Text),
        opt(4, "labelSelector", Kind::Message(&LABEL_SELECTOR)),
        opt(5, "minDomains", Int),
        opt(6, "nodeAffinityPolicy", Text),
        opt(7, "nodeTaintsPolicy", Text),
        many(8, "matchLabelKeys", Text),
    ],
};

static CONTAINER_PORT: Message = Message {
    name: "ContainerPort",
    fields: &[
        one(1, "name", Text),
        one(2, "hostPort", Int),
        one(3, "containerPort", Int),
        one(4, "protocol", Text),
        one(5, "hostIP", Text),
    ],
};

static ENV_VAR: Message = Message {
    name: "EnvVar",
    fields: &[
        one(1, "name", Text),
        one(2, "value", Text),
        opt(3, "valueFrom", Kind::Message(&ENV_VAR_SOURCE)),
    ],
};

static RESOURCE_REQUIREMENTS: Message = Message {
    name: "ResourceRequirements",
    fields: &[
        one(1, "limits", QuantityMap),
        one(2, "requests", QuantityMap),
    ],
};

static CONTAINER: Message = Message {
    name: "Container",
    fields: &[
        one(1, "name", Text),
        one(2, "image", Text),
        many(3, "command", Text),
        many(4, "args", Text),
        one(5, "workingDir", Text),
        many(6, "ports", Kind::Message(&CONTAINER_PORT)),
        many(7, "env", Kind::Message(&ENV_VAR)),
        one(8, "resources", Kind::Message(&RESOURCE_REQUIREMENTS)),
        many(9, "volumeMounts", Kind::Message(&VOLUME_MOUNT)),
        opt(10, "livenessProbe", Kind::Message(&PROBE)),
        opt(11, "readinessProbe", Kind::Message(&PROBE)),
        opt(12, "lifecycle", Kind::Message(&LIFECYCLE)),
        one(13, "terminationMessagePath", Text),
        one(14, "imagePullPolicy", Text),
        opt(15, "securityContext", Kind::Message(&SECURITY_CONTEXT)),
        one(16, "stdin", Bool),
        one(17, "stdinOnce", Bool),
        one(18, "tty", Bool),
        many(19, "envFrom", Kind::Message(&ENV_FROM_SOURCE)),
        one(20, "terminationMessagePolicy", Text),
        opt(22, "startupProbe", Kind::Message(&PROBE)),
        one(24, "restartPolicy", Text),
    ],
};

static POD_SPEC: Message = Message {
    name: "PodSpec",
    fields: &[
        many(1, "volumes", Kind::Message(&VOLUME)),
        many(2, "containers", Kind::Message(&CONTAINER)),
        one(3, "restartPolicy", Text),
        opt(4, "terminationGracePeriodSeconds", Int),
        opt(5, "activeDeadlineSeconds", Int),
        one(6, "dnsPolicy", Text),
        one(7, "nodeSelector", TextMap),
        one(8, "serviceAccountName", Text),
        one(9, "serviceAccount", Text),
        one(10, "nodeName", Text),
        one(11, "hostNetwork", Bool),
        one(12, "hostPID", Bool),
        one(13, "hostIPC", Bool),
        opt(14, "securityContext", Kind::Message(&POD_SECURITY_CONTEXT)),
        many(
            15,
            "imagePullSecrets",
            Kind::Message(&LOCAL_OBJECT_REFERENCE),
        ),
        one(16, "hostname", Text),
        one(17, "subdomain", Text),
        one(19, "schedulerName", Text),
        many(20, "initContainers", Kind::Message(&CONTAINER)),
        opt(21, "automountServiceAccountToken", Bool),
        many(22, "tolerations", Kind::Message(&TOLERATION)),
        one(24, "priorityClassName", Text),
        opt(25, "priority", Int),
        opt(27, "shareProcessNamespace", Bool),
        one(29, "runtimeClassName", Text),
        opt(30, "enableServiceLinks", Bool),
        one(31, "preemptionPolicy", Text),
        many(
            33,
            "topologySpreadConstraints",
            Kind::Message(&TOPOLOGY_SPREAD_CONSTRAINT),
        ),
        opt(35, "setHostnameAsFQDN", Bool),
        opt(37, "hostUsers", Bool),
    ],
};

static POD_TEMPLATE_SPEC: Message = Message {
    name: "PodTemplateSpec",
    fields: &[METADATA, one(2, "spec", Kind::Message(&POD_SPEC))],
};

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

fn message_of(api_version: &str, kind: &str) -> Option<&'static Message> {
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
        _ => return None,
    })
}

/// Why a protobuf body could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProtobufError {
    /// The body lacks the `k8s\0` prefix.
    #[error("a protobuf body starts with the bytes \"k8s\\x00\"")]
    NoMagic,
    /// The bytes end inside a value, or a value is malformed.
    #[error("the protobuf body is malformed: {0}")]
    Malformed(&'static str),
    /// A kind this sim does not read as protobuf.
    #[error(
        "the sim reads protobuf bodies of Namespaces, ConfigMaps, Secrets, ServiceAccounts, Services, ResourceQuotas, Deployments, Jobs, CronJobs, PodDisruptionBudgets, PriorityClasses, Ingresses, autoscaling/v1 HorizontalPodAutoscalers, RBAC roles and bindings, CertificateSigningRequests, TokenRequests and self-reviews; send {kind} ({api_version}) as JSON"
    )]
    UnknownKind {
        /// The body's apiVersion.
        api_version: String,
        /// The body's kind.
        kind: String,
    },
    /// A field number the message does not have (or not as this wire type).
    #[error("{message} has no field {number} of wire type {wire}")]
    UnknownField {
        /// The message's name.
        message: &'static str,
        /// The field number.
        number: u64,
        /// The wire type found.
        wire: u64,
    },
}

/// Decodes a `k8s\0`-prefixed protobuf body into the JSON object it stands for.
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    let rest = body.strip_prefix(MAGIC).ok_or(ProtobufError::NoMagic)?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for entry in Reader(rest) {
        let (number, value) = entry?;
        match (number, value) {
            (1, Wire::Bytes(type_meta)) => {
                for entry in Reader(type_meta) {
                    match entry? {
                        (1, Wire::Bytes(b)) => api_version = text(b)?,
                        (2, Wire::Bytes(b)) => kind = text(b)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(bytes)) => raw = bytes,
            // contentEncoding and contentType: empty for a plain object.
            _ => {}
        }
    }
    let message = message_of(&api_version, &kind).ok_or_else(|| ProtobufError::UnknownKind {
        api_version: api_version.clone(),
        kind: kind.clone(),
    })?;
    let mut object = read(message, raw)?;
    if let Some(fields) = object.as_object_mut() {
        fields.insert("apiVersion".into(), json!(api_version));
        fields.insert("kind".into(), json!(kind));
    }
    Ok(object)
}

/// `object` as kube-apiserver answers it in `application/vnd.kubernetes.protobuf`: the `k8s\0`
/// envelope around a `runtime.Unknown`. `None` when the kind is not described here or the
/// object holds a field its message does not describe (the answer is then JSON, which every
/// client that asks for protobuf also accepts): a field written wrongly would be read wrongly.
pub fn encode(object: &Value) -> Option<Vec<u8>> {
    let api_version = object.get("apiVersion")?.as_str()?;
    let kind = object.get("kind")?.as_str()?;
    let message = message_of(api_version, kind)?;
    let mut fields = object.as_object()?.clone();
    fields.remove("apiVersion");
    fields.remove("kind");
    let raw = write(message, &Value::Object(fields))?;
    let mut type_meta = Vec::new();
    put_bytes(&mut type_meta, 1, api_version.as_bytes());
    put_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = MAGIC.to_vec();
    put_bytes(&mut out, 1, &type_meta);
    put_bytes(&mut out, 2, &raw);
    Some(out)
}

/// One JSON object as `message`'s bytes; `None` for a field the message does not describe.
fn write(message: &'static Message, object: &Value) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let fields = object.as_object()?;
    // An embedded message's fields sit in this object: they are written as that message.
    let mut inlined = Vec::new();
    for field in message.fields {
        if let Kind::Inline(inner) = field.kind {
            let own: Map<String, Value> = fields
                .iter()
                .filter(|(name, _)| inner.fields.iter().any(|f| f.name == name.as_str()))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect();
            put_bytes(&mut out, field.number, &write(inner, &Value::Object(own))?);
            inlined.extend(inner.fields.iter().map(|f| f.name));
        }
    }
    for (name, value) in fields {
        if value.is_null() || inlined.contains(&name.as_str()) {
            continue;
        }
        let field = message.fields.iter().find(|f| f.name == name)?;
        let values: Vec<&Value> = if field.repeated {
            value.as_array()?.iter().collect()
        } else {
            vec![value]
        };
        for value in values {
            write_value(&mut out, field, value)?;
        }
    }
    Some(out)
}

/// One value of `field`, appended to `out`.
fn write_value(out: &mut Vec<u8>, field: &Field, value: &Value) -> Option<()> {
    let n = field.number;
    match field.kind {
        Text => put_bytes(out, n, value.as_str()?.as_bytes()),
        Int => put_varint_field(out, n, value.as_i64()? as u64),
        Bool => put_varint_field(out, n, u64::from(value.as_bool()?)),
        Kind::Message(inner) => put_bytes(out, n, &write(inner, value)?),
        Kind::Quantity => {
            let mut quantity = Vec::new();
            put_bytes(&mut quantity, 1, value.as_str()?.as_bytes());
            put_bytes(out, n, &quantity);
        }
        // Written with the enclosing object (see `write`); never a field of its own in JSON.
        Kind::Inline(_) => return None,
        Kind::Bytes => put_bytes(out, n, &crate::tokens::base64_decode(value.as_str()?)?),
        Kind::RawJson => {
            let mut raw = Vec::new();
            put_bytes(&mut raw, 1, value.to_string().as_bytes());
            put_bytes(out, n, &raw);
        }
        Time => {
            let at: jiff::Timestamp = value.as_str()?.parse().ok()?;
            let mut time = Vec::new();
            put_varint_field(&mut time, 1, at.as_second() as u64);
            if at.subsec_nanosecond() != 0 {
                put_varint_field(&mut time, 2, at.subsec_nanosecond() as u64);
            }
            put_bytes(out, n, &time);
        }
        IntOrString => {
            let mut int_or_string = Vec::new();
            match value {
                Value::String(text) => {
                    put_varint_field(&mut int_or_string, 1, 1);
                    put_bytes(&mut int_or_string, 3, text.as_bytes());
                }
                other => put_varint_field(&mut int_or_string, 2, other.as_i64()? as u64),
            }
            put_bytes(out, n, &int_or_string);
        }
        TextMap | BytesMap | QuantityMap => {
            for (key, entry) in value.as_object()? {
                let text = entry.as_str()?;
                let bytes = match field.kind {
                    BytesMap => crate::tokens::base64_decode(text)?,
                    QuantityMap => {
                        let mut quantity = Vec::new();
                        put_bytes(&mut quantity, 1, text.as_bytes());
                        quantity
                    }
                    _ => text.as_bytes().to_vec(),
                };
                let mut pair = Vec::new();
                put_bytes(&mut pair, 1, key.as_bytes());
                put_bytes(&mut pair, 2, &bytes);
                put_bytes(out, n, &pair);
            }
        }
        // A status this sim does not describe cannot be answered in protobuf.
        Kind::Discarded => return None,
    }
    Some(())
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A varint field: its key (wire type 0), then the value.
fn put_varint_field(out: &mut Vec<u8>, number: u64, value: u64) {
    put_varint(out, number << 3);
    put_varint(out, value);
}

/// A length-delimited field: its key (wire type 2), the length, the bytes.
fn put_bytes(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    put_varint(out, (number << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// One message's bytes as a JSON object.
fn read(message: &'static Message, bytes: &[u8]) -> Result<Value, ProtobufError> {
    let mut object = Map::new();
    for entry in Reader(bytes) {
        let (number, wire) = entry?;
        let unknown = || ProtobufError::UnknownField {
            message: message.name,
            number,
            wire: wire.type_number(),
        };
        let field = message
            .fields
            .iter()
            .find(|f| f.number == number)
            .ok_or_else(unknown)?;
        let value = match (field.kind, wire) {
            (Kind::Discarded, _) => continue,
            (Kind::Inline(inner), Wire::Bytes(b)) => {
                if let Value::Object(embedded) = read(inner, b)? {
                    object.extend(embedded);
                }
                continue;
            }
            (Text, Wire::Bytes(b)) => json!(text(b)?),
            (Int, Wire::Varint(v)) => json!(v as i64),
            (Bool, Wire::Varint(v)) => json!(v != 0),
            (Kind::Message(inner), Wire::Bytes(b)) => read(inner, b)?,
            (Time, Wire::Bytes(b)) => match time(b)? {
                Some(at) => at,
                // Go writes a zero time as an empty message: no time at all.
                None => continue,
            },
            (IntOrString, Wire::Bytes(b)) => int_or_string(b)?,
            (Kind::Quantity, Wire::Bytes(b)) => quantity(b)?,
            (Kind::Bytes, Wire::Bytes(b)) => json!(crate::tokens::base64(b)),
            (Kind::RawJson, Wire::Bytes(b)) => raw_json(b)?,
            (TextMap | BytesMap | QuantityMap, Wire::Bytes(b)) => {
                let (key, value) = map_entry(b, field.kind)?;
                let map = object
                    .entry(field.name)
                    .or_insert_with(|| json!({}))
                    .as_object_mut()
                    .ok_or(ProtobufError::Malformed(
                        "a map field repeats as another kind",
                    ))?;
                map.insert(key, value);
                continue;
            }
            _ => return Err(unknown()),
        };
        let zero = matches!(&value, Value::String(t) if t.is_empty())
            || value == json!(0)
            || value == json!(false);
        if zero && !field.pointer && !field.repeated {
            continue;
        }
        if field.repeated {
            object
                .entry(field.name)
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .ok_or(ProtobufError::Malformed(
                    "a repeated field repeats as another kind",
                ))?
                .push(value);
        } else {
            object.insert(field.name.into(), value);
        }
    }
    Ok(Value::Object(object))
}

/// `meta.v1.FieldsV1` (its `Raw` bytes, field 1, are JSON) as that JSON.
fn raw_json(bytes: &[u8]) -> Result<Value, ProtobufError> {
    let mut value = json!({});
    for entry in Reader(bytes) {
        match entry? {
            (1, Wire::Bytes(b)) => {
                value = serde_json::from_slice(b)
                    .map_err(|_| ProtobufError::Malformed("a FieldsV1 does not hold JSON"))?;
            }
            _ => return Err(ProtobufError::Malformed("a FieldsV1 has another field")),
        }
    }
    Ok(value)
}

/// `intstr.IntOrString` (`type` 1: 0 for `intVal` 2, 1 for `strVal` 3) as its JSON.
fn int_or_string(bytes: &[u8]) -> Result<Value, ProtobufError> {
    let (mut string, mut int, mut text_value) = (false, 0i64, String::new());
    for entry in Reader(bytes) {
        match entry? {
            (1, Wire::Varint(v)) => string = v == 1,
            (2, Wire::Varint(v)) => int = v as i64,
            (3, Wire::Bytes(b)) => text_value = text(b)?,
            _ => return Err(ProtobufError::Malformed("an IntOrString has another field")),
        }
    }
    Ok(if string {
        json!(text_value)
    } else {
        json!(int)
    })
}

/// A map entry (`key` 1, `value` 2): the key, and the value as text, as base64, or as the
/// string of a `resource.Quantity` (its field 1).
fn map_entry(bytes: &[u8], kind: Kind) -> Result<(String, Value), ProtobufError> {
    let (mut key, mut value) = (String::new(), Vec::new());
    for entry in Reader(bytes) {
        match entry? {
            (1, Wire::Bytes(b)) => key = text(b)?,
            (2, Wire::Bytes(b)) => value = b.to_vec(),
            _ => {
                return Err(ProtobufError::Malformed(
                    "a map entry has a field other than key and value",
                ));
            }
        }
    }
    let value = if matches!(kind, BytesMap) {
        json!(crate::tokens::base64(&value))
    } else if matches!(kind, QuantityMap) {
        quantity(&value)?
    } else {
        json!(
            String::from_utf8(value)
                .map_err(|_| ProtobufError::Malformed("a map value is not UTF-8"))?
        )
    };
    Ok((key, value))
}

/// A `resource.Quantity` (its string in field 1) as its JSON string.
fn quantity(bytes: &[u8]) -> Result<Value, ProtobufError> {
    let mut quantity = String::new();
    for entry in Reader(bytes) {
        if let (1, Wire::Bytes(b)) = entry? {
            quantity = text(b)?;
        }
    }
    Ok(json!(quantity))
}

/// `meta.v1.Time` as kube-apiserver writes it in JSON, RFC 3339 to the second; `None` for
/// the zero time (no seconds and no nanos).
fn time(bytes: &[u8]) -> Result<Option<Value>, ProtobufError> {
    let (mut seconds, mut nanos) = (0u64, 0u64);
    for entry in Reader(bytes) {
        match entry? {
            (1, Wire::Varint(v)) => seconds = v,
            (2, Wire::Varint(v)) => nanos = v,
            _ => {}
        }
    }
    if seconds == 0 && nanos == 0 {
        return Ok(None);
    }
    let at = i64::try_from(seconds)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .ok_or(ProtobufError::Malformed("a time is out of range"))?;
    Ok(Some(json!(at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())))
}

fn text(bytes: &[u8]) -> Result<String, ProtobufError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtobufError::Malformed("a string is not UTF-8"))
}

/// A field's value as the wire carries it.
#[derive(Clone, Copy)]
enum Wire<'a> {
    Varint(u64),
    Fixed64,
    Bytes(&'a [u8]),
    Fixed32,
}

impl Wire<'_> {
    fn type_number(self) -> u64 {
        match self {
            Wire::Varint(_) => 0,
            Wire::Fixed64 => 1,
            Wire::Bytes(_) => 2,
            Wire::Fixed32 => 5,
        }
    }
}

/// The fields of one message's bytes, in order: (field number, value).
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self
                .0
                .split_first()
                .ok_or(ProtobufError::Malformed("a varint runs past the end"))?;
            self.0 = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtobufError::Malformed(
            "a varint is longer than ten bytes",
        ))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtobufError> {
        if n > self.0.len() {
            return Err(ProtobufError::Malformed("a value runs past the end"));
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(taken)
    }

    fn field(&mut self) -> Result<(u64, Wire<'a>), ProtobufError> {
        let key = self.varint()?;
        let wire = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Wire::Fixed64
            }
            2 => {
                let n = usize::try_from(self.varint()?)
                    .map_err(|_| ProtobufError::Malformed("a length does not fit"))?;
                Wire::Bytes(self.take(n)?)
            }
            5 => {
                self.take(4)?;
                Wire::Fixed32
            }
            _ => return Err(ProtobufError::Malformed("a group or unknown wire type")),
        };
        Ok((key >> 3, wire))
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Result<(u64, Wire<'a>), ProtobufError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let field = self.field();
        if field.is_err() {
            // Stop after the first error.
            self.0 = &[];
        }
        Some(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A length-delimited field, as the encoder writes one.
    fn bytes(number: u64, value: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_bytes(&mut out, number, value);
        out
    }

    fn varint(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, v);
        out
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [bytes(1, api_version.as_bytes()), bytes(2, kind.as_bytes())].concat();
        [MAGIC.to_vec(), bytes(1, &type_meta), bytes(2, raw)].concat()
    }

    /// What `kubectl create secret generic s --from-literal=k=v -n ns` sends, read as the JSON
    /// object it stands for: maps, bytes as base64, the envelope's type meta.
    #[test]
    fn a_secret_reads_as_its_json() {
        let labels = [bytes(1, b"app"), bytes(2, b"x")].concat();
        let metadata = [bytes(1, b"s"), bytes(3, b"ns"), bytes(11, &labels)].concat();
        let data = [bytes(1, b"k"), bytes(2, b"v\x00")].concat();
        let raw = [bytes(1, &metadata), bytes(2, &data), bytes(3, b"Opaque")].concat();
        let object = decode(&envelope("v1", "Secret", &raw)).unwrap();
        // kubectl's Namespace: an empty creationTimestamp (Go's zero time) and an empty status.
        let namespace = [
            bytes(1, &[bytes(1, b"tenant"), bytes(8, &[])].concat()),
            bytes(2, &[]),
            bytes(3, &[]),
        ]
        .concat();
        assert_eq!(
            decode(&envelope("v1", "Namespace", &namespace)).unwrap(),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant"},
                "spec": {}, "status": {}})
        );
        assert_eq!(
            object,
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "s", "namespace": "ns", "labels": {"app": "x"}},
                "data": {"k": "dgA="}, "type": "Opaque"})
        );
    }

    /// Repeated fields become arrays, nested messages objects, varints numbers and booleans.
    #[test]
    fn a_role_and_a_review_read_as_their_json() {
        let rule = [bytes(1, b"get"), bytes(1, b"list"), bytes(3, b"pods")].concat();
        let raw = [bytes(1, &bytes(1, b"r")), bytes(2, &rule)].concat();
        let role = decode(&envelope("rbac.authorization.k8s.io/v1", "Role", &raw)).unwrap();
        assert_eq!(
            role["rules"],
            json!([{"verbs": ["get", "list"], "resources": ["pods"]}])
        );
        let attributes = [bytes(2, b"create"), bytes(5, b"pods")].concat();
        let raw = bytes(2, &bytes(1, &attributes));
        let review = decode(&envelope(
            "authorization.k8s.io/v1",
            "SelfSubjectAccessReview",
            &raw,
        ))
        .unwrap();
        assert_eq!(
            review["spec"],
            json!({"resourceAttributes": {"verb": "create", "resource": "pods"}})
        );
        let mut spec = bytes(1, b"api");
        spec.extend(varint(4 << 3));
        spec.extend(varint(600));
        let token = decode(&envelope(
            "authentication.k8s.io/v1",
            "TokenRequest",
            &bytes(2, &spec),
        ))
        .unwrap();
        assert_eq!(
            token["spec"],
            json!({"audiences": ["api"], "expirationSeconds": 600})
        );
    }

    /// Go writes zero non-pointer fields, which its JSON leaves out; a zero pointer field
    /// (`replicas: 0`) is a value. A workload's status is not read (the API server resets it).
    #[test]
    fn zeros_are_read_as_go_reads_them() {
        let field = |number: u64, v: u64| [varint(number << 3), varint(v)].concat();
        let metadata = [bytes(1, b"web"), bytes(2, b""), field(7, 0)].concat();
        let spec = [field(1, 0), field(5, 0), field(7, 0)].concat();
        let status = field(1, 3);
        let raw = [bytes(1, &metadata), bytes(2, &spec), bytes(3, &status)].concat();
        assert_eq!(
            decode(&envelope("apps/v1", "Deployment", &raw)).unwrap(),
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web"}, "spec": {"replicas": 0}})
        );
    }

    /// An Ingress rule embeds its `IngressRuleValue` (`json:",inline"`): on the wire a message
    /// of its own (field 2), in JSON its `http` sits in the rule. Built as Go writes what
    /// `kubectl create ingress i --rule=foo.com/bar=svc1:8080` sends, and written back alike.
    #[test]
    fn an_ingress_rules_embedded_value_reads_inline_and_writes_nested() {
        let field = |number: u64, v: u64| [varint(number << 3), varint(v)].concat();
        let port = [bytes(1, b""), field(2, 8080)].concat();
        let backend = bytes(4, &[bytes(1, b"svc1"), bytes(2, &port)].concat());
        let path = [bytes(1, b"/bar"), bytes(2, &backend), bytes(3, b"Exact")].concat();
        let rule = [bytes(1, b"foo.com"), bytes(2, &bytes(1, &bytes(1, &path)))].concat();
        let spec = bytes(3, &rule);
        let raw = [bytes(1, &bytes(1, b"i")), bytes(2, &spec), bytes(3, &[])].concat();
        let ingress = decode(&envelope("networking.k8s.io/v1", "Ingress", &raw)).unwrap();
        let expected = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "i"},
            "spec": {"rules": [{"host": "foo.com", "http": {"paths": [{"path": "/bar",
                "pathType": "Exact",
                "backend": {"service": {"name": "svc1", "port": {"number": 8080}}}}]}}]}});
        assert_eq!(ingress, expected);
        let written = encode(&expected).expect("an Ingress is described");
        // Down the written bytes: the envelope's raw object, its spec, its rule, the rule's
        // field 2, which holds `http` as its field 1.
        let field_of = |message: &[u8], number: u64| -> Vec<u8> {
            Reader(message)
                .find_map(|entry| match entry.unwrap() {
                    (n, Wire::Bytes(b)) if n == number => Some(b.to_vec()),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("no field {number}"))
        };
        let raw = field_of(&written[MAGIC.len()..], 2);
        let rule = field_of(&field_of(&field_of(&raw, 2), 3), 2);
        assert!(
            !field_of(&rule, 1).is_empty(),
            "http sits in the rule value"
        );
        assert_eq!(decode(&written).unwrap(), expected);
    }

    /// A pod template as this operator renders one (projected and secret volumes, mounts,
    /// env from Secrets, probes whose handler Go embeds, a preStop hook, security contexts,
    /// topology spread), what `kubectl create job --from=cronjob/<name>-db-clean` sends back:
    /// written and read back unchanged, zeros where Go keeps them.
    #[test]
    fn a_hardened_pod_template_round_trips() {
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {
                "volumes": [
                    {"name": "config", "projected": {"defaultMode": 288, "sources": [
                        {"secret": {"name": "c", "items": [{"key": "k", "path": "p", "mode": 0}]}},
                        {"configMap": {"name": "m", "optional": false}},
                        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}]}},
                    {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
                    {"name": "ca", "secret": {"secretName": "ca", "defaultMode": 0}}],
                "securityContext": {"runAsNonRoot": true, "runAsUser": 42424, "fsGroup": 0,
                    "seccompProfile": {"type": "RuntimeDefault"}},
                "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app": "b"}}}],
                "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 0}],
                "containers": [{"name": "c", "image": "i",
                    "env": [{"name": "P", "valueFrom": {"secretKeyRef": {"name": "s", "key": "password"}}},
                        {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    "envFrom": [{"secretRef": {"name": "e"}}],
                    "volumeMounts": [{"name": "config", "mountPath": "/etc/b", "readOnly": true}],
                    "readinessProbe": {"httpGet": {"path": "/healthcheck", "port": 9311},
                        "periodSeconds": 10},
                    "livenessProbe": {"tcpSocket": {"port": "api"}, "failureThreshold": 3},
                    "startupProbe": {"exec": {"command": ["true"]}},
                    "lifecycle": {"preStop": {"sleep": {"seconds": 5}}},
                    "securityContext": {"allowPrivilegeEscalation": false,
                        "readOnlyRootFilesystem": true, "capabilities": {"drop": ["ALL"]}}}]}}}});
        let written = encode(&job).expect("every field is described");
        assert_eq!(decode(&written).unwrap(), job);
    }

    /// The other kinds kubectl's generators send: `create pdb --min-available=0` keeps its
    /// zero (a pointer), `create priorityclass --value=0` too (`json:"value"`, no omitempty),
    /// `create quota` reads its quantities.
    #[test]
    fn the_remaining_generators_kinds_read_as_their_json() {
        let field = |number: u64, v: u64| [varint(number << 3), varint(v)].concat();
        let zero = field(2, 0);
        let selector = bytes(1, &[bytes(1, b"app"), bytes(2, b"web")].concat());
        let spec = [bytes(1, &zero), bytes(2, &selector)].concat();
        let raw = [bytes(1, &bytes(1, b"p")), bytes(2, &spec)].concat();
        assert_eq!(
            decode(&envelope("policy/v1", "PodDisruptionBudget", &raw)).unwrap()["spec"],
            json!({"minAvailable": 0, "selector": {"matchLabels": {"app": "web"}}})
        );
        let raw = [bytes(1, &bytes(1, b"low")), field(2, 0), field(3, 0)].concat();
        assert_eq!(
            decode(&envelope("scheduling.k8s.io/v1", "PriorityClass", &raw)).unwrap(),
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": "low"}, "value": 0})
        );
        let hard = [bytes(1, b"pods"), bytes(2, &bytes(1, b"3"))].concat();
        let raw = [bytes(1, &bytes(1, b"q")), bytes(2, &bytes(1, &hard))].concat();
        assert_eq!(
            decode(&envelope("v1", "ResourceQuota", &raw)).unwrap()["spec"],
            json!({"hard": {"pods": "3"}})
        );
    }

    /// What the sim cannot read is refused with what it is, never dropped.
    /// An answer in protobuf reads back as the object it was encoded from: what kube-apiserver
    /// writes for a Namespace (metadata with managedFields, spec, status) and a Secret.
    #[test]
    fn an_encoded_answer_reads_back_as_its_json() {
        let namespace = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": "openstack", "uid": "u-1", "resourceVersion": "7",
                "creationTimestamp": "2026-12-02T10:00:00Z",
                "labels": {"kubernetes.io/metadata.name": "openstack"},
                "managedFields": [{"manager": "kubectl-create", "operation": "Update",
                    "apiVersion": "v1", "time": "2026-12-02T10:00:00Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}]},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
        let bytes = encode(&namespace).expect("a Namespace is described");
        assert_eq!(decode(&bytes).unwrap(), namespace);
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": "s", "namespace": "n"}, "data": {"password": "c2VjcmV0"}});
        assert_eq!(decode(&encode(&secret).unwrap()).unwrap(), secret);
        let replicas = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d"}, "spec": {"replicas": 0,
                "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}});
        assert_eq!(decode(&encode(&replicas).unwrap()).unwrap(), replicas);
    }

    /// What the sim does not describe is answered as JSON, never half-written: an unknown
    /// field, a kind without a message, a workload's status.
    #[test]
    fn an_object_with_an_undescribed_field_is_not_encoded() {
        assert!(
            encode(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c"}, "datum": {}}))
            .is_none()
        );
        assert!(
            encode(&json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "d"}}))
            .is_none()
        );
        assert!(
            encode(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d"}, "status": {"replicas": 1}}))
            .is_none()
        );
    }

    #[test]
    fn an_unknown_kind_or_field_is_refused_by_name() {
        assert_eq!(decode(b"{}"), Err(ProtobufError::NoMagic));
        let refused = decode(&envelope("apps/v1", "StatefulSet", &[])).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("send StatefulSet (apps/v1) as JSON"),
            "{refused}"
        );
        // A pod template with an affinity: refused by the message and field it is in.
        let raw = bytes(2, &bytes(3, &bytes(2, &bytes(18, b""))));
        assert_eq!(
            decode(&envelope("apps/v1", "Deployment", &raw)),
            Err(ProtobufError::UnknownField {
                message: "PodSpec",
                number: 18,
                wire: 2
            })
        );
        let raw = bytes(9, b"x");
        assert_eq!(
            decode(&envelope("v1", "ConfigMap", &raw)),
            Err(ProtobufError::UnknownField {
                message: "ConfigMap",
                number: 9,
                wire: 2
            })
        );
        let truncated = [MAGIC, &[0x0a, 0x05, 0x01][..]].concat();
        assert!(matches!(
            decode(&truncated),
            Err(ProtobufError::Malformed(_))
        ));
    }
}
