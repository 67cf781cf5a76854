//! barbican-fakes: stateful fakes of the services around the operator that speak the real wire
//! formats, talking to the sim through `kube::Client` like any other controller and knowing
//! the third-party APIs, not the operator's internals.
//!
//! - [`openbao`]: a fake OpenBao behind a [`tls`] front with a CA of its own;
//! - [`mariadb`], [`external_secrets`], [`openbao_cluster`]: fake controllers for the
//!   third-party kinds in [`crds`], built on one loop ([`controller`]): conditions after a delay,
//!   outages, finalizers with a slow teardown;
//! - [`gateway_api`]: HTTPRoute status;
//! - [`barbican_api`]: `/healthcheck` for every barbican Service;
//! - [`keystone`]: identity v3 for keystonemiddleware's `authtoken` and a test user;
//! - [`volumes`]: PersistentVolumes for claims where the API server has no provisioner.

pub mod barbican_api;
pub mod cert_manager;
pub mod controller;
pub mod crds;
pub mod external_secrets;
pub mod gateway_api;
pub mod keystone;
pub mod mariadb;
pub mod mariadb_server;
pub mod openbao;
pub mod openbao_cluster;
pub mod tls;
pub mod volumes;
