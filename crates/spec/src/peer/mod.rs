//! A peer's benchmark command line as a servebench spec (`servebench from sglang|vllm --
//! ARGV…`): SGLang's `python -m sglang.bench_serving` and vLLM's `vllm bench serve`, read
//! flag by flag against the tools' own argument parsers (the versions are in [`sglang`] and
//! [`vllm`]; every flag of those parsers is in their tables, a test checks it against the
//! flag lists under `crates/spec/tests/fixtures/peer-flags/`).
//!
//! Every flag given gets a line saying what it became (`mapped`), why it needs nothing
//! (`ignored`: display, output files), or why servebench cannot do what it asks
//! (`refused`); the tool's defaults that shape the workload are written out too (`default`),
//! because they are where a hand translation goes wrong (bench_serving's default
//! `--random-range-ratio 0.0` draws every length from 1 up). Flags the tool does not have are
//! listed as unknown.

pub mod argv;
mod common;
mod draft;
pub mod sglang;
mod table;
pub mod vllm;

pub use draft::{Draft, DraftDataset, DraftImage, DraftTrace, MODEL_PLACEHOLDER};

/// What became of one flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Given, and written into the spec.
    Mapped,
    /// Not given: the tool's default, written into the spec because it shapes the run.
    Default,
    /// Given, and needs nothing in a spec (display, output files, a client detail).
    Ignored,
    /// Given, and servebench cannot do what it asks: the spec does not measure what the
    /// command did.
    Refused,
}

/// One line of the translation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Line {
    /// The flag and its value as the tool reads it (`--request-rate -1`).
    pub flag: String,
    /// What became of it.
    pub outcome: Outcome,
    /// What it became, or why not.
    pub text: String,
}

/// A command line translated.
#[derive(Debug, Clone, PartialEq)]
pub struct Translation {
    /// The tool and the version whose parser was read.
    pub tool: &'static str,
    /// The spec drafted.
    pub draft: Draft,
    /// One line per flag given, and per default written out.
    pub lines: Vec<Line>,
    /// Options the tool's parser does not have (argparse would exit on them).
    pub unknown: Vec<String>,
    /// Tokens that are no option's value.
    pub stray: Vec<String>,
    /// What the spec still needs from the user (a model name the tool asks the server for).
    pub needs: Vec<String>,
    /// What servebench does beyond the command (repeated trials).
    pub notes: Vec<String>,
}

impl Translation {
    /// Whether the spec measures what the command did: nothing refused, nothing unknown.
    pub fn faithful(&self) -> bool {
        self.unknown.is_empty()
            && self.stray.is_empty()
            && !self.lines.iter().any(|l| l.outcome == Outcome::Refused)
    }

    /// How many lines have `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.lines.iter().filter(|l| l.outcome == outcome).count()
    }

    /// The spec as YAML, headed by the translation as comments.
    pub fn to_yaml(&self, command: &str) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "# Translated by `servebench from` from {} (flags as its parser reads them):\n",
            self.tool
        ));
        for l in wrap(command, 94, "#   ") {
            out.push_str(&l);
            out.push('\n');
        }
        for (outcome, head) in [
            (Outcome::Mapped, "mapped"),
            (
                Outcome::Default,
                "the tool's defaults that shape the run, written out",
            ),
            (Outcome::Ignored, "ignored (nothing to set in a spec)"),
            (
                Outcome::Refused,
                "REFUSED: servebench cannot do this, so the spec does not measure what the \
                 command did",
            ),
        ] {
            let lines: Vec<&Line> = self.lines.iter().filter(|l| l.outcome == outcome).collect();
            if lines.is_empty() {
                continue;
            }
            out.push_str(&format!("#\n# {head}:\n"));
            for l in lines {
                for w in wrap(&format!("{} → {}", l.flag, l.text), 94, "#     ")
                    .into_iter()
                    .enumerate()
                    .map(|(i, w)| {
                        if i == 0 {
                            w.replacen("#     ", "#   ", 1)
                        } else {
                            w
                        }
                    })
                {
                    out.push_str(&w);
                    out.push('\n');
                }
            }
        }
        if !self.unknown.is_empty() || !self.stray.is_empty() {
            out.push_str(&format!(
                "#\n# UNKNOWN to {} (its parser would stop on them):\n",
                self.tool
            ));
            for u in self.unknown.iter().chain(&self.stray) {
                out.push_str(&format!("#   {u}\n"));
            }
        }
        if !self.notes.is_empty() {
            out.push_str("#\n# servebench's own:\n");
            for n in &self.notes {
                for (i, w) in wrap(n, 94, "#     ").into_iter().enumerate() {
                    out.push_str(&if i == 0 {
                        w.replacen("#     ", "#   ", 1)
                    } else {
                        w
                    });
                    out.push('\n');
                }
            }
        }
        if !self.needs.is_empty() {
            out.push_str("#\n# before running, set:\n");
            for n in &self.needs {
                for w in wrap(n, 94, "#     ").into_iter().enumerate().map(|(i, w)| {
                    if i == 0 {
                        w.replacen("#     ", "#   ", 1)
                    } else {
                        w
                    }
                }) {
                    out.push_str(&w);
                    out.push('\n');
                }
            }
        }
        out.push_str(&self.draft.to_yaml());
        out
    }
}

