//! What the Go types of one API package say about the JSON form of their protobuf fields:
//! read from the struct tags (`json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`)
//! and field types (`*int32`), line by line as gofmt lays them out.

use std::collections::{BTreeMap, BTreeSet};

/// One Go package's types.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct GoPackage {
    /// The API group of `const GroupName` (empty for the core group); `None` when not declared.
    pub group: Option<String>,
    /// Its structs by name.
    pub structs: BTreeMap<String, GoStruct>,
    /// Types declared as a slice (`type ExtraValue []string`): their message's one repeated
    /// field is, in JSON, the value itself.
    pub slices: BTreeSet<String>,
}

/// One struct.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct GoStruct {
    /// Whether it embeds `TypeMeta`: it is a kind, sent with `apiVersion` and `kind`.
    pub kind: bool,
    /// Its fields that have a protobuf number, by that number.
    pub fields: BTreeMap<u32, GoField>,
    /// Fields commented out with their tags kept ("tombstoned to show why 42 is a reserved
    /// protobuf tag"): number to JSON name. Older clients may still send them.
    pub reserved: BTreeMap<u32, String>,
}

/// What one field's tags and type say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoField {
    /// The JSON name (empty for an embedded struct whose fields are its parent's).
    pub json: String,
    /// Whether a zero value is written in JSON: Go holds the field as a pointer, or the JSON
    /// tag has neither `omitempty` nor `omitzero`.
    pub keeps_zero: bool,
    /// Whether the field is an embedded struct whose fields are the parent object's.
    pub inline: bool,
}

/// Reads the Go sources of one package (each file's text).
pub fn parse<'a>(files: impl IntoIterator<Item = &'a str>) -> GoPackage {
    let mut package = GoPackage::default();
    for text in files {
        read_file(text, &mut package);
    }
    package
}

fn read_file(text: &str, package: &mut GoPackage) {
    let mut open: Option<(String, GoStruct)> = None;
    for line in text.lines() {
        // register.go's `const GroupName = "apps"` is what the scheme registers; a package
        // without one (runtime, resource) has no kinds.
        if let Some(group) = line.trim().strip_prefix("const GroupName = ") {
            package.group = Some(group.trim().trim_matches('"').to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("type ") {
            let mut words = rest.split_whitespace();
            let (Some(name), Some(ty)) = (words.next(), words.next()) else {
                continue;
            };
            if ty == "struct" && rest.trim_end().ends_with('{') {
                open = Some((name.to_string(), GoStruct::default()));
            } else if ty.starts_with("[]") {
                package.slices.insert(name.to_string());
            }
            continue;
        }
        if line == "}" {
            if let Some((name, found)) = open.take() {
                package.structs.insert(name, found);
            }
            continue;
        }
        let Some((_, found)) = open.as_mut() else {
            continue;
        };
        let mut trimmed = line.trim();
        let commented = trimmed.starts_with("//");
        if commented {
            trimmed = trimmed.trim_start_matches('/').trim();
        }
        let Some((declaration, tags)) = trimmed.split_once('`') else {
            continue;
        };
        let words: Vec<&str> = declaration.split_whitespace().collect();
        let tags = tags.trim_end_matches('`');
        let json = tag(tags, "json").unwrap_or_default();
        let mut json_parts = json.split(',');
        let json_name = json_parts.next().unwrap_or("").to_string();
        let omits = json_parts.any(|option| option == "omitempty" || option == "omitzero");
        let embedded = words.len() == 1;
        if embedded && !commented && words[0].trim_start_matches('*').ends_with("TypeMeta") {
            found.kind = true;
        }
        let Some(protobuf) = tag(tags, "protobuf") else {
            continue;
        };
        let Some(number) = protobuf.split(',').nth(1).and_then(|n| n.parse().ok()) else {
            continue;
        };
        if commented {
            found.reserved.insert(number, json_name);
            continue;
        }
        let ty = words.last().copied().unwrap_or("");
        found.fields.insert(
            number,
            GoField {
                inline: embedded && json_name.is_empty(),
                json: json_name,
                keeps_zero: ty.starts_with('*') || !omits,
            },
        );
    }
}

/// The value of `key:"…"` in a struct tag.
fn tag<'a>(tags: &'a str, key: &str) -> Option<&'a str> {
    let mut rest = tags;
    while let Some((name, after)) = rest.trim_start().split_once(":\"") {
        let (value, tail) = after.split_once('"')?;
        if name == key {
            return Some(value);
        }
        rest = tail;
    }
    None
}
