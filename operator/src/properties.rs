//! Properties of the admission functions and the renderer, stated once and checked twice: by
//! proptest in the normal suite (`tests/tests/it/properties.rs`, generated inputs near the
//! examples) and by the cargo-fuzz targets in `fuzz/` (arbitrary bytes). Each returns the
//! violated property as an error; none may panic. Pure functions, no I/O: they live here so
//! the fuzz targets need nothing but this crate, behind its `properties` feature so the
//! operator itself is built without them.

use crate::{
    admission::{
        lookups::KnownState,
        review::{Endpoint, answer, decode},
    },
    api::Barbican,
    render::{self, BARBICAN_CONF, Inputs, PASTE_INI},
};
use serde_json::{Value, json};

/// Whatever the body, every endpoint answers with an AdmissionReview carrying a response: the
/// request's uid when the body is a request, a message whenever it refuses.
pub fn every_body_is_answered(body: &[u8]) -> Result<(), String> {
    let request = decode(body).ok();
    for endpoint in Endpoint::ALL {
        let review = answer(endpoint, body, &KnownState::default());
        let response = review
            .response
            .ok_or_else(|| format!("{endpoint:?} answered without a response"))?;
        if let Some(request) = &request
            && response.uid != request.uid
        {
            return Err(format!(
                "{endpoint:?} answered uid {:?} to request {:?}",
                response.uid, request.uid
            ));
        }
        if !response.allowed && response.result.message.is_empty() {
            return Err(format!("{endpoint:?} refused without saying why"));
        }
    }
    Ok(())
}

/// The AdmissionReview a CREATE of `object` arrives in.
pub fn create_review(object: &Value) -> Vec<u8> {
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "fuzz", "operation": "CREATE", "userInfo": {},
            "kind": {"group": "barbican.openstack.c5c3.io", "version": "v1alpha1", "kind": "Barbican"},
            "resource": {"group": "barbican.openstack.c5c3.io", "version": "v1alpha1", "resource": "barbicans"},
            "namespace": object["metadata"]["namespace"].as_str().unwrap_or("openstack"),
            "name": object["metadata"]["name"].as_str().unwrap_or("barbican"),
            "object": object,
        }
    })
    .to_string()
    .into_bytes()
}

/// What admission makes of a Barbican `object` created as is: the defaulted object when both
/// webhooks admit it, `None` when either refuses.
pub fn admitted(object: &Value) -> Result<Option<Value>, String> {
    let mutated = answer(
        Endpoint::MutateBarbican,
        &create_review(object),
        &KnownState::default(),
    );
    let response = mutated
        .response
        .ok_or("the mutating webhook gave no response")?;
    if !response.allowed {
        return Ok(None);
    }
    let mut defaulted = object.clone();
    if let Some(patch) = &response.patch {
        let patch: json_patch::Patch =
            serde_json::from_slice(patch).map_err(|e| format!("the patch does not parse: {e}"))?;
        json_patch::patch(&mut defaulted, &patch)
            .map_err(|e| format!("the defaulting patch does not apply: {e}"))?;
    }
    let validated = answer(
        Endpoint::ValidateBarbican,
        &create_review(&defaulted),
        &KnownState::default(),
    );
    let response = validated
        .response
        .ok_or("the validating webhook gave no response")?;
    Ok(response.allowed.then_some(defaulted))
}

/// A Barbican both webhooks admit renders, or the renderer refuses it naming a `spec.` field
/// (the operator then reports a config error); what it renders is INI that reads back as
/// written (every line a section, an option, a comment or blank, none a continuation), and
/// every `spec.extraConfig` option is in its section with its value.
pub fn admitted_barbicans_render_faithfully(object: &Value) -> Result<(), String> {
    let Some(admitted) = admitted(object)? else {
        return Ok(());
    };
    let barbican: Barbican = serde_json::from_value(admitted)
        .map_err(|e| format!("an admitted object does not read as a Barbican: {e}"))?;
    let inputs = Inputs {
        name: "barbican".into(),
        namespace: "openstack".into(),
        ..Inputs::default()
    };
    let rendered = match render::render(&barbican.spec, &inputs) {
        Ok(rendered) => rendered,
        Err(refusal) if refusal.to_string().starts_with("spec.") => return Ok(()),
        Err(refusal) => return Err(format!("a refusal that names no spec field: {refusal}")),
    };
    for file in [BARBICAN_CONF, PASTE_INI] {
        let text = rendered
            .files
            .get(file)
            .ok_or_else(|| format!("{file} is missing"))?;
        reads_back(file, text)?;
    }
    let conf = &rendered.files[BARBICAN_CONF];
    let read =
        oslo_reads(conf).map_err(|e| format!("oslo.config cannot read {BARBICAN_CONF}: {e}"))?;
    for (section, options) in barbican.spec.extra_config.iter().flatten() {
        for (key, value) in options {
            let exact = |(s, k, v): &Assignment| s == section && k == key && v == value;
            if !has_option(conf, section, key, value) || !read.iter().any(exact) {
                return Err(format!(
                    "spec.extraConfig[{section}][{key}] = {value:?} is not in {BARBICAN_CONF}"
                ));
            }
        }
    }
    Ok(())
}

