//! Who is asking and what they may do: bearer tokens, service-account tokens (minted and
//! reviewed), and RBAC on every request.

use super::*;

impl Cluster {
    /// Requires every request to carry one of `tokens` as a bearer token (or a service-account
    /// token this cluster minted); anything else is answered 401, as a cluster that rejects the
    /// credentials would.
    pub fn require_bearer_tokens(&self, tokens: Vec<String>) {
        self.lock().accepted_tokens = Some(tokens);
    }

    /// Accepts any request again.
    pub fn allow_anonymous(&self) {
        self.lock().accepted_tokens = None;
    }

    /// From now on, a request carrying a service-account token this cluster minted is allowed
    /// only when the stored ClusterRoles, Roles and their bindings grant it to that account
    /// (see [`crate::rbac`]); it is answered 403 `Forbidden` otherwise. Requests without such a
    /// token keep acting as the cluster's administrator, as the tests' own clients do.
    pub fn enforce_rbac(&self) {
        self.lock().rbac_enforced = true;
    }

    /// The service account a request's bearer token belongs to, when RBAC is enforced and the
    /// token is one this cluster minted.
    pub(super) fn service_account(
        &self,
        headers: &HeaderMap,
    ) -> Option<crate::rbac::ServiceAccount> {
        if !self.lock().rbac_enforced {
            return None;
        }
        self.token_account(headers)
    }

