//! Prompt files: JSONL (`{"prompt": …}` or `{"messages": […]}` per line, optional
//! `max_tokens` or `output_tokens`) and ShareGPT (`[{"conversations": [{"from": "human",
//! "value": …}, {"from": "gpt", "value": …}]}]`).
//!
//! Trial `t` at point `p` takes its prompts from one seeded permutation of the file
//! (`prompt_seed(seed, t, p)`): measured prompts first, warm-up prompts next (disjoint when
//! the file is large enough). The output length is, in order: the fixed length given, the
//! entry's own `max_tokens`/`output_tokens`, or the token count of the reference answer
//! (ShareGPT's `gpt` turn). Input lengths are counted with the dataset's counter: text
//! prompts as text, chat prompts rendered by the server (template included) where the
//! server can tokenize chat messages, else unknown.

use std::collections::HashMap;
use std::path::Path;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use servebench_spec::bounds::{MAX_PROMPT_TOKENS, grouped};

use super::DatasetError;
use super::prompt::{ChatMessage, Prompt, PromptBody, TrialPrompts, prompt_seed};
use super::tokenize::TokenCounter;

/// One usable entry of a prompt file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// What the request sends.
    pub body: PromptBody,
    /// `max_tokens`/`output_tokens` given by the file.
    pub output_tokens: Option<u32>,
    /// A reference answer whose token count gives the output length.
    pub reference_output: Option<String>,
    /// The file's line where the entry starts (1-based), for messages.
    pub line: usize,
}

#[derive(Deserialize)]
struct JsonlLine {
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    messages: Option<Vec<ChatMessage>>,
    #[serde(default)]
    max_tokens: Option<u32>,
    #[serde(default)]
    output_tokens: Option<u32>,
}

/// Reads a JSONL prompt file; blank lines are skipped, any other bad line is an error with
/// its line number and what to write: not a JSON object of this layout, not UTF-8, an empty
/// prompt (servers refuse it), neither or both of `prompt` and `messages`.
pub fn load_jsonl(path: &Path) -> Result<Vec<FileEntry>, DatasetError> {
    let mut out = Vec::new();
    super::lines::for_each_line(path, |number, line| {
        let bad = |message: String| DatasetError::Parse {
            path: path.to_owned(),
            line: number,
            message,
        };
        if line.trim_start().starts_with('[') {
            return Err(bad(
                "the line is a JSON array: a prompt file is JSON lines, one object per line, \
                 {\"prompt\": \"…\", \"max_tokens\": 128}"
                    .into(),
            ));
        }
        let l: JsonlLine = serde_json::from_str(line).map_err(|e| {
            bad(format!(
                "{e}; a prompt line is {{\"prompt\": \"…\", \"max_tokens\": 128}} or \
                 {{\"messages\": [{{\"role\": \"user\", \"content\": \"…\"}}]}}"
            ))
        })?;
        let body = match (l.prompt, l.messages) {
            (Some(p), None) if p.trim().is_empty() => {
                return Err(bad(
                    "the prompt is empty: servers refuse a request with nothing to complete; \
                     write its text, or delete the line"
                        .into(),
                ));
            }
            (Some(p), None) => PromptBody::Text(p),
            (None, Some(m)) if m.iter().all(|m| m.content.trim().is_empty()) => {
                return Err(bad(if m.is_empty() {
                    "`messages` is empty: write at least one {\"role\": \"user\", \"content\": \
                     \"…\"}"
                        .into()
                } else {
                    "every message's `content` is empty: servers refuse a request with nothing \
                     to answer; write the user's message"
                        .into()
                }));
            }
            (None, Some(m)) => PromptBody::Messages(m),
            (Some(_), Some(_)) => {
                return Err(bad(
                    "the line has both `prompt` and `messages`: keep one (`prompt` for the \
                     completions API, `messages` for the chat API)"
                        .into(),
                ));
            }
            (None, None) => {
                return Err(bad(
                    "the line has neither `prompt` nor `messages`: write {\"prompt\": \"…\"} \
                     or {\"messages\": [{\"role\": \"user\", \"content\": \"…\"}]}"
                        .into(),
                ));
            }
        };
        let output_tokens = l.max_tokens.or(l.output_tokens);
        if let Some(n) = output_tokens
            && n > MAX_PROMPT_TOKENS
        {
            return Err(bad(format!(
                "`max_tokens` {} is above servebench's ceiling of {} tokens in an answer: write \
                 the length wanted",
                grouped(u64::from(n)),
                grouped(u64::from(MAX_PROMPT_TOKENS))
            )));
        }
        out.push(FileEntry {
            body,
            output_tokens,
            reference_output: None,
            line: number,
        });
        Ok(())
    })?;
    Ok(out)
}

