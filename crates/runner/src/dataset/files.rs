//! Prompt files: JSONL (`{"prompt": …}` or `{"messages": […]}` per line, optional
//! `max_tokens` or `output_tokens`) and ShareGPT (`[{"conversations": [{"from": "human",
//! "value": …}, {"from": "gpt", "value": …}]}]`). Either may carry images
//! ([`super::file_images`]: an `images` list, `content` arrays with `image_url` parts).
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
use super::file_images::{self, ImageSource, LineImages, RawMessage};
use super::prompt::{ContentPart, Prompt, PromptBody, TrialPrompts, prompt_seed};
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
    /// Images sent with it (in its last user message); local files until
    /// [`encode_images`] reads them.
    pub images: Vec<ImageSource>,
    /// Where the images go among that message's text; `None`: after it.
    pub parts: Option<Vec<ContentPart>>,
}

#[derive(Deserialize)]
struct JsonlLine {
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    messages: Option<Vec<RawMessage>>,
    /// vLLM's `custom_image` line: one user message's parts.
    #[serde(default)]
    content: Option<serde_json::Value>,
    #[serde(default)]
    images: Option<serde_json::Value>,
    /// vLLM's `custom_image` name for `images`.
    #[serde(default)]
    image_files: Option<serde_json::Value>,
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
        let dir = path.parent().unwrap_or(Path::new(""));
        let listed = match (&l.images, &l.image_files) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "the line has both `images` and `image_files`: keep one".into(),
                ));
            }
            (Some(v), None) => file_images::listed(Some(v), "images"),
            (None, v) => file_images::listed(v.as_ref(), "image_files"),
        }
        .map_err(&bad)?;
        let messages = match (l.messages, l.content) {
            (m, None) => m,
            (None, Some(c)) => Some(vec![RawMessage::user(c)]),
            (Some(_), Some(_)) => {
                return Err(bad(
                    "the line has both `messages` and `content`: keep one".into()
                ));
            }
        };
        let (messages, images) = match messages {
            Some(raw) => {
                let (m, i) = file_images::messages(raw, &listed, dir).map_err(&bad)?;
                (Some(m), i)
            }
            None => {
                let mut i = LineImages::default();
                file_images::append_listed(&mut i, &listed, dir).map_err(&bad)?;
                (None, i)
            }
        };
        let has_images = !images.images.is_empty();
        let body = match (l.prompt, messages) {
            (Some(p), None) if p.trim().is_empty() && !has_images => {
                return Err(bad(
                    "the prompt is empty: servers refuse a request with nothing to complete; \
                     write its text, or delete the line"
                        .into(),
                ));
            }
            (Some(p), None) => PromptBody::Text(p),
            (None, Some(m)) if !has_images && m.iter().all(|m| m.content.trim().is_empty()) => {
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
        let output_tokens = output_length(l.max_tokens, l.output_tokens).map_err(&bad)?;
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
            images: images.images,
            parts: images.parts,
        });
        Ok(())
    })?;
    Ok(out)
}

/// Reads every local image the entries of `file` name and encodes it as a data URL (before
/// the trial: nothing is read while sending); a file that cannot be used is refused at the
/// line that names it.
pub fn encode_images(entries: &mut [FileEntry], file: &Path) -> Result<(), DatasetError> {
    for e in entries.iter_mut() {
        file_images::encode_files(&mut e.images, file, e.line)?;
    }
    Ok(())
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
                    // An image's tokens are the server's alone (`usage.prompt_tokens`).
                    _ if !entry.images.is_empty() => None,
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
        let images = (entry.images.iter())
            .map(|i| match i {
                ImageSource::Url(u) => Ok(u.clone()),
                ImageSource::File { written, .. } => Err(DatasetError::Parse {
                    path: written.into(),
                    line: entry.line,
                    message: "the image was not read before the trial (encode_images)".into(),
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Prompt {
            body: entry.body.clone(),
            expected_input_tokens: input,
            input_tokens_exact: input.is_some() && self.counter.is_exact(),
            max_tokens,
            images,
            parts: entry.parts.clone(),
        })
    }
}

/// A line's output length: `max_tokens` or `output_tokens`. Zero is refused (a server
/// answers it with nothing, or with its own default length, and the trial would measure
/// that), and so are both keys with different values (which one the request carries would be
/// a guess).
fn output_length(
    max_tokens: Option<u32>,
    output_tokens: Option<u32>,
) -> Result<Option<u32>, String> {
    match (max_tokens, output_tokens) {
        (Some(a), Some(b)) if a != b => Err(format!(
            "the line gives `max_tokens` {a} and `output_tokens` {b}: keep one"
        )),
        (Some(0), _) | (None, Some(0)) => {
            let key = if max_tokens.is_some() {
                "max_tokens"
            } else {
                "output_tokens"
            };
            Err(format!(
                "`{key}` is 0: a request for no token measures nothing (servers answer it empty \
                 or with their own default length); write the length wanted, at least 1"
            ))
        }
        (a, b) => Ok(a.or(b)),
    }
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