    /// The service account whose token (minted by this cluster for the API, unexpired, its
    /// account alive) `headers` carry.
    fn token_account(&self, headers: &HeaderMap) -> Option<crate::rbac::ServiceAccount> {
        let state = self.lock();
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))?;
        let claims = self.api_token(&state, token).ok()?;
        let account = &claims["kubernetes.io"];
        Some(crate::rbac::ServiceAccount {
            namespace: account["namespace"].as_str()?.to_string(),
            name: account["serviceaccount"]["name"].as_str()?.to_string(),
        })
    }

    /// Refuses, with kube-apiserver's 403, a request RBAC does not allow its service account.
    pub(super) fn authorize(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Result<(), ApiError> {
        match self.service_account(headers) {
            Some(account) => self.authorize_account(&account, method, uri, headers),
            None => Ok(()),
        }
    }

    /// The API as pods reach it (the kubelet's `kubernetes` Service): every request carries a
    /// service-account token this cluster minted (else 401) and RBAC decides what it may do
    /// (else 403), whether or not the cluster enforces RBAC on its other clients. The tests'
    /// own clients act as the cluster's administrator; a pod never does.
    pub fn pod_router(&self) -> axum::Router {
        self.router().layer(axum::middleware::from_fn_with_state(
            self.clone(),
            |axum::extract::State(cluster): axum::extract::State<Cluster>,
             request: axum::extract::Request,
             next: axum::middleware::Next| async move {
                let (method, uri, headers) = (
                    request.method().clone(),
                    request.uri().clone(),
                    request.headers().clone(),
                );
                let checked = match cluster.token_account(&headers) {
                    None => Err(ApiError::unauthorized()),
                    Some(account) => cluster.authorize_account(&account, &method, &uri, &headers),
                };
                match checked {
                    Ok(()) => next.run(request).await,
                    Err(refused) => error_response(&refused),
                }
            },
        ))
    }

    /// A token for service account `name` of `namespace`, as a TokenRequest for `audiences`
    /// and `lifetime` seconds would mint it (what the kubelet projects into a pod).
    pub fn service_account_token(
        &self,
        namespace: &str,
        name: &str,
        audiences: &[String],
        lifetime: i64,
        pod: crate::tokens::BoundPod<'_>,
    ) -> Result<String, ApiError> {
        let mut request = json!({"spec": {"audiences": audiences, "expirationSeconds": lifetime}});
        if let Some((pod, uid)) = pod {
            request["spec"]["boundObjectRef"] =
                json!({"apiVersion": "v1", "kind": "Pod", "name": pod, "uid": uid});
        }
        let answer = self.token_request(namespace, name, request)?;
        Ok(answer["status"]["token"]
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    /// Refuses, with kube-apiserver's 403, a request RBAC does not allow `account`.
    fn authorize_account(
        &self,
        account: &crate::rbac::ServiceAccount,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> Result<(), ApiError> {
        let account = account.clone();
        let target = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
        let Some(request) = crate::rbac::attributes(method.as_str(), target) else {
            return Ok(());
        };
        // Every authenticated user may ask who it is and what it may do
        // (kube-apiserver's bootstrap `system:basic-user`).
        if request.verb == "create"
            && matches!(
                (request.group.as_str(), request.resource.as_str()),
                ("authentication.k8s.io", "selfsubjectreviews")
                    | ("authorization.k8s.io", "selfsubjectaccessreviews")
            )
        {
            return Ok(());
        }
        let policy = self.policy();
        let mut allowed = policy.authorizes(&account, &request);
        // An apply patch that creates its object also needs `create`, as kube-apiserver
        // authorizes it (the PATCH handler's create validation).
        let applies = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("application/apply-patch"));
        if allowed && applies && !self.stores(&request) {
            let create = crate::rbac::Attributes {
                verb: "create".into(),
                ..request.clone()
            };
            allowed = policy.authorizes(&account, &create);
            self.lock()
                .rbac_checks
                .insert(crate::rbac::Check::of(&account, &create, allowed));
            if !allowed {
                return Err(forbidden(&account, &create));
            }
        }
        self.lock()
            .rbac_checks
            .insert(crate::rbac::Check::of(&account, &request, allowed));
        if allowed {
            Ok(())
        } else {
            Err(forbidden(&account, &request))
        }
    }

    /// The stored RBAC objects, copied out of the store once per change to any of them: every
    /// request with a service account's token is authorized by them, and copying the
    /// bootstrap ClusterRoles on each one was a tenth of the sim's CPU at 1000 Barbicans.
    fn policy(&self) -> std::sync::Arc<crate::rbac::Policy> {
        const KINDS: [&str; 4] = [
            "clusterroles",
            "clusterrolebindings",
            "roles",
            "rolebindings",
        ];
        let mut state = self.lock();
        let (changed, lists) = {
            let types = KINDS.map(|plural| {
                state
                    .registry
                    .get("rbac.authorization.k8s.io", "v1", plural)
            });
            let changed = types.map(|t| t.map_or(0, |t| state.store.changed_at(&t.storage_key())));
            if let Some((at, policy)) = &state.rbac_policy
                && *at == changed
            {
                return policy.clone();
            }
            let lists = types.map(|t| t.map(|t| state.store.list(t, None)).unwrap_or_default());
            (changed, lists)
        };
        let [cluster_roles, cluster_role_bindings, roles, role_bindings] = lists;
        let policy = std::sync::Arc::new(crate::rbac::Policy {
            cluster_roles,
            cluster_role_bindings,
            roles,
            role_bindings,
        });
        state.rbac_policy = Some((changed, policy.clone()));
        policy
    }

    /// A SelfSubjectReview answered: the caller's service account, or the administrator
    /// every other caller acts as.
    pub(super) fn self_subject_review(&self, headers: &HeaderMap) -> Value {
        let user = match self.service_account(headers) {
            Some(account) => json!({
                "username": account.user(),
                "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{}", account.namespace), "system:authenticated"],
            }),
            None => {
                json!({"username": "system:admin", "groups": ["system:masters", "system:authenticated"]})
            }
        };
        json!({"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
               "metadata": {"creationTimestamp": null}, "status": {"userInfo": user}})
    }

    /// A SelfSubjectAccessReview answered from RBAC for a service account's token (the
    /// administrator may do anything).
    pub(super) fn self_subject_access_review(&self, headers: &HeaderMap, review: Value) -> Value {
        let attributes = &review["spec"]["resourceAttributes"];
        let text = |k: &str| attributes[k].as_str().unwrap_or_default().to_string();
        let allowed = match self.service_account(headers) {
            None => true,
            Some(account) => self.policy().authorizes(
                &account,
                &crate::rbac::Attributes {
                    verb: text("verb"),
                    group: text("group"),
                    version: text("version"),
                    resource: text("resource"),
                    subresource: text("subresource"),
                    namespace: text("namespace"),
                    name: text("name"),
                },
            ),
        };
        let mut answer = review;
        answer["status"] = json!({"allowed": allowed});
        answer["metadata"] = json!({"creationTimestamp": null});
        answer
    }

    /// Whether the object a request names is stored.
    pub(super) fn stores(&self, request: &crate::rbac::Attributes) -> bool {
        let state = self.lock();
        state
            .registry
            .get(&request.group, &request.version, &request.resource)
            .is_some_and(|t| {
                state
                    .store
                    .get(t, &request.namespace, &request.name)
                    .is_ok()
            })
    }

    /// Every distinct authorization decision RBAC made since it was enforced: which account
    /// asked for which verb on which resource, and whether it was allowed. Tests compare it
    /// with the roles granted, to find both a missing and an unused grant.
    pub fn rbac_checks(&self) -> Vec<crate::rbac::Check> {
        self.lock().rbac_checks.iter().cloned().collect()
    }

    /// Whether a request is authenticated. A service-account token this cluster signed is
    /// held to kube-apiserver's rules ([`Self::api_token`]) whatever else the cluster accepts:
    /// one minted for another audience, expired, or of a deleted account is a 401, never an
    /// anonymous administrator.
    pub(super) fn authenticated(&self, headers: &HeaderMap) -> bool {
        let state = self.lock();
        if state.rejecting_credentials {
            return false;
        }
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let signed_here = token
            .is_some_and(|t| crate::tokens::verify(&state.signing_key, t, &[], i64::MIN).is_ok());
        if let Some(token) = token.filter(|_| signed_here) {
            return self.api_token(&state, token).is_ok();
        }
        let Some(accepted) = &state.accepted_tokens else {
            return true;
        };
        token.is_some_and(|token| accepted.iter().any(|t| t == token))
    }

    /// The claims of `token` when kube-apiserver would authenticate it: signed here, unexpired,
    /// issued for the API's audience (a token minted for OpenBao or Vault is refused, as
    /// kube-apiserver's `--api-audiences` refuses it), and its ServiceAccount still the one it
    /// was minted for (deleted, or deleted and re-created under the name, refuses it).
    fn api_token(&self, state: &super::State_, token: &str) -> Result<Value, String> {
        let claims = crate::tokens::verify(
            &state.signing_key,
            token,
            &[crate::tokens::ISSUER.to_string()],
            self.clock.now().as_second(),
        )?;
        bound_objects_live(state, &claims)?;
        Ok(claims)
    }

    /// `serviceaccounts/<name>/token`: a signed token for the audiences and lifetime asked for
    /// (one hour by default, at least ten minutes, as kube-apiserver enforces).
    pub(super) fn token_request(
        &self,
        namespace: &str,
        name: &str,
        request: Value,
    ) -> Result<Value, ApiError> {
        let state = self.lock();
        let account = state.core_object("serviceaccounts", namespace, name)?;
        let mut audiences: Vec<String> = request["spec"]["audiences"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(String::from))
            .collect();
        // kube-apiserver gives a token asked for no audience its own (`--api-audiences`,
        // which defaults to the issuer).
        if audiences.is_empty() {
            audiences.push(crate::tokens::ISSUER.to_string());
        }
        let lifetime = request["spec"]["expirationSeconds"]
            .as_i64()
            .unwrap_or(3600);
        if lifetime < 600 {
            return Err(ApiError::invalid(format!(
                "spec.expirationSeconds: Invalid value: {lifetime}: may not specify a duration less than 10 minutes"
            )));
        }
        let now = self.clock.now().as_second();
        let uid = account["metadata"]["uid"].as_str().unwrap_or_default();
        let bound = &request["spec"]["boundObjectRef"];
        let pod = match bound["kind"].as_str() {
            None => None,
            Some("Pod") => {
                let pod_name = bound["name"].as_str().unwrap_or_default();
                let live = state.core_object("pods", namespace, pod_name)?;
                let live_uid = live["metadata"]["uid"].as_str().unwrap_or_default();
                if bound["uid"].as_str().is_some_and(|u| u != live_uid) {
                    return Err(ApiError::new(
                        409,
                        "Conflict",
                        format!(
                            "the UID in the bound object reference ({}) does not match the UID in record. The object might have been deleted and then recreated",
                            bound["uid"].as_str().unwrap_or_default()
                        ),
                    ));
                }
                Some((pod_name.to_string(), live_uid.to_string()))
            }
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "cannot bind token for object of kind {other:?}: the sim binds tokens to Pods"
                )));
            }
        };
        let token = crate::tokens::mint(
            &state.signing_key,
            namespace,
            name,
            uid,
            &audiences,
            now,
            lifetime,
            pod.as_ref().map(|(n, u)| (n.as_str(), u.as_str())),
        );
        let expires = jiff::Timestamp::from_second(now + lifetime)
            .map(|t| t.to_string())
            .unwrap_or_default();
        Ok(json!({
            "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": null},
            "spec": {"audiences": audiences, "expirationSeconds": lifetime},
            "status": {"token": token, "expirationTimestamp": expires},
        }))
    }

    /// `tokenreviews`: whether a token this cluster minted is valid for the audiences asked
    /// about, and its service account still exists with the same uid.
    pub(super) fn token_review(&self, review: Value) -> Value {
        let state = self.lock();
        let token = review["spec"]["token"].as_str().unwrap_or_default();
        let audiences: Vec<String> = review["spec"]["audiences"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(String::from))
            .collect();
        let checked = crate::tokens::verify(
            &state.signing_key,
            token,
            &audiences,
            self.clock.now().as_second(),
        )
        .and_then(|claims| bound_objects_live(&state, &claims).map(|()| claims));
        let status = match checked {
            Ok(claims) => {
                let ns = claims["kubernetes.io"]["namespace"].as_str().unwrap_or("");
                json!({
                    "authenticated": true,
                    "user": {"username": claims["sub"], "uid": claims["kubernetes.io"]["serviceaccount"]["uid"],
                        "groups": ["system:serviceaccounts", format!("system:serviceaccounts:{ns}"), "system:authenticated"]},
                    "audiences": if audiences.is_empty() { claims["aud"].clone() } else { json!(audiences) },
                })
            }
            Err(error) => json!({"authenticated": false, "error": error}),
        };
        json!({"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1", "metadata": {"creationTimestamp": null}, "spec": review["spec"], "status": status})
    }
}

