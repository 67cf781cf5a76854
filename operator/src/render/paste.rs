//! `barbican-api-paste.ini`, in the layout the release's barbican ships, with spec.middleware
//! inserted into the pipeline `composite:main` routes `/v1` to.
//!
//! Up to 2025.2 (barbican 20.x, 21.x) the shipped file has no request_id filter and carries a
//! `barbican-profile` pipeline with a repoze.profile filter. From 2026.1 (barbican 22.x, 23.x)
//! every pipeline carries `request_id` right after `cors`, the audit pipeline gains `cors`, and
//! the profile pipeline and filter are gone. Checked against the files the wheels install at
//! `etc/barbican/barbican-api-paste.ini`.

use super::{RenderError, ini::Ini};
use crate::api::{BarbicanSpec, paste::PipelinePosition};

/// The filters built into the shipped file; a middleware may not take one of these names.
pub const BUILT_IN_FILTERS: &[&str] = &[
    "simple",
    "unauthenticated-context",
    "context",
    "microversion",
    "audit",
    "authtoken",
    "profile",
    "cors",
    "http_proxy_to_wsgi",
    "request_id",
];

/// The shipped pipeline with the audit filter, which `/v1` routes to under spec.audit.
pub const AUDIT_PIPELINE: &str = "barbican-api-keystone-audit";

/// The audit map's file name in the config Secret, beside the paste file.
pub const AUDIT_MAP: &str = "api_audit_map.conf";

/// The audit map: how the filter names a request's action and target. A GET of a collection
/// is `list`, of anything below it `read` (a secret's metadata, its payload); a POST to a
/// collection `create`; the target's type is the key manager's CADF type when the token's
/// catalog has a `key-manager` endpoint.
pub const AUDIT_MAP_CONTENT: &str = "\
[DEFAULT]
target_endpoint_type = key-manager

[path_keywords]
secrets = secret
containers = container
orders = order
consumers = None
secret-stores = secret-store
quotas = None
project-quotas = project
transport_keys = transport_key
cas = None

[custom_actions]
acl/get = read

[service_endpoints]
key-manager = service/security/keymanager
";

/// Whether `release` (`YYYY.N`) ships the request_id layout (2026.1 and later).
pub fn has_request_id(release: &str) -> Result<bool, RenderError> {
    let parsed = release
        .split_once('.')
        .and_then(|(y, n)| Some((y.parse::<u32>().ok()?, n.parse::<u32>().ok()?)));
    let Some((year, minor)) = parsed else {
        return Err(RenderError {
            field: "spec.openStackRelease".into(),
            problem: format!("{release:?} is not a YYYY.N release"),
        });
    };
    Ok((year, minor) >= (2026, 1))
}

