//! The step library behind `features/*.feature`: the cucumber World that drives the operator on
//! the simulated cluster, with steps in the operator's own vocabulary (conditions, reasons,
//! events). [`sim_env`] starts the sim, its fakes and the operator in-process on the virtual
//! clock; [`world`] holds the steps, [`store_steps`] those about secret stores and OpenBao; [`cluster_steps`] those about target
//! clusters; [`seams`] hands the operator the sim's clock and names.

pub mod cluster_steps;
pub mod log_capture;
pub mod report;
pub mod runner;
pub mod seams;
pub mod sim_env;
pub mod store_steps;
pub mod world;

pub use world::BarbicanWorld;

#[cfg(test)]
mod tests {
    /// Every step the World defines is listed in the step library's README.
    #[test]
    fn every_step_is_documented() {
        let steps = [
            include_str!("world.rs"),
            include_str!("store_steps.rs"),
            include_str!("cluster_steps.rs"),
        ]
        .concat();
        let readme = include_str!("../README.md");
        let mut missing = vec![];
        let mut found = 0;
        for prefix in ["#[given(", "#[when(", "#[then("] {
            for (at, _) in steps.match_indices(prefix) {
                let rest = &steps[at + prefix.len()..];
                let attribute = &rest[..rest.find(")]").expect("attributes close")];
                let open = attribute.find('"').expect("a quoted step");
                let close = attribute.rfind('"').expect("a quoted step");
                let text = &attribute[open + 1..close];
                found += 1;
                if !readme.contains(&format!("`{text}`")) {
                    missing.push(text.to_string());
                }
            }
        }
        assert!(found > 20, "only {found} steps found");
        assert!(missing.is_empty(), "undocumented steps: {missing:#?}");
    }
}
