//! The fakes' TLS (a CA minting certificates on demand, a front relaying to a plain upstream)
//! is the sim's: [`barbican_sim::tls`], shared with the kubelet's API server for pods.

pub use barbican_sim::tls::*;
