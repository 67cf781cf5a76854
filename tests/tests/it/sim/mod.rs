//! The sim's API semantics, checked with the operator's own custom resources: here rather than
//! in the sim's crate because they need the operator, and a dev-dependency of the sim on the
//! operator made every change to the operator recompile the sim's own tests (about 85 CPU
//! seconds at the sim's opt-level).

mod deletes;
mod field_validation;
mod semantics;