#[derive(Deserialize)]
struct ShareGptEntry {
    #[serde(default)]
    conversations: Vec<Turn>,
}

#[derive(Deserialize)]
struct Turn {
    from: String,
    value: String,
}

/// Reads a ShareGPT file: the first human turn is the prompt, the turn after it (from
/// `gpt`) is the reference answer. Entries without such a pair, or whose prompt is empty,
/// are skipped; the number skipped is returned too. Each entry keeps the line it starts on.
pub fn load_sharegpt(path: &Path) -> Result<(Vec<FileEntry>, usize), DatasetError> {
    let bytes = std::fs::read(path).map_err(|e| DatasetError::io(path, e))?;
    let entries: Vec<ShareGptEntry> =
        serde_json::from_slice(&bytes).map_err(|e| DatasetError::Parse {
            path: path.to_owned(),
            line: e.line(),
            message: format!(
                "{e}; a ShareGPT file is one JSON array of {{\"conversations\": [{{\"from\": \
                 \"human\", \"value\": \"…\"}}, {{\"from\": \"gpt\", \"value\": \"…\"}}]}}"
            ),
        })?;
    let lines = element_lines(&bytes);
    let total = entries.len();
    let out: Vec<FileEntry> = entries
        .into_iter()
        .enumerate()
        .filter_map(|(n, e)| {
            let i = e
                .conversations
                .iter()
                .position(|t| t.from == "human" || t.from == "user")?;
            let answer = e
                .conversations
                .get(i + 1)
                .filter(|t| t.from == "gpt" || t.from == "assistant")?;
            let prompt = &e.conversations[i].value;
            if prompt.trim().is_empty() {
                return None;
            }
            Some(FileEntry {
                body: PromptBody::Text(prompt.clone()),
                output_tokens: None,
                reference_output: Some(answer.value.clone()),
                line: lines.get(n).copied().unwrap_or(1),
            })
        })
        .collect();
    let skipped = total - out.len();
    Ok((out, skipped))
}

/// The 1-based line on which each element of the top-level JSON array in `bytes` starts
/// (the text is valid JSON: serde has read it).
fn element_lines(bytes: &[u8]) -> Vec<usize> {
    let (mut line, mut depth) = (1, 0usize);
    let (mut in_string, mut escaped, mut expect_element) = (false, false, false);
    let mut out = Vec::new();
    for &b in bytes {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                b'\n' => line += 1,
                _ => {}
            }
            continue;
        }
        if b == b'\n' {
            line += 1;
            continue;
        }
        if b.is_ascii_whitespace() {
            continue;
        }
        if depth == 1 && expect_element && b != b']' {
            out.push(line);
            expect_element = false;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth == 1 {
                    expect_element = true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expect_element = true,
            _ => {}
        }
    }
    out
}

/// Prompts drawn from a file's entries, with token counts cached per entry across trials.
#[derive(Debug)]
pub struct FileDataset<C> {
    entries: Vec<FileEntry>,
    /// Overrides every entry's output length.
    fixed_output: Option<u32>,
    counter: C,
    /// entry index → (input tokens, reference output tokens)
    counts: HashMap<usize, (Option<u32>, Option<u32>)>,
}

impl<C: TokenCounter> FileDataset<C> {
    /// A dataset over `entries`; `fixed_output` overrides every entry's output length.
    pub fn new(
        entries: Vec<FileEntry>,
        fixed_output: Option<u32>,
        counter: C,
    ) -> Result<Self, DatasetError> {
        if entries.is_empty() {
            return Err(DatasetError::Empty);
        }
        if fixed_output == Some(0) {
            return Err(DatasetError::InvalidLength(
                "fixed output length must be at least 1".into(),
            ));
        }
        Ok(FileDataset {
            entries,
            fixed_output,
            counter,
            counts: HashMap::new(),
        })
    }

