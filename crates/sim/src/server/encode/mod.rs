//! Response bodies and SSE events, shaped like vLLM's.
//!
//! Token events are the hot path: their constant JSON prefix is built once per request and
//! only the token text is escaped and appended per event.

use bytes::{BufMut, Bytes, BytesMut};
use serde::Serialize;
use serde_json::Value;

use super::dialect::Owned;
use super::dialect::logprobs::{self, ChatStyle, Scored};
use super::text::TokenText;
use super::wire::Api;
use crate::engine::{Finish, Timings};

pub(crate) use super::dialect::DONE_EVENT;

/// Builds every JSON body and SSE event of one response.
#[derive(Debug)]
pub(crate) struct Encoder {
    api: Api,
    id: String,
    created: u64,
    model: String,
    text: TokenText,
    token_prefix: Vec<u8>,
    /// The prefix of a reasoning token's chat event (`"delta":{"reasoning_content":`).
    reasoning_prefix: Vec<u8>,
    /// Chat: the first this-many tokens are reasoning.
    reasoning_tokens: u32,
    /// Log-probabilities asked for, with this many most likely tokens each.
    logprobs: Option<u32>,
    /// Characters of text sent so far (the completions `text_offset`).
    offset: i64,
    scratch: String,
}

fn object(api: Api, stream: bool) -> &'static str {
    match (api, stream) {
        (Api::Completions, _) => "text_completion",
        (Api::Chat, true) => "chat.completion.chunk",
        (Api::Chat, false) => "chat.completion",
    }
}

const COMPLETION_SUFFIX: &[u8] = br#","logprobs":null,"finish_reason":null,"stop_reason":null}]}"#;
const CHAT_SUFFIX: &[u8] = br#"},"logprobs":null,"finish_reason":null}]}"#;

/// Appends `s` as a JSON string literal.
fn push_json_str(out: &mut BytesMut, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.put_u8(b'"');
        out.put_slice(s.as_bytes());
        out.put_u8(b'"');
    } else {
        // serde_json escapes every other case correctly.
        let quoted = Value::from(s).to_string();
        out.put_slice(quoted.as_bytes());
    }
}

