//! The verbs on a resource: get, list, create, update, patch (merge, JSON, strategic,
//! server-side apply), delete (see [`super::deletes`]), with their field-manager tracking and
//! commit through admission.

use super::*;

#[allow(clippy::too_many_arguments)]
pub(super) async fn serve_resource(
    cluster: &Cluster,
    group: &str,
    version: &str,
    rest: &[&str],
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let target = cluster.target(group, version, rest)?;
    let q = query(uri);
    let agent = headers
        .get(axum::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if let Some(answer) = cluster.inject_fault(&target, method, &q, agent).await {
        return Ok(answer);
    }
    let dry_run = q.get("dryRun").is_some_and(|v| v == "All");
    let t = &target.t;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if content_type.contains("cbor") {
        return Err(ApiError::unsupported_media_type(format!(
            "the sim speaks JSON and, for kubectl's generators, protobuf; {content_type} bodies are not supported"
        )));
    }
    // kubectl's generators send protobuf; the sim reads the kinds they send and answers JSON,
    // which their clients accept (they ask for protobuf or JSON).
    let body = if content_type.contains("protobuf") && !body.is_empty() {
        let object = crate::protobuf::decode(&body)
            .map_err(|e| ApiError::unsupported_media_type(e.to_string()))?;
        Bytes::from(object.to_string())
    } else {
        body
    };
    // The options first, as kube-apiserver decodes and validates them before the body.
    let delete_options = (method == Method::DELETE && !body.is_empty())
        .then(|| serde_json::from_slice::<Value>(&body).ok())
        .flatten();
    crate::request_options::validate(
        method.as_str(),
        &q,
        delete_options.as_ref(),
        content_type.starts_with("application/apply-patch"),
    )?;
    let json = |body: &Bytes| -> Result<Value, ApiError> {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))
    };
    let parse = |body: &Bytes| -> Result<Value, ApiError> {
        let mut object = json(body)?;
        decodable(&object)?;
        if target.subresource.is_none() {
            of_the_paths_kind(t, &object)?;
        }
        conform(t, &mut object);
        Ok(object)
    };
    // A review and a TokenRequest are not the resource they are sent to: read as sent.
    if t.plural == "tokenreviews" && method == Method::POST {
        return Ok(json_response(201, &cluster.token_review(json(&body)?)));
    }
    if t.plural == "selfsubjectreviews" && method == Method::POST {
        return Ok(json_response(201, &cluster.self_subject_review(headers)));
    }
    if t.plural == "selfsubjectaccessreviews" && method == Method::POST {
        return Ok(json_response(
            201,
            &cluster.self_subject_access_review(headers, json(&body)?),
        ));
    }
    if let (Some("token"), Some(name), "serviceaccounts", &Method::POST) = (
        target.subresource.as_deref(),
        &target.name,
        t.plural.as_str(),
        method,
    ) {
        return Ok(json_response(
            201,
            &cluster.token_request(&target.namespace, name, json(&body)?)?,
        ));
    }
    if let (Some("scale"), Some(name)) = (target.subresource.as_deref(), &target.name) {
        return serve_scale(cluster, &target, name, method, &q, headers, &body, dry_run).await;
    }
    if let (Some(subresource), Some(name)) = (target.subresource.as_deref(), &target.name)
        && narrow::is_narrow(t, subresource)
    {
        return narrow::serve_narrow(
            cluster,
            &target,
            name,
            subresource,
            method,
            &q,
            headers,
            &body,
            dry_run,
        )
        .await;
    }
    let status_write = match target.subresource.as_deref() {
        None => false,
        Some("status") if t.status_subresource => true,
        Some(other) => return Err(ApiError::not_found("subresource", other)),
    };
    // Server-side field validation of what the request sends (a JSON patch sends operations,
    // which the stored object's own validation answers).
    let level = crate::field_validation::Level::of(q.get("fieldValidation").map(String::as_str))?;
    let field_warnings = match method.as_str() {
        "POST" | "PUT" | "PATCH"
            if !body.is_empty() && !content_type.starts_with("application/json-patch") =>
        {
            let sent: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            crate::field_validation::check(t, &body, &sent, level)?
        }
        _ => Vec::new(),
    };
    let response = match (method.as_str(), &target.name) {
        ("GET", None) if flag(&q, "watch") => {
            return watch(cluster, &target, &q, presentation(headers));
        }
        ("GET", None) => {
            let list = list(cluster, &target, &q)?;
            json_response(
                200,
                &present_list(t, presentation(headers), list, cluster.clock.now()),
            )
        }
        ("GET", Some(name)) => {
            let object = cluster.lock().store.get(t, &target.namespace, name)?;
            object_response(
                200,
                &present_one(t, presentation(headers), object, cluster.clock.now()),
                headers,
            )
        }
        ("POST", None) => {
            let mut object = parse(&body)?;
            if t.status_subresource
                && let Some(map) = object.as_object_mut()
            {
                map.remove("status");
            }
            crate::apply::record_update(
                None,
                &mut object,
                &manager_of(&q, headers),
                None,
                t.schema.as_deref(),
                &cluster.clock.rfc3339(),
            );
            let author = Author::of(&q, headers, "Update");
            let written = commit(
                cluster,
                &target,
                None,
                object,
                author,
                status_write,
                dry_run,
            )
            .await;
            return Ok(answer(cluster, t, 201, written, &field_warnings, headers));
        }
        ("PUT", Some(name)) => {
            let mut object = parse(&body)?;
            let current = cluster.lock().store.get(t, &target.namespace, name)?;
            track(
                t,
                &current,
                &mut object,
                &manager_of(&q, headers),
                status_write,
                &cluster.clock.rfc3339(),
            );
            let author = Author::of(&q, headers, "Update");
            let written = commit(
                cluster,
                &target,
                Some(current),
                object,
                author,
                status_write,
                dry_run,
            )
            .await;
            return Ok(answer(cluster, t, 200, written, &field_warnings, headers));
        }
        ("PATCH", Some(name)) => {
            let content_type = headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let apply = content_type.starts_with("application/apply-patch");
            // The patch type is checked before the body is read: a custom resource takes no
            // strategic merge patch (it has no patch strategies).
            let media = content_type.split(';').next().unwrap_or("").trim();
            let strategic = t.is_builtin() && media == "application/strategic-merge-patch+json";
            if !apply
                && !strategic
                && !matches!(
                    media,
                    "application/merge-patch+json" | "application/json-patch+json"
                )
            {
                return Err(ApiError::unsupported_patch_type(t.is_builtin()));
            }
            let precondition = serde_json::from_slice::<Value>(&body)
                .is_ok_and(|patch| names_resource_version(&patch));
            // As kube-apiserver's GuaranteedUpdate: a patch is applied to the object as it is
            // read, and applied again when a concurrent write got there first, unless the
            // patch itself names the resourceVersion it expects.
            let mut attempts = 0;
            loop {
                let (current, next) = if apply {
                    server_side_apply(cluster, &target, name, &body, &q, status_write)?
                } else {
                    // The patch is merged as sent; the merged object is pruned and defaulted
                    // (a patch body defaulted on its own would reset every field it leaves
                    // out that has a schema default).
                    let patch_body: Value = serde_json::from_slice(&body)
                        .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))?;
                    patch(
                        cluster,
                        &target,
                        name,
                        content_type,
                        &patch_body,
                        status_write,
                        &manager_of(&q, headers),
                    )?
                };
                let code = if current.is_some() { 200 } else { 201 };
                let author = Author::of(&q, headers, if apply { "Apply" } else { "Update" });
                let written = commit(
                    cluster,
                    &target,
                    current,
                    next,
                    author,
                    status_write,
                    dry_run,
                )
                .await;
                if let Err(refused) = &written
                    && refused.error.reason == "Conflict"
                    && !precondition
                    && attempts < PATCH_RETRIES
                {
                    attempts += 1;
                    continue;
                }
                return Ok(answer(cluster, t, code, written, &field_warnings, headers));
            }
        }
        ("DELETE", name) => {
            // DeleteOptions, read as sent.
            let body: Value = if body.is_empty() {
                json!({})
            } else {
                json(&body)?
            };
            let options = DeleteOptions::of(&q, &body);
            let Some(name) = name else {
                return Ok(json_response(
                    200,
                    &delete_collection(cluster, &target, &q, &options).await?,
                ));
            };
            let current = cluster.lock().store.get(t, &target.namespace, name)?;
            options.check(t, name, &current)?;
            if let Err(refused) = cluster
                .admit_delete(&target, &current, status_write, options.dry_run)
                .await
            {
                return Ok(refusal(&refused));
            }
            let deleted = cluster.lock().store.delete(
                t,
                &target.namespace,
                name,
                options.propagation,
                options.dry_run,
            )?;
            if t.plural == "customresourcedefinitions" && !options.dry_run {
                cluster.after_write(t, &deleted);
            }
            json_response(200, &answer_for(t, &deleted))
        }
        (verb, _) => {
            return Err(ApiError::method_not_allowed(format!(
                "{verb} is not supported on {}",
                resource_name(t)
            )));
        }
    };
    Ok(response)
}