/// `text` in lines of at most about `width` characters, each starting with `prefix`.
fn wrap(text: &str, width: usize, prefix: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::from(prefix);
    for word in text.split_whitespace() {
        if cur.len() > prefix.len() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::replace(&mut cur, String::from(prefix)));
        }
        if cur.len() > prefix.len() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if cur.len() > prefix.len() {
        lines.push(cur);
    }
    lines
}

/// Why a command line could not be translated at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    /// The tokens could not be read as the tool's parser reads them.
    #[error("{0}")]
    Argv(#[from] argv::ArgvError),
    /// A value the tool's parser would refuse (`--num-prompts many`).
    #[error("`{flag} {value}`: {why}")]
    BadValue {
        /// The flag.
        flag: String,
        /// The value.
        value: String,
        /// What the tool expects.
        why: String,
    },
}

/// Values of given flags, read as the tools' parsers type them.
pub(crate) struct Values<'a> {
    pub(crate) parsed: &'a argv::Parsed,
}

impl<'a> Values<'a> {
    pub(crate) fn has(&self, name: &str) -> bool {
        self.parsed.given.contains_key(name)
    }

    pub(crate) fn str(&self, name: &str) -> Option<&'a str> {
        self.parsed
            .given
            .get(name)
            .and_then(|g| g.values.last())
            .map(String::as_str)
    }

    pub(crate) fn list(&self, name: &str) -> Vec<String> {
        self.parsed
            .given
            .get(name)
            .map(|g| g.values.clone())
            .unwrap_or_default()
    }

    /// `type=int`.
    pub(crate) fn int(&self, name: &str) -> Result<Option<i64>, PeerError> {
        self.str(name)
            .map(|v| {
                v.trim().parse::<i64>().map_err(|_| PeerError::BadValue {
                    flag: name.to_owned(),
                    value: v.to_owned(),
                    why: "not a whole number (the tool's parser has `type=int`)".into(),
                })
            })
            .transpose()
    }

    /// `type=float` (Python's `float()`: `inf`, `Infinity`, `-1`, `1e3`).
    pub(crate) fn float(&self, name: &str) -> Result<Option<f64>, PeerError> {
        self.str(name).map(|v| py_float(name, v)).transpose()
    }
}

/// A value as Python's `float()` reads it.
pub(crate) fn py_float(flag: &str, v: &str) -> Result<f64, PeerError> {
    let t = v.trim().to_ascii_lowercase();
    let t = t.strip_prefix('+').unwrap_or(&t);
    match t {
        "inf" | "infinity" => Ok(f64::INFINITY),
        "-inf" | "-infinity" => Ok(f64::NEG_INFINITY),
        _ => t.parse::<f64>().map_err(|_| PeerError::BadValue {
            flag: flag.to_owned(),
            value: v.to_owned(),
            why: "not a number (the tool's parser has `type=float`)".into(),
        }),
    }
}

/// `--flag value` as a line's flag text.
pub(crate) fn shown(flag: &str, v: &Values<'_>) -> String {
    match v.parsed.given.get(flag) {
        Some(g) if g.values.is_empty() => flag.to_owned(),
        Some(g) => format!("{flag} {}", g.values.join(" ")),
        None => flag.to_owned(),
    }
}

/// The flags of SGLang's (`sglang`) or vLLM's (`vllm`) parser that the translation knows, in
/// the parser's order (empty for another name).
pub fn flag_names(tool: &str) -> Vec<&'static str> {
    let rows = match tool {
        "sglang" => sglang::ROWS,
        "vllm" => vllm::ROWS,
        _ => &[],
    };
    rows.iter().map(|r| r.name).collect()
}
