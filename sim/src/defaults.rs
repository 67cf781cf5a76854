//! kube-apiserver's defaulting of built-in kinds (the `SetDefaults_*` functions of
//! `pkg/apis/*/v1`), applied to every write as the API server decodes it, before admission:
//! what a client reads back that it never sent. Only fields left out are filled in.

use serde_json::{Map, Value, json};

use crate::resources::ResourceType;

/// Fills in the defaults of `object`, a built-in kind's; other kinds are left as they are.
pub fn apply(t: &ResourceType, object: &mut Value) {
    if t.schema.is_some() || !object.is_object() {
        return;
    }
    match (t.group.as_str(), t.kind.as_str()) {
        ("", "Secret") => set(object, "type", json!("Opaque")),
        ("", "Service") => service(object),
        ("", "Pod") => pod(object),
        ("apps", "Deployment") => deployment(object),
        // A PodTemplate's template is defaulted as a workload's is.
        ("", "PodTemplate") => template(object),
        ("batch", "Job") => {
            if let Some(spec) = object.get_mut("spec") {
                job_spec(spec);
            }
        }
        ("batch", "CronJob") => cronjob(object),
        _ => {}
    }
}

/// Sets `key` of the object `at` to `value` unless it is there.
fn set(at: &mut Value, key: &str, value: Value) {
    if let Some(map) = at.as_object_mut() {
        map.entry(key.to_string()).or_insert(value);
    }
}

/// The object at `key` of `at`, created empty when missing (only when `at` is an object).
fn object_at<'a>(at: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    let map: &mut Map<String, Value> = at.as_object_mut()?;
    let entry = map.entry(key.to_string()).or_insert_with(|| json!({}));
    entry.is_object().then_some(entry)
}

fn each(at: &mut Value, key: &str, mut f: impl FnMut(&mut Value)) {
    if let Some(items) = at.get_mut(key).and_then(Value::as_array_mut) {
        items.iter_mut().filter(|i| i.is_object()).for_each(&mut f);
    }
}