/// Every line of `text` is what oslo.config reads as itself: blank, a comment, `[section]`,
/// or `key = value` with nothing starting a continuation.
fn reads_back(file: &str, text: &str) -> Result<(), String> {
    for (n, line) in text.lines().enumerate() {
        let fine = line.is_empty()
            || line.starts_with('#')
            || line.starts_with(';')
            || (line.starts_with('[') && line.ends_with(']'))
            || line
                .split_once(" = ")
                .is_some_and(|(k, _)| !k.is_empty() && !k.starts_with(char::is_whitespace));
        if !fine || line.starts_with(char::is_whitespace) {
            return Err(format!("{file} line {}: {line:?}", n.saturating_add(1)));
        }
    }
    if text.contains('\r') {
        return Err(format!("{file} holds a carriage return"));
    }
    Ok(())
}

/// Whether `[section]` of the INI `text` has `key = value`.
fn has_option(text: &str, section: &str, key: &str, value: &str) -> bool {
    let mut current = "";
    let wanted = if value.is_empty() {
        format!("{key} =")
    } else {
        format!("{key} = {value}")
    };
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name;
        } else if current == section && line.trim_end() == wanted.trim_end() {
            return true;
        }
    }
    false
}

/// One assignment as oslo.config reads it: section, option, value.
pub type Assignment = (String, String, String);

/// What oslo.config's `ConfigParser` reads from `text`, in order, or its parse error: a model
/// of `oslo_config.iniparser.BaseParser.parse` over `open(path).readlines()`, line for line
/// (universal newlines; `rstrip`, `strip` and `lstrip` by Python's `str.isspace`; a key split
/// at the first `=` or `:`; matching quotes around a value removed; continuation lines
/// joined with `\n`). `tests/tests/it/oslo_grammar.rs` checks it against oslo.config itself
/// over every code point, so the properties below, which the proptests and the fuzz targets
/// run on random input, speak for barbican's parser.
pub fn oslo_reads(text: &str) -> Result<Vec<Assignment>, String> {
    use crate::api::config_grammar::python_whitespace as ws;
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    let mut pending: Option<(String, Vec<String>)> = None;
    let flush = |pending: &mut Option<(String, Vec<String>)>,
                 section: &Option<String>,
                 out: &mut Vec<Assignment>|
     -> Result<(), String> {
        if let Some((key, value)) = pending.take() {
            let section = section
                .clone()
                .ok_or("Section must be started before assignment")?;
            out.push((section, key, value.join("\n")));
        }
        Ok(())
    };
    for line in universal_lines(text) {
        let line = line.trim_end_matches(ws);
        if line.is_empty() {
            flush(&mut pending, &section, &mut out)?;
            continue;
        }
        if line.starts_with([' ', '\t']) {
            match &mut pending {
                None => return Err("Unexpected continuation line".into()),
                Some((_, value)) => value.push(line.trim_start_matches(ws).to_string()),
            }
            continue;
        }
        flush(&mut pending, &section, &mut out)?;
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err("Invalid section (must end with ])".into());
            };
            if line.chars().count() <= 2 {
                return Err("Empty section name".into());
            }
            section = Some(name.to_string());
        } else if line.starts_with(['#', ';']) {
            // A comment.
        } else {
            let at = match (line.find(':'), line.find('=')) {
                (None, None) => return Err("No ':' or '=' found in assignment".into()),
                (Some(colon), Some(equal)) => colon.min(equal),
                (Some(at), None) | (None, Some(at)) => at,
            };
            let (key, value) = line.split_at(at);
            let key = key.trim_matches(ws);
            let mut value = value.get(1..).unwrap_or_default().trim_matches(ws);
            let quote = value.chars().next().filter(|c| matches!(c, '"' | '\''));
            if let Some(q) = quote
                && value.ends_with(q)
            {
                // Python's value[1:-1]: a lone quote reads as empty.
                value = value.get(1..value.len().saturating_sub(1)).unwrap_or("");
            }
            if key.is_empty() {
                return Err("Key cannot be empty".into());
            }
            pending = Some((key.to_string(), vec![value.to_string()]));
        }
    }
    flush(&mut pending, &section, &mut out)?;
    Ok(out)
}

/// The lines of `text` as Python's text mode reads them: `\r\n`, `\r` and `\n` each end one.
fn universal_lines(text: &str) -> Vec<String> {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines: Vec<String> = text.split('\n').map(String::from).collect();
    // `readlines()` leaves no empty line after the last line ending.
    if text.is_empty() || text.ends_with('\n') {
        lines.pop();
    }
    lines
}

/// A tenant's `[section] key = value` that the grammar admits is read by oslo.config as
/// exactly that, and nothing else: the property that closes the class of names and values
/// Rust and Python compare differently.
pub fn admitted_options_read_back(section: &str, key: &str, value: &str) -> Result<(), String> {
    use crate::api::config_grammar::{option_name_problem, section_name_problem, value_problem};
    if section_name_problem(section)
        .or_else(|| option_name_problem(key))
        .or_else(|| value_problem(value))
        .is_some()
    {
        return Ok(());
    }
    let mut ini = crate::render::ini::Ini::new();
    ini.set(section, key, value);
    let text = ini
        .render()
        .map_err(|e| format!("the grammar admits what the INI writer refuses: {e}"))?;
    let read = oslo_reads(&text)?;
    let expected = vec![(section.to_string(), key.to_string(), value.to_string())];
    if read == expected {
        Ok(())
    } else {
        Err(format!("{text:?} reads as {read:?}"))
    }
}
