//! The controllers. So far the frame they run in: [`pipeline`], the table-driven runner, and
//! [`status`], the status skeleton's pure rules.

pub mod pipeline;
pub mod status;