/// A Service: `type`, `sessionAffinity` and `internalTrafficPolicy` (not for ExternalName),
/// and each port's `protocol` and `targetPort`. The cluster IP is the store's to allocate.
pub fn service(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    set(spec, "type", json!("ClusterIP"));
    if spec["type"] != "ExternalName" {
        set(spec, "sessionAffinity", json!("None"));
        set(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    each(spec, "ports", |port| {
        set(port, "protocol", json!("TCP"));
        if let Some(number) = port.get("port").cloned() {
            set(port, "targetPort", number);
        }
    });
}

fn deployment(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    set(spec, "replicas", json!(1));
    set(spec, "revisionHistoryLimit", json!(10));
    set(spec, "progressDeadlineSeconds", json!(600));
    if let Some(strategy) = object_at(spec, "strategy") {
        set(strategy, "type", json!("RollingUpdate"));
        if strategy["type"] == "RollingUpdate"
            && let Some(rolling) = object_at(strategy, "rollingUpdate")
        {
            set(rolling, "maxUnavailable", json!("25%"));
            set(rolling, "maxSurge", json!("25%"));
        }
    }
    template(spec);
}

fn job_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    set(spec, "backoffLimit", json!(6));
    set(spec, "completionMode", json!("NonIndexed"));
    set(spec, "suspend", json!(false));
    set(spec, "manualSelector", json!(false));
    if spec.get("completions").is_none() && spec.get("parallelism").is_none() {
        set(spec, "completions", json!(1));
    }
    set(spec, "parallelism", json!(1));
    set(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
    template(spec);
}

fn cronjob(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    set(spec, "concurrencyPolicy", json!("Allow"));
    set(spec, "suspend", json!(false));
    set(spec, "successfulJobsHistoryLimit", json!(3));
    set(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(job) = spec.get_mut("jobTemplate").and_then(|t| t.get_mut("spec")) {
        job_spec(job);
    }
}

/// The pod template at `.template` of a workload's spec.
fn template(spec: &mut Value) {
    if let Some(pod) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) {
        pod_spec(pod);
    }
}

/// A Pod: its spec's defaults and the service account admission's `default`.
fn pod(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    pod_spec(spec);
    set(spec, "serviceAccountName", json!("default"));
    set(spec, "enableServiceLinks", json!(true));
    set(spec, "priority", json!(0));
    set(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
}

/// The status a new object of `t` starts with, where kube-apiserver gives one at creation: a
/// Pod is `Pending` with its QoS class. `None` for every other kind.
pub fn initial_status(t: &ResourceType, object: &Value) -> Option<Value> {
    (t.group.is_empty() && t.kind == "Pod")
        .then(|| json!({"phase": "Pending", "qosClass": qos_class(&object["spec"])}))
}

/// kube's QoS class of a pod spec: `BestEffort` when no container asks for CPU or memory,
/// `Guaranteed` when every container's CPU and memory limits equal its requests (a limit
/// alone counts as its request), `Burstable` otherwise.
fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|key| spec.get(*key).and_then(Value::as_array))
        .flatten()
        .collect();
    let mut any = false;
    let mut guaranteed = !containers.is_empty();
    for container in containers {
        let resources = &container["resources"];
        for name in ["cpu", "memory"] {
            let request = resources["requests"].get(name);
            let limit = resources["limits"].get(name);
            any |= request.is_some() || limit.is_some();
            guaranteed &= limit.is_some() && (request.is_none() || request == limit);
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

fn pod_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    set(spec, "restartPolicy", json!("Always"));
    set(spec, "terminationGracePeriodSeconds", json!(30));
    set(spec, "dnsPolicy", json!("ClusterFirst"));
    set(spec, "schedulerName", json!("default-scheduler"));
    set(spec, "securityContext", json!({}));
    for key in ["containers", "initContainers"] {
        each(spec, key, container);
    }
    each(spec, "volumes", |volume| {
        for source in ["secret", "configMap"] {
            if let Some(source) = volume.get_mut(source).filter(|s| s.is_object()) {
                set(source, "defaultMode", json!(420));
            }
        }
        if let Some(projected) = volume.get_mut("projected").filter(|s| s.is_object()) {
            set(projected, "defaultMode", json!(420));
        }
    });
}

fn container(container: &mut Value) {
    let image = container["image"].as_str().unwrap_or_default();
    // A digest or a tag other than `latest` is pulled when missing; `latest` or no tag always.
    let tag = image
        .rsplit_once('/')
        .map_or(image, |(_, last)| last)
        .split_once(':')
        .map(|(_, tag)| tag);
    let policy = if image.contains('@') || tag.is_some_and(|t| t != "latest") {
        "IfNotPresent"
    } else {
        "Always"
    };
    set(container, "imagePullPolicy", json!(policy));
    set(
        container,
        "terminationMessagePath",
        json!("/dev/termination-log"),
    );
    set(container, "terminationMessagePolicy", json!("File"));
    // kube-apiserver stores a container's requirements as an object, empty when none are given.
    set(container, "resources", json!({}));
    each(container, "ports", |port| {
        set(port, "protocol", json!("TCP"))
    });
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = container.get_mut(probe).filter(|p| p.is_object()) {
            set(probe, "timeoutSeconds", json!(1));
            set(probe, "periodSeconds", json!(10));
            set(probe, "successThreshold", json!(1));
            set(probe, "failureThreshold", json!(3));
            if let Some(get) = probe.get_mut("httpGet").filter(|g| g.is_object()) {
                set(get, "scheme", json!("HTTP"));
            }
        }
    }
    each(container, "env", |env| {
        if let Some(field) = env
            .get_mut("valueFrom")
            .and_then(|v| v.get_mut("fieldRef"))
            .filter(|f| f.is_object())
        {
            set(field, "apiVersion", json!("v1"));
        }
    });
}
