//! Steps about the dumps taken before a migration (`spec.dbBackup`) on real barbican: what the
//! claim holds on the node, a change to the real database a migration gone wrong would leave,
//! and a dump loaded back as an administrator restores one.

use cucumber::{then, when};

use crate::world::{BarbicanWorld, ok};

/// The dumps of the Barbican `barbican` on the claim `namespace/claim`, newest last.
fn dumps(
    world: &BarbicanWorld,
    namespace: &str,
    claim: &str,
    barbican: &str,
) -> Result<Vec<std::path::PathBuf>, String> {
    let site = world.env().here();
    let real = site
        .real
        .as_ref()
        .ok_or("no kubelet runs pods here: tag the scenario @real-barbican")?;
    let dir = real.kubelet.claim_dir(namespace, claim).join(barbican);
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    // Named <UTC time>-<release>.sql: by name is by time.
    found.sort();
    Ok(found)
}

#[then(expr = "the claim {string} in {string} holds {int} dump(s) of the Barbican {string}")]
async fn holds_dumps(
    world: &mut BarbicanWorld,
    claim: String,
    namespace: String,
    count: usize,
    barbican: String,
) {
    let found = dumps(world, &namespace, &claim, &barbican);
    ok(found.and_then(|found| {
        if found.len() == count {
            Ok(())
        } else {
            Err(format!("{} dump(s), not {count}: {found:?}", found.len()))
        }
    }));
}

#[when(expr = "the real MariaDB runs {string}")]
async fn runs_sql(world: &mut BarbicanWorld, sql: String) {
    let site = world.env().here();
    let real = site
        .real
        .as_ref()
        .expect("no real MariaDB runs here: tag the scenario @real-barbican");
    let done = real.mariadb.lock().await.execute(&sql).await;
    ok(done.map(|_| ()).map_err(|e| e.to_string()));
}

#[when(
    expr = "the newest dump of the Barbican {string} on the claim {string} in {string} is loaded into the real MariaDB"
)]
async fn restore(world: &mut BarbicanWorld, barbican: String, claim: String, namespace: String) {
    let newest = dumps(world, &namespace, &claim, &barbican)
        .and_then(|found| found.last().cloned().ok_or("no dump".to_string()));
    let dump = newest.and_then(|path| {
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    });
    let site = world.env().here();
    let real = site
        .real
        .as_ref()
        .expect("no real MariaDB runs here: tag the scenario @real-barbican");
    let server = real.mariadb.lock().await;
    let restored = match dump {
        Ok(sql) => server
            .execute(&sql)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    ok(restored);
}
