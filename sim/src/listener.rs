//! A listener that can be taken down: while down it is closed, so connections are refused (not
//! merely left unanswered), and the connections it accepted are cut; when it comes back it
//! listens on the same address again. The sim's API server uses it for outages, and the fakes
//! for theirs.
//!
//! Through an outage the port stays bound without listening: a connection is refused as if
//! nothing were there, and no other socket can take the port meanwhile. Closing it outright
//! let another test's listener, or a client's ephemeral port, take it on a busy machine; the
//! re-bind then failed and the outage never ended.

use std::{future::Future, net::SocketAddr, sync::Arc, time::Duration};

use tokio::{
    net::{TcpListener, TcpSocket, TcpStream},
    sync::watch,
};

/// The backlog of a re-opened listener (tokio's own for `TcpListener::bind`).
const BACKLOG: u32 = 1024;

/// How long to wait before trying again to listen on a port something else holds.
pub const REBIND_RETRY: Duration = Duration::from_millis(50);

/// Serves each connection accepted on `listener` with `serve`, following `down`. Returns when
/// `down`'s sender is gone, or with the error of reading the listener's address.
pub async fn serve_with_outages<F, Fut>(
    listener: TcpListener,
    mut down: watch::Receiver<bool>,
    serve: F,
) -> std::io::Result<()>
where
    F: Fn(TcpStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let addr = listener.local_addr()?;
    let mut bound = listener;
    loop {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = bound.accept() => {
                    if let Ok((tcp, _)) = accepted {
                        connections.spawn(serve(tcp));
                    }
                }
                changed = down.wait_for(|d| *d) => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    break;
                }
            }
        }
        drop(bound);
        connections.abort_all();
        let reserved = reserve(addr);
        if down.wait_for(|d| !*d).await.is_err() {
            return Ok(());
        }
        bound = listen_again(addr, reserved.ok()).await;
    }
}

/// The port, bound and not listening: held through an outage.
fn reserve(addr: SocketAddr) -> std::io::Result<TcpSocket> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // The connections just cut may leave the port in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    Ok(socket)
}

/// Listens on `addr` again: on the reserved socket when there is one, else by binding anew,
/// retried until the port is free (a listener that gave up would leave the outage on for good).
pub async fn listen_again(addr: SocketAddr, reserved: Option<TcpSocket>) -> TcpListener {
    if let Some(listener) = reserved.and_then(|socket| socket.listen(BACKLOG).ok()) {
        return listener;
    }
    loop {
        match TcpListener::bind(addr).await {
            Ok(listener) => return listener,
            Err(_) => tokio::time::sleep(REBIND_RETRY).await,
        }
    }
}

/// Serves `router` over HTTP/1 (with upgrades: port-forwarding speaks WebSocket) and HTTP/2 on
/// `listener`, following `down`.
pub async fn serve_router_with_outages(
    listener: TcpListener,
    down: watch::Receiver<bool>,
    router: axum::Router,
) -> std::io::Result<()> {
    serve_router_with_outages_and_tls(listener, down, router, Arc::new(|| None)).await
}

/// What a listener that may serve TLS serves each connection with: `Some` configuration at
/// the moment the connection is accepted is TLS, `None` plain HTTP. (A server whose
/// certificate comes and goes, as the pods behind a Service that starts serving HTTPS.)
pub type TlsAtAccept = Arc<dyn Fn() -> Option<Arc<rustls::ServerConfig>> + Send + Sync>;

/// [`serve_router_with_outages`], each connection over TLS when `tls` says so as it is
/// accepted; a handshake that fails closes the connection.
pub async fn serve_router_with_outages_and_tls(
    listener: TcpListener,
    down: watch::Receiver<bool>,
    router: axum::Router,
    tls: TlsAtAccept,
) -> std::io::Result<()> {
    serve_with_outages(listener, down, move |tcp| {
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let config = tls();
        async move {
            let builder =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
            match config {
                None => {
                    let _ = builder
                        .serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(tcp), service)
                        .await;
                }
                Some(config) => {
                    let Ok(tls) = tokio_rustls::TlsAcceptor::from(config).accept(tcp).await else {
                        return;
                    };
                    let _ = builder
                        .serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                }
            }
        }
    })
    .await
}
