//! Schema-level admission of custom resources, as kube-apiserver runs it after defaulting and
//! pruning: structural validation against the CRD's OpenAPI schema, then (on a structurally
//! valid object) the CEL `x-kubernetes-validations`, transition rules seeing the stored object as
//! `oldSelf`. Every violation is one cause of a single 422 `Invalid`.

use kube::core::cel::{CompiledSchema, ValidationError, Validator};
use serde_json::Value;

use crate::{errors::ApiError, resources::ResourceType};

/// Checks `object` (and the transition from `old`): every kind's labels and annotations, a
/// ConfigMap's and a Secret's data keys, and a custom resource against its schema.
pub fn admit(t: &ResourceType, object: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let mut causes = metadata_causes(object);
    if t.group.is_empty() && matches!(t.kind.as_str(), "ConfigMap" | "Secret") {
        causes.extend(data_key_causes(object));
    }
    if t.group == "events.k8s.io" && t.kind == "Event" {
        causes.extend(event_note_causes(object));
    }
    if t.group == "apiextensions.k8s.io" && t.kind == "CustomResourceDefinition" {
        causes.extend(definition_causes(object, old));
    }
    if let Some((path, pod)) = pod_spec(t, object) {
        causes.extend(pod_name_causes(&path, pod));
        causes.extend(pod_field_causes(&path, pod));
    }
    let Some(schema) = &t.schema else {
        if causes.is_empty() {
            return Ok(());
        }
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        return Err(ApiError::invalid_object(&t.kind, &t.group, name, &causes));
    };
    let structural = crate::schema::validate(schema, object, "");
    let blocking = structural
        .iter()
        .any(crate::schema::SchemaError::blocks_rules);
    causes.extend(
        structural
            .into_iter()
            .map(|e| (e.path, e.message, e.reason.to_string())),
    );
    // The rules compiled at installation.
    let cel = || match &t.rules {
        Some(rules) => {
            let mut errors = Vec::new();
            cel_rules(&Validator::new(), &rules.0, object, old, "", &mut errors);
            errors
        }
        None => match Validator::new().validate(schema, object, old) {
            Ok(()) => Vec::new(),
            Err(errors) => errors.into_vec(),
        },
    };
    // As kube-apiserver's customResourceStrategy: the rules run unless a structural error
    // blocks them (a missing, unsupported, too long, too many or mistyped value), which is said.
    if blocking && has_rules(schema) {
        causes.push((
            "<nil>".to_string(),
            "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".to_string(),
            "FieldValueInvalid".to_string(),
        ));
    } else if !blocking {
        for error in cel() {
            let reason = error
                .reason
                .clone()
                .unwrap_or_else(|| "FieldValueInvalid".into());
            // kube-apiserver 1.37 leaves the value out of a rule's error (older servers wrote
            // its type, `Invalid value: "object": …`); the prefix follows the rule's reason.
            let prefix = match reason.as_str() {
                "FieldValueRequired" => "Required value",
                "FieldValueForbidden" => "Forbidden",
                "FieldValueDuplicate" => "Duplicate value",
                _ => "Invalid value",
            };
            causes.push((
                error.field_path.clone(),
                format!("{prefix}: {}", error.message),
                reason,
            ));
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    Err(ApiError::invalid_object(&t.kind, &t.group, name, &causes))
}

/// Whether a schema holds a CEL rule anywhere (kube-apiserver has no CEL validator otherwise).
fn has_rules(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            map.contains_key("x-kubernetes-validations") || map.values().any(has_rules)
        }
        Value::Array(items) => items.iter().any(has_rules),
        _ => false,
    }
}

