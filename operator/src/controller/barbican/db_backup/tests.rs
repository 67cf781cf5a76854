use serde_json::json;

use super::*;
use crate::api::{db_backup::ClaimRefSpec, fixtures};

fn with_backup(patch: serde_json::Value) -> BarbicanSpec {
    let mut spec: BarbicanSpec = serde_json::from_value(
        fixtures::with_spec(fixtures::minimal_barbican(), &patch)["spec"].clone(),
    )
    .unwrap();
    spec.db_backup = Some(DbBackupSpec {
        persistent_volume_claim: ClaimRefSpec {
            claim_name: "db-backups".into(),
        },
        keep: Some(2),
        image: None,
    });
    spec
}

fn env(job: &Job) -> BTreeMap<String, EnvVar> {
    job.spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .containers[0]
        .env
        .clone()
        .unwrap()
        .into_iter()
        .map(|e| (e.name.clone(), e))
        .collect()
}

#[test]
fn a_dump_is_due_only_before_a_migration_of_an_installed_schema() {
    let spec = with_backup(json!({}));
    let image = spec.image.reference();
    let release = spec.open_stack_release.clone();
    assert_eq!(
        due(&spec, None, None),
        None,
        "a first install keeps nothing"
    );
    assert_eq!(
        due(&spec, Some(&release), Some(&image)),
        None,
        "db-sync rerunning for a changed config migrates nothing"
    );
    let migration = due(&spec, Some("2025.1"), Some("ghcr.io/c5c3/barbican:2025.1")).unwrap();
    assert_eq!(migration.from_release, "2025.1");
    assert_eq!(migration.to_release, release);
    assert!(
        due(
            &spec,
            Some(&release),
            Some("ghcr.io/c5c3/barbican@sha256:0")
        )
        .is_some(),
        "a new image of the same release migrates too"
    );
    let mut without = spec.clone();
    without.db_backup = None;
    assert_eq!(due(&without, Some("2025.1"), Some("x")), None);
}

#[test]
fn the_job_dumps_with_the_password_from_the_secret_and_keeps_the_newest() {
    let spec = with_backup(json!({}));
    let migration = due(&spec, Some("2025.1"), Some("old")).unwrap();
    let job = backup_job(
        &spec,
        spec.db_backup.as_ref().unwrap(),
        "kms",
        "ns",
        &migration,
    );
    assert_eq!(job.metadata.name.as_deref(), Some("kms-db-backup"));
    let env = env(&job);
    let password = env["MYSQL_PWD"].value_from.as_ref().unwrap();
    let secret = password.secret_key_ref.as_ref().unwrap();
    assert_eq!(
        (secret.name.as_str(), secret.key.as_str()),
        ("barbican-db", "password")
    );
    assert!(env["MYSQL_PWD"].value.is_none(), "never a literal");
    assert_eq!(
        env["DB_USER"].value.as_deref(),
        Some("kms"),
        "the managed user"
    );
    assert_eq!(
        env["DB_HOST"].value.as_deref(),
        Some("openstack-mariadb.ns.svc")
    );
    assert_eq!(env["DB_PORT"].value.as_deref(), Some("3306"));
    assert_eq!(env["KEEP"].value.as_deref(), Some("2"));
    assert_eq!(env["FROM_RELEASE"].value.as_deref(), Some("2025.1"));
    let pod = job.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
    let command = pod.containers[0].command.clone().unwrap();
    assert_eq!(command[..2], ["/bin/sh".to_string(), "-c".to_string()]);
    assert!(command[2].contains("mariadb-dump --single-transaction"));
    assert!(
        !command[2].contains("barbican-db"),
        "no value of the spec in the script"
    );
    assert_eq!(
        pod.containers[0].image.as_deref(),
        Some("docker.io/library/mariadb:11.4")
    );
    let claim = pod.volumes.as_ref().unwrap()[0]
        .persistent_volume_claim
        .as_ref()
        .unwrap();
    assert_eq!(claim.claim_name, "db-backups");
    let security = pod.containers[0].security_context.as_ref().unwrap();
    assert_eq!(security.run_as_user, Some(999));
    assert_eq!(security.run_as_non_root, Some(true));
    assert_eq!(security.read_only_root_filesystem, Some(true));
    let spec_of_job = job.spec.as_ref().unwrap();
    assert_eq!(spec_of_job.active_deadline_seconds, Some(3600));
}