/// Whether `object` decodes as a Kubernetes object, as kube-apiserver's decoder decides
/// before anything else: a JSON object whose `metadata`, if any, is an object with `labels`
/// and `annotations` maps of strings, `finalizers` a list of strings and `ownerReferences` a
/// list of objects. Anything else is a 400 naming the field, never a write (nor a panic of the
/// handler that indexes into it).
/// Refuses a body of a built-in kind other than the path's, as kube-apiserver's decoder does
/// (it decodes the body's kind, then finds no conversion to the path's internal type). A body
/// without a kind is read as the path's.
fn of_the_paths_kind(t: &ResourceType, object: &Value) -> Result<(), ApiError> {
    let Some(kind) = object["kind"].as_str().filter(|k| !k.is_empty()) else {
        return Ok(());
    };
    if !t.is_builtin() || kind == t.kind {
        return Ok(());
    }
    let api_version = object["apiVersion"].as_str().unwrap_or(&t.version);
    let version = api_version.rsplit('/').next().unwrap_or(api_version);
    // The internal package: `core` for the core group, else the group's first label.
    let internal = match t.group.split('.').next() {
        None | Some("") => "core",
        Some(group) => group,
    };
    Err(ApiError::bad_request(format!(
        "{kind} in version {version:?} cannot be handled as a {}: converting ({version}.{kind}) to ({internal}.{}): unknown conversion",
        t.kind, t.kind
    )))
}

