//! The integration tests of this crate, linked into one binary (one link instead of one per
//! file); each module is one former test file.

mod admission_corpus;
mod admission_on_sim;
mod chart;
mod child_ownership;
mod ci_scripts;
mod clusters_registry;
mod concurrency;
mod containment;
mod docs_commands;
mod docs_links;
mod examples;
mod gateway_probe;
mod leader_election;
mod openbao_client;
mod oslo_grammar;
mod port_forward;
mod properties;
mod schema_constraints;
mod seams;
mod shared_watches;
mod sim;
mod steady_state;
mod watch_scope;