impl Encoder {
    pub(crate) fn new(api: Api, id: String, created: u64, model: &str, text: TokenText) -> Self {
        let head = format!(
            r#"data: {{"id":{},"object":"{}","created":{},"model":{},"choices":[{{"index":0,"#,
            Value::from(id.as_str()),
            object(api, true),
            created,
            Value::from(model),
        );
        let prefix = head.clone()
            + match api {
                Api::Completions => r#""text":"#,
                Api::Chat => r#""delta":{"content":"#,
            };
        Encoder {
            api,
            id,
            created,
            model: model.to_owned(),
            text,
            token_prefix: prefix.into_bytes(),
            reasoning_prefix: (head + r#""delta":{"reasoning_content":"#).into_bytes(),
            reasoning_tokens: 0,
            logprobs: None,
            offset: 0,
            scratch: String::with_capacity(16),
        }
    }

    /// Answers log-probabilities with `top` most likely tokens each (vLLM's shapes).
    pub(crate) fn with_logprobs(mut self, top: Option<u32>) -> Self {
        self.logprobs = top;
        self
    }

    /// Records the batch size of the step the text watches (`--batch-variance`).
    pub(crate) fn set_batch(&mut self, batch: u32) {
        self.text.set_batch(batch);
    }

    /// The `logprobs` value of token `index` with text `text`, advancing the offset.
    fn token_logprobs(&mut self, index: u32, text: &str) -> Option<String> {
        let top = self.logprobs?;
        let lp = self.text.logprobs(index, top);
        let one = [Scored {
            id: self.text.id(index),
            text,
            lp: &lp,
        }];
        let raw = match self.api {
            Api::Completions => {
                let raw = logprobs::completion(&one, Some(self.offset), false);
                self.offset += text.chars().count() as i64;
                raw
            }
            Api::Chat => logprobs::chat(ChatStyle::OpenAi, &one, false),
        };
        Some(raw)
    }

    /// A token event with its log-probabilities (built through serde; not the hot path).
    fn scored_token_event(&mut self, index: u32) -> Bytes {
        self.scratch.clear();
        self.text.push(index, &mut self.scratch);
        let text = std::mem::take(&mut self.scratch);
        let lp = self.token_logprobs(index, &text);
        let reasoning = self.reasoning(index);
        let delta = Delta {
            role: None,
            content: (!reasoning).then_some(text.as_str()),
            reasoning_content: reasoning.then_some(text.as_str()),
        };
        let choice = Choice::chunk(self.api, delta, None);
        let b = sse_with(&self.body(true, [choice]), lp);
        self.scratch = text;
        b
    }

    /// Chat answers whose first `n` tokens are reasoning (`--reasoning-tokens`).
    pub(crate) fn with_reasoning(mut self, n: u32) -> Self {
        if self.api == Api::Chat {
            self.reasoning_tokens = n;
        }
        self
    }

    fn reasoning(&self, index: u32) -> bool {
        index < self.reasoning_tokens
    }

    /// Text of token `index`.
    pub(crate) fn token_text(&mut self, index: u32) -> &str {
        self.scratch.clear();
        self.text.push(index, &mut self.scratch);
        &self.scratch
    }

    /// The response's token text.
    pub(crate) fn text(&self) -> &TokenText {
        &self.text
    }

    /// The SSE event of a token that is not the last.
    pub(crate) fn token_event(&mut self, index: u32) -> Bytes {
        if self.logprobs.is_some() {
            return self.scored_token_event(index);
        }
        let suffix = match self.api {
            Api::Completions => COMPLETION_SUFFIX,
            Api::Chat => CHAT_SUFFIX,
        };
        self.scratch.clear();
        self.text.push(index, &mut self.scratch);
        let prefix = if self.reasoning(index) {
            &self.reasoning_prefix
        } else {
            &self.token_prefix
        };
        let mut b = BytesMut::with_capacity(prefix.len() + suffix.len() + self.scratch.len() + 8);
        b.put_slice(prefix);
        push_json_str(&mut b, &self.scratch);
        b.put_slice(suffix);
        b.put_slice(b"\n\n");
        b.freeze()
    }

    /// A broken event: the start of a token event, cut inside its JSON.
    pub(crate) fn malformed_event(&self) -> Bytes {
        let mut b = BytesMut::from(&self.token_prefix[..]);
        b.put_slice(b"\"trunc\n\n");
        b.freeze()
    }

    fn body<'a, C: Serialize>(&'a self, stream: bool, choices: C) -> Body<'a, C> {
        Body {
            id: &self.id,
            object: object(self.api, stream),
            created: self.created,
            model: &self.model,
            choices,
            usage: None,
            timings: None,
        }
    }

    /// vLLM's first chat chunk: the assistant role with empty content.
    pub(crate) fn role_event(&self) -> Bytes {
        let delta = Delta {
            role: Some("assistant"),
            content: Some(""),
            reasoning_content: None,
        };
        sse(&self.body(true, [Choice::chunk(self.api, delta, None)]))
    }

    /// The event of the last token: its text, `finish_reason` and the server `timings`.
    pub(crate) fn final_token_event(&mut self, index: u32, finish: &Finish) -> Bytes {
        let text = self.token_text(index).to_owned();
        let reasoning = self.reasoning(index);
        let lp = self.token_logprobs(index, &text);
        self.finish_event(&text, reasoning, lp, finish)
    }

    /// The finish event with `text` (empty when the stream's text was held back), in the
    /// reasoning field when `reasoning`.
    pub(crate) fn final_event(&self, text: &str, reasoning: bool, finish: &Finish) -> Bytes {
        self.finish_event(text, reasoning, None, finish)
    }

    fn finish_event(
        &self,
        text: &str,
        reasoning: bool,
        lp: Option<String>,
        finish: &Finish,
    ) -> Bytes {
        let delta = Delta {
            role: None,
            content: (!reasoning).then_some(text),
            reasoning_content: reasoning.then_some(text),
        };
        let choice = Choice::chunk(self.api, delta, Some(finish));
        let mut body = self.body(true, [choice]);
        body.timings = Some(finish.timings);
        sse_with(&body, lp)
    }

    /// The usage chunk sent when `stream_options.include_usage` is set (empty `choices`).
    pub(crate) fn usage_event(&self, timings: &Timings) -> Bytes {
        let mut body = self.body(true, [(); 0]);
        body.usage = Some(Usage::of(timings, self.reasoning_tokens));
        body.timings = Some(*timings);
        sse(&body)
    }

    /// The whole non-streamed response: `reasoning` (chat only), the answer `text` and,
    /// when asked for, every token's log-probabilities.
    pub(crate) fn full_response(
        &self,
        reasoning: &str,
        text: &str,
        scored: &[Owned],
        finish: &Finish,
    ) -> String {
        let mut choice = Choice::chunk(
            self.api,
            Delta {
                role: None,
                content: Some(text),
                reasoning_content: None,
            },
            Some(finish),
        );
        if self.api == Api::Chat {
            choice.delta = None;
            choice.message = Some(Delta {
                role: Some("assistant"),
                content: Some(text),
                reasoning_content: (!reasoning.is_empty()).then_some(reasoning),
            });
        }
        let lp = (self.logprobs.is_some() && !scored.is_empty()).then(|| {
            let toks: Vec<Scored<'_>> = scored.iter().map(Owned::scored).collect();
            match self.api {
                Api::Completions => logprobs::completion(&toks, Some(0), false),
                Api::Chat => logprobs::chat(ChatStyle::OpenAi, &toks, false),
            }
        });
        let mut body = self.body(false, [choice]);
        body.usage = Some(Usage::of(&finish.timings, self.reasoning_tokens));
        body.timings = Some(finish.timings);
        splice_logprobs(serde_json::to_string(&body).unwrap_or_default(), lp)
    }
}

