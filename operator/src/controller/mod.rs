//! The controllers. So far the frame they run in: [`pipeline`], the table-driven runner, and
//! [`status`], the status skeleton's pure rules; and the first of [`barbican`]'s builders.

pub mod barbican;
pub mod pipeline;
pub mod status;