    /// Entries in the file.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the file has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The prompts of trial `trial` at sweep point `point`.
    pub async fn trial_prompts(
        &mut self,
        measured: usize,
        warmup: usize,
        workload_seed: u64,
        trial: u32,
        point: u32,
    ) -> Result<TrialPrompts, DatasetError> {
        if measured > self.entries.len() {
            return Err(DatasetError::NotEnoughEntries {
                needed: measured,
                available: self.entries.len(),
            });
        }
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.shuffle(&mut ChaCha8Rng::seed_from_u64(prompt_seed(
            workload_seed,
            trial,
            point,
        )));
        let mut m = Vec::with_capacity(measured);
        for &i in &order[..measured] {
            m.push(self.prompt(i).await?);
        }
        let mut w = Vec::with_capacity(warmup);
        for &i in order.iter().cycle().skip(measured).take(warmup) {
            w.push(self.prompt(i).await?);
        }
        Ok(TrialPrompts {
            measured: m,
            warmup: w,
            send_offsets_ns: None,
            conversations: None,
        })
    }

    async fn prompt(&mut self, i: usize) -> Result<Prompt, DatasetError> {
        let entry = &self.entries[i];
        let (input, reference) = match self.counts.get(&i) {
            Some(&c) => c,
            None => {
                let input = match &entry.body {
                    PromptBody::Text(t) => Some(self.counter.count(t).await?),
                    PromptBody::Messages(m) => self.counter.count_chat(m).await?,
                };
                let need_ref = self.fixed_output.is_none() && entry.output_tokens.is_none();
                let reference = match (&entry.reference_output, need_ref) {
                    (Some(r), true) => Some(self.counter.count(r).await?),
                    _ => None,
                };
                self.counts.insert(i, (input, reference));
                (input, reference)
            }
        };
        let max_tokens = self
            .fixed_output
            .or(entry.output_tokens)
            .or(reference)
            .ok_or(DatasetError::MissingOutputLength { line: entry.line })?
            .max(1);
        Ok(Prompt {
            body: entry.body.clone(),
            expected_input_tokens: input,
            input_tokens_exact: input.is_some() && self.counter.is_exact(),
            max_tokens,
            images: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::dataset::tokenize::WordCount;

    fn file(content: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().expect("temp file");
        f.write_all(content.as_bytes()).expect("write");
        f
    }

    #[test]
    fn jsonl_prompts_messages_and_lengths() {
        let f = file(concat!(
            "{\"prompt\": \"one two three\", \"max_tokens\": 7}\n",
            "\n",
            "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"output_tokens\": 3, \"id\": 9}\n",
            "{\"prompt\": \"no length\"}\n",
        ));
        let e = load_jsonl(f.path()).expect("loads");
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].body, PromptBody::Text("one two three".into()));
        assert_eq!(
            (e[0].output_tokens, e[1].output_tokens, e[2].output_tokens),
            (Some(7), Some(3), None)
        );
        assert!(matches!(&e[1].body, PromptBody::Messages(m) if m[0].content == "hi"));
    }

    #[test]
    fn jsonl_errors_name_the_line() {
        let f = file("{\"prompt\": \"ok\"}\n{\"prompt\": 3}\n");
        let err = load_jsonl(f.path()).unwrap_err().to_string();
        assert!(err.contains(":2:"), "{err}");
        let f =
            file("{\"prompt\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"b\"}]}\n");
        assert!(load_jsonl(f.path()).is_err(), "both prompt and messages");
        assert!(load_jsonl(Path::new("/nonexistent/x.jsonl")).is_err());
    }

    #[test]
    fn jsonl_problems_are_named_at_their_line_with_what_to_write() {
        let cases = [
            ("{\"prompt\": \"\"}", ":1: the prompt is empty"),
            ("{\"prompt\": \"  \"}", ":1: the prompt is empty"),
            ("{\"messages\": []}", ":1: `messages` is empty"),
            (
                "{\"messages\": [{\"role\": \"user\", \"content\": \"\"}]}",
                ":1: every message's `content` is empty",
            ),
            (
                "{\"max_tokens\": 3}",
                ":1: the line has neither `prompt` nor `messages`",
            ),
            (
                "{\"prompt\": \"x\", \"max_tokens\": 4000000000}",
                ":1: `max_tokens` 4,000,000,000 is above",
            ),
            (
                "[1]",
                ":1: the line is a JSON array: a prompt file is JSON lines",
            ),
            ("7", ":1: invalid type"),
        ];
        for (line, want) in cases {
            let f = file(&format!("\n{{\"prompt\": \"ok\"}}\n{line}\n"));
            let err = load_jsonl(f.path()).expect_err(line).to_string();
            let want = want.replace(":1:", ":3:");
            assert!(err.contains(&want), "{line}: {err}");
        }
        let mut f = file("{\"prompt\": \"ok\"}\n");
        f.write_all(b"{\"prompt\": \"caf\xe9\"}\n")
            .expect("latin-1 byte");
        let err = load_jsonl(f.path()).expect_err("not UTF-8").to_string();
        assert!(err.contains(":2: not UTF-8 text (byte 16"), "{err}");
    }

    #[test]
    fn sharegpt_entries_keep_the_line_they_start_on() {
        let f = file(SHAREGPT);
        let (e, _) = load_sharegpt(f.path()).expect("loads");
        assert_eq!(e.iter().map(|e| e.line).collect::<Vec<_>>(), [2, 5]);
        assert_eq!(
            element_lines(b"[1, \"a,]\\\"\",\n {\"x\": [2, 3]}\n , []]"),
            [1, 1, 2, 3]
        );
        let f = file(
            r#"[{"conversations": [{"from": "human", "value": " "}, {"from": "gpt", "value": "a"}]}]"#,
        );
        assert_eq!(
            load_sharegpt(f.path()).expect("loads").1,
            1,
            "an empty prompt is skipped"
        );
    }

    const SHAREGPT: &str = r#"[
        {"id": "a", "conversations": [{"from": "human", "value": "hello there friend"},
                                      {"from": "gpt", "value": "one two three four five"}]},
        {"id": "b", "conversations": [{"from": "gpt", "value": "no question"}]},
        {"id": "c", "conversations": [{"from": "system", "value": "be nice"},
                                      {"from": "human", "value": "why"},
                                      {"from": "gpt", "value": "because"}]},
        {"id": "d", "conversations": []}
    ]"#;

