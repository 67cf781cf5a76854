//! Protobuf request bodies, as kube-apiserver accepts them for built-in kinds: the `k8s\0`
//! envelope around a `runtime.Unknown` (type meta, then the object's own protobuf bytes),
//! decoded into the JSON object the rest of the sim works on, and answers encoded alike.
//!
//! kubectl sends protobuf from its generators (`kubectl create namespace|configmap|secret|…`),
//! `kubectl autoscale`, `kubectl create job --from`, and its reviews (`kubectl auth can-i|
//! whoami`). The messages of those kinds are described in [`messages`]. A kind not described,
//! or a field number a message does not have, is refused naming it, never dropped: a field
//! read wrongly would be stored wrongly.

use serde_json::{Map, Value, json};

mod messages;

use Kind::{Bool, BytesMap, Int, IntOrString, QuantityMap, Text, TextMap, Time};
use messages::{Field, Kind, Message, message_of};

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
        "the sim reads protobuf bodies of Namespaces, ConfigMaps, Secrets, ServiceAccounts, Services, ResourceQuotas, Deployments, Jobs, CronJobs, PodDisruptionBudgets, PriorityClasses, Ingresses, autoscaling/v1 HorizontalPodAutoscalers, RBAC roles and bindings, CertificateSigningRequests, TokenRequests, self-reviews and DeleteOptions; send {kind} ({api_version}) as JSON"
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
        /// The message's name.
        message: &'static str,
        /// The field number.
        number: u64,
        /// The wire type found.
        wire: u64,
    },
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
    let message = message_of(&api_version, &kind).ok_or_else(|| ProtobufError::UnknownKind {
        api_version: api_version.clone(),
        kind: kind.clone(),
    })?;
    let mut object = read(message, raw)?;
    if let Some(fields) = object.as_object_mut() {
        fields.insert("apiVersion".into(), json!(api_version));
        fields.insert("kind".into(), json!(kind));
    }
    Ok(object)
}

/// `object` as kube-apiserver answers it in `application/vnd.kubernetes.protobuf`: the `k8s\0`
/// envelope around a `runtime.Unknown`. `None` when the kind is not described here or the
/// object holds a field its message does not describe (the answer is then JSON, which every
/// client that asks for protobuf also accepts): a field written wrongly would be read wrongly.
pub fn encode(object: &Value) -> Option<Vec<u8>> {
    let api_version = object.get("apiVersion")?.as_str()?;
    let kind = object.get("kind")?.as_str()?;
    let message = message_of(api_version, kind)?;
    let mut fields = object.as_object()?.clone();
    fields.remove("apiVersion");
    fields.remove("kind");
    let raw = write(message, &Value::Object(fields))?;
    let mut type_meta = Vec::new();
    put_bytes(&mut type_meta, 1, api_version.as_bytes());
    put_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = MAGIC.to_vec();
    put_bytes(&mut out, 1, &type_meta);
    put_bytes(&mut out, 2, &raw);
    Some(out)
}

/// One JSON object as `message`'s bytes; `None` for a field the message does not describe.
fn write(message: &'static Message, object: &Value) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let fields = object.as_object()?;
    // An embedded message's fields sit in this object: they are written as that message.
    let mut inlined = Vec::new();
    for field in message.fields {
        if let Kind::Inline(inner) = field.kind {
            let own: Map<String, Value> = fields
                .iter()
                .filter(|(name, _)| inner.fields.iter().any(|f| f.name == name.as_str()))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect();
            put_bytes(&mut out, field.number, &write(inner, &Value::Object(own))?);
            inlined.extend(inner.fields.iter().map(|f| f.name));
        }
    }
    for (name, value) in fields {
        if value.is_null() || inlined.contains(&name.as_str()) {
            continue;
        }
        let field = message.fields.iter().find(|f| f.name == name)?;
        let values: Vec<&Value> = if field.repeated {
            value.as_array()?.iter().collect()
        } else {
            vec![value]
        };
        for value in values {
            write_value(&mut out, field, value)?;
        }
    }
    Some(out)
}