/// Runs the CEL rules of `compiled` on `value` (at `path`), as kube-apiserver 1.33 decides
/// them, without converting to CEL what no rule can look at:
/// - a subtree whose schema carries no rule is not walked (it can raise nothing);
/// - a subtree an update leaves unchanged is not walked when no rule in it is a transition
///   rule: validation ratcheting (CRDValidationRatcheting, GA in 1.33) drops the errors of
///   non-transition rules on unchanged values, so evaluating them decides nothing. A
///   transition rule is never ratcheted, so a subtree holding one is evaluated.
///
/// A status update then costs the rules under `spec` only, instead of a CEL copy of the whole
/// object at every level of it (kube-cel's walk converts each node it passes): the sim's
/// commit path spent a tenth of the edit-sequence check there.
pub fn cel_rules(
    validator: &Validator,
    compiled: &CompiledSchema,
    value: &Value,
    old: Option<&Value>,
    path: &str,
    errors: &mut Vec<ValidationError>,
) {
    let rules = Rules::below(compiled);
    if !rules.any || (old == Some(value) && !rules.transition) {
        return;
    }
    // Rules on this node, or below it where this walk does not follow (array items, maps,
    // allOf and friends, a missing property the defaults fill in): kube-cel walks it whole.
    let whole = !compiled.validations.is_empty()
        || compiled.items.is_some()
        || compiled.additional_properties.is_some()
        || !compiled.all_of.is_empty()
        || !compiled.one_of.is_empty()
        || !compiled.any_of.is_empty();
    let Some(fields) = value.as_object().filter(|fields| {
        !whole
            && compiled
                .properties
                .iter()
                .all(|(name, child)| child.default.is_none() || fields.contains_key(name))
    }) else {
        if let Err(found) = validator.validate_compiled(compiled, value, old) {
            errors.extend(found.into_vec().into_iter().map(|mut e| {
                e.field_path = under(path, &e.field_path);
                e
            }));
        }
        return;
    };
    for (name, child) in &compiled.properties {
        if let Some(child_value) = fields.get(name) {
            let child_old = old.and_then(|o| o.get(name));
            cel_rules(
                validator,
                child,
                child_value,
                child_old,
                &under(path, name),
                errors,
            );
        }
    }
}

/// `relative` (a kube-cel field path: `a.b`, `[0]`, empty, or a rule's `fieldPath` at the
/// subtree's root, `.a`) below `base`.
fn under(base: &str, relative: &str) -> String {
    match (
        base.is_empty(),
        relative.is_empty(),
        relative.starts_with('[') || relative.starts_with('.'),
    ) {
        (true, _, _) => relative.to_string(),
        (false, true, _) => base.to_string(),
        (false, false, true) => format!("{base}{relative}"),
        (false, false, false) => format!("{base}.{relative}"),
    }
}

/// Whether a schema subtree carries any CEL rule, and any transition rule (one reading
/// `oldSelf`).
#[derive(Default)]
struct Rules {
    any: bool,
    transition: bool,
}

impl Rules {
    fn below(compiled: &CompiledSchema) -> Rules {
        let mut rules = Rules::default();
        rules.add(compiled);
        rules
    }

    fn add(&mut self, compiled: &CompiledSchema) {
        for rule in &compiled.validations {
            self.any = true;
            // A rule that failed to compile is reported by kube-cel's walk: count it as
            // one that must run.
            self.transition |= rule.as_ref().map_or(true, |r| r.is_transition_rule);
        }
        let children = compiled
            .properties
            .values()
            .chain(compiled.items.as_deref())
            .chain(compiled.additional_properties.as_deref())
            .chain(&compiled.all_of)
            .chain(&compiled.one_of)
            .chain(&compiled.any_of);
        for child in children {
            if self.transition {
                return;
            }
            self.add(child);
        }
    }
}

/// A cause of a 422: (field path, message, reason).
type Cause = (String, String, String);

const NAME_PART: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
/// kube-apiserver's words for a value that is not a DNS-1123 subdomain.
pub(crate) const DNS_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const CONFIG_KEY: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, of any length.
fn is_name_part_shape(text: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    text.starts_with(alnum)
        && text.ends_with(alnum)
        && text
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
}

/// Why `key` is not a label key (`[prefix/]name`, apimachinery's `IsLabelKey`): every
/// reason, in its order and words; none when it is one.
pub(crate) fn label_key_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let parts: Vec<&str> = key.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errors.push("prefix part must be no more than 253 bytes".to_string());
                }
                if !is_dns_subdomain(prefix) {
                    errors.push(format!("prefix part {DNS_SUBDOMAIN}"));
                }
            }
            name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                NAME_PART.trim_start_matches("name part ")
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 bytes".to_string());
    }
    if !is_name_part_shape(name) {
        errors.push(NAME_PART.to_string());
    }
    errors
}

