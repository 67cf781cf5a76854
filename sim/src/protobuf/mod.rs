//! Protobuf request bodies, as kube-apiserver accepts them for built-in kinds: the `k8s\0`
//! envelope around a `runtime.Unknown` (type meta, then the object's own protobuf bytes),
//! decoded into the JSON object the rest of the sim works on, and answers encoded alike.
//!
//! Every kind of k8s.io/api, meta.k8s.io, apiextensions.k8s.io and apiregistration.k8s.io is read, from the message table
//! generated from Kubernetes' own `generated.proto` files and Go types ([`table`]). A field
//! number a message does not have is refused naming it, never dropped: a field read wrongly
//! would be stored wrongly.

use serde_json::{Map, Value, json};

mod table;

use table::{Field, Label, Message, Shape, Table, Type};

/// The four bytes ahead of every Kubernetes protobuf body.
pub const MAGIC: &[u8] = b"k8s\0";

/// Why a protobuf body could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProtobufError {
    /// The body lacks the `k8s\0` prefix.
    #[error("a protobuf body starts with the bytes \"k8s\\x00\"")]
    NoMagic,
    /// The bytes end inside a value, or a value is malformed.
    #[error("the protobuf body is malformed: {0}")]
    Malformed(&'static str),
    /// A kind this sim does not read as protobuf.
    #[error(
        "the sim reads protobuf bodies of Kubernetes' built-in kinds; send {kind} ({api_version}) as JSON"
    )]
    UnknownKind {
        /// The body's apiVersion.
        api_version: String,
        /// The body's kind.
        kind: String,
    },
    /// A field number the message does not have (or not as this wire type).
    #[error("{message} has no field {number} of wire type {wire}")]
    UnknownField {
        /// The message's full name.
        message: String,
        /// The field number.
        number: u64,
        /// The wire type found.
        wire: u64,
    },
    /// A message the sim does not read (no kind holds one).
    #[error("{0} is not read in protobuf; send the object as JSON")]
    Unread(String),
}

/// Decodes a `k8s\0`-prefixed protobuf body into the JSON object it stands for.
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    let rest = body.strip_prefix(MAGIC).ok_or(ProtobufError::NoMagic)?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for entry in Reader(rest) {
        let (number, value) = entry?;
        match (number, value) {
            (1, Wire::Bytes(type_meta)) => {
                for entry in Reader(type_meta) {
                    match entry? {
                        (1, Wire::Bytes(b)) => api_version = text(b)?,
                        (2, Wire::Bytes(b)) => kind = text(b)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(bytes)) => raw = bytes,
            // contentEncoding and contentType: empty for a plain object.
            _ => {}
        }
    }
    let table = Table::get();
    let message = table
        .kind(&api_version, &kind)
        .ok_or_else(|| ProtobufError::UnknownKind {
            api_version: api_version.clone(),
            kind: kind.clone(),
        })?;
    let mut object = read(table, message, raw)?;
    if let Some(fields) = object.as_object_mut() {
        fields.insert("apiVersion".into(), json!(api_version));
        fields.insert("kind".into(), json!(kind));
    }
    Ok(object)
}

/// `object` as kube-apiserver answers it in `application/vnd.kubernetes.protobuf`: the `k8s\0`
/// envelope around a `runtime.Unknown`. `None` when the kind has no message or the object
/// holds a field its message does not describe (the answer is then JSON, which every client
/// that asks for protobuf also accepts): a field written wrongly would be read wrongly.
pub fn encode(object: &Value) -> Option<Vec<u8>> {
    let api_version = object.get("apiVersion")?.as_str()?;
    let kind = object.get("kind")?.as_str()?;
    let table = Table::get();
    let message = table.kind(api_version, kind)?;
    let mut fields = object.as_object()?.clone();
    fields.remove("apiVersion");
    fields.remove("kind");
    let raw = write(table, message, &Value::Object(fields))?;
    let mut type_meta = Vec::new();
    put_bytes(&mut type_meta, 1, api_version.as_bytes());
    put_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = MAGIC.to_vec();
    put_bytes(&mut out, 1, &type_meta);
    put_bytes(&mut out, 2, &raw);
    Some(out)
}

/// The full names of every message the sim reads and writes.
pub fn message_names() -> impl Iterator<Item = &'static str> {
    Table::get().messages.iter().map(|m| m.name.as_str())
}

/// Every kind read in protobuf, as (apiVersion, kind).
pub fn kinds() -> impl Iterator<Item = (&'static str, &'static str)> {
    Table::get().kinds()
}

