//! Writes as kube-apiserver's registry makes them: a create (names, generateName, uid,
//! defaults, a Service's cluster IP, a namespace's default ServiceAccount) and a replace
//! (resourceVersion preconditions, generation, the status subresource, no-op writes).

use super::*;

/// The longest generateName prefix kube-apiserver keeps (63 less the 5 of the suffix).
const MAX_GENERATED_PREFIX: usize = 58;

impl Store {
    /// A new Service: kube-apiserver's defaults ([`crate::defaults::service`]), then its IP
    /// family and a cluster IP from the allocator (kept when the Service names its own).
    fn default_service(&mut self, object: &mut Value) {
        if !object["spec"].is_object() {
            object["spec"] = json!({});
        }
        crate::defaults::service(object);
        let spec = &mut object["spec"];
        if spec["type"] == "ExternalName" {
            return;
        }
        let Some(spec) = spec.as_object_mut() else {
            return;
        };
        spec.entry("ipFamilies").or_insert_with(|| json!(["IPv4"]));
        spec.entry("ipFamilyPolicy")
            .or_insert_with(|| json!("SingleStack"));
        let ip = match spec.get("clusterIP").and_then(Value::as_str) {
            Some(given) if !given.is_empty() => {
                // The allocator never hands out an address a Service named for itself
                // (`default/kubernetes` holds 10.96.0.1 from the start).
                if let Some(n) = allocated_index(given) {
                    self.cluster_ips_issued = self.cluster_ips_issued.max(n);
                }
                given.to_string()
            }
            _ => {
                self.cluster_ips_issued += 1;
                let n = self.cluster_ips_issued;
                format!("10.{}.{}.{}", 96 + (n >> 16), (n >> 8) & 0xff, n & 0xff)
            }
        };
        spec.insert("clusterIPs".into(), json!([ip]));
        spec.insert("clusterIP".into(), json!(ip));
    }

    fn namespace_exists(&self, namespace: &str) -> bool {
        self.objects
            .get("/namespaces")
            .is_some_and(|m| m.contains_key(&(String::new(), namespace.to_string())))
    }