/// Why `value` is not a label value (apimachinery's `IsLabelValue`); none when it is one.
pub(crate) fn label_value_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 bytes".to_string());
    }
    if !value.is_empty() && !is_name_part_shape(value) {
        errors.push(LABEL_VALUE.to_string());
    }
    errors
}

/// kube-apiserver's checks of `metadata.labels` (qualified keys, label values) and
/// `metadata.annotations` (qualified keys), for every kind.
fn metadata_causes(object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let invalid = |field: &str, value: &str, why: &str| {
        (
            field.to_string(),
            format!("Invalid value: {}: {why}", crate::errors::go_quote(value)),
            "FieldValueInvalid".to_string(),
        )
    };
    if let Some(labels) = object["metadata"]["labels"].as_object() {
        for (key, value) in labels {
            let key_errors = label_key_errors(key);
            if !key_errors.is_empty() {
                causes.push(invalid("metadata.labels", key, &key_errors.join("; ")));
            }
            let value = value.as_str().unwrap_or_default();
            let value_errors = label_value_errors(value);
            if !value_errors.is_empty() {
                causes.push(invalid("metadata.labels", value, &value_errors.join("; ")));
            }
        }
    }
    if let Some(annotations) = object["metadata"]["annotations"].as_object() {
        for key in annotations.keys() {
            let key_errors = label_key_errors(&key.to_ascii_lowercase());
            if !key_errors.is_empty() {
                causes.push(invalid("metadata.annotations", key, &key_errors.join("; ")));
            }
        }
    }
    causes
}

/// The pod spec a built-in workload carries, with its field path: a Pod's own, the template of a
/// Deployment, ReplicaSet, StatefulSet, DaemonSet or Job, a CronJob's job template's.
fn pod_spec<'a>(t: &ResourceType, object: &'a Value) -> Option<(String, &'a Value)> {
    let path = pod_spec_path(&t.group, &t.kind)?;
    let pointer = format!("/{}", path.replace('.', "/"));
    object
        .pointer(&pointer)
        .filter(|v| v.is_object())
        .map(|spec| (path.to_string(), spec))
}

/// Where a Pod or a workload of `group` and `kind` holds its pod spec, dotted.
pub(crate) fn pod_spec_path(group: &str, kind: &str) -> Option<&'static str> {
    match (group, kind) {
        ("", "Pod") => Some("spec"),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") | ("batch", "Job") => {
            Some("spec.template.spec")
        }
        ("batch", "CronJob") => Some("spec.jobTemplate.spec.template.spec"),
        _ => None,
    }
}

/// What kube-apiserver says of a name that is not a DNS-1123 label.
const RFC1123_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// Whether `name` is a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting
/// and ending with a letter or digit.
pub fn is_dns1123_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// kube-apiserver's checks of the names in a pod spec at `path`: every container's, init
/// container's and volume's name is a DNS-1123 label, and unique among its kind. (Container
/// names become file names and cgroup names on a node; the sim's kubelet names log files
/// after them.)
fn pod_name_causes(path: &str, pod: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let mut containers = std::collections::BTreeSet::new();
    for list in ["initContainers", "containers", "volumes"] {
        let mut volumes = std::collections::BTreeSet::new();
        for (i, item) in pod[list].as_array().into_iter().flatten().enumerate() {
            let field = format!("{path}.{list}[{i}].name");
            let Some(name) = item["name"].as_str().filter(|n| !n.is_empty()) else {
                causes.push((field, "Required value".into(), "FieldValueRequired".into()));
                continue;
            };
            if !is_dns1123_label(name) {
                causes.push((
                    field,
                    format!(
                        "Invalid value: {}: {RFC1123_LABEL}",
                        Value::String(name.to_string())
                    ),
                    "FieldValueInvalid".into(),
                ));
                continue;
            }
            let seen = if list == "volumes" {
                &mut volumes
            } else {
                &mut containers
            };
            if !seen.insert(name.to_string()) {
                causes.push((
                    field,
                    format!("Duplicate value: {}", Value::String(name.to_string())),
                    "FieldValueDuplicate".into(),
                ));
            }
        }
    }
    causes
}

