//! The database connection string barbican reads from `OS_DATABASE__CONNECTION`, built as the
//! reference builds it: `mysql+pymysql://<user>:<password>@<host>:<port>/<database>?<query>`,
//! userinfo escaped as Go's `url.UserPassword` escapes it, query keys sorted, `charset=utf8`
//! always, and the TLS parameters of the mode asked for.
//!
//! The result holds the password: it goes into the `{name}-db-connection` Secret and nowhere
//! else (never a log, an event or a condition).

use crate::api::database::{DatabaseSpec, DatabaseTlsMode};

/// The default MariaDB port.
pub const DEFAULT_PORT: i32 = 3306;

/// Where the TLS material is mounted in the API pods.
pub const TLS_DIR: &str = "/etc/barbican-db-tls";

/// `<host>:<port>`: the MariaDB cluster's Service (`<clusterRef>.<namespace>.svc`) or the
/// brownfield host, with port 3306 unless set.
pub fn address(spec: &DatabaseSpec, namespace: &str) -> String {
    let host = match (&spec.cluster_ref, &spec.host) {
        (Some(cluster), _) => format!("{}.{namespace}.svc", cluster.name),
        (None, Some(host)) => host.clone(),
        (None, None) => String::new(),
    };
    format!("{host}:{}", spec.port.unwrap_or(DEFAULT_PORT))
}

/// Escapes userinfo as Go's `url.UserPassword` does: unreserved characters and the sub-delims
/// `$ & + , ; =` stay, everything else (`@ / ? :` included) is percent-encoded.
fn escape_userinfo(text: &str) -> String {
    escape(text, |b| {
        b.is_ascii_alphanumeric() || b"-_.~$&+,;=".contains(&b)
    })
}

/// Escapes a query component as Go's `url.QueryEscape` does (space becomes `+`).
fn escape_query(text: &str) -> String {
    escape(text, |b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b)).replace("%20", "+")
}

fn escape(text: &str, keep: impl Fn(u8) -> bool) -> String {
    text.bytes()
        .map(|b| {
            if keep(b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The query parameters of a TLS mode (`None` is `require`, as an empty mode is).
fn tls_parameters(mode: Option<DatabaseTlsMode>) -> Vec<(&'static str, String)> {
    let mode = mode.unwrap_or(DatabaseTlsMode::Require);
    if mode == DatabaseTlsMode::Disabled {
        return vec![];
    }
    let mut parameters = vec![
        ("ssl_ca", format!("{TLS_DIR}/ca.crt")),
        ("ssl_cert", format!("{TLS_DIR}/tls.crt")),
        ("ssl_key", format!("{TLS_DIR}/tls.key")),
    ];
    if matches!(
        mode,
        DatabaseTlsMode::VerifyCa | DatabaseTlsMode::VerifyFull
    ) {
        parameters.push(("ssl_verify_cert", "true".into()));
    }
    if mode == DatabaseTlsMode::VerifyFull {
        parameters.push(("ssl_verify_identity", "true".into()));
    }
    parameters
}

/// The DSN. `tls` is `None` without a TLS block, `Some(mode)` with one.
pub fn dsn(
    user: &str,
    password: &str,
    address: &str,
    database: &str,
    tls: Option<Option<DatabaseTlsMode>>,
) -> String {
    let mut query = vec![("charset", "utf8".to_string())];
    if let Some(mode) = tls {
        query.extend(tls_parameters(mode));
    }
    query.sort();
    let query: Vec<String> = query
        .iter()
        .map(|(k, v)| format!("{}={}", escape_query(k), escape_query(v)))
        .collect();
    format!(
        "mysql+pymysql://{}:{}@{address}/{database}?{}",
        escape_userinfo(user),
        escape_userinfo(password),
        query.join("&").replace("%2F", "/")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::refs::{ClusterRefSpec, SecretRefSpec};

    fn spec(cluster: Option<&str>, host: Option<&str>, port: Option<i32>) -> DatabaseSpec {
        DatabaseSpec {
            cluster_ref: cluster.map(|name| ClusterRefSpec { name: name.into() }),
            host: host.map(String::from),
            port,
            database: "barbican".into(),
            secret_ref: SecretRefSpec::default(),
            ..DatabaseSpec::default()
        }
    }

    #[test]
    fn addresses_follow_the_cluster_or_the_host() {
        assert_eq!(
            address(&spec(Some("mariadb"), None, None), "openstack"),
            "mariadb.openstack.svc:3306"
        );
        assert_eq!(
            address(&spec(None, Some("db.example.com"), Some(3307)), "openstack"),
            "db.example.com:3307"
        );
    }

    #[test]
    fn the_plain_dsn_carries_only_the_charset() {
        assert_eq!(
            dsn(
                "barbican",
                "s3cret",
                "mariadb.openstack.svc:3306",
                "barbican",
                None
            ),
            "mysql+pymysql://barbican:s3cret@mariadb.openstack.svc:3306/barbican?charset=utf8"
        );
    }

    #[test]
    fn userinfo_is_escaped_as_go_escapes_it() {
        let got = dsn("bar:bi@can", "p@ss/w:rd?&$+,;= #%!", "h:3306", "db", None);
        assert!(
            got.starts_with(
                "mysql+pymysql://bar%3Abi%40can:p%40ss%2Fw%3Ard%3F&$+,;=%20%23%25%21@h:3306/db?"
            ),
            "{got}"
        );
    }

    #[test]
    fn tls_modes_add_sorted_parameters_with_plain_slashes() {
        let query = |mode| {
            dsn("u", "p", "h:1", "d", Some(mode))
                .split_once('?')
                .unwrap()
                .1
                .to_string()
        };
        let paths = "ssl_ca=/etc/barbican-db-tls/ca.crt&ssl_cert=/etc/barbican-db-tls/tls.crt&ssl_key=/etc/barbican-db-tls/tls.key";
        assert_eq!(
            query(None),
            format!("charset=utf8&{paths}"),
            "an empty mode is require"
        );
        assert_eq!(
            query(Some(DatabaseTlsMode::Prefer)),
            format!("charset=utf8&{paths}")
        );
        assert_eq!(
            query(Some(DatabaseTlsMode::VerifyCa)),
            format!("charset=utf8&{paths}&ssl_verify_cert=true")
        );
        assert_eq!(
            query(Some(DatabaseTlsMode::VerifyFull)),
            format!("charset=utf8&{paths}&ssl_verify_cert=true&ssl_verify_identity=true")
        );
        assert_eq!(query(Some(DatabaseTlsMode::Disabled)), "charset=utf8");
    }
}
