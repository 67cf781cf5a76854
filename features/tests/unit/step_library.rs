//! The step library's README against the steps it documents.

/// The text of every source file under `dir`, so a step module added later is read too.
fn sources(dir: &std::path::Path) -> String {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .map(|path| {
            if path.is_dir() {
                sources(&path)
            } else if path.extension().is_some_and(|e| e == "rs") {
                std::fs::read_to_string(&path).unwrap()
            } else {
                String::new()
            }
        })
        .collect()
}

/// Every step the World defines, in any module of the step library, is listed in its README.
#[test]
fn every_step_is_documented() {
    let steps = sources(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let readme = include_str!("../../README.md");
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

/// A cucumber expression as a regex over a step's text.
fn expression_regex(expression: &str) -> regex::Regex {
    let mut pattern = String::from("^");
    let mut rest = expression;
    while !rest.is_empty() {
        let (token, regex) = [
            ("{string}", r#""[^"]*""#),
            ("{int}", r"-?\d+"),
            ("{word}", r"[^\s]+"),
            ("(s)", "(?:s)?"),
            ("(es)", "(?:es)?"),
        ]
        .into_iter()
        .find(|(t, _)| rest.starts_with(t))
        .unwrap_or(("", ""));
        if token.is_empty() {
            let c = rest.chars().next().expect("not empty");
            pattern.push_str(&regex::escape(&c.to_string()));
            rest = &rest[c.len_utf8()..];
        } else {
            pattern.push_str(regex);
            rest = &rest[token.len()..];
        }
    }
    pattern.push('$');
    regex::Regex::new(&pattern).expect("a valid pattern")
}

/// Every step the README documents is used by at least one scenario, and its examples
/// block shows one use of each.
#[test]
fn every_documented_step_is_used_and_has_an_example() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // The steps of a piece of gherkin, without their keywords.
    let step_lines = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter_map(|l| {
                ["Given ", "When ", "Then ", "And ", "But "]
                    .iter()
                    .find_map(|k| l.strip_prefix(k))
                    .map(String::from)
            })
            .collect()
    };
    let steps: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "feature"))
        .flat_map(|p| step_lines(&std::fs::read_to_string(p).unwrap()))
        .collect();
    let readme = include_str!("../../README.md");
    let documented: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| l[3..].split_once("` |").map(|(step, _)| step))
        .filter(|s| !s.starts_with("cargo ") && !s.contains("FEATURES_"))
        .collect();
    assert!(
        documented.len() > 40,
        "only {} documented steps",
        documented.len()
    );
    let unused: Vec<&&str> = documented
        .iter()
        .filter(|d| {
            let regex = expression_regex(d);
            !steps.iter().any(|s| regex.is_match(s))
        })
        .collect();
    assert!(
        unused.is_empty(),
        "documented steps no scenario uses: {unused:#?}"
    );
    // The gherkin blocks: the worked patterns first, the list of examples last.
    let blocks: Vec<&str> = readme
        .split("```gherkin\n")
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .collect();
    let (examples_block, patterns) = blocks.split_last().expect("the README's examples block");
    let examples: Vec<&str> = examples_block
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, step)| step))
        .collect();
    // Every step of the worked patterns is a documented step, so they run when pasted.
    let undocumented: Vec<String> = patterns
        .iter()
        .flat_map(|b| step_lines(b))
        .filter(|line| {
            !documented
                .iter()
                .any(|d| expression_regex(d).is_match(line))
        })
        .collect();
    assert!(
        patterns.len() >= 2 && undocumented.is_empty(),
        "{} worked pattern(s); steps there that are not documented: {undocumented:#?}",
        patterns.len()
    );
    let without: Vec<&&str> = documented
        .iter()
        .filter(|d| {
            let regex = expression_regex(d);
            !examples.iter().any(|e| regex.is_match(e))
        })
        .collect();
    assert!(
        without.is_empty(),
        "documented steps without an example: {without:#?}"
    );
}