/// One message's bytes (no envelope) for its JSON value; `None` as for [`encode`] or for a
/// name not in the table.
pub fn encode_message(name: &str, value: &Value) -> Option<Vec<u8>> {
    let table = Table::get();
    let message = table.message(name)?;
    let mut out = Vec::new();
    write_message_value(table, message, value, &mut out)?;
    Some(out)
}

/// One message's bytes (no envelope) as its JSON value; `Ok(None)` where Go writes no JSON
/// value (a zero time).
pub fn decode_message(name: &str, bytes: &[u8]) -> Result<Option<Value>, ProtobufError> {
    let table = Table::get();
    let message = table
        .message(name)
        .ok_or_else(|| ProtobufError::Unread(name.to_string()))?;
    read_message_value(table, message, bytes)
}

/// The JSON names a message's object holds, its inlined messages' included.
fn json_names<'t>(table: &'t Table, message: &'t Message, out: &mut Vec<&'t str>) {
    for field in &message.fields {
        match field.ty {
            Type::Message(inner) if field.inline => json_names(table, &table.messages[inner], out),
            _ => out.push(&field.name),
        }
    }
}

/// One JSON object as `message`'s bytes; `None` for a field the message does not describe.
fn write(table: &Table, message: &Message, object: &Value) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let fields = object.as_object()?;
    // An embedded message's fields sit in this object: they are written as that message.
    let mut inlined = Vec::new();
    for field in message.fields.iter().filter(|f| f.inline) {
        let Type::Message(inner) = field.ty else {
            return None;
        };
        let inner = &table.messages[inner];
        let mut names = Vec::new();
        json_names(table, inner, &mut names);
        let own: Map<String, Value> = fields
            .iter()
            .filter(|(name, _)| names.contains(&name.as_str()))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        put_bytes(
            &mut out,
            field.number,
            &write(table, inner, &Value::Object(own))?,
        );
        inlined.extend(names);
    }
    for (name, value) in fields {
        if value.is_null() || inlined.contains(&name.as_str()) {
            continue;
        }
        let field = message
            .fields
            .iter()
            .find(|f| !f.inline && f.name == *name)?;
        match field.label {
            Label::One => write_field(table, &mut out, field.number, field.ty, value)?,
            Label::Many => {
                for item in value.as_array()? {
                    write_field(table, &mut out, field.number, field.ty, item)?;
                }
            }
            Label::Map => {
                for (key, entry) in value.as_object()? {
                    let mut pair = Vec::new();
                    put_bytes(&mut pair, 1, key.as_bytes());
                    write_field(table, &mut pair, 2, field.ty, entry)?;
                    put_bytes(&mut out, field.number, &pair);
                }
            }
        }
    }
    Some(out)
}

/// One value of type `ty` as field `number`, appended to `out`.
fn write_field(
    table: &Table,
    out: &mut Vec<u8>,
    number: u64,
    ty: Type,
    value: &Value,
) -> Option<()> {
    match ty {
        Type::String => put_bytes(out, number, value.as_str()?.as_bytes()),
        Type::Int => put_varint_field(out, number, value.as_i64()? as u64),
        Type::Bool => put_varint_field(out, number, u64::from(value.as_bool()?)),
        Type::Bytes => put_bytes(out, number, &crate::tokens::base64_decode(value.as_str()?)?),
        Type::Double => {
            put_varint(out, (number << 3) | 1);
            out.extend_from_slice(&value.as_f64()?.to_le_bytes());
        }
        Type::Message(inner) => {
            let mut bytes = Vec::new();
            write_message_value(table, &table.messages[inner], value, &mut bytes)?;
            put_bytes(out, number, &bytes);
        }
    }
    Some(())
}

