//! barbican-fakes: stateful fakes of the services around the operator that speak the real wire
//! formats, talking to the sim through `kube::Client` like any other controller and knowing
//! the third-party APIs, not the operator's internals.
//!
//! Built so far: [`openbao`], a fake OpenBao behind a [`tls`] front with a CA of its own.

pub mod openbao;
pub mod tls;
