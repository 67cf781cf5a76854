//! The step library behind `features/*.feature`: the cucumber World that drives the operator on
//! the simulated cluster, with steps in the operator's own vocabulary (conditions, reasons,
//! events). [`sim_env`] starts the sim, its fakes and the operator in-process on the virtual
//! clock; [`world`] holds the steps, [`store_steps`] those about secret stores and OpenBao; [`cluster_steps`] those about target
//! clusters; [`seams`] hands the operator the sim's clock and names.

pub mod admission;
pub mod api_differential;
pub mod backend;
pub mod barbican_api_steps;
pub mod chart_identity;
pub mod check_steps;
pub mod cluster_steps;
pub mod control_plane;
pub mod control_steps;
pub mod dump_steps;
pub mod edits;
pub mod examples;
mod http;
pub mod install_steps;
pub mod keystone_steps;
pub mod log_capture;
pub mod neighbours;
pub mod pod_steps;
pub mod report;
pub mod rng;
pub mod runner;
pub mod seams;
pub mod sim_env;
pub mod soak;
pub mod store_steps;
pub mod tls_steps;
pub mod world;

pub use world::BarbicanWorld;