pub(super) fn decodable(object: &Value) -> Result<(), ApiError> {
    let refused = |what: &str| {
        Err(ApiError::bad_request(format!(
            "the request body does not decode as an object: {what}"
        )))
    };
    let Some(map) = object.as_object() else {
        return refused("it is not a JSON object");
    };
    let metadata = match map.get("metadata") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(metadata)) => metadata,
        Some(_) => return refused("metadata must be an object"),
    };
    for key in ["labels", "annotations"] {
        match metadata.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(pairs)) if pairs.values().all(|v| v.is_string() || v.is_null()) => {}
            Some(_) => return refused(&format!("metadata.{key} must be a map of strings")),
        }
    }
    match metadata.get("finalizers") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {}
        Some(_) => return refused("metadata.finalizers must be a list of strings"),
    }
    match metadata.get("ownerReferences") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) if items.iter().all(Value::is_object) => {}
        Some(_) => return refused("metadata.ownerReferences must be a list of objects"),
    }
    for key in [
        "name",
        "namespace",
        "generateName",
        "resourceVersion",
        "uid",
    ] {
        match metadata.get(key) {
            None | Some(Value::Null | Value::String(_)) => {}
            Some(_) => return refused(&format!("metadata.{key} must be a string")),
        }
    }
    Ok(())
}