#[test]
fn a_new_migration_is_a_new_job_and_a_brownfield_user_comes_from_the_secret() {
    let spec = with_backup(
        json!({"database": {"clusterRef": null, "host": "db.example.com",
        "port": 3307}}),
    );
    let backup = spec.db_backup.clone().unwrap();
    let first = backup_job(
        &spec,
        &backup,
        "kms",
        "ns",
        &due(&spec, Some("2025.1"), Some("a")).unwrap(),
    );
    let second = backup_job(
        &spec,
        &backup,
        "kms",
        "ns",
        &due(&spec, Some("2025.1"), Some("b")).unwrap(),
    );
    assert_ne!(
        super::super::jobs::recorded_hash(&first),
        super::super::jobs::recorded_hash(&second)
    );
    let env = env(&first);
    assert_eq!(env["DB_HOST"].value.as_deref(), Some("db.example.com"));
    assert_eq!(env["DB_PORT"].value.as_deref(), Some("3307"));
    let user = env["DB_USER"]
        .value_from
        .as_ref()
        .unwrap()
        .secret_key_ref
        .as_ref()
        .unwrap();
    assert_eq!(user.key, "username");
}

#[test]
fn the_dump_speaks_tls_as_the_database_block_asks() {
    let tls = |mode: &str| {
        with_backup(json!({"database": {"tls": {"mode": mode,
            "caBundleSecretRef": {"name": "ca"}, "clientCertSecretRef": {"name": "client"}}}}))
    };
    let flags = tls_flags(&tls("verify-full"));
    assert!(
        flags.contains(&"--ssl-verify-server-cert".to_string()),
        "{flags:?}"
    );
    assert!(flags.contains(&"--ssl-ca=/etc/barbican-db-tls/ca.crt".to_string()));
    assert!(tls_flags(&tls("require")).contains(&"--skip-ssl-verify-server-cert".to_string()));
    assert_eq!(tls_flags(&tls("disabled")), ["--skip-ssl"]);
    assert!(tls_flags(&with_backup(json!({}))).is_empty());
    let spec = tls("verify-full");
    let job = backup_job(
        &spec,
        spec.db_backup.as_ref().unwrap(),
        "kms",
        "ns",
        &due(&spec, Some("2025.1"), Some("a")).unwrap(),
    );
    let pod = job.spec.unwrap().template.spec.unwrap();
    assert!(pod.volumes.unwrap().iter().any(|v| v.name == "db-tls"));
    assert!(pod.containers[0].command.as_ref().unwrap()[2].contains("--ssl-verify-server-cert"));
}

/// The script, run by a real shell with a stand-in `mariadb-dump`: the dump lands whole under
/// the Barbican's directory, a failed one leaves no file, and only the newest `KEEP` stay.
#[test]
fn the_script_writes_whole_dumps_and_keeps_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let backups = dir.path().join("backups");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(backups.join("kms")).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    for old in ["20200101T000000Z-2024.2.sql", "20210101T000000Z-2025.1.sql"] {
        std::fs::write(backups.join("kms").join(old), "old").unwrap();
    }
    std::fs::write(backups.join("kms").join("notes.txt"), "kept").unwrap();
    let fake = bin.join("mariadb-dump");
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ \"$FAIL\" = yes ] && { echo partial; exit 2; }\necho \"-- dump of $*\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = script(&[]).replace(BACKUP_DIR, backups.to_str().unwrap());
    let run = |fail: &str| {
        std::process::Command::new("/bin/sh")
            .args(["-c", &script])
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("BARBICAN", "kms")
            .env("MIGRATION", "2025.1 to 2025.2")
            .env("FROM_RELEASE", "2025.1")
            .env("KEEP", "2")
            .env("DB_HOST", "db")
            .env("DB_PORT", "3306")
            .env("DB_NAME", "barbican")
            .env("DB_USER", "kms")
            .env("FAIL", fail)
            .output()
            .unwrap()
    };
    let failed = run("yes");
    assert!(!failed.status.success());
    let listed = |dir: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        listed(&backups.join("kms")).len(),
        3,
        "a failed dump leaves nothing: {:?}",
        listed(&backups.join("kms"))
    );
    let done = run("no");
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let names = listed(&backups.join("kms"));
    assert_eq!(names.len(), 3, "two dumps and the other file: {names:?}");
    assert!(names.contains(&"notes.txt".to_string()));
    assert!(names.contains(&"20210101T000000Z-2025.1.sql".to_string()));
    assert!(
        !names.contains(&"20200101T000000Z-2024.2.sql".to_string()),
        "{names:?}"
    );
    let newest = names
        .iter()
        .find(|n| n.ends_with("-2025.1.sql") && !n.starts_with("2021"))
        .unwrap();
    let text = std::fs::read_to_string(backups.join("kms").join(newest)).unwrap();
    assert!(
        text.contains("--databases barbican --host=db --port=3306 --user=kms"),
        "{text}"
    );
}
