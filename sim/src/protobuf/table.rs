//! The message table ([`kubernetes.table`](./kubernetes.table)): every message of Kubernetes'
//! `generated.proto` files with what its Go type says about its JSON, written by the
//! `k8s-protobuf-table` generator (codegen/) and read once, at first use, into [`Table`].
//!
//! Messages refer to each other by index. A handful of messages are not objects in JSON
//! ([`Shape`]): times, quantities, `IntOrString`, raw JSON, Go slices, and the schema-or-bool
//! and schema-or-list values of a CustomResourceDefinition's schema.

use std::collections::HashMap;
use std::sync::OnceLock;

/// The table's text, as the generator wrote it.
const TEXT: &str = include_str!("kubernetes.table");

/// A scalar or a message, as a field's (or a map's value) type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Type {
    /// `string`.
    String,
    /// `int32` or `int64`: a varint, two's complement.
    Int,
    /// `bool`.
    Bool,
    /// `bytes`, base64 in JSON.
    Bytes,
    /// `double` (fixed 64 bits): a JSON number, whole ones without a fraction as Go writes them.
    Double,
    /// A message, by its index in [`Table::messages`].
    Message(usize),
}

/// How a field repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Label {
    /// At most one value.
    One,
    /// A list.
    Many,
    /// `map<string, V>`: entries of key 1 and value 2.
    Map,
}

/// What a message is in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shape {
    /// An object of its fields.
    Object,
    /// `meta.v1.Time`: seconds and nanos, RFC 3339 to the second.
    Time,
    /// `meta.v1.MicroTime`: RFC 3339 with six fractional digits.
    MicroTime,
    /// `resource.Quantity`: its string (field 1).
    Quantity,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `meta.v1.FieldsV1`, `runtime.RawExtension`: field 1 holds JSON, which is the value.
    RawJson,
    /// A Go slice (`type ExtraValue []string`): the list of its one field's values.
    Slice,
    /// `JSONSchemaPropsOrBool`: `false`/`true` (field 1), or a schema (field 2).
    SchemaOrBool,
    /// `JSONSchemaPropsOrArray` and `…OrStringArray`: a schema (field 1), or the list of
    /// field 2's values when there are any.
    SchemaOrList,
    /// `meta.v1.Duration`: held by no kind, so not read (a body holding one is refused).
    Unread,
}

/// One field.
#[derive(Debug)]
pub(super) struct Field {
    pub(super) number: u64,
    /// Its JSON name.
    pub(super) name: String,
    pub(super) label: Label,
    pub(super) ty: Type,
    /// Whether a zero is kept in JSON (a Go pointer, or no `omitempty`).
    pub(super) keep_zero: bool,
    /// Whether the value's fields are the enclosing object's (`json:",inline"`).
    pub(super) inline: bool,
}

/// One message.
#[derive(Debug)]
pub(super) struct Message {
    /// Its full name, e.g. `k8s.io.api.apps.v1.Deployment`.
    pub(super) name: String,
    pub(super) shape: Shape,
    pub(super) fields: Vec<Field>,
}

/// Every message, and the kinds by apiVersion and kind.
#[derive(Debug)]
pub(super) struct Table {
    pub(super) messages: Vec<Message>,
    by_name: HashMap<String, usize>,
    kinds: HashMap<(String, String), usize>,
}

/// meta.k8s.io/v1's kinds (DeleteOptions, Status, …) are registered in every group version,
/// as `metav1.AddToGroupVersion` does.
const META_V1: &str = "meta.k8s.io/v1";

