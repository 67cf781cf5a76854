//! A listener that can be taken down: while down it is closed, so connections are refused (not
//! merely left unanswered), and the connections it accepted are cut; when it comes back it
//! listens on the same address again. The sim's API server uses it for outages, and the fakes
//! for theirs.
//!
//! Through an outage the port stays bound without listening: a connection is refused as if
//! nothing were there, and no other socket can take the port meanwhile. Closing it outright
//! let another test's listener, or a client's ephemeral port, take it on a busy machine; the
//! re-bind then failed and the outage never ended.

use std::{future::Future, net::SocketAddr, time::Duration};

use tokio::{
    net::{TcpListener, TcpSocket, TcpStream},
    sync::watch,
};

/// The backlog of a re-opened listener (tokio's own for `TcpListener::bind`).
const BACKLOG: u32 = 1024;

/// How long to wait before trying again to listen on a port something else holds.
const REBIND_RETRY: Duration = Duration::from_millis(50);

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
async fn listen_again(addr: SocketAddr, reserved: Option<TcpSocket>) -> TcpListener {
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
    serve_with_outages(listener, down, move |tcp| {
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        async move {
            let _ =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(tcp), service)
                    .await;
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    /// A listener that greets each connection, on a free loopback port, and its switch.
    async fn greeter() -> (SocketAddr, watch::Sender<bool>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (down, watching) = watch::channel(false);
        tokio::spawn(serve_with_outages(
            listener,
            watching,
            |mut tcp| async move {
                let _ = tcp.write_all(b"hello").await;
            },
        ));
        (addr, down)
    }

    /// Connects to `addr` until `want` says the outcome is the one awaited (a second at most).
    async fn until(addr: SocketAddr, want: impl Fn(bool) -> bool) -> bool {
        for _ in 0..100 {
            if want(TcpStream::connect(addr).await.is_ok()) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }

    #[tokio::test]
    async fn an_outage_refuses_connections_and_the_same_port_comes_back() {
        let (addr, down) = greeter().await;
        assert!(TcpStream::connect(addr).await.is_ok());
        down.send_replace(true);
        assert!(
            until(addr, |ok| !ok).await,
            "connections are refused while down"
        );
        down.send_replace(false);
        assert!(until(addr, |ok| ok).await, "the same port is served again");
    }

    #[tokio::test]
    async fn no_other_socket_takes_the_port_during_an_outage() {
        let (addr, down) = greeter().await;
        down.send_replace(true);
        assert!(until(addr, |ok| !ok).await, "refused while down");
        // A socket that asks for the port while it is down does not get it: on a busy machine
        // the port came back as another connection's ephemeral source port (bound without
        // SO_REUSEADDR, as this one is), and the outage then never ended.
        let thief = TcpSocket::new_v4().unwrap();
        assert!(
            thief.bind(addr).is_err(),
            "the port is held through the outage"
        );
        drop(thief);
        down.send_replace(false);
        assert!(until(addr, |ok| ok).await, "served again after the outage");
        // And a second outage works the same way.
        down.send_replace(true);
        assert!(
            until(addr, |ok| !ok).await,
            "refused during a second outage"
        );
        down.send_replace(false);
        assert!(until(addr, |ok| ok).await, "served again after the second");
    }

    #[tokio::test]
    async fn a_port_taken_before_the_outage_ends_is_listened_on_once_it_is_free() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        let held = TcpListener::bind(addr).await.unwrap();
        let addr = held.local_addr().unwrap();
        // No reserved socket (as when reserving failed): the re-bind waits for the port.
        let again = tokio::spawn(listen_again(addr, None));
        tokio::time::sleep(REBIND_RETRY * 3).await;
        assert!(!again.is_finished(), "waits while the port is held");
        drop(held);
        let listener = tokio::time::timeout(Duration::from_secs(5), again)
            .await
            .expect("listens once the port is free")
            .unwrap();
        assert_eq!(listener.local_addr().unwrap(), addr);
    }
}
