//! Tests of `barbican_sim::protobuf`.

use serde_json::json;

use barbican_sim::protobuf::*;

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
/// (`replicas: 0`) is a value. A workload's status is read as sent (a create then drops it,
/// as kube-apiserver's strategies do).
#[test]
fn zeros_are_read_as_go_reads_them() {
    let field = |number: u64, v: u64| [varint(number << 3), varint(v)].concat();
    let metadata = [bytes(1, b"web"), bytes(2, b""), field(7, 0)].concat();
    let spec = [field(1, 0), field(5, 0), field(7, 0)].concat();
    let status = [field(1, 3), field(2, 0)].concat();
    let raw = [bytes(1, &metadata), bytes(2, &spec), bytes(3, &status)].concat();
    assert_eq!(
        decode(&envelope("apps/v1", "Deployment", &raw)).unwrap(),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {"replicas": 0},
            "status": {"observedGeneration": 3}})
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
            "backend": {"service": {"name": "svc1", "port": {"number": 8080}}}}]}}]},
        "status": {}});
    assert_eq!(ingress, expected);
    let written = encode(&expected).expect("an Ingress is described");
    // Down the written bytes: the envelope's raw object, its spec, its rule, the rule's
    // field 2, which holds `http` as its field 1.
    let field_of = |message: &[u8], number: u64| -> Vec<u8> {
        Reader::new(message)
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

/// What the table does not describe is answered as JSON, never half-written: an unknown
/// field, a kind without a message (a custom resource). A workload's status is described.
#[test]
fn an_object_with_an_undescribed_field_is_not_encoded() {
    assert!(
        encode(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c"}, "datum": {}}))
        .is_none()
    );
    assert!(
        encode(
            &json!({"apiVersion": "barbican.openstack.org/v1", "kind": "Barbican",
        "metadata": {"name": "b"}})
        )
        .is_none()
    );
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d"}, "status": {"replicas": 1}});
    assert_eq!(decode(&encode(&deployment).unwrap()).unwrap(), deployment);
}

#[test]
fn an_unknown_kind_or_field_is_refused_by_name() {
    assert_eq!(decode(b"{}"), Err(ProtobufError::NoMagic));
    let refused = decode(&envelope("barbican.openstack.org/v1", "Barbican", &[])).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("send Barbican (barbican.openstack.org/v1) as JSON"),
        "{refused}"
    );
    // A pod template with a field number PodSpec does not have: refused by the message and
    // field it is in.
    let raw = bytes(2, &bytes(3, &bytes(2, &bytes(999, b""))));
    assert_eq!(
        decode(&envelope("apps/v1", "Deployment", &raw)),
        Err(ProtobufError::UnknownField {
            message: "k8s.io.api.core.v1.PodSpec".into(),
            number: 999,
            wire: 2
        })
    );
    let raw = bytes(9, b"x");
    assert_eq!(
        decode(&envelope("v1", "ConfigMap", &raw)),
        Err(ProtobufError::UnknownField {
            message: "k8s.io.api.core.v1.ConfigMap".into(),
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

/// What client-go's typed clients send with a delete (helm's `uninstall` purging its release
/// Secrets): DeleteOptions with a grace period, preconditions and a propagation policy, in
/// whichever group version the resource is.
#[test]
fn delete_options_read_as_their_json_in_any_group_version() {
    let preconditions = [bytes(1, b"u-1"), bytes(2, b"42")].concat();
    let raw = [
        vec![0x08],
        varint(0),
        bytes(2, &preconditions),
        bytes(4, b"Background"),
        bytes(5, b"All"),
    ]
    .concat();
    for api_version in ["v1", "apps/v1"] {
        assert_eq!(
            decode(&envelope(api_version, "DeleteOptions", &raw)).unwrap(),
            json!({"apiVersion": api_version, "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                "preconditions": {"uid": "u-1", "resourceVersion": "42"},
                "propagationPolicy": "Background", "dryRun": ["All"]})
        );
    }
    let written = encode(&json!({"apiVersion": "v1", "kind": "DeleteOptions",
        "propagationPolicy": "Foreground", "orphanDependents": false}))
    .expect("DeleteOptions is described");
    assert_eq!(
        decode(&written).unwrap(),
        json!({"apiVersion": "v1", "kind": "DeleteOptions",
            "propagationPolicy": "Foreground", "orphanDependents": false})
    );
}