impl Table {
    /// The table, read at first use.
    pub(super) fn get() -> &'static Table {
        static TABLE: OnceLock<Table> = OnceLock::new();
        // The text is the generator's, checked by the protobuf tests: a line this reader
        // refuses is a build that cannot read any protobuf body, never a request's fault.
        TABLE.get_or_init(|| Table::parse(TEXT).expect("kubernetes.table is the generator's"))
    }

    /// The message of a kind; meta.k8s.io/v1's kinds in any group version.
    pub(super) fn kind(&self, api_version: &str, kind: &str) -> Option<&Message> {
        let index = self
            .kinds
            .get(&(api_version.to_string(), kind.to_string()))
            .or_else(|| self.kinds.get(&(META_V1.to_string(), kind.to_string())))?;
        self.messages.get(*index)
    }

    /// A message by its full name.
    pub(super) fn message(&self, name: &str) -> Option<&Message> {
        self.by_name.get(name).map(|index| &self.messages[*index])
    }

    /// Every kind: (apiVersion, kind).
    pub(super) fn kinds(&self) -> impl Iterator<Item = (&str, &str)> {
        self.kinds.keys().map(|(v, k)| (v.as_str(), k.as_str()))
    }

    /// Reads the table's text: `kind` lines, then each `message` line with its field lines.
    pub(super) fn parse(text: &str) -> Result<Table, String> {
        let lines: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.starts_with('#') && !line.trim().is_empty())
            .collect();
        let mut by_name = HashMap::new();
        for (_, line) in &lines {
            if let Some(rest) = line.strip_prefix("message ") {
                let name = rest.split_whitespace().next().unwrap_or_default();
                let index = by_name.len();
                by_name.insert(name.to_string(), index);
            }
        }
        let resolve = |at: usize, ty: &str| -> Result<Type, String> {
            Ok(match ty {
                "string" => Type::String,
                "int32" | "int64" => Type::Int,
                "bool" => Type::Bool,
                "bytes" => Type::Bytes,
                "double" => Type::Double,
                name => Type::Message(
                    *by_name
                        .get(name)
                        .ok_or_else(|| format!("line {}: no message {name}", at + 1))?,
                ),
            })
        };
        let mut messages: Vec<Message> = Vec::new();
        let mut kinds = HashMap::new();
        for (at, line) in lines {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words[..] {
                ["kind", api_version, kind, message] => {
                    let index = *by_name
                        .get(message)
                        .ok_or_else(|| format!("line {}: no message {message}", at + 1))?;
                    kinds.insert((api_version.to_string(), kind.to_string()), index);
                }
                // A removed field's number: read as any number the message does not have.
                ["reserved", _, _] => {}
                ["message", name, ref flags @ ..] => messages.push(Message {
                    name: name.to_string(),
                    shape: shape(name, flags.contains(&"slice")),
                    fields: Vec::new(),
                }),
                [number, name, label, ty, ref flags @ ..] => {
                    let message = messages
                        .last_mut()
                        .ok_or_else(|| format!("line {}: a field before any message", at + 1))?;
                    message.fields.push(Field {
                        number: number
                            .parse()
                            .map_err(|_| format!("line {}: the number {number}", at + 1))?,
                        name: name.to_string(),
                        label: match label {
                            "one" => Label::One,
                            "many" => Label::Many,
                            "map" => Label::Map,
                            other => return Err(format!("line {}: the label {other}", at + 1)),
                        },
                        ty: resolve(at, ty)?,
                        keep_zero: flags.contains(&"keepzero"),
                        inline: flags.contains(&"inline"),
                    });
                }
                _ => return Err(format!("line {}: `{line}`", at + 1)),
            }
        }
        Ok(Table {
            messages,
            by_name,
            kinds,
        })
    }
}

const EXTENSIONS_V1: &str = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1";
const EXTENSIONS_V1BETA1: &str = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1";

/// The JSON shape of a message, by its name (or the table's `slice` flag).
fn shape(name: &str, slice: bool) -> Shape {
    match name {
        _ if slice => Shape::Slice,
        "k8s.io.apimachinery.pkg.apis.meta.v1.Time" => Shape::Time,
        "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime" => Shape::MicroTime,
        "k8s.io.apimachinery.pkg.api.resource.Quantity"
        | "k8s.io.apimachinery.pkg.api.resource.QuantityValue" => Shape::Quantity,
        "k8s.io.apimachinery.pkg.util.intstr.IntOrString" => Shape::IntOrString,
        "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1"
        | "k8s.io.apimachinery.pkg.runtime.RawExtension" => Shape::RawJson,
        "k8s.io.apimachinery.pkg.apis.meta.v1.Duration" => Shape::Unread,
        _ => match name.rsplit_once('.') {
            // apiextensions' v1 and v1beta1 alike, which marshal themselves in Go.
            Some((EXTENSIONS_V1 | EXTENSIONS_V1BETA1, local)) => match local {
                "JSON" => Shape::RawJson,
                "JSONSchemaPropsOrBool" => Shape::SchemaOrBool,
                "JSONSchemaPropsOrArray" | "JSONSchemaPropsOrStringArray" => Shape::SchemaOrList,
                _ => Shape::Object,
            },
            _ => Shape::Object,
        },
    }
}