/// One value of `field`, appended to `out`.
fn write_value(out: &mut Vec<u8>, field: &Field, value: &Value) -> Option<()> {
    let n = field.number;
    match field.kind {
        Text => put_bytes(out, n, value.as_str()?.as_bytes()),
        Int => put_varint_field(out, n, value.as_i64()? as u64),
        Bool => put_varint_field(out, n, u64::from(value.as_bool()?)),
        Kind::Message(inner) => put_bytes(out, n, &write(inner, value)?),
        Kind::Quantity => {
            let mut quantity = Vec::new();
            put_bytes(&mut quantity, 1, value.as_str()?.as_bytes());
            put_bytes(out, n, &quantity);
        }
        // Written with the enclosing object (see `write`); never a field of its own in JSON.
        Kind::Inline(_) => return None,
        Kind::Bytes => put_bytes(out, n, &crate::tokens::base64_decode(value.as_str()?)?),
        Kind::RawJson => {
            let mut raw = Vec::new();
            put_bytes(&mut raw, 1, value.to_string().as_bytes());
            put_bytes(out, n, &raw);
        }
        Time => {
            let at: jiff::Timestamp = value.as_str()?.parse().ok()?;
            let mut time = Vec::new();
            put_varint_field(&mut time, 1, at.as_second() as u64);
            if at.subsec_nanosecond() != 0 {
                put_varint_field(&mut time, 2, at.subsec_nanosecond() as u64);
            }
            put_bytes(out, n, &time);
        }
        IntOrString => {
            let mut int_or_string = Vec::new();
            match value {
                Value::String(text) => {
                    put_varint_field(&mut int_or_string, 1, 1);
                    put_bytes(&mut int_or_string, 3, text.as_bytes());
                }
                other => put_varint_field(&mut int_or_string, 2, other.as_i64()? as u64),
            }
            put_bytes(out, n, &int_or_string);
        }
        TextMap | BytesMap | QuantityMap => {
            for (key, entry) in value.as_object()? {
                let text = entry.as_str()?;
                let bytes = match field.kind {
                    BytesMap => crate::tokens::base64_decode(text)?,
                    QuantityMap => {
                        let mut quantity = Vec::new();
                        put_bytes(&mut quantity, 1, text.as_bytes());
                        quantity
                    }
                    _ => text.as_bytes().to_vec(),
                };
                let mut pair = Vec::new();
                put_bytes(&mut pair, 1, key.as_bytes());
                put_bytes(&mut pair, 2, &bytes);
                put_bytes(out, n, &pair);
            }
        }
        // A status this sim does not describe cannot be answered in protobuf.
        Kind::Discarded => return None,
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
fn read(message: &'static Message, bytes: &[u8]) -> Result<Value, ProtobufError> {
    let mut object = Map::new();
    for entry in Reader(bytes) {
        let (number, wire) = entry?;
        let unknown = || ProtobufError::UnknownField {
            message: message.name,
            number,
            wire: wire.type_number(),
        };
        let field = message
            .fields
            .iter()
            .find(|f| f.number == number)
            .ok_or_else(unknown)?;
        let value = match (field.kind, wire) {
            (Kind::Discarded, _) => continue,
            (Kind::Inline(inner), Wire::Bytes(b)) => {
                if let Value::Object(embedded) = read(inner, b)? {
                    object.extend(embedded);
                }
                continue;
            }
            (Text, Wire::Bytes(b)) => json!(text(b)?),
            (Int, Wire::Varint(v)) => json!(v as i64),
            (Bool, Wire::Varint(v)) => json!(v != 0),
            (Kind::Message(inner), Wire::Bytes(b)) => read(inner, b)?,
            (Time, Wire::Bytes(b)) => match time(b)? {
                Some(at) => at,
                // Go writes a zero time as an empty message: no time at all.
                None => continue,
            },
            (IntOrString, Wire::Bytes(b)) => int_or_string(b)?,
            (Kind::Quantity, Wire::Bytes(b)) => quantity(b)?,
            (Kind::Bytes, Wire::Bytes(b)) => json!(crate::tokens::base64(b)),
            (Kind::RawJson, Wire::Bytes(b)) => raw_json(b)?,
            (TextMap | BytesMap | QuantityMap, Wire::Bytes(b)) => {
                let (key, value) = map_entry(b, field.kind)?;
                let map = object
                    .entry(field.name)
                    .or_insert_with(|| json!({}))
                    .as_object_mut()
                    .ok_or(ProtobufError::Malformed(
                        "a map field repeats as another kind",
                    ))?;
                map.insert(key, value);
                continue;
            }
            _ => return Err(unknown()),
        };
        let zero = matches!(&value, Value::String(t) if t.is_empty())
            || value == json!(0)
            || value == json!(false);
        if zero && !field.pointer && !field.repeated {
            continue;
        }
        if field.repeated {
            object
                .entry(field.name)
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .ok_or(ProtobufError::Malformed(
                    "a repeated field repeats as another kind",
                ))?
                .push(value);
        } else {
            object.insert(field.name.into(), value);
        }
    }
    Ok(Value::Object(object))
}

/// `meta.v1.FieldsV1` (its `Raw` bytes, field 1, are JSON) as that JSON.
fn raw_json(bytes: &[u8]) -> Result<Value, ProtobufError> {
    let mut value = json!({});
    for entry in Reader(bytes) {
        match entry? {
            (1, Wire::Bytes(b)) => {
                value = serde_json::from_slice(b)
                    .map_err(|_| ProtobufError::Malformed("a FieldsV1 does not hold JSON"))?;
            }
            _ => return Err(ProtobufError::Malformed("a FieldsV1 has another field")),
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

/// A map entry (`key` 1, `value` 2): the key, and the value as text, as base64, or as the
/// string of a `resource.Quantity` (its field 1).
fn map_entry(bytes: &[u8], kind: Kind) -> Result<(String, Value), ProtobufError> {
    let (mut key, mut value) = (String::new(), Vec::new());
    for entry in Reader(bytes) {
        match entry? {
            (1, Wire::Bytes(b)) => key = text(b)?,
            (2, Wire::Bytes(b)) => value = b.to_vec(),
            _ => {
                return Err(ProtobufError::Malformed(
                    "a map entry has a field other than key and value",
                ));
            }
        }
    }
    let value = if matches!(kind, BytesMap) {
        json!(crate::tokens::base64(&value))
    } else if matches!(kind, QuantityMap) {
        quantity(&value)?
    } else {
        json!(
            String::from_utf8(value)
                .map_err(|_| ProtobufError::Malformed("a map value is not UTF-8"))?
        )
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

/// `meta.v1.Time` as kube-apiserver writes it in JSON, RFC 3339 to the second; `None` for
/// the zero time (no seconds and no nanos).
fn time(bytes: &[u8]) -> Result<Option<Value>, ProtobufError> {
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
    Ok(Some(json!(at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())))
}

fn text(bytes: &[u8]) -> Result<String, ProtobufError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ProtobufError::Malformed("a string is not UTF-8"))
}

/// A field's value as the wire carries it.
#[derive(Clone, Copy)]
pub enum Wire<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1 (its eight bytes skipped).
    Fixed64,
    /// Wire type 2: a length-delimited payload.
    Bytes(&'a [u8]),
    /// Wire type 5 (its four bytes skipped).
    Fixed32,
}

impl Wire<'_> {
    fn type_number(self) -> u64 {
        match self {
            Wire::Varint(_) => 0,
            Wire::Fixed64 => 1,
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
                self.take(8)?;
                Wire::Fixed64
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