/// A response body or stream chunk, fields in vLLM's order.
#[derive(Debug, Serialize)]
struct Body<'a, C> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: C,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timings: Option<Timings>,
}

#[derive(Debug, Serialize)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct Choice<'a> {
    index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta: Option<Delta<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Delta<'a>>,
    /// Always `null` when serialised; [`splice_logprobs`] puts a value in its place.
    logprobs: Option<()>,
    finish_reason: Option<&'static str>,
    /// vLLM sends `stop_reason` with completion chunks and with finished chat chunks.
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_reason: Option<Option<()>>,
}

impl<'a> Choice<'a> {
    /// A completion choice (`text`) or a chat chunk choice (`delta`).
    fn chunk(api: Api, delta: Delta<'a>, finish: Option<&Finish>) -> Self {
        let finish_reason = finish.map(|f| f.reason.as_str());
        match api {
            Api::Completions => Choice {
                index: 0,
                text: Some(delta.content.unwrap_or_default()),
                delta: None,
                message: None,
                logprobs: None,
                finish_reason,
                stop_reason: Some(None),
            },
            Api::Chat => Choice {
                index: 0,
                text: None,
                delta: Some(delta),
                message: None,
                logprobs: None,
                finish_reason,
                stop_reason: finish.map(|_| None),
            },
        }
    }
}

#[derive(Debug, Serialize)]
struct Usage {
    prompt_tokens: u32,
    total_tokens: u64,
    completion_tokens: u32,
    /// vLLM's and OpenAI's place for cached prompt tokens (with a prefix cache only).
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_tokens_details: Option<PromptTokensDetails>,
    /// OpenAI's place for reasoning tokens (with `--reasoning-tokens` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    completion_tokens_details: Option<CompletionTokensDetails>,
}

#[derive(Debug, Serialize)]
struct CompletionTokensDetails {
    reasoning_tokens: u32,
}

#[derive(Debug, Serialize)]
struct PromptTokensDetails {
    cached_tokens: u32,
}

impl Usage {
    fn of(t: &Timings, reasoning_tokens: u32) -> Self {
        Usage {
            completion_tokens_details: (reasoning_tokens > 0).then(|| CompletionTokensDetails {
                reasoning_tokens: reasoning_tokens.min(t.predicted_n),
            }),
            prompt_tokens: t.prompt_n,
            total_tokens: u64::from(t.prompt_n) + u64::from(t.predicted_n),
            completion_tokens: t.predicted_n,
            prompt_tokens_details: t
                .cached_n
                .map(|cached_tokens| PromptTokensDetails { cached_tokens }),
        }
    }
}

/// `json` with its (one) `"logprobs":null` replaced by `raw`. serde_json's `Value` would sort
/// the keys; the builders in `dialect::logprobs` write them in the engine's order. Every
/// string in a body is escaped, so the first unescaped `"logprobs":null` is the choice's.
fn splice_logprobs(json: String, raw: Option<String>) -> String {
    let Some(raw) = raw else { return json };
    const AT: &str = r#""logprobs":null"#;
    match json.find(AT) {
        Some(i) => format!("{}\"logprobs\":{raw}{}", &json[..i], &json[i + AT.len()..]),
        None => json,
    }
}

/// An SSE event of `v` with `raw` log-probabilities in its choice.
fn sse_with<T: Serialize>(v: &T, raw: Option<String>) -> Bytes {
    let json = splice_logprobs(serde_json::to_string(v).unwrap_or_default(), raw);
    let mut b = BytesMut::with_capacity(json.len() + 8);
    b.put_slice(b"data: ");
    b.put_slice(json.as_bytes());
    b.put_slice(b"\n\n");
    b.freeze()
}

fn sse<T: Serialize>(v: &T) -> Bytes {
    let mut b = BytesMut::with_capacity(384);
    b.put_slice(b"data: ");
    b.put_slice(serde_json::to_string(v).unwrap_or_default().as_bytes());
    b.put_slice(b"\n\n");
    b.freeze()
}

/// Builds the streamed token events of `/v1/completions` exactly as the simulator sends
/// them, for a benchmark's bare reference server to stream identical bytes.
#[derive(Debug)]
pub struct CompletionChunkEncoder(Encoder);

impl CompletionChunkEncoder {
    /// An encoder for one response with this id, model name and text seed.
    pub fn new(id: &str, model: &str, text_seed: u64) -> Self {
        CompletionChunkEncoder(Encoder::new(
            Api::Completions,
            id.to_owned(),
            0,
            model,
            TokenText::sampled(text_seed),
        ))
    }

    /// The `data: {...}\n\n` event of token `index` (not the last one).
    pub fn token_event(&mut self, index: u32) -> Bytes {
        self.0.token_event(index)
    }

    /// The closing `data: [DONE]\n\n` event.
    pub fn done_event() -> Bytes {
        Bytes::from_static(DONE_EVENT)
    }
}

#[cfg(test)]
mod tests;
