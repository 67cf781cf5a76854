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
