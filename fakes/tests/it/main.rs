//! The integration tests of this crate, linked into one binary (one link instead of one per
//! file); each module is one former test file.

mod cert_manager;
mod controllers;
mod keystone;
mod mariadb_real;
mod openbao;