/// What the API server does to an object on every write: a custom resource loses the fields
/// its schema does not declare and gets its defaults; a built-in kind loses the fields its
/// type does not declare and gets kube-apiserver's defaults for what it left out.
pub(super) fn conform(t: &ResourceType, object: &mut Value) {
    // kube-apiserver decodes a body into the type its URL names: a body that leaves out
    // `apiVersion` or `kind` is read as that type, and managedFields record its version.
    if let Some(map) = object.as_object_mut() {
        if !t.version.is_empty() {
            map.entry("apiVersion")
                .or_insert_with(|| json!(t.api_version()));
        }
        if !t.kind.is_empty() {
            map.entry("kind").or_insert_with(|| json!(t.kind));
        }
    }
    if let Some(schema) = &t.schema
        && object.is_object()
    {
        crate::schema::prune(schema, object);
        crate::schema::apply_defaults(schema, object);
    } else {
        crate::field_validation::drop_undeclared(t, object);
        crate::defaults::apply(t, object);
    }
}

pub(super) fn selectors(
    t: &ResourceType,
    q: &BTreeMap<String, String>,
) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let fields = FieldSelector::parse(q.get("fieldSelector").map(String::as_str).unwrap_or(""))?;
    fields.check_supported(t)?;
    Ok((
        LabelSelector::parse(q.get("labelSelector").map(String::as_str).unwrap_or(""))?,
        fields,
    ))
}