/// A message's JSON value as its bytes, by its shape.
fn write_message_value(
    table: &Table,
    message: &Message,
    value: &Value,
    out: &mut Vec<u8>,
) -> Option<()> {
    match message.shape {
        Shape::Object => out.extend(write(table, message, value)?),
        Shape::Time | Shape::MicroTime => {
            let at: jiff::Timestamp = value.as_str()?.parse().ok()?;
            put_varint_field(out, 1, at.as_second() as u64);
            if at.subsec_nanosecond() != 0 {
                put_varint_field(out, 2, at.subsec_nanosecond() as u64);
            }
        }
        Shape::Quantity => put_bytes(out, 1, value.as_str()?.as_bytes()),
        Shape::IntOrString => match value {
            Value::String(text) => {
                put_varint_field(out, 1, 1);
                put_bytes(out, 3, text.as_bytes());
            }
            other => put_varint_field(out, 2, other.as_i64()? as u64),
        },
        Shape::RawJson => put_bytes(out, 1, value.to_string().as_bytes()),
        Shape::Slice => {
            let field = message.fields.first()?;
            for item in value.as_array()? {
                write_field(table, out, field.number, field.ty, item)?;
            }
        }
        Shape::SchemaOrBool => {
            let [allows, schema] = &message.fields[..] else {
                return None;
            };
            match value {
                Value::Bool(_) => write_field(table, out, allows.number, allows.ty, value)?,
                _ => {
                    write_field(table, out, allows.number, allows.ty, &json!(true))?;
                    write_field(table, out, schema.number, schema.ty, value)?;
                }
            }
        }
        Shape::SchemaOrList => {
            let [schema, list] = &message.fields[..] else {
                return None;
            };
            match value {
                Value::Array(items) => {
                    for item in items {
                        write_field(table, out, list.number, list.ty, item)?;
                    }
                }
                _ => write_field(table, out, schema.number, schema.ty, value)?,
            }
        }
        Shape::Unread => return None,
    }
    Some(())
}

/// Appends `value` as a base-128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A varint field: its key (wire type 0), then the value.
fn put_varint_field(out: &mut Vec<u8>, number: u64, value: u64) {
    put_varint(out, number << 3);
    put_varint(out, value);
}

