//! Deletion as kube-apiserver and its garbage collector do it: finalizers, the three
//! propagation policies, foreground deletion settling, namespace termination, and owner
//! references dropped or followed.

use super::*;

impl Store {
    /// Deletes, or marks for deletion while finalizers remain. `orphan` leaves dependents.
    pub fn delete(
        &mut self,
        t: &ResourceType,
        namespace: &str,
        name: &str,
        propagation: Propagation,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        let namespace = if t.namespaced { namespace } else { "" };
        let mut current = self.get(t, namespace, name)?;
        if dry_run {
            return Ok(current);
        }
        // As kube-apiserver: a foreground delete always marks the object with the
        // `foregroundDeletion` finalizer (and answers it so marked); the garbage collector
        // releases it once no dependent blocks it, at once when it has none.
        if propagation == Propagation::Foreground && t.kind != "Namespace" {
            return self.delete_foreground(t, namespace, name, current);
        }
        let orphan = propagation == Propagation::Orphan;
        let has_finalizers = current["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        let key = (namespace.to_string(), name.to_string());
        if t.kind == "Namespace" {
            return self.delete_namespace(name);
        }
        if has_finalizers {
            if current["metadata"]["deletionTimestamp"].is_string() {
                return Ok(current);
            }
            current["metadata"]["deletionTimestamp"] = json!(self.now());
            current["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            let stored = self.put_modified(&t.storage_key(), &key.0, &key.1, current);
            return Ok(Value::clone(&stored));
        }
        let taken = self.take(&t.storage_key(), &key.0, &key.1);
        let rv = self.bump();
        current["metadata"]["resourceVersion"] = json!(rv);
        let current = Arc::new(current);
        self.record_deletion(&t.storage_key(), Arc::clone(&current), taken);
        if orphan {
            self.orphan_dependents(&current);
        } else {
            self.collect_dependents(&current);
        }
        self.after_removal();
        Ok(Arc::unwrap_or_clone(current))
    }

    pub(super) fn delete_namespace(&mut self, name: &str) -> Result<Value, ApiError> {
        let t = namespaces();
        let mut current = self.get(&t, "", name)?;
        if !current["metadata"]["deletionTimestamp"].is_string() {
            current["metadata"]["deletionTimestamp"] = json!(self.now());
            current["status"] = json!({"phase": "Terminating"});
            current = Value::clone(&self.put_modified(&t.storage_key(), "", name, current));
        }
        // Everything in the namespace is deleted; finalizers hold their objects, and the
        // namespace goes once it is empty.
        let inside: Vec<(String, String)> = self
            .objects
            .iter()
            .filter(|(key, _)| key.as_str() != "/namespaces")
            .flat_map(|(key, m)| {
                m.keys()
                    .filter(|(ns, _)| ns == name)
                    .map(move |(_, n)| (key.clone(), n.clone()))
            })
            .collect();
        for (storage_key, object_name) in inside {
            if let Some(t) = self.type_of(&storage_key, name, &object_name) {
                let _ = self.delete(&t, name, &object_name, Propagation::Background, false);
            }
        }
        self.after_removal();
        self.get(&t, "", name).or(Ok(current))
    }

    pub(super) fn type_of(
        &self,
        storage_key: &str,
        namespace: &str,
        name: &str,
    ) -> Option<ResourceType> {
        let object = self
            .objects
            .get(storage_key)?
            .get(&(namespace.to_string(), name.to_string()))?;
        let (group, plural) = storage_key.split_once('/')?;
        Some(ResourceType {
            group: group.into(),
            version: String::new(),
            kind: text(object, "/kind").unwrap_or_default().into(),
            plural: plural.into(),
            singular: String::new(),
            namespaced: !namespace.is_empty(),
            status_subresource: false,
            short_names: vec![],
            printer_columns: vec![],
            schema: None,
            rules: None,
            categories: vec![],
            selectable_fields: vec![],
            scale: None,
        })
    }

    /// Marks the owner, deletes its dependents (in the foreground, too), and lets
    /// [`Store::settle_foreground`] release it once nothing blocks it.
    pub(super) fn delete_foreground(
        &mut self,
        t: &ResourceType,
        namespace: &str,
        name: &str,
        mut current: Value,
    ) -> Result<Value, ApiError> {
        let finalizers = current["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !finalizers.iter().any(|f| f == FOREGROUND_FINALIZER)
            || !current["metadata"]["deletionTimestamp"].is_string()
        {
            let mut finalizers = finalizers;
            if !finalizers.iter().any(|f| f == FOREGROUND_FINALIZER) {
                finalizers.push(json!(FOREGROUND_FINALIZER));
            }
            current["metadata"]["finalizers"] = json!(finalizers);
            if !current["metadata"]["deletionTimestamp"].is_string() {
                current["metadata"]["deletionTimestamp"] = json!(self.now());
                current["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            }
            current = Value::clone(&self.put_modified(&t.storage_key(), namespace, name, current));
        }
        self.foreground_waiting
            .insert((t.storage_key(), namespace.to_string(), name.to_string()));
        for (storage_key, dep_namespace, dep_name) in self.dependents(&current) {
            if let Some(dep_type) = self.type_of(&storage_key, &dep_namespace, &dep_name) {
                let _ = self.delete(
                    &dep_type,
                    &dep_namespace,
                    &dep_name,
                    Propagation::Foreground,
                    false,
                );
            }
        }
        self.after_removal();
        Ok(self.get(t, namespace, name).unwrap_or(current))
    }

    /// Releases owners in foreground deletion whose blocking dependents are gone.
    pub(super) fn settle_foreground(&mut self) {
        loop {
            let waiting: Vec<(String, String, String, Value)> = self
                .foreground_waiting
                .clone()
                .into_iter()
                .filter_map(|(key, ns, name)| {
                    let held = self
                        .objects
                        .get(&key)
                        .and_then(|m| m.get(&(ns.clone(), name.clone())))
                        .filter(|o| {
                            o["metadata"]["finalizers"]
                                .as_array()
                                .is_some_and(|f| f.iter().any(|f| f == FOREGROUND_FINALIZER))
                        })
                        .map(|o| Value::clone(o));
                    if held.is_none() {
                        self.foreground_waiting
                            .remove(&(key.clone(), ns.clone(), name.clone()));
                    }
                    held.map(|object| (key, ns, name, object))
                })
                .collect();
            let mut released = false;
            for (storage_key, namespace, name, mut owner) in waiting {
                let uid = owner["metadata"]["uid"].clone();
                let blocked = self.dependents(&owner).iter().any(|(k, ns, n)| {
                    self.objects
                        .get(k)
                        .and_then(|m| m.get(&(ns.clone(), n.clone())))
                        .is_some_and(|d| {
                            d["metadata"]["ownerReferences"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .any(|r| r["uid"] == uid && r["blockOwnerDeletion"] == true)
                        })
                });
                if blocked {
                    continue;
                }
                released = true;
                self.foreground_waiting.remove(&(
                    storage_key.clone(),
                    namespace.clone(),
                    name.clone(),
                ));
                let remaining: Vec<Value> = owner["metadata"]["finalizers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|f| *f != FOREGROUND_FINALIZER)
                    .cloned()
                    .collect();
                let rv = self.bump();
                owner["metadata"]["resourceVersion"] = json!(rv);
                if remaining.is_empty() {
                    if let Some(metadata) = owner["metadata"].as_object_mut() {
                        metadata.remove("finalizers");
                    }
                    let taken = self.take(&storage_key, &namespace, &name);
                    let owner = Arc::new(owner);
                    self.record_deletion(&storage_key, Arc::clone(&owner), taken);
                    self.collect_dependents(&owner);
                } else {
                    owner["metadata"]["finalizers"] = json!(remaining);
                    self.put_recorded(
                        &storage_key,
                        &namespace,
                        &name,
                        EventType::Modified,
                        owner,
                        None,
                    );
                }
            }
            if !released {
                return;
            }
        }
    }

    /// What every removal is followed by: owners in foreground deletion may go, and
    /// terminating namespaces that are now empty go.
    pub(super) fn after_removal(&mut self) {
        self.settle_foreground();
        self.finish_namespaces();
    }

    /// Removes terminating namespaces that are empty.
    pub(super) fn finish_namespaces(&mut self) {
        let terminating: Vec<String> = self
            .objects
            .get("/namespaces")
            .into_iter()
            .flat_map(|m| m.values())
            .filter(|n| n["metadata"]["deletionTimestamp"].is_string())
            .filter_map(|n| text(n, "/metadata/name").map(String::from))
            .collect();
        for name in terminating {
            let empty = self
                .objects
                .iter()
                .filter(|(k, _)| k.as_str() != "/namespaces")
                .all(|(_, m)| !m.keys().any(|(ns, _)| *ns == name));
            if empty && let Some(ns) = self.take("/namespaces", "", &name) {
                let mut deleted = Value::clone(&ns);
                let rv = self.bump();
                deleted["metadata"]["resourceVersion"] = json!(rv);
                self.record_deletion("/namespaces", Arc::new(deleted), Some(ns));
            }
        }
    }

    /// Objects whose ownerReferences name `owner`.
    pub(super) fn dependents(&self, owner: &Value) -> Vec<(String, String, String)> {
        text(owner, "/metadata/uid")
            .and_then(|uid| self.dependents_by_owner.get(uid))
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The stored object without its owner reference to `uid` (none left: no
    /// `ownerReferences` at all), not yet stored.
    pub(super) fn without_owner_ref(
        &self,
        storage_key: &str,
        namespace: &str,
        name: &str,
        uid: &str,
    ) -> Option<Value> {
        let mut object = Value::clone(
            self.objects
                .get(storage_key)?
                .get(&(namespace.to_string(), name.to_string()))?,
        );
        if let Some(refs) = object["metadata"]["ownerReferences"].as_array_mut() {
            refs.retain(|r| r["uid"] != uid);
        }
        if object["metadata"]["ownerReferences"]
            .as_array()
            .is_some_and(|r| r.is_empty())
            && let Some(metadata) = object["metadata"].as_object_mut()
        {
            metadata.remove("ownerReferences");
        }
        Some(object)
    }

    /// Stores `object` under a new resourceVersion and tells the watches; the stored copy.
    fn put_modified(
        &mut self,
        storage_key: &str,
        namespace: &str,
        name: &str,
        mut object: Value,
    ) -> Arc<Value> {
        let rv = self.bump();
        object["metadata"]["resourceVersion"] = json!(rv);
        self.put_recorded(
            storage_key,
            namespace,
            name,
            EventType::Modified,
            object,
            None,
        )
    }

    /// Garbage collection: a dependent whose last owner went is deleted (background propagation).
    pub(super) fn collect_dependents(&mut self, owner: &Value) {
        let uid = text(owner, "/metadata/uid").unwrap_or_default().to_string();
        for (storage_key, namespace, name) in self.dependents(owner) {
            let Some(object) = self.without_owner_ref(&storage_key, &namespace, &name, &uid) else {
                continue;
            };
            let orphaned = object["metadata"]["ownerReferences"]
                .as_array()
                .is_none_or(|r| r.is_empty());
            match self.type_of(&storage_key, &namespace, &name) {
                Some(t) if orphaned => {
                    // Deleted as it now stands: the deletion reads the stored object.
                    let _ = self.put(&storage_key, &namespace, &name, Arc::new(object));
                    let _ = self.delete(&t, &namespace, &name, Propagation::Background, false);
                }
                _ => {
                    self.put_modified(&storage_key, &namespace, &name, object);
                }
            }
        }
    }

    /// Orphan propagation: dependents keep living, without the owner reference.
    pub(super) fn orphan_dependents(&mut self, owner: &Value) {
        let uid = text(owner, "/metadata/uid").unwrap_or_default().to_string();
        for (storage_key, namespace, name) in self.dependents(owner) {
            if let Some(object) = self.without_owner_ref(&storage_key, &namespace, &name, &uid) {
                self.put_modified(&storage_key, &namespace, &name, object);
            }
        }
    }
}