/// kube-apiserver's checks of a pod spec's numbers and ports at `path`: the grace period, each
/// container's ports (number, name, protocol) and probes (timings, thresholds, one handler).
fn pod_field_causes(path: &str, pod: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let invalid = |field: String, value: &Value, why: &str| {
        (
            field,
            format!("Invalid value: {value}: {why}"),
            "FieldValueInvalid".to_string(),
        )
    };
    let at_least = |causes: &mut Vec<Cause>, field: String, value: &Value, least: i64| {
        if value.is_null() {
            return;
        }
        match value.as_i64() {
            Some(n) if n < least => causes.push(invalid(
                field,
                value,
                &if least == 0 {
                    "must be greater than or equal to 0".to_string()
                } else {
                    format!("must be greater than {}", least - 1)
                },
            )),
            Some(_) => {}
            None => causes.push(invalid(field, value, "must be an integer")),
        }
    };
    at_least(
        &mut causes,
        format!("{path}.terminationGracePeriodSeconds"),
        &pod["terminationGracePeriodSeconds"],
        0,
    );
    at_least(
        &mut causes,
        format!("{path}.activeDeadlineSeconds"),
        &pod["activeDeadlineSeconds"],
        1,
    );
    for list in ["initContainers", "containers"] {
        for (i, container) in pod[list].as_array().into_iter().flatten().enumerate() {
            let at = format!("{path}.{list}[{i}]");
            let mut names = std::collections::BTreeSet::new();
            for (j, port) in container["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let field = format!("{at}.ports[{j}]");
                let number = &port["containerPort"];
                match number.as_i64() {
                    None => causes.push((
                        format!("{field}.containerPort"),
                        "Required value".into(),
                        "FieldValueRequired".into(),
                    )),
                    Some(n) if !(1..=65_535).contains(&n) => causes.push(invalid(
                        format!("{field}.containerPort"),
                        number,
                        "must be between 1 and 65535, inclusive",
                    )),
                    Some(_) => {}
                }
                if let Some(host) = port["hostPort"].as_i64()
                    && !(1..=65_535).contains(&host)
                {
                    causes.push(invalid(
                        format!("{field}.hostPort"),
                        &port["hostPort"],
                        "must be between 1 and 65535, inclusive",
                    ));
                }
                if let Some(name) = port["name"].as_str() {
                    if let Some(why) = iana_service_name_problem(name) {
                        causes.push(invalid(format!("{field}.name"), &port["name"], why));
                    } else if !names.insert(name.to_string()) {
                        causes.push((
                            format!("{field}.name"),
                            format!("Duplicate value: {}", port["name"]),
                            "FieldValueDuplicate".into(),
                        ));
                    }
                }
                if let Some(protocol) = port["protocol"].as_str()
                    && !matches!(protocol, "TCP" | "UDP" | "SCTP")
                {
                    causes.push((
                        format!("{field}.protocol"),
                        format!(
                            "Unsupported value: {}: supported values: \"SCTP\", \"TCP\", \"UDP\"",
                            port["protocol"]
                        ),
                        "FieldValueNotSupported".into(),
                    ));
                }
            }
            for kind in ["livenessProbe", "readinessProbe", "startupProbe"] {
                let probe = &container[kind];
                if !probe.is_object() {
                    continue;
                }
                let field = format!("{at}.{kind}");
                for timing in [
                    "initialDelaySeconds",
                    "timeoutSeconds",
                    "periodSeconds",
                    "successThreshold",
                    "failureThreshold",
                ] {
                    at_least(&mut causes, format!("{field}.{timing}"), &probe[timing], 0);
                }
                // Beyond int32, as the field's type is: kube-apiserver cannot decode it.
                for timing in ["initialDelaySeconds", "timeoutSeconds", "periodSeconds"] {
                    if probe[timing]
                        .as_i64()
                        .is_some_and(|n| n > i64::from(i32::MAX))
                    {
                        causes.push(invalid(
                            format!("{field}.{timing}"),
                            &probe[timing],
                            "must be no more than 2147483647",
                        ));
                    }
                }
                if kind != "readinessProbe"
                    && probe["successThreshold"].as_i64().is_some_and(|n| n != 1)
                {
                    causes.push(invalid(
                        format!("{field}.successThreshold"),
                        &probe["successThreshold"],
                        "must be 1",
                    ));
                }
                at_least(
                    &mut causes,
                    format!("{field}.terminationGracePeriodSeconds"),
                    &probe["terminationGracePeriodSeconds"],
                    1,
                );
                let handlers = ["exec", "httpGet", "tcpSocket", "grpc"]
                    .iter()
                    .filter(|h| !probe[**h].is_null())
                    .count();
                if handlers == 0 {
                    causes.push((
                        field.clone(),
                        "Required value: must specify a handler type".into(),
                        "FieldValueRequired".into(),
                    ));
                } else if handlers > 1 {
                    causes.push((
                        field.clone(),
                        "Forbidden: may not specify more than 1 handler type".into(),
                        "FieldValueForbidden".into(),
                    ));
                }
            }
        }
    }
    causes
}

