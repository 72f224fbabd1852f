//! Reading a spec: YAML syntax → JSON Schema → typed value → semantic checks, each problem
//! located at file:line:column. A spec with schema errors is still checked for the
//! semantic ones where what remains can be typed, so one pass says every error it can.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::diagnostics::{Diagnostic, Severity, SpecErrors, sort};
use crate::position::{KeyPath, Pos, PositionIndex, Segment};
use crate::types::SpecFile;
use crate::{schema, semantic};

/// A spec that passed every check, with its non-fatal warnings.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The typed spec, defaults filled in.
    pub file: SpecFile,
    /// Where it was read from, if from a file.
    pub path: Option<PathBuf>,
    /// The source text.
    pub source: String,
    /// Warnings (the spec is usable).
    pub warnings: Vec<Diagnostic>,
    /// The `--set KEY=VALUE` overrides applied to the file, in order (`file` is the spec with
    /// them applied; see `overrides::apply`).
    pub overrides: Vec<String>,
}

/// Why a spec file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read spec file {path}: {error}")]
    Io {
        /// The path given.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The spec has errors.
    #[error("{0}")]
    Invalid(SpecErrors),
}

/// Read and check a spec file.
pub fn load(path: &Path) -> Result<Spec, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.to_owned(),
        error: source,
    })?;
    let source = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let d = not_text(&e.as_bytes()[..at], e.as_bytes()[at], "not UTF-8");
            return Err(LoadError::Invalid(SpecErrors {
                file: path.display().to_string(),
                diagnostics: vec![d],
            }));
        }
    };
    let mut spec = parse_str(&source, &path.display().to_string()).map_err(LoadError::Invalid)?;
    spec.path = Some(path.to_owned());
    Ok(spec)
}

/// Check a spec given as text; `file` labels the diagnostics.
pub fn parse_str(source: &str, file: &str) -> Result<Spec, SpecErrors> {
    let fail = |mut diagnostics: Vec<Diagnostic>| {
        sort(&mut diagnostics);
        SpecErrors {
            file: file.to_owned(),
            diagnostics,
        }
    };
    if let Some(d) = control_byte(source).or_else(|| syntax_error(source)) {
        return Err(fail(vec![d]));
    }
    let index = PositionIndex::build(source);
    let mut diags: Vec<Diagnostic> = index
        .duplicates()
        .iter()
        .map(|(path, pos)| {
            Diagnostic::error(path.clone(), format!("key `{path}` is written twice"))
                .with_hint("YAML keeps only one of them silently: delete one")
                .at(Some(*pos))
        })
        .collect();
    let doc: Value = match serde_yaml::from_str(source) {
        Ok(v) => v,
        Err(e) => {
            let pos = e.location().map(|l| Pos {
                line: l.line(),
                col: l.column(),
            });
            diags.push(
                Diagnostic::error(KeyPath::root(), format!("cannot read the YAML: {e}")).at(pos),
            );
            return Err(fail(diags));
        }
    };
    if !doc.is_object() {
        diags.push(
            Diagnostic::error(
                KeyPath::root(),
                "the spec must be a mapping with apiVersion, kind, metadata and spec",
            )
            .with_hint("start from specs/sim-ab.yaml or see docs/spec.md")
            .at(Some(Pos { line: 1, col: 1 })),
        );
        return Err(fail(diags));
    }
    diags.extend(schema::check(&doc, &index));
    if !diags.is_empty() {
        // One pass says every error it can: the rest of the spec is checked too.
        diags.extend(rest_checked(&doc, &diags, &index));
        return Err(fail(diags));
    }
    // The schema counts 1000.0 (YAML `1e3`) as an integer, as JSON Schema does; so does the
    // typed parse, which would otherwise refuse it without saying where.
    let mut doc = doc;
    integral_floats(&mut doc);
    let file_spec: SpecFile = match serde_path_to_error::deserialize(doc) {
        Ok(s) => s,
        Err(e) => {
            // The key the typed parse stopped at, so that the error (and a `--set` that
            // wrote the value) is named, not the document.
            let path = typed_path(e.path());
            let pos = index.locate(&path).or(Some(Pos { line: 1, col: 1 }));
            let message = if path.0.is_empty() {
                e.inner().to_string()
            } else {
                format!("`{path}`: {}", e.inner())
            };
            diags.push(Diagnostic::error(path, message).at(pos));
            return Err(fail(diags));
        }
    };
    let mut found = semantic::check(&file_spec, &index);
    for d in &mut found {
        if d.pos.is_none() {
            d.pos = index.locate(&d.path);
        }
    }
    if found.iter().any(|d| d.severity == Severity::Error) {
        return Err(fail(found));
    }
    sort(&mut found);
    Ok(Spec {
        file: file_spec,
        path: None,
        source: source.to_owned(),
        warnings: found,
        overrides: Vec::new(),
    })
}

/// The key path a typed parse error names.
fn typed_path(p: &serde_path_to_error::Path) -> KeyPath {
    use serde_path_to_error::Segment as S;
    let mut out = KeyPath::root();
    for seg in p.iter() {
        out = match seg {
            S::Seq { index } => out.index(*index),
            S::Map { key } => out.key(key),
            S::Enum { variant } => out.key(variant),
            S::Unknown => break,
        };
    }
    out
}