    #[test]
    fn sharegpt_pairs_and_skips() {
        let f = file(SHAREGPT);
        let (e, skipped) = load_sharegpt(f.path()).expect("loads");
        assert_eq!((e.len(), skipped), (2, 2));
        assert_eq!(e[1].body, PromptBody::Text("why".into()));
        assert_eq!(
            e[0].reference_output.as_deref(),
            Some("one two three four five")
        );
    }

    #[tokio::test]
    async fn file_trials_are_seeded_and_lengths_come_from_the_reference_answer() {
        let f = file(SHAREGPT);
        let (entries, _) = load_sharegpt(f.path()).expect("loads");
        let mut ds = FileDataset::new(entries.clone(), None, WordCount).expect("valid");
        let p = ds.trial_prompts(2, 1, 5, 1, 0).await.expect("prompts");
        let mut lens: Vec<u32> = p.measured.iter().map(|p| p.max_tokens).collect();
        lens.sort_unstable();
        assert_eq!(lens, [1, 5], "gpt turn word counts");
        assert!(p.measured.iter().all(|p| !p.input_tokens_exact));
        let again = FileDataset::new(entries.clone(), None, WordCount)
            .expect("valid")
            .trial_prompts(2, 1, 5, 1, 0)
            .await
            .expect("prompts");
        assert_eq!(again, p, "paired: same seed, same prompts");
        let mut fixed = FileDataset::new(entries, Some(64), WordCount).expect("valid");
        let p = fixed.trial_prompts(1, 0, 5, 2, 0).await.expect("prompts");
        assert_eq!(p.measured[0].max_tokens, 64);
        assert!(
            fixed.trial_prompts(3, 0, 5, 1, 0).await.is_err(),
            "more than the file holds"
        );
    }

    #[tokio::test]
    async fn missing_output_length_is_an_error() {
        let f = file("{\"prompt\": \"x\"}\n");
        let mut ds =
            FileDataset::new(load_jsonl(f.path()).expect("loads"), None, WordCount).expect("valid");
        let err = ds.trial_prompts(1, 0, 1, 1, 0).await.unwrap_err();
        assert!(matches!(err, DatasetError::MissingOutputLength { line: 1 }));
        assert!(FileDataset::new(vec![], None, WordCount).is_err());
    }
}
