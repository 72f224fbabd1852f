//! What the tables of the peers' flags hold, and the lines a translation collects.

use super::argv::{Arity, FlagDef};
use super::{Line, Outcome, Values, shown};

/// What a flag does when given, when the translation itself does not write its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Policy {
    /// The translation reads it and writes its line.
    Read,
    /// Read only with one of these datasets (`--dataset-name`); with another the tool
    /// ignores it too.
    Dataset(&'static [&'static str]),
    /// Needs nothing in a spec, for this reason.
    Ignored(&'static str),
    /// servebench cannot do it, for this reason.
    Refused(&'static str),
}

/// One row of a tool's table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    pub(crate) name: &'static str,
    pub(crate) arity: Arity,
    pub(crate) policy: Policy,
}

pub(crate) const fn row(name: &'static str, arity: Arity, policy: Policy) -> Row {
    Row {
        name,
        arity,
        policy,
    }
}

/// The parser's view of a table.
pub(crate) fn defs(rows: &[Row]) -> Vec<FlagDef> {
    rows.iter()
        .map(|r| FlagDef {
            name: r.name,
            arity: r.arity,
        })
        .collect()
}

/// The lines of a translation, one per flag given (and per default written out).
#[derive(Debug, Default)]
pub(crate) struct Lines {
    pub(crate) lines: Vec<Line>,
    done: Vec<&'static str>,
}

impl Lines {
    fn push(&mut self, flag: String, outcome: Outcome, text: impl Into<String>) {
        self.lines.push(Line {
            flag,
            outcome,
            text: text.into(),
        });
    }

    /// A given flag, written into the spec.
    pub(crate) fn mapped(&mut self, name: &'static str, v: &Values<'_>, text: impl Into<String>) {
        self.done.push(name);
        self.push(shown(name, v), Outcome::Mapped, text);
    }

    /// A given flag servebench cannot follow.
    pub(crate) fn refused(&mut self, name: &'static str, v: &Values<'_>, text: impl Into<String>) {
        self.done.push(name);
        self.push(shown(name, v), Outcome::Refused, text);
    }

    /// A given flag that needs nothing.
    pub(crate) fn ignored(&mut self, name: &'static str, v: &Values<'_>, text: impl Into<String>) {
        self.done.push(name);
        self.push(shown(name, v), Outcome::Ignored, text);
    }

    /// A flag not given whose default shapes the run: `--flag DEFAULT (default)`.
    pub(crate) fn tool_default(
        &mut self,
        name: &'static str,
        value: &str,
        text: impl Into<String>,
    ) {
        self.done.push(name);
        self.push(format!("{name} {value} (default)"), Outcome::Default, text);
    }

    /// A flag not given whose default servebench cannot follow: `--flag DEFAULT (default)`.
    pub(crate) fn refused_default(
        &mut self,
        name: &'static str,
        value: &str,
        text: impl Into<String>,
    ) {
        self.done.push(name);
        self.push(format!("{name} {value} (default)"), Outcome::Refused, text);
    }

    /// A given flag, or its default when not given.
    pub(crate) fn given_or_default(
        &mut self,
        name: &'static str,
        v: &Values<'_>,
        default: &str,
        text: impl Into<String>,
    ) {
        if v.has(name) {
            self.mapped(name, v, text);
        } else {
            self.tool_default(name, default, text);
        }
    }

    /// Lines for the given flags the translation did not speak of, from the table.
    pub(crate) fn finish(
        mut self,
        rows: &[Row],
        v: &Values<'_>,
        dataset: &str,
        tool: &str,
    ) -> Vec<Line> {
        for r in rows {
            if !v.has(r.name) || self.done.contains(&r.name) {
                continue;
            }
            match r.policy {
                Policy::Ignored(why) => self.ignored(r.name, v, why),
                Policy::Refused(why) => self.refused(r.name, v, why),
                Policy::Dataset(kinds) if !kinds.contains(&dataset) => self.ignored(
                    r.name,
                    v,
                    format!(
                        "{tool} reads it only with --dataset-name {}; this command's dataset \
                         is {dataset}",
                        kinds.join(" or ")
                    ),
                ),
                // The translation reads it: given at its default, it changes nothing.
                Policy::Read | Policy::Dataset(_) => {
                    self.ignored(r.name, v, "read; nothing to change from the spec above")
                }
            }
        }
        self.lines
    }
}
