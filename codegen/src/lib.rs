//! The generator of the sim's protobuf message table (`sim/src/protobuf/kubernetes.table`).
//!
//! Kubernetes describes its wire format twice: `generated.proto` carries each message's field
//! numbers, types and repetition; the Go types beside it carry what the JSON form of a value
//! is: the field's JSON name, whether a zero is kept (a pointer, or no `omitempty`) or left
//! out, whether a struct is embedded in its parent's object (`json:",inline"`), which types are
//! kinds (they embed `TypeMeta`) and which messages stand for a Go slice. [`table`] joins the
//! two, checking they agree, into one line-based table the sim reads at start. The sources are
//! k8s.io/api, apimachinery, apiextensions-apiserver and kube-aggregator: every built-in kind.

pub mod go;
pub mod proto;
pub mod table;

/// Why the table could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// A `.proto` line this generator does not understand.
    #[error("{file}:{line}: {what}")]
    Proto {
        /// The file.
        file: String,
        /// Its 1-based line.
        line: usize,
        /// What was not understood.
        what: String,
    },
    /// The Go types and the `.proto` disagree.
    #[error("{message} field {number}: {what}")]
    Mismatch {
        /// The message's full name.
        message: String,
        /// The field number.
        number: u32,
        /// How they disagree.
        what: String,
    },
}
