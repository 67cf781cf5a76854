//! The Barbican controller's steps and the pure builders they use, one module each.

pub mod credentials;
pub mod dsn;
pub mod labels;
pub mod pdb;
pub mod service;
pub mod uwsgi;
