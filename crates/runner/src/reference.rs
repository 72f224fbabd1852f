//! Reference answers (`spec.equivalence.reference`, docs/equivalence.md): a JSONL file of
//! prompts, each with the answer a completion must give or a regex it must match, and the
//! rule that scores a completion right or wrong.
//!
//! The rule, exactly:
//! * `{"prompt": …, "answer": "A"}`: right when the completion's *first line* equals `A`,
//!   both trimmed of whitespace at both ends — the text with its leading whitespace
//!   removed, up to its first line break (`\n`; the whole text if there is none).
//!   Case and punctuation count: `"82."` is not `"82"` (write a regex for that).
//! * `{"prompt": …, "regex": "R"}`: right when `R` (Rust `regex` syntax) matches anywhere in
//!   the completion's whole text; anchor it (`^…$`, `(?m)`) to ask for more.
//!
//! A line may give `messages` (`[{"role": …, "content": …}]`) instead of `prompt`. A line
//! with both `answer` and `regex` is refused (which one would count is not obvious), as is
//! one with neither.

use std::path::Path;

use regex::Regex;
use serde_json::Value;

use crate::dataset::{ChatMessage, PromptBody};

/// How a completion is scored.
#[derive(Debug, Clone)]
pub enum AnswerRule {
    /// The first line, trimmed, equals this (trimmed).
    Answer(String),
    /// The regex matches somewhere in the text.
    Regex(Regex),
}

impl AnswerRule {
    /// Whether `text` is right by this rule (module docs).
    pub fn is_right(&self, text: &str) -> bool {
        match self {
            AnswerRule::Answer(a) => first_line(text) == a.trim(),
            AnswerRule::Regex(r) => r.is_match(text),
        }
    }
}

/// The completion's first line: leading whitespace removed, up to the first `\n`, trimmed.
pub fn first_line(text: &str) -> &str {
    let t = text.trim_start();
    t.split('\n').next().unwrap_or("").trim()
}

/// One line of a reference file.
#[derive(Debug, Clone)]
pub struct ReferenceItem {
    /// What is sent.
    pub prompt: PromptBody,
    /// How the answer is scored.
    pub rule: AnswerRule,
}

/// A problem in a reference file, at its line (1-based; 0: the file as a whole).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}: {message}")]
pub struct ReferenceError {
    /// The file.
    pub path: String,
    /// Its line, from 1; 0 for the whole file.
    pub line: usize,
    /// What is wrong and what to write.
    pub message: String,
}

/// Reads and checks a reference file: every line, with its own line number.
pub fn load_reference(path: &Path) -> Result<Vec<ReferenceItem>, ReferenceError> {
    let err = |line: usize, message: String| ReferenceError {
        path: path.display().to_string(),
        line,
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| err(0, format!("cannot read it: {e}")))?;
    if servebench_spec::text::starts_with_bom(&bytes) {
        return Err(err(1, servebench_spec::text::BOM_WORDS.to_owned()));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let raw = e.as_bytes();
        let line = 1 + raw[..at].iter().filter(|b| **b == b'\n').count();
        err(line, "not UTF-8 text: save the file as UTF-8".to_owned())
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        if line.trim_start().starts_with('[') {
            return Err(err(
                n,
                "the line is a JSON array: a reference file is JSON lines, one object per \
                 line, {\"prompt\": \"…\", \"answer\": \"…\"}"
                    .to_owned(),
            ));
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            err(
                n,
                format!("not JSON ({e}): write {{\"prompt\": \"…\", \"answer\": \"…\"}}"),
            )
        })?;
        let prompt = if let Some(p) = v.get("prompt").and_then(Value::as_str) {
            PromptBody::Text(p.to_owned())
        } else if let Some(m) = v.get("messages") {
            let msgs: Vec<ChatMessage> = serde_json::from_value(m.clone()).map_err(|e| {
                err(
                    n,
                    format!("`messages`: {e} (write [{{\"role\": \"user\", \"content\": \"…\"}}])"),
                )
            })?;
            PromptBody::Messages(msgs)
        } else {
            return Err(err(
                n,
                "a line needs `prompt` (a string) or `messages`".to_owned(),
            ));
        };
        let answer = v.get("answer");
        let regex = v.get("regex");
        let rule = match (answer, regex) {
            (Some(_), Some(_)) => {
                return Err(err(
                    n,
                    "give `answer` or `regex`, not both (an answer is matched against the \
                     first line; a regex anywhere in the text)"
                        .to_owned(),
                ));
            }
            (Some(a), None) => match a {
                Value::String(s) if !s.trim().is_empty() => AnswerRule::Answer(s.clone()),
                Value::Number(x) => AnswerRule::Answer(x.to_string()),
                _ => {
                    return Err(err(
                        n,
                        "`answer` must be a non-empty string (or a number)".to_owned(),
                    ));
                }
            },
            (None, Some(r)) => {
                let Some(r) = r.as_str() else {
                    return Err(err(n, "`regex` must be a string".to_owned()));
                };
                AnswerRule::Regex(
                    Regex::new(r).map_err(|e| err(n, format!("`regex` does not compile: {e}")))?,
                )
            }
            (None, None) => {
                return Err(err(
                    n,
                    "a reference line needs `answer` (the expected first line) or `regex` \
                     (matched in the completion); for prompts without answers use \
                     `equivalence.prompts_file`"
                        .to_owned(),
                ));
            }
        };
        out.push(ReferenceItem { prompt, rule });
    }
    if out.is_empty() {
        return Err(err(0, "no reference lines (the file is empty)".to_owned()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_the_trimmed_first_line_and_a_regex_matches_anywhere() {
        let a = AnswerRule::Answer(" 82 ".into());
        assert!(a.is_right(" 82\n more words"));
        assert!(a.is_right("\n\n  82  "));
        assert!(!a.is_right("82."));
        assert!(!a.is_right("The answer is 82"));
        assert!(!a.is_right("820"));
        let r = AnswerRule::Regex(Regex::new(r"\b82\b").expect("regex"));
        assert!(r.is_right("The answer is 82."));
        assert!(!r.is_right("820"));
    }

    #[test]
    fn bad_lines_are_refused_at_their_line() {
        let dir = std::env::temp_dir().join(format!("sb-ref-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let p = dir.join("r.jsonl");
        let cases = [
            (
                "{\"prompt\": \"a\", \"answer\": \"1\"}\n{\"prompt\": \"b\"}\n",
                2,
                "needs `answer`",
            ),
            (
                "{\"prompt\": \"a\", \"regex\": \"(\"}\n",
                1,
                "does not compile",
            ),
            (
                "{\"prompt\": \"a\", \"answer\": \"1\", \"regex\": \"1\"}\n",
                1,
                "not both",
            ),
            ("\n{\"answer\": \"1\"}\n", 2, "needs `prompt`"),
            ("{not json\n", 1, "not JSON"),
        ];
        for (text, line, what) in cases {
            std::fs::write(&p, text).expect("write");
            let e = load_reference(&p).expect_err(text);
            assert_eq!(e.line, line, "{e}");
            assert!(e.message.contains(what), "{e}");
        }
        std::fs::write(&p, "{\"prompt\": \"a\", \"answer\": 7}\n").expect("write");
        let ok = load_reference(&p).expect("ok");
        assert!(ok[0].rule.is_right("7"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
