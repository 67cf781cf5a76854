//! Golden files: representative specs rendered for every supported release, compared byte for
//! byte with `tests/golden/render/<release>/<case>/`. Regenerate after an intended change with
//! `UPDATE_GOLDEN=1 cargo test -p barbican-operator --test render_golden` and review the diff.
//! The same files are what `ci/check-render-conformance.sh` loads into barbican itself.

use std::{collections::BTreeMap, path::PathBuf};

use barbican_operator::{
    api::{
        BarbicanSpec,
        fixtures::{minimal_barbican, with_spec},
    },
    render::{self, Inputs, ProjectedStore, Rendered},
};
use serde_json::{Value, json};

const RELEASES: [&str; 4] = ["2025.1", "2025.2", "2026.1", "2026.2"];

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/render")
}

fn spec(release: &str, patch: Value) -> BarbicanSpec {
    let object = with_spec(minimal_barbican(), &patch);
    let mut spec: BarbicanSpec = serde_json::from_value(object["spec"].clone()).unwrap();
    spec.open_stack_release = release.to_string();
    spec.image.tag = Some(release.to_string());
    spec
}

fn full_example() -> Value {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/examples/barbican-full.yaml"),
    )
    .unwrap();
    let object: Value = serde_saphyr::from_str(&text).unwrap();
    object["spec"].clone()
}

fn inputs(stores: Vec<ProjectedStore>) -> Inputs {
    Inputs {
        name: "barbican".into(),
        namespace: "openstack".into(),
        stores,
        config_map_policy: BTreeMap::new(),
    }
}

fn managed() -> ProjectedStore {
    ProjectedStore::managed(
        "openbao-primary",
        "openbao",
        "openstack",
        "5f2c8a90-role-id",
        true,
    )
}

/// A brownfield store; its extraOptions use `kv_version`, a [vault_plugin] option barbican has
/// from 2026.2 on (before that every vault_plugin option is one the typed spec owns).
fn brownfield(release: &str, is_default: bool) -> ProjectedStore {
    ProjectedStore {
        name: "vault-legacy".into(),
        is_default,
        url: "https://vault.example.com:8200".into(),
        role_id: "0b1c2d3e-legacy-role".into(),
        ca_file: Some("/etc/barbican-secret-store-ca/ca.crt".into()),
        kv_mountpoint: "secret-barbican".into(),
        namespace: Some("tenant-a".into()),
        extra_options: if release >= "2026.2" {
            BTreeMap::from([("kv_version".to_string(), "2".to_string())])
        } else {
            BTreeMap::new()
        },
    }
}

/// The representative cases: name, spec, inputs.
fn cases(release: &str) -> Vec<(&'static str, BarbicanSpec, Inputs)> {
    let mut full_inputs = inputs(vec![managed()]);
    full_inputs.config_map_policy =
        BTreeMap::from([("orders:post".to_string(), "role:creator".to_string())]);
    vec![
        ("minimal", spec(release, json!({})), inputs(vec![managed()])),
        (
            "every-optional-block",
            spec(release, full_example()),
            full_inputs,
        ),
        (
            "two-stores",
            spec(release, json!({})),
            inputs(vec![brownfield(release, false), managed()]),
        ),
        (
            "brownfield-namespace-ca",
            spec(release, json!({"region": "RegionOne"})),
            inputs(vec![brownfield(release, true)]),
        ),
        (
            "extra-config-overrides-owned-keys",
            spec(
                release,
                json!({"extraConfig": {"DEFAULT": {"host_href": "https://barbican.example.com"}, "queue": {"enable": "true"}, "database": {"max_pool_size": "20"}}}),
            ),
            inputs(vec![managed()]),
        ),
    ]
}

fn compare_or_update(dir: &std::path::Path, rendered: &Rendered, problems: &mut Vec<String>) {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    if update {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).unwrap();
    }
    for (file, content) in &rendered.files {
        let path = dir.join(file);
        if update {
            std::fs::write(&path, content).unwrap();
        } else {
            match std::fs::read_to_string(&path) {
                Ok(golden) if &golden == content => {}
                Ok(_) => problems.push(format!("{} differs from the renderer", path.display())),
                Err(e) => problems.push(format!("{}: {e}", path.display())),
            }
        }
    }
    if !update {
        let on_disk = std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
        if on_disk != rendered.files.len() {
            problems.push(format!(
                "{} holds {on_disk} files, the renderer writes {}",
                dir.display(),
                rendered.files.len()
            ));
        }
    }
}

#[test]
fn golden_files_match_for_every_release() {
    let mut problems = Vec::new();
    for release in RELEASES {
        for (name, spec, inputs) in cases(release) {
            let rendered =
                render::render(&spec, &inputs).unwrap_or_else(|e| panic!("{release}/{name}: {e}"));
            compare_or_update(
                &golden_dir().join(release).join(name),
                &rendered,
                &mut problems,
            );
        }
    }
    assert!(
        problems.is_empty(),
        "{}\nregenerate with UPDATE_GOLDEN=1 and review the diff",
        problems.join("\n")
    );
}

#[test]
fn the_paste_layout_follows_the_release() {
    for release in RELEASES {
        let rendered = render::render(&spec(release, json!({})), &inputs(vec![managed()])).unwrap();
        let paste = &rendered.files[render::PASTE_INI];
        let new_layout = release >= "2026.1";
        assert_eq!(
            paste.contains("[filter:request_id]"),
            new_layout,
            "{release}"
        );
        assert_eq!(paste.contains("[filter:profile]"), !new_layout, "{release}");
        let keystone = if new_layout {
            "pipeline = cors request_id http_proxy_to_wsgi authtoken context microversion apiapp"
        } else {
            "pipeline = cors http_proxy_to_wsgi authtoken context microversion apiapp"
        };
        assert!(paste.contains(keystone), "{release}: {paste}");
    }
}

#[test]
fn owned_key_overrides_are_reported() {
    let (_, spec, inputs) = cases("2025.2").remove(4);
    let rendered = render::render(&spec, &inputs).unwrap();
    assert_eq!(
        rendered.overridden_keys,
        ["[DEFAULT] host_href", "[queue] enable"]
    );
    let conf = &rendered.files[render::BARBICAN_CONF];
    assert!(
        conf.contains("host_href = https://barbican.example.com\n"),
        "extraConfig wins: {conf}"
    );
    assert!(conf.contains("[queue]\nenable = true\n"));
}
