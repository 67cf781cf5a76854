//! A pod template's messages: what kubectl's workload generators set, and what this
//! operator renders (volumes, mounts, environment from Secrets, probes, lifecycle hooks,
//! security contexts, tolerations, topology spread), which `kubectl create job --from`
//! sends back. A nested block beyond these (affinity, other volume types) is refused by name.

use super::{Kind, LABEL_SELECTOR, LOCAL_OBJECT_REFERENCE, METADATA, Message, many, one, opt};
use Kind::{Bool, Int, IntOrString, QuantityMap, Text, TextMap};

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

pub(super) static POD_TEMPLATE_SPEC: Message = Message {
    name: "PodTemplateSpec",
    fields: &[METADATA, one(2, "spec", Kind::Message(&POD_SPEC))],
};