/// Why `name` is not an IANA service name (a container port's name), in kube-apiserver's
/// words, or `None`.
fn iana_service_name_problem(name: &str) -> Option<&'static str> {
    if name.len() > 15 {
        Some("must be no more than 15 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        Some("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    } else if name.contains("--") {
        Some("must not contain consecutive hyphens")
    } else if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        Some("must contain at least one letter (a-z)")
    } else if name.starts_with('-') || name.ends_with('-') {
        Some("must not begin or end with a hyphen")
    } else {
        None
    }
}

/// The most bytes an events.k8s.io Event's `note` may hold (kube-apiserver's
/// `NoteLengthLimit`): bytes of UTF-8, not characters.
pub const EVENT_NOTE_LIMIT: usize = 1024;

/// An events.k8s.io Event's `note` past [`EVENT_NOTE_LIMIT`] bytes, as kube-apiserver refuses it.
fn event_note_causes(object: &Value) -> Vec<Cause> {
    let note = object["note"].as_str().unwrap_or_default();
    if note.len() <= EVENT_NOTE_LIMIT {
        return Vec::new();
    }
    vec![(
        "note".to_string(),
        format!("Too long: may not be more than {EVENT_NOTE_LIMIT} bytes"),
        "FieldValueTooLong".to_string(),
    )]
}

/// The annotation a CRD of a protected API group must carry.
pub const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

/// Whether `group` is one the Kubernetes project owns (`k8s.io`, `kubernetes.io` and their
/// subdomains): a CRD in it needs [`API_APPROVED_ANNOTATION`].
fn protected_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|g| group == *g || group.ends_with(&format!(".{g}")))
}

/// What kube-apiserver refuses of a CustomResourceDefinition itself: a name other than
/// `<plural>.<group>`, and a protected group without the approval annotation (unless the
/// stored definition already lacked it, which an update may keep).
fn definition_causes(object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    let group = object["spec"]["group"].as_str().unwrap_or_default();
    let plural = object["spec"]["names"]["plural"]
        .as_str()
        .unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    if name != format!("{plural}.{group}") {
        causes.push((
            "metadata.name".to_string(),
            format!("Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"),
            "FieldValueInvalid".to_string(),
        ));
    }
    let approved = |crd: &Value| !crd["metadata"]["annotations"][API_APPROVED_ANNOTATION].is_null();
    if protected_group(group) && !approved(object) && old.is_none_or(approved) {
        causes.push((
            format!("metadata.annotations[{API_APPROVED_ANNOTATION}]"),
            format!(
                "Required value: protected groups must have approval annotation \"{API_APPROVED_ANNOTATION}\", see https://github.com/kubernetes/enhancements/pull/1111"
            ),
            "FieldValueRequired".to_string(),
        ));
    }
    causes
}

/// A ConfigMap's `data` and `binaryData` keys and a Secret's `data` and `stringData` keys:
/// `[-._a-zA-Z0-9]+`, not `.` or `..`, at most 253 characters.
fn data_key_causes(object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    for field in ["data", "binaryData", "stringData"] {
        for key in object[field].as_object().into_iter().flat_map(|m| m.keys()) {
            let valid = !key.is_empty()
                && key.len() <= 253
                && key != "."
                && key != ".."
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !valid {
                causes.push((
                    format!("{field}[{key}]"),
                    format!(
                        "Invalid value: {}: {CONFIG_KEY}",
                        Value::String(key.clone())
                    ),
                    "FieldValueInvalid".to_string(),
                ));
            }
        }
    }
    causes
}

/// Whether `name` is a lowercase RFC 1123 subdomain (what kube-apiserver asks of most object
/// names and of label key prefixes): dot-separated labels of lowercase alphanumerics and `-`,
/// none starting or ending with `-`, 253 characters at most.
pub(crate) fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}
