//! Name resolution for the operator's in-cluster HTTP clients (`<svc>.<ns>.svc:<port>`, OpenBao
//! instance URLs).
//!
//! In a cluster, DNS answers. In the sim those names belong to loopback listeners, so the
//! clients take a resolver: it may substitute the address to connect to, never the name TLS
//! verifies, so a certificate must still be valid for the in-cluster name.

use std::net::SocketAddr;

/// Maps a host and port to the address to connect to.
pub trait Resolve: Send + Sync + 'static {
    /// The address for `host:port`, or `None` to use the system resolver.
    fn resolve(&self, host: &str, port: u16) -> Option<SocketAddr>;
}

/// The system resolver: DNS decides.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, _host: &str, _port: u16) -> Option<SocketAddr> {
        None
    }
}

/// A line of an overrides file that does not read as `host:port address:port`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path} line {line}: {problem} (each line is `host:port address:port`, `#` starts a comment)"
)]
pub struct OverrideError {
    /// The file.
    pub path: String,
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub problem: String,
}

/// Reads an overrides file: `host:port address:port` per line, blank lines and `#` comments
/// ignored.
pub fn parse_overrides(
    path: &str,
    text: &str,
) -> Result<std::collections::BTreeMap<(String, u16), SocketAddr>, OverrideError> {
    let mut out = std::collections::BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let error = |problem: String| OverrideError {
            path: path.to_string(),
            line: i.saturating_add(1),
            problem,
        };
        let mut fields = line.split_whitespace();
        let (Some(name), Some(address), None) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(error("expected two fields".into()));
        };
        let (host, port) = name
            .rsplit_once(':')
            .and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?)))
            .filter(|(h, _)| !h.is_empty())
            .ok_or_else(|| error(format!("{name:?} is not host:port")))?;
        let address: SocketAddr = address
            .parse()
            .map_err(|_| error(format!("{address:?} is not an address:port")))?;
        out.insert((host.to_string(), port), address);
    }
    Ok(out)
}

/// Fixed addresses for some `host:port`s, read from a file that may change while the operator
/// runs (`--resolve-overrides`): for running the operator outside the cluster it manages, where
/// in-cluster names do not resolve (development against port-forwards, the benchmark against
/// the sim). Anything the file does not name goes to DNS. A file that does not read keeps the
/// last good contents, and says why once per change.
#[derive(Debug)]
pub struct OverridesFile {
    path: std::path::PathBuf,
    state: std::sync::Mutex<OverridesState>,
}

#[derive(Debug, Default)]
struct OverridesState {
    /// The modification time and length the table was read at.
    stamp: Option<(std::time::SystemTime, u64)>,
    table: std::collections::BTreeMap<(String, u16), SocketAddr>,
}

impl OverridesFile {
    /// Reads `path` now; an unreadable or malformed file is an error at start-up.
    pub fn open(path: impl Into<std::path::PathBuf>) -> Result<Self, String> {
        let file = Self {
            path: path.into(),
            state: Default::default(),
        };
        file.refresh()?;
        Ok(file)
    }

    fn refresh(&self) -> Result<(), String> {
        let metadata = std::fs::metadata(&self.path)
            .map_err(|e| format!("reading {}: {e}", self.path.display()))?;
        let stamp = (
            metadata.modified().unwrap_or(std::time::UNIX_EPOCH),
            metadata.len(),
        );
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.stamp == Some(stamp) {
            return Ok(());
        }
        state.stamp = Some(stamp);
        let text = std::fs::read_to_string(&self.path)
            .map_err(|e| format!("reading {}: {e}", self.path.display()))?;
        state.table =
            parse_overrides(&self.path.display().to_string(), &text).map_err(|e| e.to_string())?;
        Ok(())
    }
}

impl Resolve for OverridesFile {
    fn resolve(&self, host: &str, port: u16) -> Option<SocketAddr> {
        if let Err(error) = self.refresh() {
            tracing::warn!(%error, "keeping the previous resolve overrides");
        }
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.table.get(&(host.to_string(), port)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_read_host_port_to_address_and_name_a_bad_line() {
        let table = parse_overrides(
            "f",
            "# the sim\nbarbican.openstack.svc:9311 127.0.0.1:40001\n\n vault.example.com:8200   [::1]:40002 # brownfield\n",
        )
        .unwrap();
        assert_eq!(
            table[&("barbican.openstack.svc".to_string(), 9311)],
            "127.0.0.1:40001".parse().unwrap()
        );
        assert_eq!(
            table[&("vault.example.com".to_string(), 8200)],
            "[::1]:40002".parse().unwrap()
        );
        let error = parse_overrides("f", "ok.svc:1 127.0.0.1:2\nbad.svc:1 127.0.0.1:3 extra\n")
            .unwrap_err();
        assert_eq!(
            (error.line, error.problem.as_str()),
            (2, "expected two fields")
        );
        let error = parse_overrides("f", "bad.svc 127.0.0.1:3").unwrap_err();
        assert_eq!(error.problem, "\"bad.svc\" is not host:port");
        let error = parse_overrides("f", "a.svc:x 127.0.0.1:3").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("f line 1: \"a.svc:x\" is not host:port")
        );
        assert!(parse_overrides("f", "a.svc:1 localhost:3").is_err());
    }

    #[test]
    fn an_overrides_file_is_reread_when_it_changes_and_kept_when_it_breaks() {
        let scratch = tempfile::tempdir().unwrap();
        let path = scratch.path().join("overrides");
        std::fs::write(&path, "a.svc:1 127.0.0.1:10\n").unwrap();
        let file = OverridesFile::open(&path).unwrap();
        assert_eq!(
            file.resolve("a.svc", 1),
            Some("127.0.0.1:10".parse().unwrap())
        );
        assert_eq!(file.resolve("b.svc", 1), None, "DNS decides the rest");
        std::fs::write(&path, "a.svc:1 127.0.0.1:10\nb.svc:1 127.0.0.1:11\n").unwrap();
        assert_eq!(
            file.resolve("b.svc", 1),
            Some("127.0.0.1:11".parse().unwrap())
        );
        std::fs::write(&path, "broken line with three fields\n").unwrap();
        assert_eq!(
            file.resolve("b.svc", 1),
            Some("127.0.0.1:11".parse().unwrap()),
            "the last good table stays"
        );
        std::fs::remove_file(&path).unwrap();
        assert!(OverridesFile::open(&path).is_err());
    }
}
