//! From an HTTP request to the handler that serves it: the query string, the path's parts,
//! the service proxy and port-forward, and the audit record of every request.

use super::*;

/// What a request addresses.
pub(super) struct Target {
    pub(super) t: ResourceType,
    pub(super) namespace: String,
    pub(super) name: Option<String>,
    pub(super) subresource: Option<String>,
}

pub(super) fn json_response(code: u16, body: &Value) -> Response {
    (
        StatusCode::from_u16(code).unwrap_or(StatusCode::OK),
        [(header::CONTENT_TYPE, "application/json")],
        crate::wire_order::body(body),
    )
        .into_response()
}

pub(super) fn error_response(error: &ApiError) -> Response {
    json_response(error.code, &error.status())
}

/// The request's query parameters, percent-decoded; a pair that does not decode is skipped and
/// a later repeat of a key wins.
pub fn query(uri: &Uri) -> BTreeMap<String, String> {
    uri.query()
        .map(|q| {
            q.split('&')
                .filter_map(|pair| {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    Some((decode(k)?, decode(v)?))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A boolean query parameter as kube-apiserver reads one (`Convert_Slice_string_To_bool`):
/// present and anything but `0` or `false` (any case) is true, so `watch=True`, `watch=1` and
/// a bare `watch` all start a watch.
pub fn flag(q: &BTreeMap<String, String>, key: &str) -> bool {
    q.get(key)
        .is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// `text` percent-decoded (`+` is a space); `None` when an escape's digits are not hex or the
/// result is not UTF-8.
pub fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                out.push(
                    u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?, 16).ok()?,
                );
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

pub(super) async fn handle(
    State(cluster): State<Cluster>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !cluster.authenticated(&headers) {
        return error_response(&ApiError::unauthorized());
    }
    let received = receive(&cluster, &method, &uri, &headers);
    // The audit log keeps the start of a write's body (kube-apiserver's Request level).
    let request_body = if method == Method::GET {
        String::new()
    } else {
        String::from_utf8_lossy(&body[..body.len().min(crate::audit::BODY_LIMIT)]).into_owned()
    };
    let routed = match cluster.authorize(&method, &uri, &headers) {
        Ok(()) => route(&cluster, &method, &uri, &headers, body).await,
        Err(refused) => Err(refused),
    };
    let response = match routed {
        Ok(response) => response,
        Err(error) => error_response(&error),
    };
    if method != Method::GET {
        cluster.after_request();
    }
    complete(
        &cluster,
        received,
        &method,
        &uri,
        &headers,
        &response,
        request_body,
    );
    response
}

/// `pods/<name>/portforward` over WebSocket (see [`crate::portforward`]). The Pod must exist;
/// a client that cannot upgrade (an in-process one) gets kube-apiserver's 400.
pub(super) async fn portforward(
    State(cluster): State<Cluster>,
    axum::extract::Path((namespace, name)): axum::extract::Path<(String, String)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    upgrade: Result<
        axum::extract::ws::WebSocketUpgrade,
        axum::extract::ws::rejection::WebSocketUpgradeRejection,
    >,
) -> Response {
    if !cluster.authenticated(&headers) {
        return error_response(&ApiError::unauthorized());
    }
    let session = (|| {
        cluster.authorize(&method, &uri, &headers)?;
        let ports = crate::portforward::ports(uri.query())?;
        let state = cluster.lock();
        state.core_object("pods", &namespace, &name)?;
        let backends: Vec<_> = ports
            .iter()
            .map(|p| state.services.pod(&namespace, &name, *p))
            .collect();
        Ok::<_, ApiError>((ports, backends))
    })();
    let response = match (session, upgrade) {
        (Err(error), _) => error_response(&error),
        (Ok(_), Err(_)) => error_response(&ApiError::bad_request(
            "Upgrade request required: port-forwarding speaks WebSocket",
        )),
        (Ok((ports, backends)), Ok(upgrade)) => {
            let pod = format!("{namespace}/{name}");
            upgrade
                .protocols(crate::portforward::PROTOCOLS)
                .on_upgrade(move |socket| crate::portforward::serve(socket, pod, ports, backends))
        }
    };
    audit(&cluster, &method, &uri, &headers, &response, String::new());
    response
}

/// `pods/<name>/log`: a container's output, kept by the kubelet that runs it (`container`,
/// `tailLines` and `limitBytes` as kube-apiserver reads them; a follow returns what there is).
pub(super) async fn pod_log(
    State(cluster): State<Cluster>,
    axum::extract::Path((namespace, name)): axum::extract::Path<(String, String)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    if !cluster.authenticated(&headers) {
        return error_response(&ApiError::unauthorized());
    }
    let answer = (|| {
        cluster.authorize(&method, &uri, &headers)?;
        let q = query(&uri);
        let pod = cluster.lock().core_object("pods", &namespace, &name)?;
        let containers: Vec<String> = pod["spec"]["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["name"].as_str().map(str::to_string))
            .collect();
        let number = |key: &str| -> Result<Option<usize>, ApiError> {
            q.get(key)
                .map(|v| {
                    v.parse::<usize>().map_err(|_| {
                        ApiError::bad_request(format!("{key}: {v:?} is not a non-negative integer"))
                    })
                })
                .transpose()
        };
        let text = cluster.pod_logs().read(
            &namespace,
            &name,
            &containers,
            q.get("container").map(String::as_str),
            number("tailLines")?,
            number("limitBytes")?,
        )?;
        Ok::<_, ApiError>(text)
    })();
    let response = match answer {
        Ok(text) => (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain")], text).into_response(),
        Err(error) => error_response(&error),
    };
    audit(&cluster, &method, &uri, &headers, &response, String::new());
    response
}

fn user_agent(headers: &HeaderMap) -> &str {
    headers
        .get(axum::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

fn path(uri: &Uri) -> String {
    uri.path_and_query()
        .map_or_else(|| uri.path().to_string(), |p| p.to_string())
}

/// Counts a request in the audit log as it arrives (see [`crate::audit::Audit`]).
fn receive(
    cluster: &Cluster,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> crate::audit::Received {
    cluster
        .lock()
        .audit
        .receive(user_agent(headers), method.as_str(), &path(uri))
}

/// Keeps a received request in the audit log with its answer.
fn complete(
    cluster: &Cluster,
    received: crate::audit::Received,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    response: &Response,
    body: String,
) {
    let entry = crate::audit::Entry {
        user_agent: user_agent(headers).to_string(),
        method: method.to_string(),
        path: path(uri),
        code: response.status().as_u16(),
        body,
    };
    cluster.lock().audit.complete(received, entry);
}

/// Records a request answered at once (no write whose watch event could precede it).
fn audit(
    cluster: &Cluster,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    response: &Response,
    body: String,
) {
    let received = receive(cluster, method, uri, headers);
    complete(cluster, received, method, uri, headers, response, body);
}

pub(super) async fn route(
    cluster: &Cluster,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let path = uri.path().trim_end_matches('/');
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let discovery = |v: Value| Ok(json_response(200, &v));
    match segments.as_slice() {
        // kube-apiserver's health checks, open to every caller.
        [check @ ("healthz" | "readyz" | "livez"), rest @ ..] => Ok(health(check, rest, uri)),
        ["version"] => discovery(json!({
            "major": "1", "minor": KUBERNETES_MINOR, "gitVersion": format!("v1.{KUBERNETES_MINOR}.0-barbican-sim"),
            "gitCommit": "sim", "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
            "goVersion": "none", "compiler": "none", "platform": "linux/amd64"
        })),
        // client-go and kube-rs ask for the aggregated form first; the answer's Content-Type
        // tells them which form they got.
        [root @ ("api" | "apis")] if wants_aggregated_discovery(headers) => Ok((
            StatusCode::OK,
            [(header::CONTENT_TYPE, AGGREGATED_DISCOVERY)],
            cluster.aggregated_discovery(*root == "api").to_string(),
        )
            .into_response()),
        ["api"] => discovery(
            json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]}),
        ),
        ["apis"] => discovery(cluster.group_list()),
        // One group's APIGroup, as in the list (kube-apiserver serves it at `/apis/<group>`).
        ["apis", group] => match cluster.group_list()["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|g| g["name"] == *group)
        {
            Some(found) => {
                let mut found = found.clone();
                found["kind"] = json!("APIGroup");
                found["apiVersion"] = json!("v1");
                discovery(found)
            }
            None => Err(ApiError::not_found("path", path)),
        },
        ["api", "v1"] => discovery(cluster.resource_list("", "v1")),
        ["apis", group, version] => discovery(cluster.resource_list(group, version)),
        ["openapi", "v3"] => discovery(cluster.openapi_index()),
        ["openapi", "v3", "api", "v1"] => discovery(cluster.openapi_group_version("", "v1")),
        ["openapi", "v3", "apis", group, version] => {
            discovery(cluster.openapi_group_version(group, version))
        }
        [
            "api",
            "v1",
            "namespaces",
            namespace,
            "services",
            service,
            "proxy",
            rest @ ..,
        ] => {
            cluster
                .service_proxy(namespace, service, rest, method, uri, headers, body)
                .await
        }
        ["api", "v1", rest @ ..] => {
            serve_resource(cluster, "", "v1", rest, method, uri, headers, body).await
        }
        ["apis", group, version, rest @ ..] => {
            serve_resource(cluster, group, version, rest, method, uri, headers, body).await
        }
        _ => Err(ApiError::not_found("path", path)),
    }
}

/// `/healthz`, `/readyz`, `/livez` (and a named check under them): `ok`, or with `?verbose`
/// the checks one per line, as kube-apiserver answers.
fn health(check: &str, rest: &[&str], uri: &Uri) -> Response {
    const CHECKS: [&str; 3] = ["ping", "log", "etcd"];
    let text = match rest {
        [] if uri.query().is_some_and(|q| {
            q.split('&')
                .any(|p| p == "verbose" || p.starts_with("verbose="))
        }) =>
        {
            let lines: String = CHECKS.iter().map(|c| format!("[+]{c} ok\n")).collect();
            format!("{lines}{check} check passed\n")
        }
        [] => "ok".to_string(),
        [one] if CHECKS.contains(one) => "ok".to_string(),
        _ => {
            return (StatusCode::NOT_FOUND, "404 page not found\n").into_response();
        }
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text,
    )
        .into_response()
}

impl Cluster {
    /// `services/<[scheme:]name[:port]>/proxy/<path>` (see [`crate::proxy`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn service_proxy(
        &self,
        namespace: &str,
        service: &str,
        rest: &[&str],
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Response, ApiError> {
        let spec = crate::proxy::parse(service);
        let (object, services) = {
            let state = self.lock();
            (
                state.core_object("services", namespace, &spec.name)?,
                state.services.clone(),
            )
        };
        if spec.scheme != "http" && spec.scheme != "https" {
            return Err(ApiError::new(
                400,
                "BadRequest",
                format!("the scheme {:?} is neither http nor https", spec.scheme),
            ));
        }
        let no_endpoints = || {
            ApiError::new(
                503,
                "ServiceUnavailable",
                format!("no endpoints available for service \"{}\"", spec.name),
            )
        };
        let port = crate::proxy::port_of(&object, &spec.port).ok_or_else(no_endpoints)?;
        let host = format!("{}.{namespace}.svc", spec.name);
        let addr = services.resolve(&host, port).ok_or_else(no_endpoints)?;
        let path = crate::proxy::backend_path(rest, uri, uri.path().ends_with('/'));
        crate::proxy::forward(
            addr,
            spec.scheme == "https",
            &format!("{host}:{port}"),
            method,
            &path,
            headers,
            body,
        )
        .await
    }
}