/// A length-delimited field: its key (wire type 2), the length, the bytes.
pub fn put_bytes(out: &mut Vec<u8>, number: u64, bytes: &[u8]) {
    put_varint(out, (number << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// One message's bytes as a JSON object.
fn read(table: &Table, message: &Message, bytes: &[u8]) -> Result<Value, ProtobufError> {
    let mut object = Map::new();
    for entry in Reader(bytes) {
        let (number, wire) = entry?;
        let unknown = || unknown_field(message, number, wire);
        let (_, field) = field_of(message, number, wire)?;
        if field.inline {
            let (Type::Message(inner), Wire::Bytes(b)) = (field.ty, wire) else {
                return Err(unknown());
            };
            if let Value::Object(embedded) = read(table, &table.messages[inner], b)? {
                object.extend(embedded);
            }
            continue;
        }
        if field.label == Label::Map {
            let Wire::Bytes(b) = wire else {
                return Err(unknown());
            };
            let (key, value) = map_entry(table, field, b)?;
            let map = object
                .entry(field.name.clone())
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .ok_or(ProtobufError::Malformed(
                    "a map field repeats as another kind",
                ))?;
            if let Some(value) = value {
                map.insert(key, value);
            }
            continue;
        }
        let Some(value) = read_field(table, field.ty, wire).ok_or_else(unknown)?? else {
            continue;
        };
        let zero = matches!(&value, Value::String(t) if t.is_empty())
            || value == json!(0)
            || value == json!(false);
        if field.label == Label::Many {
            object
                .entry(field.name.clone())
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .ok_or(ProtobufError::Malformed(
                    "a repeated field repeats as another kind",
                ))?
                .push(value);
        } else if !zero || field.keep_zero {
            // Go's JSON leaves a zero out of an `omitempty` field that is not a pointer.
            object.insert(field.name.clone(), value);
        }
    }
    Ok(Value::Object(object))
}

/// One value of type `ty` from the wire; `None` when the wire type does not fit the type,
/// `Ok(None)` when Go writes no JSON value for it (a zero time).
fn read_field(
    table: &Table,
    ty: Type,
    wire: Wire<'_>,
) -> Option<Result<Option<Value>, ProtobufError>> {
    Some(match (ty, wire) {
        (Type::String, Wire::Bytes(b)) => text(b).map(|t| Some(json!(t))),
        (Type::Int, Wire::Varint(v)) => Ok(Some(json!(v as i64))),
        (Type::Bool, Wire::Varint(v)) => Ok(Some(json!(v != 0))),
        (Type::Bytes, Wire::Bytes(b)) => Ok(Some(json!(crate::tokens::base64(b)))),
        (Type::Double, Wire::Fixed64(bits)) => Ok(Some(double(f64::from_bits(bits)))),
        (Type::Message(inner), Wire::Bytes(b)) => {
            read_message_value(table, &table.messages[inner], b)
        }
        _ => return None,
    })
}

/// A message's bytes as its JSON value, by its shape.
fn read_message_value(
    table: &Table,
    message: &Message,
    bytes: &[u8],
) -> Result<Option<Value>, ProtobufError> {
    Ok(match message.shape {
        Shape::Object => Some(read(table, message, bytes)?),
        // Go writes a zero time as an empty message: no time at all.
        Shape::Time => time(bytes, false)?,
        Shape::MicroTime => time(bytes, true)?,
        Shape::Quantity => Some(quantity(bytes)?),
        Shape::IntOrString => Some(int_or_string(bytes)?),
        Shape::RawJson => Some(raw_json(bytes)?),
        Shape::Slice => {
            let field = message
                .fields
                .first()
                .ok_or(ProtobufError::Malformed("a slice message has no field"))?;
            let mut items = Vec::new();
            for entry in Reader(bytes) {
                let (number, wire) = entry?;
                if number != field.number {
                    return Err(unknown_field(message, number, wire));
                }
                let item = read_field(table, field.ty, wire)
                    .ok_or_else(|| unknown_field(message, number, wire))??;
                items.extend(item);
            }
            Some(Value::Array(items))
        }
        Shape::SchemaOrBool | Shape::SchemaOrList => either(table, message, bytes)?,
        Shape::Unread => return Err(ProtobufError::Unread(message.name.clone())),
    })
}

/// The field `number` of `message`, with its position.
fn field_of<'m>(
    message: &'m Message,
    number: u64,
    wire: Wire<'_>,
) -> Result<(usize, &'m Field), ProtobufError> {
    message
        .fields
        .iter()
        .enumerate()
        .find(|(_, f)| f.number == number)
        .ok_or_else(|| unknown_field(message, number, wire))
}

/// The error for a field number `message` lacks, or holds as another wire type.
fn unknown_field(message: &Message, number: u64, wire: Wire<'_>) -> ProtobufError {
    ProtobufError::UnknownField {
        message: message.name.clone(),
        number,
        wire: wire.type_number(),
    }
}

/// A schema-or-bool or schema-or-list value, as apiextensions' Go marshals it: the schema
/// when set (or-bool), the list when it has items (or-list), else the bool or the schema.
fn either(table: &Table, message: &Message, bytes: &[u8]) -> Result<Option<Value>, ProtobufError> {
    let mut values: [Vec<Value>; 2] = [Vec::new(), Vec::new()];
    for entry in Reader(bytes) {
        let (number, wire) = entry?;
        let unknown = || unknown_field(message, number, wire);
        let (at, field) = field_of(message, number, wire)?;
        if let Some(value) = read_field(table, field.ty, wire).ok_or_else(unknown)?? {
            values.get_mut(at).ok_or_else(unknown)?.push(value);
        }
    }
    let [first, second] = values;
    Ok(match message.shape {
        Shape::SchemaOrBool => second
            .into_iter()
            .next()
            .or_else(|| Some(first.into_iter().next().unwrap_or(json!(false)))),
        _ if !second.is_empty() => Some(Value::Array(second)),
        _ => first.into_iter().next(),
    })
}

/// A double as Go's JSON writes it: a whole number without a fraction.
fn double(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9_007_199_254_740_992.0 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

/// `meta.v1.FieldsV1` or `runtime.RawExtension` (its `Raw` bytes, field 1, are JSON) as that
/// JSON.
fn raw_json(bytes: &[u8]) -> Result<Value, ProtobufError> {
    let mut value = json!({});
    for entry in Reader(bytes) {
        match entry? {
            (1, Wire::Bytes(b)) => {
                value = serde_json::from_slice(b)
                    .map_err(|_| ProtobufError::Malformed("a raw JSON value does not hold JSON"))?;
            }
            _ => {
                return Err(ProtobufError::Malformed(
                    "a raw JSON value has another field",
                ));
            }
        }
    }
    Ok(value)
}

/// `intstr.IntOrString` (`type` 1: 0 for `intVal` 2, 1 for `strVal` 3) as its JSON.
fn int_or_string(bytes: &[u8]) -> Result<Value, ProtobufError> {
    let (mut string, mut int, mut text_value) = (false, 0i64, String::new());
    for entry in Reader(bytes) {
        match entry? {
            (1, Wire::Varint(v)) => string = v == 1,
            (2, Wire::Varint(v)) => int = v as i64,
            (3, Wire::Bytes(b)) => text_value = text(b)?,
            _ => return Err(ProtobufError::Malformed("an IntOrString has another field")),
        }
    }
    Ok(if string {
        json!(text_value)
    } else {
        json!(int)
    })
}

/// A map entry (`key` 1, `value` 2): the key, and the value as its type reads (`None` for a
/// value Go writes no JSON for).
fn map_entry(
    table: &Table,
    field: &Field,
    bytes: &[u8],
) -> Result<(String, Option<Value>), ProtobufError> {
    let (mut key, mut value) = (String::new(), None);
    for entry in Reader(bytes) {
        match entry? {
            (1, Wire::Bytes(b)) => key = text(b)?,
            (2, wire) => {
                value = read_field(table, field.ty, wire)
                    .ok_or(ProtobufError::Malformed("a map value of another wire type"))??;
            }
            _ => {
                return Err(ProtobufError::Malformed(
                    "a map entry has a field other than key and value",
                ));
            }
        }
    }
    // An absent value is the type's zero: an empty string, no bytes, an empty message.
    let value = match (value, field.ty) {
        (Some(value), _) => Some(value),
        (None, Type::String) => Some(json!("")),
        (None, Type::Bytes) => Some(json!("")),
        (None, Type::Int | Type::Double) => Some(json!(0)),
        (None, Type::Bool) => Some(json!(false)),
        (None, Type::Message(inner)) => read_message_value(table, &table.messages[inner], &[])?,
    };
    Ok((key, value))
}

/// A `resource.Quantity` (its string in field 1) as its JSON string.
fn quantity(bytes: &[u8]) -> Result<Value, ProtobufError> {
    let mut quantity = String::new();
    for entry in Reader(bytes) {
        if let (1, Wire::Bytes(b)) = entry? {
            quantity = text(b)?;
        }
    }
    Ok(json!(quantity))
}

/// `meta.v1.Time` as kube-apiserver writes it in JSON, RFC 3339 to the second, or
/// `meta.v1.MicroTime` with six fractional digits; `None` for the zero time.
fn time(bytes: &[u8], micro: bool) -> Result<Option<Value>, ProtobufError> {
    let (mut seconds, mut nanos) = (0u64, 0u64);
    for entry in Reader(bytes) {
        match entry? {
            (1, Wire::Varint(v)) => seconds = v,
            (2, Wire::Varint(v)) => nanos = v,
            _ => {}
        }
    }
    if seconds == 0 && nanos == 0 {
        return Ok(None);
    }
    let at = i64::try_from(seconds)
        .ok()
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .ok_or(ProtobufError::Malformed("a time is out of range"))?;
    let whole = at.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    Ok(Some(json!(if micro {
        format!("{whole}.{:06}Z", nanos / 1000)
    } else {
        format!("{whole}Z")
    })))
}

fn text(bytes: &[u8]) -> Result<String, ProtobufError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtobufError::Malformed("a string is not UTF-8"))
}

/// A field's value as the wire carries it.
#[derive(Clone, Copy)]
pub enum Wire<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1: eight bytes, little-endian (a double).
    Fixed64(u64),
    /// Wire type 2: a length-delimited payload.
    Bytes(&'a [u8]),
    /// Wire type 5 (its four bytes skipped).
    Fixed32,
}

impl Wire<'_> {
    fn type_number(self) -> u64 {
        match self {
            Wire::Varint(_) => 0,
            Wire::Fixed64(_) => 1,
            Wire::Bytes(_) => 2,
            Wire::Fixed32 => 5,
        }
    }
}

