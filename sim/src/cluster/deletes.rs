//! Deletes as kube-apiserver answers them: the DeleteOptions of the query and the body
//! (`propagationPolicy`, `dryRun`, `preconditions`), a `Status` for an object gone at once
//! (the deleted object for the kinds whose registry returns it, and for one still held by a
//! finalizer), and `deletecollection`.

use super::*;

/// The built-in kinds whose registry answers a delete with the deleted object
/// (`ReturnDeletedObject` in kube-apiserver's registries), as custom resources' does; every
/// other built-in kind answers a `Status` once the object is gone.
const RETURNS_DELETED_OBJECT: [(&str, &str); 6] = [
    ("", "pods"),
    ("", "podtemplates"),
    // The official Python client reads a Service delete's answer as a Service (its e2e tests
    // fail on a Status), as kube-apiserver's service registry returns it.
    ("", "services"),
    ("", "serviceaccounts"),
    ("", "namespaces"),
    ("storage.k8s.io", "storageclasses"),
];

/// A delete's options, from the query and the DeleteOptions body.
pub(super) struct DeleteOptions {
    pub propagation: crate::store::Propagation,
    pub dry_run: bool,
    uid: Option<String>,
    resource_version: Option<String>,
}

impl DeleteOptions {
    /// Reads the options; the query wins over the body, as kube-apiserver decodes the query
    /// into the same DeleteOptions after the body.
    pub fn of(q: &BTreeMap<String, String>, body: &Value) -> Self {
        let policy = q
            .get("propagationPolicy")
            .cloned()
            .or_else(|| body["propagationPolicy"].as_str().map(String::from));
        let propagation = match policy.as_deref() {
            Some("Orphan") => crate::store::Propagation::Orphan,
            Some("Foreground") => crate::store::Propagation::Foreground,
            _ => crate::store::Propagation::Background,
        };
        let dry_run = q.get("dryRun").is_some_and(|v| v == "All")
            || body["dryRun"]
                .as_array()
                .is_some_and(|v| v.iter().any(|d| d == "All"));
        let precondition = |field: &str| {
            body["preconditions"][field]
                .as_str()
                .filter(|v| !v.is_empty())
                .map(String::from)
        };
        Self {
            propagation,
            dry_run,
            uid: precondition("uid"),
            resource_version: precondition("resourceVersion"),
        }
    }

    /// kube-apiserver's 409 when a precondition does not hold for `current`.
    pub fn check(&self, t: &ResourceType, name: &str, current: &Value) -> Result<(), ApiError> {
        let failed = |what: &str, expected: &str, actual: &Value| {
            ApiError::precondition_failed(
                &t.kind,
                &t.group,
                name,
                what,
                expected,
                actual.as_str().unwrap_or_default(),
            )
        };
        if let Some(uid) = &self.uid
            && current["metadata"]["uid"].as_str() != Some(uid.as_str())
        {
            return Err(failed("UID", uid, &current["metadata"]["uid"]));
        }
        if let Some(rv) = &self.resource_version
            && current["metadata"]["resourceVersion"].as_str() != Some(rv.as_str())
        {
            return Err(failed(
                "ResourceVersion",
                rv,
                &current["metadata"]["resourceVersion"],
            ));
        }
        Ok(())
    }
}

/// What a delete answers: the object while a finalizer (or a namespace's teardown) holds it,
/// or for the kinds that return it; a `Status` naming it once it is gone.
pub(super) fn answer_for(t: &ResourceType, deleted: &Value) -> Value {
    let held = deleted["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| !f.is_empty());
    let custom = t.schema.is_some();
    if held
        || custom
        || RETURNS_DELETED_OBJECT
            .iter()
            .any(|(group, plural)| t.group == *group && t.plural == *plural)
    {
        return deleted.clone();
    }
    let mut details = json!({
        "name": deleted["metadata"]["name"],
        "kind": t.plural,
        "uid": deleted["metadata"]["uid"],
    });
    if !t.group.is_empty() {
        details["group"] = json!(t.group);
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}

/// `DELETE` on a collection: every object the list selectors match, each through admission
/// and its own delete; the answer lists what was deleted, as kube-apiserver's does.
pub(super) async fn delete_collection(
    cluster: &Cluster,
    target: &Target,
    q: &BTreeMap<String, String>,
    options: &DeleteOptions,
) -> Result<Value, ApiError> {
    let t = &target.t;
    let listed = list(cluster, target, q)?;
    let mut deleted = Vec::new();
    for object in listed["items"].as_array().into_iter().flatten() {
        let namespace = object["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let Some(name) = object["metadata"]["name"].as_str() else {
            continue;
        };
        let one = Target {
            t: t.clone(),
            namespace: namespace.clone(),
            name: Some(name.to_string()),
            subresource: None,
        };
        if let Err(refused) = cluster
            .admit_delete(&one, object, false, options.dry_run)
            .await
        {
            return Err(refused.error);
        }
        let gone =
            cluster
                .lock()
                .store
                .delete(t, &namespace, name, options.propagation, options.dry_run);
        match gone {
            Ok(object) => deleted.push(object),
            // Deleted by someone else meanwhile: nothing left to do for it.
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let revision = cluster.lock().store.revision();
    Ok(json!({
        "kind": format!("{}List", t.kind),
        "apiVersion": t.api_version(),
        "metadata": {"resourceVersion": revision.to_string()},
        "items": t.list_items(deleted),
    }))
}
