//! `helm runs:`'s command lines, and the install scenario kept to the README's own commands.

use barbican_features::install_steps::{INSTALL, command_lines, holder_pod, workspace_root};

#[test]
fn command_lines_join_continuations_and_split_quoted_words() {
    let lines = command_lines(
        "# a comment\nhelm install a chart \\\n  --set 'x={a,b}' --set \"y=two words\"\n\nhelm uninstall a\n",
    )
    .unwrap();
    assert_eq!(
        lines,
        vec![
            vec![
                "helm",
                "install",
                "a",
                "chart",
                "--set",
                "x={a,b}",
                "--set",
                "y=two words"
            ],
            vec!["helm", "uninstall", "a"],
        ]
    );
    assert!(command_lines("helm install 'open").is_err());
    assert_eq!(
        command_lines("kubectl create namespace x   # the chart's Roles go there").unwrap(),
        vec![vec!["kubectl", "create", "namespace", "x"]]
    );
    assert_eq!(
        command_lines("helm x ''").unwrap(),
        vec![vec!["helm", "x", ""]]
    );
}

#[test]
fn the_holder_pod_is_the_identity_before_the_process_id() {
    assert_eq!(
        holder_pod("barbican-operator-7d9f-abcde_0000002a"),
        "barbican-operator-7d9f-abcde"
    );
    assert_eq!(holder_pod("no-process-id"), "no-process-id");
}

/// The `helm …` lines of the first fenced block after `heading` in the README.
fn readme_helm_lines(heading: &str) -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let section = &readme[readme.find(heading).expect("the README's install section")..];
    let block = section
        .split("```sh\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    command_lines(block)
        .unwrap()
        .into_iter()
        .filter(|l| l.first().is_some_and(|w| w == "helm"))
        .collect()
}

#[test]
fn the_installed_feature_runs_the_readmes_helm_install() {
    let feature =
        std::fs::read_to_string(workspace_root().join("features/installed.feature")).unwrap();
    let docstring = feature
        .split("\"\"\"")
        .nth(1)
        .expect("the Background's helm docstring");
    assert_eq!(
        command_lines(docstring).unwrap(),
        readme_helm_lines("### Install, upgrade, uninstall (Helm)"),
        "installed.feature installs with the README's command: change both together"
    );
}

#[test]
fn the_demo_installs_with_the_readmes_command() {
    assert_eq!(
        command_lines(INSTALL).unwrap(),
        readme_helm_lines("### Install, upgrade, uninstall (Helm)")
    );
}