/// The fields of one message's bytes, in order: (field number, value).
pub struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// The fields of `message`.
    pub fn new(message: &'a [u8]) -> Self {
        Self(message)
    }

    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self
                .0
                .split_first()
                .ok_or(ProtobufError::Malformed("a varint runs past the end"))?;
            self.0 = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtobufError::Malformed(
            "a varint is longer than ten bytes",
        ))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtobufError> {
        if n > self.0.len() {
            return Err(ProtobufError::Malformed("a value runs past the end"));
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(taken)
    }

    fn field(&mut self) -> Result<(u64, Wire<'a>), ProtobufError> {
        let key = self.varint()?;
        let wire = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                let bytes: [u8; 8] = self
                    .take(8)?
                    .try_into()
                    .map_err(|_| ProtobufError::Malformed("a fixed64 is not eight bytes"))?;
                Wire::Fixed64(u64::from_le_bytes(bytes))
            }
            2 => {
                let n = usize::try_from(self.varint()?)
                    .map_err(|_| ProtobufError::Malformed("a length does not fit"))?;
                Wire::Bytes(self.take(n)?)
            }
            5 => {
                self.take(4)?;
                Wire::Fixed32
            }
            _ => return Err(ProtobufError::Malformed("a group or unknown wire type")),
        };
        Ok((key >> 3, wire))
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = Result<(u64, Wire<'a>), ProtobufError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let field = self.field();
        if field.is_err() {
            // Stop after the first error.
            self.0 = &[];
        }
        Some(field)
    }
}
