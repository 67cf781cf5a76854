//! The Barbican controller's steps and the pure builders they use, one module each.

pub mod dsn;
pub mod labels;
pub mod pdb;
pub mod uwsgi;
