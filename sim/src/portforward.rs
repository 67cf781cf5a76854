//! `pods/<name>/portforward?ports=<p>[,<p>…]`, as kube-apiserver serves it over WebSocket in
//! the channel framing kube clients speak (`v4.channel.k8s.io`): for the i-th port asked for,
//! channel 2i carries its data and channel 2i+1 its errors. Each channel opens with a frame
//! holding the port number (two bytes, little-endian); every later frame is the channel byte
//! followed by the payload. A pod's port is reached at the address the service registry holds
//! for it ([`crate::services::ServiceRegistry::register_pod`]); without one, or when nothing
//! answers there, the error channel says so in the kubelet's words and the data channel closes.

use std::net::SocketAddr;

use axum::extract::ws::{Message, WebSocket};
use futures::{SinkExt, StreamExt, channel::mpsc};
use hyper::body::Bytes;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::errors::ApiError;

/// The subprotocols answered, newest first as kube-apiserver prefers them.
pub const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

/// The ports of a `ports=…` query (repeated or comma-separated), each 1–65535.
pub fn ports(query: Option<&str>) -> Result<Vec<u16>, ApiError> {
    let mut ports = Vec::new();
    for pair in query.unwrap_or_default().split('&') {
        let Some(("ports", value)) = pair.split_once('=') else {
            continue;
        };
        let value = value.replace("%2C", ",").replace("%2c", ",");
        for port in value.split(',').filter(|p| !p.is_empty()) {
            match port.parse::<u16>() {
                Ok(port) if port > 0 => ports.push(port),
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "invalid port {port:?}: ports must be 1-65535"
                    )));
                }
            }
        }
    }
    if ports.is_empty() {
        return Err(ApiError::bad_request("at least 1 port must be specified"));
    }
    Ok(ports)
}

fn frame(channel: u8, payload: &[u8]) -> Message {
    let mut bytes = Vec::with_capacity(payload.len() + 1);
    bytes.push(channel);
    bytes.extend_from_slice(payload);
    Message::Binary(Bytes::from(bytes))
}

/// Serves one port-forward session on `socket` for `pod`: `ports[i]` goes to `backends[i]`.
pub async fn serve(
    socket: WebSocket,
    pod: String,
    ports: Vec<u16>,
    backends: Vec<Option<SocketAddr>>,
) {
    let (mut sink, mut incoming) = socket.split();
    let (out, mut outgoing) = mpsc::unbounded::<Message>();
    let mut writers = Vec::new();
    for (i, (port, backend)) in ports.iter().zip(backends).enumerate() {
        let (data, error) = (2 * i as u8, 2 * i as u8 + 1);
        let _ = out.unbounded_send(frame(data, &port.to_le_bytes()));
        let _ = out.unbounded_send(frame(error, &port.to_le_bytes()));
        let connected = match backend {
            Some(addr) => TcpStream::connect(addr).await.map_err(|e| e.to_string()),
            None => Err("connection refused".to_string()),
        };
        match connected {
            Ok(tcp) => {
                let (mut read, write) = tcp.into_split();
                writers.push(Some(write));
                let out = out.clone();
                tokio::spawn(async move {
                    let mut buffer = vec![0u8; 16 * 1024];
                    while let Ok(n) = read.read(&mut buffer).await {
                        if n == 0 || out.unbounded_send(frame(data, &buffer[..n])).is_err() {
                            break;
                        }
                    }
                    let _ = out.unbounded_send(Message::Close(None));
                });
            }
            Err(cause) => {
                writers.push(None);
                let message = format!(
                    "error forwarding port {port} to pod {pod}, uid : failed to connect to localhost:{port}: {cause}"
                );
                let _ = out.unbounded_send(frame(error, message.as_bytes()));
                let _ = out.unbounded_send(Message::Close(None));
            }
        }
    }
    drop(out);
    let sending = async move {
        while let Some(message) = outgoing.next().await {
            let closing = matches!(message, Message::Close(_));
            if sink.send(message).await.is_err() || closing {
                break;
            }
        }
    };
    let receiving = async move {
        while let Some(Ok(message)) = incoming.next().await {
            match message {
                Message::Binary(bytes) if bytes.len() > 1 => {
                    let index = usize::from(bytes[0] / 2);
                    if let Some(Some(writer)) = writers.get_mut(index)
                        && writer.write_all(&bytes[1..]).await.is_err()
                    {
                        writers[index] = None;
                    }
                }
                Message::Close(_) => break,
                _ => {}
            }
        }
    };
    tokio::select! {
        () = sending => {},
        () = receiving => {},
    }
}
