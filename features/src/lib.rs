//! The step library behind `features/*.feature`: the cucumber World that drives the operator on
//! the sim or on a real cluster, with steps in the operator's own vocabulary (conditions,
//! reasons, events).
//!
//! The crate exists so the workspace has its final shape; the World and its steps arrive with
//! the scenario suite.
