//! A real MariaDB server for the harness: the distribution's `mariadbd` with a data directory
//! of its own, listening on a loopback port, run as a child process (no system service).
//! `ci/install-mariadb.sh` installs the packages when they are missing.
//!
//! SQL goes to the server through the `mariadb` client on its standard input, so passwords
//! never appear on a command line; names and literals are quoted by [`identifier`] and
//! [`literal`], since they come from custom resources.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use tokio::{
    io::AsyncWriteExt,
    process::{Child, Command},
};

/// Why the server could not be started or asked.
#[derive(Debug, thiserror::Error)]
pub enum MariaDbError {
    /// A program could not be run (not installed, say).
    #[error("running {program}: {source} (ci/install-mariadb.sh installs MariaDB)")]
    Spawn {
        /// The program.
        program: String,
        /// What failed.
        source: std::io::Error,
    },
    /// The data directory could not be prepared.
    #[error("preparing {path}: {detail}")]
    DataDirectory {
        /// The directory.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
    /// The server did not answer in time.
    #[error("mariadbd did not answer on port {port} within {seconds}s: {detail}")]
    NotReady {
        /// Its port.
        port: u16,
        /// How long it was given.
        seconds: u64,
        /// The last client error, or the server's error log.
        detail: String,
    },
    /// A statement failed.
    #[error("SQL failed: {0}")]
    Sql(String),
}

/// A running `mariadbd`. Dropping it kills the server; the data directory stays.
pub struct MariaDbServer {
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl Drop for MariaDbServer {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.start_kill();
        }
    }
}

/// `name` as a quoted SQL identifier: in backticks, a backtick doubled; empty names and NUL
/// are refused.
pub fn identifier(name: &str) -> Result<String, MariaDbError> {
    if name.is_empty() || name.contains('\0') {
        return Err(MariaDbError::Sql(
            "a name must be non-empty and without NUL".into(),
        ));
    }
    Ok(format!("`{}`", name.replace('`', "``")))
}

/// `text` as a quoted SQL string literal: in single quotes, with quotes and backslashes
/// escaped and NUL refused (it cannot be sent through the client).
pub fn literal(text: &str) -> Result<String, MariaDbError> {
    if text.contains('\0') {
        return Err(MariaDbError::Sql("a value contains NUL".into()));
    }
    Ok(format!(
        "'{}'",
        text.replace('\\', "\\\\").replace('\'', "''")
    ))
}

fn spawn_error(program: &str) -> impl FnOnce(std::io::Error) -> MariaDbError + '_ {
    move |source| MariaDbError::Spawn {
        program: program.to_string(),
        source,
    }
}

impl MariaDbServer {
    /// Creates a data directory under `dir` (unless one is there) and starts the server on a
    /// free loopback port, waiting until it answers.
    pub async fn start(dir: &Path) -> Result<Self, MariaDbError> {
        let data = dir.join("data");
        // A temporary directory of its own: two servers bootstrapping at once in the shared
        // /tmp clashed on their temporary tables ("Unknown table 'mysql.tmp_user_sys'").
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|e| MariaDbError::DataDirectory {
            path: tmp.clone(),
            detail: e.to_string(),
        })?;
        if !data.join("mysql").exists() {
            std::fs::create_dir_all(&data).map_err(|e| MariaDbError::DataDirectory {
                path: data.clone(),
                detail: e.to_string(),
            })?;
            let out = Command::new("mariadb-install-db")
                .arg("--no-defaults")
                .arg(format!("--datadir={}", data.display()))
                .arg(format!("--tmpdir={}", tmp.display()))
                .args([
                    "--user=root",
                    "--auth-root-authentication-method=normal",
                    "--skip-test-db",
                ])
                .stdin(Stdio::null())
                .output()
                .await
                .map_err(spawn_error("mariadb-install-db"))?;
            if !out.status.success() {
                return Err(MariaDbError::DataDirectory {
                    path: data,
                    detail: String::from_utf8_lossy(&out.stderr).into_owned(),
                });
            }
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(spawn_error("a free port"))?;
        let mut server = Self {
            dir: dir.to_path_buf(),
            port,
            child: None,
        };
        server.resume().await?;
        Ok(server)
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the server process runs.
    pub fn running(&self) -> bool {
        self.child.is_some()
    }

    /// Kills the server (an outage: connections are refused until [`MariaDbServer::resume`]).
    pub async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }

    /// Starts the server again on the same port and data, waiting until it answers.
    pub async fn resume(&mut self) -> Result<(), MariaDbError> {
        if self.child.is_some() {
            return Ok(());
        }
        let data = self.dir.join("data");
        let child = Command::new(server_program())
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--tmpdir={}", self.dir.join("tmp").display()))
            .arg(format!(
                "--socket={}",
                self.dir.join("mariadbd.sock").display()
            ))
            .arg(format!(
                "--pid-file={}",
                self.dir.join("mariadbd.pid").display()
            ))
            .arg(format!(
                "--log-error={}",
                self.dir.join("error.log").display()
            ))
            .arg(format!("--port={}", self.port))
            .args([
                "--bind-address=127.0.0.1",
                "--user=root",
                "--skip-log-bin",
                "--innodb-buffer-pool-size=16M",
                "--max-connections=200",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(spawn_error("mariadbd"))?;
        self.child = Some(child);
        let seconds = 60;
        let mut last = String::new();
        for _ in 0..(seconds * 10) {
            match self.execute("SELECT 1").await {
                Ok(_) => return Ok(()),
                Err(e) => last = e.to_string(),
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                let log = std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default();
                self.child = None;
                return Err(MariaDbError::NotReady {
                    port: self.port,
                    seconds,
                    detail: format!("mariadbd exited ({status}): {}", tail(&log)),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(MariaDbError::NotReady {
            port: self.port,
            seconds,
            detail: last,
        })
    }

    /// Runs `sql` as root; returns the client's tab-separated output.
    pub async fn execute(&self, sql: &str) -> Result<String, MariaDbError> {
        self.execute_as("root", "", sql).await
    }

    /// Runs `sql` as `user` with `password` over TCP; returns the tab-separated output.
    pub async fn execute_as(
        &self,
        user: &str,
        password: &str,
        sql: &str,
    ) -> Result<String, MariaDbError> {
        let mut child = Command::new("mariadb")
            .arg("--no-defaults")
            .args([
                "--protocol=tcp",
                "--host=127.0.0.1",
                "--batch",
                "--skip-column-names",
            ])
            .arg(format!("--port={}", self.port))
            .arg(format!("--user={user}"))
            // The password travels in the environment, never on the command line.
            .env("MYSQL_PWD", password)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(spawn_error("mariadb"))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(sql.as_bytes())
                .await
                .map_err(|e| MariaDbError::Sql(e.to_string()))?;
        }
        let out = child
            .wait_with_output()
            .await
            .map_err(|e| MariaDbError::Sql(e.to_string()))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(MariaDbError::Sql(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ))
        }
    }
}

/// `mariadbd`: Debian installs it in `/usr/sbin`, which a non-root `PATH` lacks.
fn server_program() -> &'static str {
    const SBIN: &str = "/usr/sbin/mariadbd";
    if Path::new(SBIN).exists() {
        SBIN
    } else {
        "mariadbd"
    }
}

/// The last lines of a log.
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}
