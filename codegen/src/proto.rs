//! `generated.proto` as go-to-protobuf writes it: a package, flat messages, and fields that
//! are `optional`, `repeated` or `map<string, V>`. Nested messages, enums, oneofs and options
//! inside a message do not occur there and are refused.

use crate::CodegenError;

/// The scalar types Kubernetes' messages use.
pub const SCALARS: &[&str] = &["string", "int32", "int64", "bool", "bytes", "double"];

/// One `.proto` file.
#[derive(Debug, PartialEq, Eq)]
pub struct ProtoFile {
    /// Its package, e.g. `k8s.io.api.apps.v1`.
    pub package: String,
    /// Its messages, in file order.
    pub messages: Vec<ProtoMessage>,
}

/// One message.
#[derive(Debug, PartialEq, Eq)]
pub struct ProtoMessage {
    /// The message's name inside its package.
    pub name: String,
    /// Its fields, in file order.
    pub fields: Vec<ProtoField>,
}

/// How a field repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// `optional`: at most one value.
    One,
    /// `repeated`.
    Many,
    /// `map<string, V>`: the field's type is V's.
    Map,
}

/// One field.
#[derive(Debug, PartialEq, Eq)]
pub struct ProtoField {
    /// Its number.
    pub number: u32,
    /// Its name in the `.proto` (usually, not always, the Go field's JSON name).
    pub name: String,
    /// How it repeats.
    pub label: Label,
    /// A scalar of [`SCALARS`], or a message's full name without the leading dot.
    pub ty: String,
}

/// Reads one `.proto` file's text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<ProtoFile, CodegenError> {
    let error = |line: usize, what: String| CodegenError::Proto {
        file: file.to_string(),
        line: line + 1,
        what,
    };
    let mut package = None;
    let mut messages: Vec<ProtoMessage> = Vec::new();
    let mut open: Option<ProtoMessage> = None;
    let mut in_comment = false;
    for (at, raw) in text.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or("").trim();
        // The licence header is a block comment; go-to-protobuf writes no other.
        if in_comment || line.starts_with("/*") {
            in_comment = !line.ends_with("*/");
            continue;
        }
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix("package ") {
            package = Some(name.trim_end_matches(';').trim().to_string());
        } else if let Some(rest) = line.strip_prefix("message ") {
            if open.is_some() {
                return Err(error(at, "a nested message".into()));
            }
            let name = rest.trim_end_matches('{').trim();
            open = Some(ProtoMessage {
                name: name.to_string(),
                fields: Vec::new(),
            });
        } else if line == "}" {
            let message = open
                .take()
                .ok_or_else(|| error(at, "a `}` outside a message".into()))?;
            messages.push(message);
        } else if let Some(message) = open.as_mut() {
            let package = package
                .as_deref()
                .ok_or_else(|| error(at, "a message before the package".into()))?;
            message
                .fields
                .push(field(line, package).map_err(|what| error(at, what))?);
        } else if !(line.starts_with("syntax ")
            || line.starts_with("import ")
            || line.starts_with("option "))
        {
            return Err(error(at, format!("an unexpected line `{line}`")));
        }
    }
    if open.is_some() {
        return Err(error(
            text.lines().count(),
            "a message is not closed".into(),
        ));
    }
    Ok(ProtoFile {
        package: package.ok_or_else(|| error(0, "no package".into()))?,
        messages,
    })
}

/// One field line (`optional T name = N;`, `repeated …`, `map<string, V> name = N;`).
fn field(line: &str, package: &str) -> Result<ProtoField, String> {
    let line = line
        .strip_suffix(';')
        .ok_or_else(|| format!("a field line without `;`: `{line}`"))?;
    let (left, number) = line
        .split_once('=')
        .ok_or_else(|| format!("a field without a number: `{line}`"))?;
    let number: u32 = number
        .trim()
        .parse()
        .map_err(|_| format!("a field number that is not a number: `{line}`"))?;
    let (label, ty, name) = if let Some(rest) = left.trim().strip_prefix("map<") {
        let (types, name) = rest
            .split_once('>')
            .ok_or_else(|| format!("an unclosed map: `{line}`"))?;
        let (key, value) = types
            .split_once(',')
            .ok_or_else(|| format!("a map without a value type: `{line}`"))?;
        if key.trim() != "string" {
            return Err(format!("a map keyed by {}: `{line}`", key.trim()));
        }
        (Label::Map, value.trim(), name.trim())
    } else {
        let words: Vec<&str> = left.split_whitespace().collect();
        let [label, ty, name] = words[..] else {
            return Err(format!("a field line of another shape: `{line}`"));
        };
        let label = match label {
            "optional" => Label::One,
            "repeated" => Label::Many,
            other => return Err(format!("the label `{other}`")),
        };
        (label, ty, name)
    };
    let ty = if SCALARS.contains(&ty) {
        ty.to_string()
    } else if let Some(full) = ty.strip_prefix('.') {
        full.to_string()
    } else if ty.chars().next().is_some_and(char::is_uppercase) {
        format!("{package}.{ty}")
    } else {
        return Err(format!("the type `{ty}`"));
    };
    Ok(ProtoField {
        number,
        name: name.to_string(),
        label,
        ty,
    })
}