pub(super) fn list(
    cluster: &Cluster,
    target: &Target,
    q: &BTreeMap<String, String>,
) -> Result<Value, ApiError> {
    let (labels, fields) = selectors(&target.t, q)?;
    let state = cluster.lock();
    // resourceVersion semantics: "0"/unset is any version (the current one here);
    // NotOlderThan waits for a newer version than exists (504 after the wait, as the API server
    // answers "Too large resource version"); Exact can only be the current version, since the
    // sim keeps no list snapshots (an older one answers 410, on which clients relist).
    let current = state.store.revision();
    let requested = match q.get("resourceVersion").map(String::as_str) {
        None | Some("") | Some("0") => None,
        Some(rv) => Some(
            rv.parse::<u64>()
                .map_err(|_| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?,
        ),
    };
    // etcd refuses a revision it has not reached, and kube-apiserver answers it so.
    let too_large = |rv: u64| ApiError {
        code: 504,
        reason: "Timeout",
        message: format!("Timeout: Too large resource version: {rv}, current: {current}"),
        details: None,
    };
    match (q.get("resourceVersionMatch").map(String::as_str), requested) {
        (_, Some(rv)) if rv > current => return Err(too_large(rv)),
        (Some("Exact"), Some(rv)) if rv != current => {
            return Err(ApiError::gone(format!(
                "resourceVersion {rv} can no longer be listed exactly (current {current}); list again"
            )));
        }
        (Some("Exact") | Some("NotOlderThan"), None) if q.get("resourceVersion").is_none() => {
            return Err(ApiError::bad_request(
                "resourceVersionMatch requires resourceVersion",
            ));
        }
        (Some(other), _) if !matches!(other, "Exact" | "NotOlderThan") => {
            return Err(ApiError::bad_request(format!(
                "unsupported resourceVersionMatch {other:?}"
            )));
        }
        _ => {}
    }
    let namespace = (!target.namespace.is_empty()).then_some(target.namespace.as_str());
    // Every page of a list is served from the first page's snapshot, whose resourceVersion
    // the continue token carries (`<resourceVersion>:<namespace>/<name>` of the last item
    // served): a page read from the current state would show the first page's objects as they
    // were and the last page's resourceVersion, and a watch from there would never see the
    // changes between (at 1000 CRs a relisting watcher lost Ready transitions that way).
    let continued = match q.get("continue").filter(|c| !c.is_empty()) {
        None => None,
        Some(token) => Some(
            token
                .split_once(':')
                .and_then(|(rv, after)| Some((rv.parse::<u64>().ok()?, after)))
                .ok_or_else(|| {
                    ApiError::bad_request(format!("invalid continue token {token:?}"))
                })?,
        ),
    };
    let (snapshot, objects) = match continued {
        None => (current, state.store.presented_in(&target.t, namespace).collect::<Vec<_>>()),
        // Only a forged token names a version the store has not reached: refused, never
        // served as the current state under that version.
        Some((rv, _)) if rv > current => return Err(too_large(rv)),
        Some((rv, _)) => (
            rv,
            state.store.presented_at(&target.t, namespace, rv).ok_or_else(|| {
                ApiError::gone(
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                )
            })?,
        ),
    };
    let mut items: Vec<Value> = objects
        .into_iter()
        .filter(|o| labels.matches(o) && fields.matches(o))
        .map(std::borrow::Cow::into_owned)
        .collect();
    let key = |o: &Value| {
        format!(
            "{}/{}",
            o["metadata"]["namespace"].as_str().unwrap_or(""),
            o["metadata"]["name"].as_str().unwrap_or("")
        )
    };
    // Pages follow the order of the keys the continue token compares.
    if q.contains_key("limit") || continued.is_some() {
        items.sort_by_cached_key(key);
    }
    if let Some((_, after)) = continued {
        items.retain(|o| key(o).as_str() > after);
    }
    let mut metadata = json!({"resourceVersion": snapshot.to_string()});
    if let Some(limit) = q
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0)
        && items.len() > limit
    {
        let remaining = items.len() - limit;
        items.truncate(limit);
        if let Some(last) = items.last() {
            metadata["continue"] = json!(format!("{snapshot}:{}", key(last)));
        }
        // kube-apiserver counts what is left only when no selector filtered the list.
        let selects = |key: &str| q.get(key).is_some_and(|s| !s.is_empty());
        if !selects("labelSelector") && !selects("fieldSelector") {
            metadata["remainingItemCount"] = json!(remaining);
        }
    }
    let items = target.t.list_items(items);
    Ok(
        json!({"kind": format!("{}List", target.t.kind), "apiVersion": target.t.api_version(), "metadata": metadata, "items": items}),
    )
}

/// The answer to a write: the object with field validation's warnings (`decoding`) and the
/// webhooks', or the refusal with both.
pub(super) fn answer(
    cluster: &Cluster,
    t: &ResourceType,
    code: u16,
    written: Result<(Value, Vec<String>), Refused>,
    decoding: &[String],
    headers: &HeaderMap,
) -> Response {
    let response = match written {
        Ok((object, warnings)) => {
            cluster.after_write(t, &object);
            // Writes answer in the asked form too (kube-rs's `patch_metadata` asks for
            // PartialObjectMetadata; kubectl's generators, protobuf).
            let object = present_one(t, presentation(headers), object, cluster.clock.now());
            with_warnings(object_response(code, &object, headers), &warnings)
        }
        Err(refused) => refusal(&refused),
    };
    with_warnings(response, decoding)
}

pub(super) fn refusal(refused: &Refused) -> Response {
    with_warnings(error_response(&refused.error), &refused.warnings)
}