/// kube-apiserver's 403 for a request RBAC refuses.
pub(super) fn forbidden(
    account: &crate::rbac::ServiceAccount,
    request: &crate::rbac::Attributes,
) -> ApiError {
    let mut error = ApiError::new(
        403,
        "Forbidden",
        crate::rbac::forbidden_message(account, request),
    );
    error.details = Some(json!({
        "name": request.name, "group": request.group, "kind": request.resource
    }));
    error
}

/// Whether what a token was minted for is still there, as kube-apiserver's service account
/// authenticator checks it: its ServiceAccount with the same uid (deleted, or deleted and
/// re-created under the name, refuses the token), and the pod it is bound to with the same uid
/// (a pod's projected token dies with the pod).
fn bound_objects_live(state: &super::State_, claims: &Value) -> Result<(), String> {
    let bound = &claims["kubernetes.io"];
    let namespace = bound["namespace"].as_str().unwrap_or_default();
    let account = bound["serviceaccount"]["name"].as_str().unwrap_or_default();
    match state.core_object("serviceaccounts", namespace, account) {
        Ok(live) if live["metadata"]["uid"] == bound["serviceaccount"]["uid"] => {}
        _ => {
            return Err(format!(
                "service account {namespace}/{account} has been deleted"
            ));
        }
    }
    if let Some(pod) = bound.get("pod").filter(|p| !p.is_null()) {
        let name = pod["name"].as_str().unwrap_or_default();
        match state.core_object("pods", namespace, name) {
            // A pod in its grace period still holds a valid token (it releases its Lease).
            Ok(live) if live["metadata"]["uid"] == pod["uid"] => Ok(()),
            _ => Err(format!(
                "the pod {namespace}/{name} the token was bound to has been deleted"
            )),
        }
    } else {
        Ok(())
    }
}
