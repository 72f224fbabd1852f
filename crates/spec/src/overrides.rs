//! Overrides of spec fields from the command line (`servebench run --set KEY=VALUE`,
//! `servebench rerun --set …`): a dotted path into the spec, the value read as YAML, and the
//! resolved spec checked exactly as a spec file is (schema, then semantic checks).
//!
//! Paths are relative to `spec:` (`workload.requests`, `sweep.max_concurrency`,
//! `trials.count`); `metadata.…` reaches the metadata. A list of named items (`variants`)
//! is indexed by name (`variants.fa_on.base_url`) or by position (`variants.0.base_url`).
//! Every key of the path must be one the schema allows at that level; an empty value
//! (`--set workload.seed=`) removes the field, so its default applies.

use serde_json::{Map, Value};

use crate::diagnostics::{Diagnostic, SpecErrors, did_you_mean};
use crate::load::{Spec, parse_str};
use crate::position::{KeyPath, PositionIndex, Segment};
use crate::schema;
use crate::types::SpecFile;

/// One `--set KEY=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Override {
    /// The dotted path as given, e.g. `workload.requests`.
    pub key: String,
    /// The value as given (read as YAML), e.g. `200` or `[64, 256]`.
    pub value: String,
}

impl Override {
    /// Parse `KEY=VALUE`.
    pub fn parse(s: &str) -> Result<Self, OverrideError> {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| OverrideError::Malformed(s.to_owned()))?;
        let key = k.trim();
        if key.is_empty() {
            return Err(OverrideError::Malformed(s.to_owned()));
        }
        Ok(Self {
            key: key.to_owned(),
            value: v.trim().to_owned(),
        })
    }

    /// `KEY=VALUE`, as written on the command line.
    pub fn to_arg(&self) -> String {
        format!("{}={}", self.key, self.value)
    }

    /// The path into the document (`spec.` added unless the key names a top-level key).
    pub fn path(&self) -> Vec<String> {
        let parts: Vec<String> = self.key.split('.').map(str::to_owned).collect();
        match parts.first().map(String::as_str) {
            Some("spec" | "metadata" | "apiVersion" | "kind") => parts,
            _ => std::iter::once("spec".to_owned()).chain(parts).collect(),
        }
    }
}

/// Why overrides could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum OverrideError {
    /// Not `KEY=VALUE`.
    #[error(
        "`--set {0}` needs KEY=VALUE, e.g. `--set workload.requests=200` or `--set \
         sweep.max_concurrency=[64,256]`"
    )]
    Malformed(String),
    /// A key of the path the schema does not allow there.
    #[error(
        "`--set {arg}`: the spec has no key `{key}` in `{at}`{suggestion}. Keys there: {allowed}"
    )]
    UnknownKey {
        /// The override as given.
        arg: String,
        /// The key not found.
        key: String,
        /// Where it was looked for (`spec.workload`).
        at: String,
        /// ` (did you mean `…`?)` or empty.
        suggestion: String,
        /// The keys allowed there.
        allowed: String,
    },
    /// A path that goes into a value that is not a mapping or a list.
    #[error("`--set {arg}`: `{at}` is a single value, not a mapping: set `{at}` itself")]
    NotAMapping {
        /// The override as given.
        arg: String,
        /// The path of the plain value.
        at: String,
    },
    /// A list item that is not there.
    #[error("`--set {arg}`: `{at}` has no item `{item}` (its items: {available})")]
    NoSuchItem {
        /// The override as given.
        arg: String,
        /// The list's path.
        at: String,
        /// The name or index given.
        item: String,
        /// Names (or indices) of the items there.
        available: String,
    },
    /// The value is not YAML.
    #[error(
        "`--set {arg}`: the value is not YAML ({error}); quote a string, write a list as `[64, 256]`"
    )]
    BadValue {
        /// The override as given.
        arg: String,
        /// The YAML error.
        error: String,
    },
    /// The spec with the overrides applied does not validate.
    #[error("{0}")]
    Invalid(SpecErrors),
}

