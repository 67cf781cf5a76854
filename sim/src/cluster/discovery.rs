//! What the cluster says it serves: the API group list, each group-version's resources,
//! the OpenAPI documents, and the resource a path addresses.

use super::*;

impl Cluster {
    pub(super) fn group_list(&self) -> Value {
        let state = self.lock();
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in state.registry.all().filter(|t| !t.group.is_empty()) {
            let versions = groups.entry(t.group.clone()).or_default();
            if !versions.contains(&t.version) {
                versions.push(t.version.clone());
            }
        }
        for versions in groups.values_mut() {
            versions.sort_by(|a, b| crate::resources::by_preference(a, b));
        }
        json!({
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": groups.into_iter().map(|(name, versions)| json!({
                "name": name,
                "versions": versions.iter().map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v})).collect::<Vec<_>>(),
                "preferredVersion": {"groupVersion": format!("{name}/{}", versions[0]), "version": versions[0]},
            })).collect::<Vec<_>>(),
        })
    }

    /// Aggregated discovery (`apidiscovery.k8s.io/v2` APIGroupDiscoveryList): every group with
    /// every version's resources in one answer, the core group at `/api` (`core`), the named
    /// groups at `/apis`. Versions come in order of preference
    /// ([`crate::resources::by_preference`]), as in the APIGroupList; a
    /// resource's `responseKind` leaves group and version empty where they are the group's own,
    /// as kube-apiserver's installer does.
    pub(super) fn aggregated_discovery(&self, core: bool) -> Value {
        let state = self.lock();
        let types: Vec<&ResourceType> = state
            .registry
            .all()
            .filter(|t| t.group.is_empty() == core)
            .collect();
        // First-seen order for groups; a group's versions in order of preference.
        let distinct = |of: &dyn Fn(&ResourceType) -> Option<&str>| {
            let mut seen: Vec<&str> = Vec::new();
            for t in &types {
                if let Some(value) = of(t)
                    && !seen.contains(&value)
                {
                    seen.push(value);
                }
            }
            seen
        };
        let items: Vec<Value> = distinct(&|t| Some(t.group.as_str()))
            .into_iter()
            .map(|group| {
                let mut versions = distinct(&|t| (t.group == group).then_some(t.version.as_str()));
                versions.sort_by(|a, b| crate::resources::by_preference(a, b));
                let versions: Vec<Value> = versions
                    .into_iter()
                    .map(|version| {
                        let resources: Vec<Value> = types
                            .iter()
                            .filter(|t| t.group == group && t.version == version)
                            .map(|t| aggregated_resource(t))
                            .collect();
                        json!({"version": version, "resources": resources, "freshness": "Current"})
                    })
                    .collect();
                json!({"metadata": {"name": group}, "versions": versions})
            })
            .collect();
        json!({
            "kind": "APIGroupDiscoveryList",
            "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {},
            "items": items,
        })
    }

    /// `/openapi/v3`: one document per served group-version.
    pub(super) fn openapi_index(&self) -> Value {
        let state = self.lock();
        let mut paths = serde_json::Map::new();
        for t in state.registry.all() {
            let gv = if t.group.is_empty() {
                "api/v1".to_string()
            } else {
                format!("apis/{}/{}", t.group, t.version)
            };
            paths.insert(gv.clone(), json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={}", state.store.revision())}));
        }
        json!({"paths": paths})
    }

    /// A group-version's OpenAPI document: the paths kubectl consults (every write operation
    /// accepts `fieldValidation`, which tells kubectl to let the server validate) and, for
    /// custom resources, the CRD's schema.
    pub(super) fn openapi_group_version(&self, group: &str, version: &str) -> Value {
        let state = self.lock();
        let mut paths = serde_json::Map::new();
        let mut schemas = serde_json::Map::new();
        let crds = state
            .registry
            .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .cloned();
        for t in state
            .registry
            .all()
            .filter(|t| t.group == group && t.version == version)
        {
            let gvk = json!({"group": t.group, "version": t.version, "kind": t.kind});
            let params = json!([
                {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
                {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
                {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}}
            ]);
            let op = |verb: &str| {
                json!({"operationId": format!("{verb}{}", t.kind), "parameters": params,
                "x-kubernetes-action": verb, "x-kubernetes-group-version-kind": gvk, "responses": {"200": {"description": "OK"}}})
            };
            let prefix = if t.group.is_empty() {
                "/api/v1".to_string()
            } else {
                format!("/apis/{}/{}", t.group, t.version)
            };
            let collection = if t.namespaced {
                format!("{prefix}/namespaces/{{namespace}}/{}", t.plural)
            } else {
                format!("{prefix}/{}", t.plural)
            };
            paths.insert(
                collection.clone(),
                json!({"post": op("post"), "get": op("list")}),
            );
            paths.insert(format!("{collection}/{{name}}"), json!({"put": op("put"), "patch": op("patch"), "get": op("get"), "delete": op("delete")}));
            let schema_name = format!(
                "{}.{}.{}",
                t.group.split('.').rev().collect::<Vec<_>>().join("."),
                t.version,
                t.kind
            );
            let mut schema = json!({"type": "object", "x-kubernetes-group-version-kind": [gvk]});
            // A built-in kind: its k8s-openapi type's schema, every type it refers to beside
            // it, as kube-apiserver publishes them (what `kubectl explain` walks).
            if let Some((root, referred)) = crate::typed::with_type(t, OpenApiSchema) {
                schema = root;
                schema["x-kubernetes-group-version-kind"] = json!([gvk]);
                schemas.extend(referred);
            }
            if let Some(crds) = &crds {
                let crd_name = format!("{}.{}", t.plural, t.group);
                if let Ok(crd) = state.store.get(crds, "", &crd_name)
                    && let Some(v) = crd["spec"]["versions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|v| v["name"] == t.version)
                {
                    schema = v["schema"]["openAPIV3Schema"].clone();
                    schema["x-kubernetes-group-version-kind"] = json!([gvk]);
                }
            }
            schemas.insert(
                crate::typed::with_type(t, SchemaName).unwrap_or(schema_name),
                schema,
            );
        }
        json!({
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": format!("v1.{KUBERNETES_MINOR}.0")},
            "paths": paths,
            "components": {"schemas": schemas},
        })
    }

    pub(super) fn resource_list(&self, group: &str, version: &str) -> Value {
        let state = self.lock();
        let group_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        let mut resources = Vec::new();
        for t in state
            .registry
            .all()
            .filter(|t| t.group == group && t.version == version)
        {
            resources.push(json!({
                "name": t.plural, "singularName": t.singular, "namespaced": t.namespaced, "kind": t.kind,
                "verbs": VERBS,
                "shortNames": t.short_names,
                "categories": t.categories,
            }));
            if t.status_subresource {
                resources.push(json!({"name": format!("{}/status", t.plural), "singularName": "", "namespaced": t.namespaced, "kind": t.kind, "verbs": ["get", "patch", "update"]}));
            }
            for subresource in narrow::subresources_of(t) {
                resources.push(json!({"name": format!("{}/{subresource}", t.plural), "singularName": "", "namespaced": t.namespaced, "kind": t.kind, "verbs": ["get", "patch", "update"]}));
            }
            if t.scale.is_some() {
                resources.push(json!({"name": format!("{}/scale", t.plural), "singularName": "", "namespaced": t.namespaced, "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}));
            }
        }
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
    }

    pub(super) fn target(
        &self,
        group: &str,
        version: &str,
        rest: &[&str],
    ) -> Result<Target, ApiError> {
        let (namespace, rest) = match rest {
            ["namespaces", ns, plural, more @ ..]
                if !(group.is_empty() && matches!(*plural, "status" | "finalize")) =>
            {
                (ns.to_string(), [&[*plural][..], more].concat())
            }
            other => (String::new(), other.to_vec()),
        };
        let plural = rest.first().ok_or_else(ApiError::no_route)?;
        let state = self.lock();
        let t = state
            .registry
            .get(group, version, plural)
            .cloned()
            .ok_or_else(ApiError::no_route)?;
        Ok(Target {
            t,
            namespace,
            name: rest.get(1).map(|s| s.to_string()),
            subresource: rest.get(2).map(|s| s.to_string()),
        })
    }
}

/// The verbs every resource the sim serves answers.
const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// One resource of aggregated discovery (`APIResourceDiscovery`) with its subresources.
fn aggregated_resource(t: &ResourceType) -> Value {
    let mut subresources = Vec::new();
    if t.status_subresource {
        subresources.push(json!({"subresource": "status",
            "responseKind": {"group": "", "version": "", "kind": t.kind},
            "verbs": ["get", "patch", "update"]}));
    }
    if t.scale.is_some() {
        subresources.push(json!({"subresource": "scale",
            "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
            "verbs": ["get", "patch", "update"]}));
    }
    json!({
        "resource": t.plural,
        "responseKind": {"group": "", "version": "", "kind": t.kind},
        "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": t.singular,
        "verbs": VERBS,
        "shortNames": t.short_names,
        "categories": t.categories,
        "subresources": subresources,
    })
}

/// A built-in kind's OpenAPI v3 schema and the schemas it refers to (by
/// `#/components/schemas/<definition name>`, the names kube-apiserver uses).
struct OpenApiSchema;

impl crate::typed::WithType for OpenApiSchema {
    type Out = (Value, serde_json::Map<String, Value>);
    fn with<K: crate::typed::Typed>(self) -> Self::Out {
        let generator = schemars::generate::SchemaSettings::openapi3().into_generator();
        let mut root = generator.into_root_schema_for::<K>().to_value();
        let referred = root
            .get_mut("components")
            .and_then(|c| c.get_mut("schemas"))
            .and_then(Value::as_object_mut)
            .map(std::mem::take)
            .unwrap_or_default();
        if let Some(map) = root.as_object_mut() {
            map.remove("components");
            map.remove("$schema");
        }
        (root, referred)
    }
}

/// A built-in kind's definition name (`io.k8s.api.apps.v1.Deployment`).
struct SchemaName;

impl crate::typed::WithType for SchemaName {
    type Out = String;
    fn with<K: crate::typed::Typed>(self) -> String {
        K::schema_name().into_owned()
    }
}
