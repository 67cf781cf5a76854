//! A listener that can be taken down: while down it is closed, so connections are refused (not
//! merely left unanswered), and the connections it accepted are cut; when it comes back it binds
//! the same address again. The sim's API server uses it for outages, and the fakes for theirs.

use std::future::Future;

use tokio::{
    net::{TcpListener, TcpStream},
    sync::watch,
};

/// Serves each connection accepted on `listener` with `serve`, following `down`. Returns when
/// `down`'s sender is gone, or with the error of a failed re-bind.
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
    let mut listener = Some(listener);
    loop {
        let bound = match listener.take() {
            Some(bound) => bound,
            None => {
                if down.wait_for(|d| !*d).await.is_err() {
                    return Ok(());
                }
                TcpListener::bind(addr).await?
            }
        };
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

    #[tokio::test]
    async fn an_outage_refuses_connections_and_the_same_port_comes_back() {
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
        assert!(TcpStream::connect(addr).await.is_ok());
        down.send_replace(true);
        let mut refused = false;
        for _ in 0..100 {
            if TcpStream::connect(addr).await.is_err() {
                refused = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(refused, "connections are refused while down");
        down.send_replace(false);
        let mut back = false;
        for _ in 0..100 {
            if TcpStream::connect(addr).await.is_ok() {
                back = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(back, "the same port is served again");
    }
}
