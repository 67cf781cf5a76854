//! The step library behind `features/*.feature`: the cucumber World that drives the operator on
//! the simulated cluster, with steps in the operator's own vocabulary (conditions, reasons,
//! events). [`sim_env`] starts the sim, its fakes and the operator in-process on the virtual
//! clock; [`world`] holds the steps; [`seams`] hands the operator the sim's clock and names.

pub mod seams;
pub mod sim_env;
pub mod world;

pub use world::BarbicanWorld;
