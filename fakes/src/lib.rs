//! barbican-fakes: stateful fakes of the services around the operator that speak the real wire
//! formats (OpenBao, mariadb-operator, External Secrets, OpenBaoCluster, Gateway API, and the
//! Barbican API healthcheck).
//!
//! The crate exists so the workspace has its final shape; each fake arrives with the issue that
//! needs it, talking to the sim through `kube::Client` like any other controller.