    /// Creates `object`. With `dry_run`, nothing is stored or emitted.
    pub fn create(
        &mut self,
        t: &ResourceType,
        namespace: &str,
        mut object: Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let resource = resource_name(t);
        if !object.is_object() {
            return Err(ApiError::bad_request("the body is not an object"));
        }
        if !object["metadata"].is_object() {
            object["metadata"] = json!({});
        }
        let name = match text(&object, "/metadata/name").filter(|n| !n.is_empty()) {
            Some(name) => name.to_string(),
            None => match text(&object, "/metadata/generateName") {
                Some(prefix) => {
                    // kube-apiserver validates the prefix itself (a trailing '-' allowed), so
                    // `barbican.` is refused though every name made from it would be valid,
                    // and cuts it to 58 characters before the 5 of the suffix.
                    let masked = match prefix.strip_suffix('-') {
                        Some(head) if !head.is_empty() => format!("{head}a"),
                        _ => prefix.to_string(),
                    };
                    self.names_issued += 1;
                    let generated = format!(
                        "{}{}",
                        prefix.get(..MAX_GENERATED_PREFIX).unwrap_or(prefix),
                        suffix(self.names_issued)
                    );
                    if !crate::validation::is_dns_subdomain(&masked) {
                        return Err(ApiError::invalid_object(
                            &t.kind,
                            &t.group,
                            &generated,
                            &[(
                                "metadata.generateName".into(),
                                format!(
                                    "Invalid value: \"{prefix}\": {}",
                                    crate::validation::DNS_SUBDOMAIN
                                ),
                                "FieldValueInvalid".into(),
                            )],
                        ));
                    }
                    generated
                }
                None => {
                    return Err(name_error(
                        t,
                        "",
                        "FieldValueRequired",
                        "Required value: name or generateName is required".into(),
                    ));
                }
            },
        };
        if !crate::validation::is_dns_subdomain(&name) {
            return Err(name_error(
                t,
                &name,
                "FieldValueInvalid",
                format!(
                    "Invalid value: \"{name}\": {}",
                    crate::validation::DNS_SUBDOMAIN
                ),
            ));
        }
        // Namespaces and Services name DNS entries of their own: a single DNS-1123 label.
        if matches!(t.kind.as_str(), "Namespace" | "Service")
            && (name.len() > 63 || name.contains('.'))
        {
            return Err(name_error(
                t,
                &name,
                "FieldValueInvalid",
                format!(
                    "Invalid value: \"{name}\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (at most 63 characters)"
                ),
            ));
        }
        let namespace = if t.namespaced {
            namespace.to_string()
        } else {
            String::new()
        };
        if t.namespaced {
            if namespace.is_empty() {
                return Err(ApiError::bad_request(
                    "the namespace of the object must be given",
                ));
            }
            if !self.namespace_exists(&namespace) {
                return Err(ApiError::not_found("namespaces", &namespace));
            }
            if text(
                &self.get(&namespaces(), "", &namespace)?,
                "/metadata/deletionTimestamp",
            )
            .is_some()
            {
                return Err(ApiError {
                    code: 403,
                    reason: "Forbidden",
                    message: format!(
                        "{resource} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated"
                    ),
                    details: None,
                });
            }
        }
        let key = (namespace.clone(), name.clone());
        if self
            .objects
            .get(&t.storage_key())
            .is_some_and(|m| m.contains_key(&key))
        {
            return Err(ApiError::already_exists(&resource, &name));
        }
        if t.status_subresource && t.kind != "Namespace" {
            // Status is the controllers' to write; a create never carries one, but starts
            // with what kube-apiserver's PrepareForCreate gives it (a Pod: Pending).
            match crate::defaults::initial_status(t, &object) {
                Some(status) => object["status"] = status,
                None => {
                    if let Some(map) = object.as_object_mut() {
                        map.remove("status");
                    }
                }
            }
        }
        if t.kind == "Namespace" {
            object["status"] = json!({"phase": "Active"});
            // kube-apiserver labels every namespace with its own name, for selectors.
            object["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
        }
        if t.kind == "Service" && t.group.is_empty() && !dry_run {
            self.default_service(&mut object);
        }
        if t.kind == "Secret" && t.group.is_empty() {
            merge_string_data(&mut object);
        }
        let Some(m) = object["metadata"].as_object_mut() else {
            return Err(ApiError::bad_request("metadata must be an object"));
        };
        m.insert("name".into(), json!(name));
        if t.namespaced {
            m.insert("namespace".into(), json!(namespace));
        } else {
            m.remove("namespace");
        }
        m.remove("deletionTimestamp");
        m.remove("resourceVersion");
        m.insert("uid".into(), json!(uid(self.revision + 1)));
        m.insert("creationTimestamp".into(), json!(self.now()));
        if has_generation(t) {
            m.insert("generation".into(), json!(1));
        } else {
            m.remove("generation");
        }
        let object = with_type(&object, t);
        crate::validation::admit(t, &object, None)?;
        if dry_run {
            return Ok(object);
        }
        let rv = self.bump();
        let mut object = object;
        object["metadata"]["resourceVersion"] = json!(rv);
        let stored = self.put_recorded(
            &t.storage_key(),
            &key.0,
            &key.1,
            EventType::Added,
            object,
            None,
        );
        if t.kind == "Namespace" && t.group.is_empty() {
            self.create_default_service_account(&name);
        }
        Ok(Arc::unwrap_or_clone(stored))
    }

    /// What kube-controller-manager's ServiceAccount controller does for every new namespace:
    /// a ServiceAccount `default` in it (kubectl run, pods without `serviceAccountName`, and
    /// `kubectl create token default` rely on it).
    fn create_default_service_account(&mut self, namespace: &str) {
        let Some(t) = crate::resources::builtins()
            .into_iter()
            .find(|t| t.plural == "serviceaccounts")
        else {
            return;
        };
        // Already there (a namespace restored with its content) is as good as created.
        let _ = self.create(
            &t,
            namespace,
            json!({"metadata": {"name": "default"}}),
            false,
        );
    }

    /// Replaces the stored object (`subresource` `status` for a status write).
    pub fn replace(
        &mut self,
        t: &ResourceType,
        namespace: &str,
        name: &str,
        mut object: Value,
        status_write: bool,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let resource = resource_name(t);
        let namespace = if t.namespaced { namespace } else { "" };
        // Read in place: the stored copy is what the watch event's `previous` shares, and the
        // version `t` serves is a copy only where a conversion is needed.
        let stored = self.stored(t, namespace, name)?;
        let current = presented(&stored, t);
        if let Some(rv) = text(&object, "/metadata/resourceVersion").filter(|rv| !rv.is_empty())
            && Some(rv) != text(&current, "/metadata/resourceVersion")
        {
            return Err(ApiError::conflict(&resource, name));
        }
        if text(&object, "/metadata/name").is_some_and(|n| n != name) {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                object["metadata"]["name"].as_str().unwrap_or_default()
            )));
        }
        let mut next = if status_write {
            // A status write changes status alone.
            let mut next = Value::clone(&current);
            next["status"] = object.get("status").cloned().unwrap_or(Value::Null);
            // Field ownership of a status write travels with it.
            if let Some(fields) = object["metadata"].get("managedFields") {
                next["metadata"]["managedFields"] = fields.clone();
            }
            if next["status"].is_null()
                && let Some(map) = next.as_object_mut()
            {
                map.remove("status");
            }
            next
        } else {
            if !object["metadata"].is_object() {
                object["metadata"] = json!({});
            }
            if t.status_subresource {
                match current.get("status") {
                    Some(status) => object["status"] = status.clone(),
                    None => {
                        if let Some(map) = object.as_object_mut() {
                            map.remove("status");
                        }
                    }
                }
            }
            // The server's own metadata survives any write.
            for key in [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "namespace",
                "name",
            ] {
                match current["metadata"].get(key) {
                    Some(v) => object["metadata"][key] = v.clone(),
                    None => {
                        if let Some(map) = object["metadata"].as_object_mut() {
                            map.remove(key);
                        }
                    }
                }
            }
            if t.kind == "Namespace" && t.group.is_empty() {
                object["metadata"]["labels"]["kubernetes.io/metadata.name"] = json!(name);
            }
            if t.kind == "Secret" && t.group.is_empty() {
                merge_string_data(&mut object);
            }
            if has_generation(t) && !same_spec(&object, &current) {
                let generation = current["metadata"]["generation"].as_i64().unwrap_or(1) + 1;
                object["metadata"]["generation"] = json!(generation);
            }
            object
        };
        set_type(&mut next, t);
        next["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
        if next == *current {
            return Ok(current.into_owned());
        }
        crate::validation::admit(t, &next, Some(&current))?;
        if dry_run {
            return Ok(next);
        }
        let finalizing = next["metadata"]["deletionTimestamp"].is_string()
            && next["metadata"]["finalizers"]
                .as_array()
                .is_none_or(|f| f.is_empty());
        let previous = match current {
            std::borrow::Cow::Borrowed(_) => Arc::clone(&stored),
            std::borrow::Cow::Owned(converted) => Arc::new(converted),
        };
        let rv = self.bump();
        next["metadata"]["resourceVersion"] = json!(rv);
        let next = if finalizing {
            let taken = self.take(&t.storage_key(), namespace, name);
            let next = Arc::new(next);
            self.record_deletion(&t.storage_key(), Arc::clone(&next), taken);
            self.collect_dependents(&next);
            next
        } else {
            self.put_recorded(
                &t.storage_key(),
                namespace,
                name,
                EventType::Modified,
                next,
                Some(previous),
            )
        };
        self.after_removal();
        Ok(Arc::unwrap_or_clone(next))
    }
}
