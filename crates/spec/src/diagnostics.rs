//! Problems found in a spec, each with its location, and how they are printed.

use std::fmt;

use serde::Serialize;

use crate::position::{KeyPath, Pos};

/// Whether a problem stops the spec from being used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The spec is invalid.
    Error,
    /// The spec is valid but probably not what was meant.
    Warning,
}

/// One problem, located.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Path of the key concerned, e.g. `spec.workload.request_rate`.
    #[serde(serialize_with = "ser_path")]
    pub path: KeyPath,
    /// Line and column (1-based) in the file, where known.
    pub pos: Option<Pos>,
    /// What is wrong.
    pub message: String,
    /// What to write instead, where there is something to say.
    pub hint: Option<String>,
}

fn ser_path<S: serde::Serializer>(p: &KeyPath, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(p)
}

impl Serialize for Pos {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Pos", 2)?;
        st.serialize_field("line", &self.line)?;
        st.serialize_field("column", &self.col)?;
        st.end()
    }
}

impl Diagnostic {
    /// A new error at `path`.
    pub fn error(path: KeyPath, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            path,
            pos: None,
            message: message.into(),
            hint: None,
        }
    }
    /// A new warning at `path`.
    pub fn warning(path: KeyPath, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            path,
            pos: None,
            message: message.into(),
            hint: None,
        }
    }
    /// Add a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
    /// Set the position.
    pub fn at(mut self, pos: Option<Pos>) -> Self {
        self.pos = pos;
        self
    }
    /// Render as `file:line:col: error: message`, then the key path and the hint.
    pub fn render(&self, file: &str) -> String {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let loc = match self.pos {
            Some(p) => format!("{file}:{}:{}", p.line, p.col),
            None => file.to_owned(),
        };
        let mut s = format!("{loc}: {sev}: {}\n  at key: {}", self.message, self.path);
        if let Some(h) = &self.hint {
            s.push_str(&format!("\n  hint: {h}"));
        }
        s
    }
}

/// Every problem found in one spec file; returned when the spec has at least one error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecErrors {
    /// The file as given by the caller.
    pub file: String,
    /// Errors and warnings, errors first, each group in document order.
    pub diagnostics: Vec<Diagnostic>,
}

impl SpecErrors {
    /// Number of errors (not warnings).
    pub fn error_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }
}

impl fmt::Display for SpecErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.diagnostics {
            writeln!(f, "{}", d.render(&self.file))?;
        }
        let n = self.error_count();
        write!(
            f,
            "{}: {} error{}",
            self.file,
            n,
            if n == 1 { "" } else { "s" }
        )
    }
}

impl std::error::Error for SpecErrors {}

/// Sort: errors before warnings, then by position.
pub(crate) fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by(|a, b| {
        (
            a.severity,
            a.pos.map(|p| (p.line, p.col)),
            a.path.to_string(),
        )
            .cmp(&(
                b.severity,
                b.pos.map(|p| (p.line, p.col)),
                b.path.to_string(),
            ))
    });
}

/// The closest of `candidates` to `got`, if close enough to be a likely typo.
pub fn did_you_mean<'a>(
    got: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(got, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_owned())
}