/// The paste document for `spec`.
pub fn render(spec: &BarbicanSpec) -> Result<Ini, RenderError> {
    let request_id = has_request_id(&spec.open_stack_release)?;
    let head = if request_id {
        "cors request_id http_proxy_to_wsgi"
    } else {
        "cors http_proxy_to_wsgi"
    };
    let mut ini = Ini::new();

    ini.set("composite:main", "use", "egg:Paste#urlmap");
    ini.set("composite:main", "/", "barbican_version");
    ini.set("composite:main", "/healthcheck", "healthcheck");
    // With spec.audit, `/v1` is served through the audit pipeline (the shipped file's, with
    // spec.middleware inserted as in the plain one); without it, through the plain one.
    let audited = spec.audit.is_some();
    let v1 = if audited {
        AUDIT_PIPELINE
    } else {
        "barbican-api-keystone"
    };
    ini.set("composite:main", "/v1", v1);

    ini.set(
        "pipeline:barbican_version",
        "pipeline",
        format!("{head} microversion versionapp"),
    );
    ini.set(
        "pipeline:barbican_api",
        "pipeline",
        format!("{head} unauthenticated-context microversion apiapp"),
    );
    let mut before = Vec::new();
    let mut after = Vec::new();
    for (i, middleware) in spec.middleware.iter().flatten().enumerate() {
        let field = format!("spec.middleware[{i}]");
        let name = &middleware.name;
        // A pipeline is a space-separated list of section names: the name must be one token.
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(RenderError {
                field: format!("{field}.name"),
                problem: "must be letters, digits, '-', '_' or '.'".into(),
            });
        }
        if BUILT_IN_FILTERS.contains(&name.as_str()) {
            return Err(RenderError {
                field: format!("{field}.name"),
                problem: format!("{name} is a built-in filter"),
            });
        }
        let section = format!("filter:{name}");
        if ini.sections().contains_key(&section) {
            return Err(RenderError {
                field: format!("{field}.name"),
                problem: format!("a second middleware named {name}"),
            });
        }
        super::check_value(
            &format!("{field}.filterFactory"),
            &middleware.filter_factory,
        )?;
        ini.set(&section, "paste.filter_factory", &middleware.filter_factory);
        for (key, value) in middleware.config.iter().flatten() {
            let field = format!("{field}.config[{key}]");
            super::check_key(&field, key)?;
            super::check_value(&field, value)?;
            if key == "paste.filter_factory" || key == "use" {
                return Err(RenderError {
                    field,
                    problem: "is set from filterFactory".into(),
                });
            }
            ini.set(&section, key, value);
        }
        match middleware.position {
            PipelinePosition::Before => before.push(name.as_str()),
            PipelinePosition::After => after.push(name.as_str()),
        }
    }
    let pipeline = |audit: &[&'static str]| -> String {
        before
            .iter()
            .copied()
            .chain(head.split(' '))
            .chain(["authtoken", "context", "microversion"])
            .chain(audit.iter().copied())
            .chain(after.iter().copied())
            .chain(["apiapp"])
            .collect::<Vec<&str>>()
            .join(" ")
    };
    ini.set("pipeline:barbican-api-keystone", "pipeline", pipeline(&[]));
    // Audited: the filter after authtoken and context, whose identity the events name, reading
    // its map from the config Secret beside this file (`%(here)s` is paste.deploy's directory
    // of the file), so no path outside the mount is assumed. Otherwise the shipped pipeline and
    // map path, unused.
    let (audit_pipeline, audit_map) = if audited {
        (pipeline(&["audit"]), format!("%(here)s/{AUDIT_MAP}"))
    } else {
        let audit_head = if request_id {
            head
        } else {
            "http_proxy_to_wsgi"
        };
        (
            format!("{audit_head} authtoken context microversion audit apiapp"),
            "/etc/barbican/api_audit_map.conf".to_string(),
        )
    };
    ini.set(
        &format!("pipeline:{AUDIT_PIPELINE}"),
        "pipeline",
        audit_pipeline,
    );
    ini.set("filter:audit", "audit_map_file", audit_map);

    if !request_id {
        ini.set(
            "pipeline:barbican-profile",
            "pipeline",
            "cors http_proxy_to_wsgi unauthenticated-context microversion egg:Paste#cgitb egg:Paste#httpexceptions profile apiapp",
        );
        for (key, value) in [
            ("use", "egg:repoze.profile"),
            ("log_filename", "myapp.profile"),
            ("cachegrind_filename", "cachegrind.out.myapp"),
            ("discard_first_request", "true"),
            ("path", "/__profile__"),
            ("flush_at_shutdown", "true"),
            ("unwind", "false"),
        ] {
            ini.set("filter:profile", key, value);
        }
    }

    ini.set(
        "app:apiapp",
        "paste.app_factory",
        "barbican.api.app:create_main_app",
    );
    ini.set(
        "app:versionapp",
        "paste.app_factory",
        "barbican.api.app:create_version_app",
    );
    ini.set(
        "app:healthcheck",
        "paste.app_factory",
        "oslo_middleware:Healthcheck.app_factory",
    );
    ini.set("app:healthcheck", "backends", "disable_by_file");
    ini.set(
        "app:healthcheck",
        "disable_by_file_path",
        "/etc/barbican/healthcheck_disable",
    );
    for (name, factory) in [
        (
            "simple",
            "barbican.api.middleware.simple:SimpleFilter.factory",
        ),
        (
            "unauthenticated-context",
            "barbican.api.middleware.context:UnauthenticatedContextMiddleware.factory",
        ),
        (
            "context",
            "barbican.api.middleware.context:ContextMiddleware.factory",
        ),
        (
            "microversion",
            "barbican.api.middleware.microversion:MicroversionMiddleware.factory",
        ),
        ("audit", "keystonemiddleware.audit:filter_factory"),
        ("authtoken", "keystonemiddleware.auth_token:filter_factory"),
        ("cors", "oslo_middleware.cors:filter_factory"),
        (
            "http_proxy_to_wsgi",
            "oslo_middleware:HTTPProxyToWSGI.factory",
        ),
    ] {
        ini.set(&format!("filter:{name}"), "paste.filter_factory", factory);
    }
    ini.set("filter:cors", "oslo_config_project", "barbican");
    if request_id {
        ini.set(
            "filter:request_id",
            "paste.filter_factory",
            "oslo_middleware.request_id:RequestId.factory",
        );
    }
    Ok(ini)
}