/// The semantic problems of the rest of a spec whose schema found `errors`: the values
/// they name are taken out (a key's defaults fill in; a bad list element takes its list),
/// and what remains is typed and checked, so that `validate` says every error it can in
/// one pass rather than one stage per edit. Nothing when what remains cannot be typed (a
/// required key was the one at fault); a problem under a value taken out is not repeated.
fn rest_checked(doc: &Value, errors: &[Diagnostic], index: &PositionIndex) -> Vec<Diagnostic> {
    let mut rest = doc.clone();
    let mut gone: Vec<KeyPath> = Vec::new();
    for e in errors {
        let mut path = e.path.clone();
        while matches!(path.0.last(), Some(Segment::Index(_))) {
            path = path.parent();
        }
        if path.0.is_empty() {
            return Vec::new();
        }
        remove(&mut rest, &path);
        gone.push(path);
    }
    integral_floats(&mut rest);
    let Ok(spec) = serde_json::from_value::<SpecFile>(rest) else {
        return Vec::new();
    };
    let mut found: Vec<Diagnostic> = semantic::check(&spec, index)
        .into_iter()
        // A problem under a value taken out, or at one that holds it (its absence there is
        // this pass's doing, e.g. "needs `requests`"), is left to the schema's error.
        .filter(|d| {
            !gone
                .iter()
                .any(|g| d.path.0.starts_with(&g.0) || g.0.starts_with(&d.path.0))
        })
        .collect();
    for d in &mut found {
        if d.pos.is_none() {
            d.pos = index.locate(&d.path);
        }
    }
    found
}

/// `doc` without the value at `path` (nothing when it is not there).
fn remove(doc: &mut Value, path: &KeyPath) {
    let Some((last, parents)) = path.0.split_last() else {
        return;
    };
    let mut at = doc;
    for seg in parents {
        let next = match seg {
            Segment::Key(k) => at.get_mut(k.as_str()),
            Segment::Index(i) => at.get_mut(*i),
        };
        match next {
            Some(v) => at = v,
            None => return,
        }
    }
    if let (Segment::Key(k), Value::Object(m)) = (last, at) {
        m.remove(k);
    }
}

/// Every number with no fractional part written as a float (`1e3`, `64.0`) as the integer it
/// is, where it is exact (below 2⁵³).
fn integral_floats(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9_007_199_254_740_992.0
            {
                *v = if f >= 0.0 {
                    Value::from(f as u64)
                } else {
                    Value::from(f as i64)
                };
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats),
        Value::Object(map) => map.values_mut().for_each(integral_floats),
        _ => {}
    }
}

/// The first control character YAML does not allow (any C0 but tab, LF and CR; DEL),
/// refused as a file that is not text: a binary file given as a spec (an image, an archive,
/// a compiled program) was read as "the file is empty" or a YAML error far from the cause.
fn control_byte(source: &str) -> Option<Diagnostic> {
    let at = source
        .bytes()
        .position(|b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7f)?;
    let bytes = source.as_bytes();
    Some(not_text(&bytes[..at], bytes[at], "a control character"))
}

/// "the file is not text: byte N (line L, column C) is 0xXX, …", at that line and column,
/// for a byte that no YAML text holds; `before` is the text up to it.
fn not_text(before: &[u8], byte: u8, what: &str) -> Diagnostic {
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = before.len()
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1)
        + 1;
    Diagnostic::error(
        KeyPath::root(),
        format!(
            "the file is not text: byte {} (line {line}, column {col}) is 0x{byte:02x}, {what}; \
             a spec is YAML text",
            before.len()
        ),
    )
    .with_hint("is this the spec file? Start from specs/sim-ab.yaml or see docs/spec.md")
    .at(Some(Pos { line, col }))
}

fn syntax_error(source: &str) -> Option<Diagnostic> {
    match yaml_rust2::YamlLoader::load_from_str(source) {
        Err(e) if e.info().contains("duplicated key") => {
            let m = e.marker();
            let key = e.info().split('"').nth(1).unwrap_or("?").to_owned();
            Some(
                Diagnostic::error(
                    KeyPath::root(),
                    format!("key `{key}` is written twice in one mapping"),
                )
                .with_hint("YAML allows each key once: delete one of them")
                .at(Some(Pos {
                    line: m.line(),
                    col: m.col() + 1,
                })),
            )
        }
        Err(e) => {
            let m = e.marker();
            Some(
                Diagnostic::error(KeyPath::root(), format!("YAML syntax error: {}", e.info()))
                    .with_hint("check indentation (spaces, not tabs), colons after keys and closing brackets and quotes")
                    .at(Some(Pos { line: m.line(), col: m.col() + 1 })),
            )
        }
        Ok(docs) if docs.is_empty() => Some(
            Diagnostic::error(KeyPath::root(), "the file is empty")
                .with_hint("start from specs/sim-ab.yaml or see docs/spec.md")
                .at(Some(Pos { line: 1, col: 1 })),
        ),
        Ok(docs) if docs.len() > 1 => Some(
            Diagnostic::error(
                KeyPath::root(),
                format!(
                    "the file holds {} YAML documents; a spec is one",
                    docs.len()
                ),
            )
            .with_hint("put each experiment in its own file")
            .at(Some(Pos { line: 1, col: 1 })),
        ),
        Ok(_) => None,
    }
}
