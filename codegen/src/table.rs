//! The table the sim reads: the `.proto` messages with what the Go types say about their JSON.
//!
//! ```text
//! kind apps/v1 Deployment k8s.io.api.apps.v1.Deployment
//! message k8s.io.api.apps.v1.DeploymentSpec
//!   1 replicas one int32 keepzero
//!   3 template one k8s.io.api.core.v1.PodTemplateSpec
//! message k8s.io.api.authentication.v1.ExtraValue slice
//!   1 items many string
//! ```
//!
//! A field line is its number, JSON name, `one`/`many`/`map`, its type (a scalar or a
//! message's full name; a map's value type), then `keepzero` when a zero is written in JSON and
//! `inline` when the value's fields are the enclosing object's. `reserved N name` is a field
//! Kubernetes removed and keeps the number of (its Go declaration commented out).

use std::fmt::Write as _;

use crate::CodegenError;
use crate::go::GoPackage;
use crate::proto::{Label, ProtoFile};

/// One API package: its `.proto`, its Go types, and its version (the directory's name).
pub struct Package {
    /// The package's `generated.proto`.
    pub proto: ProtoFile,
    /// The package's Go types.
    pub go: GoPackage,
    /// Its version, e.g. `v1`.
    pub version: String,
}

/// The table's text; `header` lines become its leading comments.
pub fn write(header: &[String], packages: &[Package]) -> Result<String, CodegenError> {
    let mut out = String::new();
    for line in header {
        let _ = writeln!(out, "# {line}");
    }
    let mut kinds = Vec::new();
    let mut messages = Vec::new();
    for package in packages {
        for message in &package.proto.messages {
            let full = format!("{}.{}", package.proto.package, message.name);
            let go = package.go.structs.get(&message.name);
            // Quantity, Time, MicroTime marshal themselves: their struct has no protobuf tags.
            let tagged = go.filter(|go| !go.fields.is_empty());
            if let (Some(group), Some(go)) = (&package.go.group, go)
                && go.kind
            {
                let api_version = if group.is_empty() {
                    package.version.clone()
                } else {
                    format!("{group}/{}", package.version)
                };
                kinds.push(format!("kind {api_version} {} {full}", message.name));
            }
            let mut text = format!("message {full}");
            if package.go.slices.contains(&message.name) {
                text.push_str(" slice");
            }
            text.push('\n');
            let mut fields: Vec<_> = message.fields.iter().collect();
            fields.sort_by_key(|f| f.number);
            for field in fields {
                let go_field = tagged.map(|go| {
                    go.fields
                        .get(&field.number)
                        .ok_or_else(|| CodegenError::Mismatch {
                            message: full.clone(),
                            number: field.number,
                            what: format!(
                                "the Go struct has no field with protobuf number {}",
                                field.number
                            ),
                        })
                });
                let go_field = go_field.transpose()?;
                let message_typed = !crate::proto::SCALARS.contains(&field.ty.as_str());
                // An embedded struct (`json:",inline"`) whose fields are the parent's; an
                // embedded scalar (`time.Duration` in meta.v1.Duration) is a field like any.
                let inline = go_field.is_some_and(|f| f.inline) && message_typed;
                // Go's JSON name: the `.proto` keeps the Go field's name where a tag has no
                // `name=` (`Webhooks` in MutatingWebhookConfiguration). A field without one
                // (no json tag, or `json:"-"`) is in a message that marshals itself (raw
                // JSON, IntOrString): it keeps the `.proto` name.
                let json = match go_field {
                    Some(f) if !inline && !f.json.is_empty() && f.json != "-" => f.json.as_str(),
                    _ => field.name.as_str(),
                };
                let label = match field.label {
                    Label::One => "one",
                    Label::Many => "many",
                    Label::Map => "map",
                };
                let _ = write!(text, "  {} {json} {label} {}", field.number, field.ty);
                if go_field.is_some_and(|f| f.keeps_zero) && !inline {
                    text.push_str(" keepzero");
                }
                if inline {
                    text.push_str(" inline");
                }
                text.push('\n');
            }
            for (number, json) in tagged.map(|go| &go.reserved).into_iter().flatten() {
                let _ = writeln!(text, "  reserved {number} {json}");
            }
            messages.push((full, text));
        }
    }
    kinds.sort();
    messages.sort();
    for kind in kinds {
        let _ = writeln!(out, "{kind}");
    }
    for (_, text) in messages {
        out.push_str(&text);
    }
    Ok(out)
}
