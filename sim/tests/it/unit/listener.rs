//! Tests of `barbican_sim::listener`.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;

use barbican_sim::listener::*;

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