/// Adds `Warning: 299 - "<text>"` headers, as kube-apiserver relays admission warnings.
pub(super) fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    for warning in warnings {
        let text = warning.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(value) = format!("299 - \"{text}\"").parse() {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

/// Who makes a write: its field manager and the managedFields operation (`Apply` or `Update`)
/// what a mutating webhook adds is recorded under.
pub(super) struct Author {
    pub(super) manager: String,
    pub(super) operation: &'static str,
}

impl Author {
    /// The author of a request: the `fieldManager` it names (or its user agent's).
    fn of(q: &BTreeMap<String, String>, headers: &HeaderMap, operation: &'static str) -> Self {
        Self {
            manager: manager_of(q, headers),
            operation,
        }
    }
}

/// Writes `object` through the admission chain, in kube-apiserver's order: mutating webhooks
/// (each patch followed by pruning and defaulting again), the schema and CEL validation the
/// store runs, the validating webhooks, then the write itself. Without a matching webhook it
/// is one store call. `current` is the stored object for an update, none for a create.
pub(super) async fn commit(
    cluster: &Cluster,
    target: &Target,
    current: Option<Value>,
    object: Value,
    author: Author,
    status_write: bool,
    dry_run: bool,
) -> Result<(Value, Vec<String>), Refused> {
    let t = &target.t;
    let write = |object: Value, dry_run: bool| -> Result<Value, ApiError> {
        let mut state = cluster.lock();
        match &current {
            Some(current) => {
                let name = current["metadata"]["name"].as_str().unwrap_or("");
                state
                    .store
                    .replace(t, &target.namespace, name, object, status_write, dry_run)
            }
            None => state.store.create(t, &target.namespace, object, dry_run),
        }
    };
    let operation = if current.is_some() {
        "UPDATE"
    } else {
        "CREATE"
    };
    let (configurations, namespace_labels, services) = cluster.webhook_context(target);
    if current.is_none() && !status_write && t.group.is_empty() && t.kind == "Pod" {
        // Pod Security Admission, a validating plugin of kube-apiserver's own.
        let level = crate::pod_security::Level::of_namespace(&target.namespace, &namespace_labels);
        let violations = crate::pod_security::violations(level, &object);
        if !violations.is_empty() {
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            return Err(Refused {
                error: ApiError::new(
                    403,
                    "Forbidden",
                    crate::pod_security::refusal(name, level, &violations),
                ),
                warnings: vec![],
            });
        }
    }
    if configurations.0.is_empty() && configurations.1.is_empty() {
        return Ok((write(object, dry_run)?, vec![]));
    }
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    // One set of facts for the whole chain; only the object changes between the phases.
    let mut facts = WebhookFacts {
        operation,
        name,
        namespace_labels,
        object: Some(object),
        old: current.clone(),
        subresource: status_write.then_some("status"),
        dry_run,
    };
    let mut warnings = Vec::new();
    let mutating = crate::webhooks::matching(&configurations.0, true, &facts.request(target));
    let submitted = facts.object.clone().unwrap_or_default();
    for hook in &mutating {
        let answer = consult(hook, &facts.request(target), &services, &mut warnings).await?;
        if let Some(mut patched) = answer {
            conform(t, &mut patched);
            facts.object = Some(patched);
        }
    }
    let mut object = facts.object.take().unwrap_or_default();
    if object != submitted {
        // managedFields are computed after admission: what the webhooks set is the author's.
        crate::apply::record_mutation(
            &submitted,
            &mut object,
            &author.manager,
            author.operation,
            (t.status_subresource && status_write).then_some("status"),
            t.schema.as_deref(),
            &cluster.clock.rfc3339(),
        );
    }
    let validated = write(object.clone(), true).map_err(|error| Refused {
        error,
        warnings: warnings.clone(),
    })?;
    facts.object = Some(validated);
    let validating = crate::webhooks::matching(&configurations.1, false, &facts.request(target));
    for hook in &validating {
        consult(hook, &facts.request(target), &services, &mut warnings).await?;
    }
    // A generated name was drawn by the validation pass; the write keeps it.
    if current.is_none()
        && let Some(validated) = &facts.object
    {
        object["metadata"]["name"] = validated["metadata"]["name"].clone();
    }
    let written = write(object, dry_run).map_err(|error| Refused {
        error,
        warnings: warnings.clone(),
    })?;
    Ok((written, warnings))
}