/// `spec` with `overrides` applied in order, checked like a spec file: the schema's and the
/// semantic checks' diagnostics are located in the original file where the key is there,
/// and name the `--set` that wrote the key otherwise.
pub fn apply(spec: &Spec, overrides: &[Override], file: &str) -> Result<Spec, OverrideError> {
    if overrides.is_empty() {
        return Ok(spec.clone());
    }
    // The document as written, so checks that depend on what a spec spells out (a key
    // that has no effect, a key that conflicts) read the file plus the overrides: those
    // applied before (`spec.overrides`: a design that sets `trials.count` after the command
    // line's `-c 1` keeps the `-c 1`), then these.
    let earlier = spec
        .overrides
        .iter()
        .map(|s| Override::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut doc: Value = serde_yaml::from_str(&spec.source)
        .unwrap_or_else(|_| serde_json::to_value(&spec.file).unwrap_or(Value::Null));
    for o in earlier.iter().chain(overrides) {
        set(&mut doc, o)?;
    }
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    let original = PositionIndex::build(&spec.source);
    let relocate = |d: &mut Diagnostic| {
        let from = overrides
            .iter()
            .rev()
            .find(|o| starts_with(&d.path, &o.path()));
        match from {
            Some(o) => {
                d.pos = None;
                let note = format!("set by `--set {}`", o.to_arg());
                d.hint = Some(match d.hint.take() {
                    Some(h) => format!("{h} ({note})"),
                    None => note,
                });
            }
            // A problem the checks could not place in the document (the path is the root)
            // may come from any override: name them all.
            None if d.path.0.is_empty() => {
                let all: Vec<String> = overrides
                    .iter()
                    .map(|o| format!("`--set {}`", o.to_arg()))
                    .collect();
                let note = format!("in the spec with {} applied", all.join(", "));
                d.hint = Some(match d.hint.take() {
                    Some(h) => format!("{h} ({note})"),
                    None => note,
                });
                d.pos = None;
            }
            None => d.pos = original.locate(&d.path),
        }
    };
    match parse_str(&text, file) {
        Ok(mut new) => {
            new.warnings.iter_mut().for_each(relocate);
            new.source = spec.source.clone();
            new.path = spec.path.clone();
            new.overrides = (spec.overrides.iter().cloned())
                .chain(overrides.iter().map(Override::to_arg))
                .collect();
            Ok(new)
        }
        Err(mut e) => {
            e.diagnostics.iter_mut().for_each(relocate);
            Err(OverrideError::Invalid(e))
        }
    }
}

/// Apply one override to a spec file's JSON value (no validation: [`apply`] or
/// [`parse_str`] checks the result).
pub fn set(doc: &mut Value, o: &Override) -> Result<(), OverrideError> {
    let arg = o.to_arg();
    let value: Value = if o.value.is_empty() {
        Value::Null
    } else {
        serde_yaml::from_str(&o.value).map_err(|e| OverrideError::BadValue {
            arg: arg.clone(),
            error: e.to_string(),
        })?
    };
    let schema = schema::spec_schema();
    let path = o.path();
    let mut here = KeyPath::root();
    let mut node = doc;
    for (i, seg) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        let shown = |p: &KeyPath| {
            if p.0.is_empty() {
                "the document".to_owned()
            } else {
                p.to_string()
            }
        };
        match node {
            Value::Object(map) => {
                let allowed = schema::allowed_keys(&schema, &here);
                if !allowed.iter().any(|k| k == seg) && !schema::free_map(&schema, &here) {
                    let suggestion = did_you_mean(seg, allowed.iter().map(String::as_str))
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    return Err(OverrideError::UnknownKey {
                        arg,
                        key: seg.clone(),
                        at: shown(&here),
                        suggestion,
                        allowed: allowed.join(", "),
                    });
                }
                if last {
                    if value.is_null() {
                        map.remove(seg);
                    } else if (value.is_number() || value.is_boolean())
                        && schema::wants_string(&schema, &here.key(seg))
                    {
                        map.insert(seg.clone(), Value::String(o.value.clone()));
                    } else {
                        map.insert(seg.clone(), value);
                    }
                    return Ok(());
                }
                here = here.key(seg);
                node = map
                    .entry(seg.clone())
                    .or_insert_with(|| Value::Object(Map::new()));
                if node.is_null() {
                    *node = Value::Object(Map::new());
                }
            }
            Value::Array(items) => {
                let found = match seg.parse::<usize>() {
                    Ok(n) if n < items.len() => Some(n),
                    _ => items
                        .iter()
                        .position(|it| it.get("name").and_then(Value::as_str) == Some(seg)),
                };
                let Some(n) = found else {
                    let names: Vec<String> = items
                        .iter()
                        .enumerate()
                        .map(|(n, it)| {
                            it.get("name")
                                .and_then(Value::as_str)
                                .map_or_else(|| n.to_string(), str::to_owned)
                        })
                        .collect();
                    return Err(OverrideError::NoSuchItem {
                        arg,
                        at: shown(&here),
                        item: seg.clone(),
                        available: names.join(", "),
                    });
                };
                if last {
                    items[n] = value;
                    return Ok(());
                }
                here = here.index(n);
                node = &mut items[n];
            }
            _ => {
                return Err(OverrideError::NotAMapping {
                    arg,
                    at: shown(&here),
                });
            }
        }
    }
    Ok(())
}

/// `spec` as a spec file with `overrides` applied, validated (for a stored spec that has
/// no source text: `rerun`).
pub fn apply_to_file(
    file_spec: &SpecFile,
    overrides: &[Override],
    label: &str,
) -> Result<Spec, OverrideError> {
    let source = serde_json::to_string_pretty(file_spec).unwrap_or_default();
    let base = Spec {
        file: file_spec.clone(),
        path: None,
        source,
        warnings: Vec::new(),
        overrides: Vec::new(),
    };
    if overrides.is_empty() {
        return parse_str(&base.source, label).map_err(OverrideError::Invalid);
    }
    apply(&base, overrides, label)
}

/// Whether diagnostic path `p` lies under the override path `parts` (list items matched by
/// position or by any name: a diagnostic's path names indices).
fn starts_with(p: &KeyPath, parts: &[String]) -> bool {
    if p.0.len() < parts.len() {
        return false;
    }
    p.0.iter().zip(parts).all(|(s, k)| match s {
        Segment::Key(x) => x == k,
        Segment::Index(i) => k.parse::<usize>().map_or(true, |n| n == *i),
    })
}
