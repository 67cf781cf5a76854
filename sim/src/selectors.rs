//! Label and field selectors, as list and watch take them.

use serde_json::Value;

use crate::errors::ApiError;
use crate::selector_grammar::Requirement;

/// A parsed label selector: every requirement must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h,i>1`, as kube-apiserver does
    /// ([`crate::selector_grammar`]); what it cannot parse is a 400 in its words.
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        crate::selector_grammar::parse(text)
            .map(Self)
            .map_err(ApiError::bad_request)
    }

    /// A `metav1.LabelSelector` (`matchLabels` and `matchExpressions`), as webhook
    /// configurations carry it. An absent or empty selector selects everything; an unknown
    /// operator selects nothing (kube-apiserver refuses such a selector when it is stored).
    pub fn from_json(selector: &Value) -> Self {
        let mut requirements: Vec<Requirement> = selector["matchLabels"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| Requirement::Equals(k.clone(), v.as_str().unwrap_or("").into()))
            .collect();
        for expression in selector["matchExpressions"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let key = expression["key"].as_str().unwrap_or("").to_string();
            let values: Vec<String> = expression["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(String::from))
                .collect();
            requirements.push(match expression["operator"].as_str() {
                Some("In") => Requirement::In(key, values),
                Some("NotIn") => Requirement::NotIn(key, values),
                Some("Exists") => Requirement::Exists(key),
                Some("DoesNotExist") => Requirement::DoesNotExist(key),
                _ => Requirement::In(key, vec![]),
            });
        }
        Self(requirements)
    }

    /// Whether an object's labels satisfy every requirement.
    pub fn matches(&self, object: &Value) -> bool {
        self.matches_labels(&object["metadata"]["labels"])
    }

    /// Whether a label map satisfies every requirement.
    pub fn matches_labels(&self, labels: &Value) -> bool {
        let label = |key: &str| labels.get(key).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => label(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            Requirement::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::NotIn(k, vs) => label(k).is_none_or(|l| !vs.iter().any(|v| v == l)),
            Requirement::Exists(k) => label(k).is_some(),
            Requirement::DoesNotExist(k) => label(k).is_none(),
            Requirement::GreaterThan(k, n) => label(k)
                .and_then(|l| l.parse::<i64>().ok())
                .is_some_and(|l| l > *n),
            Requirement::LessThan(k, n) => label(k)
                .and_then(|l| l.parse::<i64>().ok())
                .is_some_and(|l| l < *n),
        })
    }
}

/// Whether `labels` satisfy a `metav1.LabelSelector` given as JSON.
pub fn matches_label_selector(selector: &Value, labels: &Value) -> bool {
    LabelSelector::from_json(selector).matches_labels(labels)
}

/// A parsed field selector: `path=value`, `path==value` or `path!=value` terms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses a field selector; paths are dotted (`metadata.name`, `spec.barbicanRef.name`).
    pub fn parse(text: &str) -> Result<Self, ApiError> {
        let mut out = Vec::new();
        for term in text.split(',').filter(|t| !t.trim().is_empty()) {
            let (path, equal, value) = if let Some((p, v)) = term.split_once("!=") {
                (p, false, v)
            } else if let Some((p, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (p, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid field selector term {term:?}"
                )));
            };
            out.push((path.trim().to_string(), equal, value.trim().to_string()));
        }
        Ok(Self(out))
    }

    /// Refuses a term naming a field `t` cannot be selected by, as kube-apiserver does (400):
    /// only `metadata.name`, `metadata.namespace` and the kind's own selectable fields are.
    pub fn check_supported(&self, t: &crate::resources::ResourceType) -> Result<(), ApiError> {
        for (path, _, _) in &self.0 {
            let known = matches!(path.as_str(), "metadata.name" | "metadata.namespace")
                || t.selectable_fields.iter().any(|f| f == path);
            if !known {
                // A built-in kind without field conversions of its own answers with
                // apimachinery's default; a kind with its own, and a custom resource, with theirs.
                return Err(ApiError::bad_request(
                    if t.is_builtin() && t.selectable_fields.is_empty() {
                        format!(
                            "{path:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                        )
                    } else {
                        format!("field label not supported: {path}")
                    },
                ));
            }
        }
        Ok(())
    }

    /// Whether the object's fields satisfy every term (a missing field reads as "", a
    /// missing boolean as `false`, as kube-apiserver's `fmt.Sprint` of the Go field does).
    pub fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(path, equal, value)| {
            let pointer = format!("/{}", path.replace('.', "/"));
            let actual = match object.pointer(&pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None if BOOLEAN_FIELDS.contains(&path.as_str()) => {
                    "false".into()
                }
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }
}

/// A structured LabelSelector (`matchLabels`, `matchExpressions`) as its selector string
/// (`app=x,tier in (a,b),!gone`), as `metav1.LabelSelectorAsSelector(..).String()` writes it;
/// empty when it selects everything.
pub fn label_selector_string(selector: &Value) -> String {
    let mut terms: Vec<String> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    for expression in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = expression["key"].as_str().unwrap_or_default();
        let values: Vec<&str> = expression["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        terms.push(match expression["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            _ => format!("!{key}"),
        });
    }
    terms.join(",")
}

/// The selectable fields that are Go booleans: unset, they read `false`.
const BOOLEAN_FIELDS: [&str; 2] = ["spec.unschedulable", "spec.hostNetwork"];

/// Whether `name` matches `glob`, where `*` stands for any run of characters.
pub(crate) fn glob_matches(glob: &str, name: &str) -> bool {
    match glob.split_once('*') {
        None => glob == name,
        Some((prefix, rest)) => {
            let Some(tail) = name.strip_prefix(prefix) else {
                return false;
            };
            (0..=tail.len())
                .filter(|i| tail.is_char_boundary(*i))
                .any(|i| glob_matches(rest, &tail[i..]))
        }
    }
}
